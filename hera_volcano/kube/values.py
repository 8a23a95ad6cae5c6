"""How a value known only at run time (a workflow parameter, a template's input, the Workflow's annotations and
labels, a global output) enters a manifest or a pod.

Argo substitutes a template twice (``SubstituteParams``: globals first, then inputs, over the first pass's output)
and pastes a simple tag's value as raw text. So a value never stands in a manifest as ``{{inputs.parameters.X}}``:
every one is read through one Argo expression, written by :func:`expression`, whose result is exactly one YAML
scalar of the value and holds no ``{`` (which Argo's second pass would take for a tag):

- text: Go's quoting (``sprig.quote``), which escapes quotes, backslashes, line breaks, NEL and every other
  character YAML would fold or refuse (YAML's double-quoted escapes are Go's), ``{`` written ``\\x7b``;
- an integer: ``asInt``, which fails (and creates nothing) unless the value is one;
- JSON (a list): parsed and written again by ``toJson`` (``mustFromJson`` fails on anything else), NEL and ``{``
  escaped;

and, where the kubelet expands ``$(VAR)`` (argoexec's ``ARGO_TEMPLATE``, then a job pod's command, arguments and
environment), ``$`` doubled once per expansion. Any other variable a submitter sets is refused
(:func:`raw_problem`), and so is a tag in a mapping key (:func:`check_keys`): no quoting keeps a key from naming
another entry. ``docs/security.md`` states the rule.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final, Literal

from hera_volcano.shared.errors import ValidationError
from hera_volcano.shared.placeholders import Placeholder, Verbatim

Kind = Literal["text", "integer", "json"]
KINDS: Final = ("text", "integer", "json")
#: Where a value's ``$`` must be doubled: how many ``$(VAR)`` expansions it passes through (argoexec's variable,
#: then a pod's).
MAX_DOLLARS: Final = 2
_NAME: Final = "[-a-zA-Z0-9_]+"
#: An annotation or label key as Argo names its variable (a qualified name: an optional DNS prefix and '/'); not
#: ``json``, which is the whole JSON of them all.
_KEY: Final = r"(?!json$)[A-Za-z0-9][-A-Za-z0-9_./]*"
#: A value a submitter sets, as a simple tag: a parameter (the template's input, the Workflow's argument, a global
#: output a step set), or one annotation or label of the Workflow.
_RAW: Final = re.compile(
    rf"(inputs|workflow|workflow\.outputs)\.parameters\.({_NAME})|(workflow\.(?:annotations|labels))\.({_KEY})"
)
_TAG: Final = re.compile(r"\{\{\s*(.*?)\s*\}\}", re.DOTALL)
#: What Go's quoting leaves as it is and an expr string literal may hold unescaped.
_LITERAL_SAFE: Final = re.compile(r"[A-Za-z0-9 _.,:/=+@%-]")


class Exact(str):
    """A text known when the workflow is built that a process must get as it is (a Python program's arguments, as
    JSON), bound into a manifest as a job's own argument: :func:`in_manifest` writes its ``$`` doubled in a pod's
    command, arguments and env values, so that the kubelet expands nothing, as the expression of a Pipeline's
    parameter does. Elsewhere it is an ordinary string."""

    __slots__ = ()


@dataclass(frozen=True)
class Value:
    """A parameter read at run time: ``ROOT.parameters.NAME`` written as ``kind``, its ``$`` doubled ``dollars``
    times."""

    root: str
    name: str
    kind: Kind = "text"
    dollars: int = 0

    @property
    def variable(self) -> str:
        """The variable as a simple tag names it (``inputs.parameters.X``, ``workflow.annotations.K``)."""
        return f"{self.root}.{self.name}" if self.root in _METADATA else f"{self.root}.parameters.{self.name}"


#: The Workflow's annotations and labels, read by key.
_METADATA: Final = ("workflow.annotations", "workflow.labels")


def _reference(root: str, name: str) -> str:
    """The variable in an expression: Argo's expression scope nests every dotted name (``a.b`` is ``a['b']``), so
    an annotation key ``example.com/team`` is ``workflow.annotations['example']['com/team']``."""
    if root in _METADATA:
        return root + "".join(f"['{part}']" for part in name.split("."))
    return f"{root}.parameters['{name}']"


def _read(root: str, name: str, dollars: int) -> str:
    read = _reference(root, name)
    return f"replace({read}, '$', '{'$' * 2**dollars}')" if dollars else read


def _no_braces(expression: str) -> str:
    """The expression's text result with every ``{`` as the YAML escape ``\\x7b``: Argo's second pass finds no tag."""
    return f"replace({expression}, '\\x7b', '\\\\x7b')"


def expression(value: Value) -> str:
    """The Argo expression (``=...``, without the braces) that writes ``value`` as one YAML scalar."""
    if value.kind == "integer":
        return f"=asInt({_reference(value.root, value.name)})"
    read = _read(value.root, value.name, value.dollars)
    if value.kind == "json":
        return "=" + _no_braces(f"replace(toJson(sprig.mustFromJson({read})), '\\u0085', '\\\\u0085')")
    return "=" + _no_braces(f"sprig.quote({read})")


#: A variable as :func:`_reference` writes it: a parameter (groups 1, 2) or an annotation or label (groups 3, 4).
_REFERENCE: Final = (
    rf"(inputs|workflow|workflow\.outputs)\.parameters\['({_NAME})'\]"
    r"|(workflow\.(?:annotations|labels))((?:\['[-A-Za-z0-9_/]*'\])+)"
)


def _referenced(groups: Sequence[str | None]) -> tuple[str, str]:
    """(root, name) from the four groups of :data:`_REFERENCE` (or of :data:`_RAW`)."""
    parameter_root, parameter, metadata_root, key = groups
    if parameter_root is not None and parameter is not None:
        return parameter_root, parameter
    assert metadata_root is not None and key is not None
    return metadata_root, key if not key.startswith("[") else ".".join(re.findall(r"\['([^']*)'\]", key))


def _form(kind: Kind, dollars: int) -> re.Pattern[str]:
    text = re.escape(expression(Value("ROOT", "NAME", kind, dollars)))
    return re.compile(text.replace(re.escape("ROOT.parameters['NAME']"), f"(?:{_REFERENCE})"))


_FORMS: Final = {(kind, d): _form(kind, d) for kind in KINDS for d in range(MAX_DOLLARS + 1)}


def parse(expression_text: str) -> Value | None:
    """The value a placeholder's expression reads: a simple parameter tag (``inputs.parameters.X``, kind text) or
    one :func:`expression` wrote; None for anything else (Argo's own variables, expressions of your own)."""
    raw = _RAW.fullmatch(expression_text)
    if raw is not None:
        return Value(*_referenced(raw.groups()))
    for (kind, dollars), form in _FORMS.items():
        found = form.fullmatch(expression_text)
        if found is not None:
            return Value(*_referenced(found.groups()), kind, dollars)  # type: ignore[arg-type]
    return None


def kind_of(placeholder: Placeholder) -> Kind:
    """How a placeholder's value is written, from its sample: text (a string, or ``quoted``), an integer, or JSON."""
    sample = placeholder.sample
    if placeholder.quoted or isinstance(sample, str) or sample is None:
        return "text"
    if isinstance(sample, int) and not isinstance(sample, bool):
        return "integer"
    return "json"


def reads(found: Placeholder) -> Value | None:
    """The parameter a placeholder reads (any form), as the manifest writes it: a simple tag by its sample's kind,
    an expression by its own; None for other placeholders."""
    value = parse(found.expression)
    if value is None or not _RAW.fullmatch(found.expression):
        return value
    return Value(value.root, value.name, kind_of(found), value.dollars)


def placeholder(found: Placeholder, *, dollars: int, kind: Kind | None = None) -> Placeholder:
    """``found`` (a parameter placeholder in any form) as the one expression for its place; other placeholders
    (Argo's own variables, expressions of your own) are returned as they are."""
    read = reads(found)
    if read is None:
        return found
    value = read if kind is None else Value(read.root, read.name, kind)
    encoded = Value(value.root, value.name, value.kind, dollars)
    return Placeholder(expression(encoded), found.sample, quoted=False)


def _literal(text: str, executor: bool) -> str:
    """``text`` as an expr string literal holding no brace, quote or line break (escapes instead); ``$`` doubled
    for argoexec's expansion with ``executor``."""
    if executor:
        text = text.replace("$", "$$")
    out = []
    for char in text:
        code = ord(char)
        out.append(char if _LITERAL_SAFE.fullmatch(char) else _code_escape(code))
    return "'" + "".join(out) + "'"


def _pod_literal(text: str) -> str:
    """``text`` with every ``$`` the kubelet leaves as it is (neither ``$$`` nor part of a ``$(NAME)``) written
    ``$$``: the same text at the pod, and no lone ``$`` for a value joined after it to complete (``price$`` then a
    value ``(HOME)`` would read HOME, then ``$(X)`` would read X)."""
    out, i = [], 0
    while i < len(text):
        if text[i] != "$":
            out.append(text[i])
            i += 1
        elif text.startswith("$$", i):
            out.append("$$")
            i += 2
        elif text.startswith("$(", i) and ")" in text[i + 2 :]:
            end = text.index(")", i + 2) + 1
            out.append(text[i:end])
            i = end
        else:
            out.append("$$")
            i += 1
    return "".join(out)


def embedded(text: str, field: str, *, dollars: int, executor: bool) -> str | Placeholder:
    """A string holding tags of values a submitter sets among other text (``job-{{inputs.parameters.i}}``) as one
    expression that joins them, written as one text scalar; a string holding only Argo's own variables
    (``{{workflow.name}}``) stays as it is, and one holding any other variable is refused (:func:`raw_problem`). The
    literal parts keep their meaning at the pod, each on its own (:func:`_pod_literal` where the kubelet expands,
    ``dollars`` above 1; their ``$`` doubled for argoexec's expansion, with ``executor``)."""
    tags = list(_TAG.finditer(text))
    if text.count("{{") != len(tags):
        raise ValidationError(field, "holds '{{' that no '}}' closes, on which Argo fails the step at run time")
    values = [_RAW.fullmatch(t.group(1)) for t in tags]
    for tag, value in zip(tags, values, strict=True):
        problem = None if value is not None else raw_problem(tag.group(1))
        if problem is not None:
            raise ValidationError(field, f"holds {tag.group(0)}, {problem}")
    if not any(values):
        return text
    if not all(values):
        other = next(t.group(0) for t, v in zip(tags, values, strict=True) if v is None)
        raise ValidationError(
            field,
            f"joins a parameter with {other} in one string: Argo would paste them raw; pass the whole text as one"
            " parameter (Placeholder.input)",
        )
    literal = _pod_literal if dollars == MAX_DOLLARS else str
    parts, last = [], 0
    for tag, value in zip(tags, values, strict=True):
        assert value is not None
        if tag.start() > last:
            parts.append(_literal(literal(text[last : tag.start()]), executor))
        parts.append(_read(*_referenced(value.groups()), dollars))
        last = tag.end()
    if last < len(text):
        parts.append(_literal(literal(text[last:]), executor))
    return Placeholder("=" + _no_braces(f"sprig.quote({' + '.join(parts)})"), text, quoted=False)


#: Variables whose values Argo makes (names, ids, times, phases, counts), which a manifest may hold as they are.
_ARGO_MADE: Final = re.compile(
    r"workflow\.(?:name|namespace|uid|mainEntrypoint|priority|status|duration|creationTimestamp(?:\.[A-Za-z0-9]+)?)"
    r"|pod\.name|node\.name|retries"
)
#: Variables that are the JSON of every parameter, annotation or label at once.
_WHOLE: Final = re.compile(
    r"(?:inputs|workflow(?:\.outputs)?)\.parameters(?:\.json)?|workflow\.(?:annotations|labels)(?:\.json)?"
)


def raw_problem(variable: str) -> str | None:
    """Why a simple tag of ``variable`` (the text between the braces) cannot stand in a manifest, or None: for
    Argo's own variables, for expressions (``=...``: written as you wrote them), and for the values :func:`embedded`
    reads through an expression. Argo pastes any other variable's value raw, and a submitter may set it (the
    Workflow's service account, its ``scheduled-time`` annotation, a CronWorkflow's labels...)."""
    if variable.startswith("=") or _ARGO_MADE.fullmatch(variable) or _RAW.fullmatch(variable):
        return None
    if _WHOLE.fullmatch(variable):
        return (
            "the JSON of them all, which Argo pastes raw where the submitter sets each one: read the one value the job"
            " needs ({{workflow.parameters.NAME}}, {{workflow.annotations.KEY}}, Placeholder.input(NAME, ...))"
        )
    return (
        "a variable whose value Argo pastes raw and which is not Argo's own (a submitter may set it): pass the"
        " value as a parameter (Placeholder.input(NAME, ...) or Placeholder.workflow_parameter(NAME, ...))"
    )


def check_keys(data: object, path: str = "") -> None:
    """Refuse a mapping key that holds an Argo tag (or is a placeholder) anywhere in ``data``. A key cannot be a
    run-time value: Argo would paste it raw (adding fields to the pod spec), and even a quoted key is a choice of
    entry (a value equal to another key of its mapping replaces that entry, a label the follower finds the job by,
    say), which no quoting prevents."""
    if isinstance(data, Mapping):
        for key, item in data.items():
            at = f"{path}[{str(key)!r}]"
            if isinstance(key, Placeholder) or (isinstance(key, str) and "{{" in key):
                raise ValidationError(
                    at,
                    f"is a mapping key holding an Argo tag ({key}): a key cannot be a run-time value (Argo pastes it"
                    " raw and no quoting stops it from naming another entry); write the key when the job is built"
                    " and give the run-time value as the entry's value",
                )
            check_keys(item, f"{path}.{key}" if path else str(key))
    elif isinstance(data, list | tuple):
        for i, item in enumerate(data):
            check_keys(item, f"{path}[{i}]")


def pod_field(path: tuple[str, ...]) -> bool:
    """Whether the kubelet expands ``$(VAR)`` at ``path``: a container's command, arguments or env values."""
    for i, key in enumerate(path):
        if key in ("containers", "initContainers") and i + 2 < len(path):
            rest = path[i + 2 :]
            return rest[0] in ("command", "args") or (rest[0] == "env" and rest[-1] == "value")
    return False


def in_manifest(data: object) -> object:
    """``data`` (a Volcano Job, for a resource template's manifest) with every run-time value written by
    :func:`expression` for its place: ``$`` doubled for argoexec's expansion of the manifest and again in a
    container's command, arguments and env values. The one encoding of every field that takes a placeholder."""

    def walk(node: object, path: tuple[str, ...]) -> object:
        dollars = 1 + pod_field(path)
        if isinstance(node, Placeholder):
            problem = None if node.expression.startswith("=") else raw_problem(node.expression)
            if problem is not None:
                raise ValidationError(".".join(path), f"holds {node}, {problem}")
            return placeholder(node, dollars=dollars)
        if isinstance(node, Exact):
            return node.replace("$", "$$") if dollars == MAX_DOLLARS else str(node)
        if isinstance(node, str) and "\x00" in node:
            raise ValidationError(".".join(path), "holds NUL, which no Kubernetes string or argument can hold")
        if isinstance(node, str) and not isinstance(node, Verbatim):
            text = str.__str__(node)  # a str subclass (a StrEnum's member) is its text, read as any other
            return embedded(text, ".".join(path), dollars=dollars, executor=True) if "{{" in text else text
        if isinstance(node, Mapping):
            return {k: walk(v, (*path, str(k))) for k, v in node.items()}
        if isinstance(node, list | tuple):
            return [walk(v, (*path, str(i))) for i, v in enumerate(node)]
        return node

    check_keys(data)
    return walk(data, ())


def go_quote(text: str) -> str:
    """``text`` as Go's ``strconv.Quote`` (so ``sprig.quote``) writes it: a double-quoted string that YAML reads
    back as ``text``."""
    out = ['"']
    for char in text:
        code = ord(char)
        if char in '"\\':
            out.append("\\" + char)
        elif char in _GO_ESCAPES:
            out.append(_GO_ESCAPES[char])
        else:
            out.append(char if char.isprintable() else _code_escape(code))
    return "".join(out) + '"'


_GO_ESCAPES: Final = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v"}
_JOINED: Final = re.compile(r"=replace\(sprig\.quote\((.*)\), '\\x7b', '\\\\x7b'\)", re.DOTALL)
_PART: Final = re.compile(rf"(?:'((?:[^'\\]|\\.)*)'|(?:replace\()?(?:{_REFERENCE})(?:, '\$', '\$+'\))?)(?: \+ |$)")


def sample(expression_text: str, values: Mapping[str, str]) -> str | None:
    """What Argo writes for an expression :func:`expression` or :func:`embedded` wrote, given parameter values by
    ``ROOT.parameters.NAME`` (lint's samples; ``$`` as given); None for any other expression."""
    value = parse(expression_text)
    if value is not None and not _RAW.fullmatch(expression_text):
        text = values.get(value.variable, "")
        return go_quote(text).replace("{", "\\x7b") if value.kind == "text" else text
    joined = _JOINED.fullmatch(expression_text)
    if joined is None:
        return None
    out, at, body = [], 0, joined.group(1)
    while at < len(body):
        part = _PART.match(body, at)
        if part is None or part.end() == at:
            return None
        literal, *reference = part.groups()
        read = None if literal is not None else Value(*_referenced(reference)).variable
        out.append(_unescape(literal) if read is None else values.get(read, ""))
        at = part.end()
    return go_quote("".join(out)).replace("{", "\\x7b")


def _unescape(literal: str) -> str:
    """An expr string literal :func:`_literal` wrote, read back."""
    return _ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), literal)


_ESCAPE: Final = re.compile(r"\\[xuU]([0-9a-f]+)")


def _code_escape(code: int) -> str:
    """A character by its code, as Go and expr write one: ``\\xNN`` below 0x80, else ``\\uNNNN`` or ``\\UNNNNNNNN``."""
    if code < 0x80:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"
