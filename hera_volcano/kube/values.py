"""How a value known only at run time (a workflow parameter, a template's input) enters a manifest or a pod.

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
environment), ``$`` doubled once per expansion. ``docs/security.md`` states the rule.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
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
_RAW: Final = re.compile(rf"(inputs|workflow)\.parameters\.({_NAME})")
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


def _read(root: str, name: str, dollars: int) -> str:
    read = f"{root}.parameters['{name}']"
    return f"replace({read}, '$', '{'$' * 2**dollars}')" if dollars else read


def _no_braces(expression: str) -> str:
    """The expression's text result with every ``{`` as the YAML escape ``\\x7b``: Argo's second pass finds no tag."""
    return f"replace({expression}, '\\x7b', '\\\\x7b')"


def expression(value: Value) -> str:
    """The Argo expression (``=...``, without the braces) that writes ``value`` as one YAML scalar."""
    if value.kind == "integer":
        return f"=asInt({value.root}.parameters['{value.name}'])"
    read = _read(value.root, value.name, value.dollars)
    if value.kind == "json":
        return "=" + _no_braces(f"replace(toJson(sprig.mustFromJson({read})), '\\u0085', '\\\\u0085')")
    return "=" + _no_braces(f"sprig.quote({read})")


def _form(kind: Kind, dollars: int) -> re.Pattern[str]:
    text = re.escape(expression(Value("ROOT", "NAME", kind, dollars)))
    return re.compile(text.replace("ROOT", "(inputs|workflow)").replace("NAME", f"({_NAME})"))


_FORMS: Final = {(kind, d): _form(kind, d) for kind in KINDS for d in range(MAX_DOLLARS + 1)}


def parse(expression_text: str) -> Value | None:
    """The value a placeholder's expression reads: a simple parameter tag (``inputs.parameters.X``, kind text) or
    one :func:`expression` wrote; None for anything else (Argo's own variables, expressions of your own)."""
    raw = _RAW.fullmatch(expression_text)
    if raw is not None:
        return Value(raw.group(1), raw.group(2))
    for (kind, dollars), form in _FORMS.items():
        found = form.fullmatch(expression_text)
        if found is not None:
            return Value(found.group(1), found.group(2), kind, dollars)  # type: ignore[arg-type]
    return None


def kind_of(placeholder: Placeholder) -> Kind:
    """How a placeholder's value is written, from its sample: text (a string, or ``quoted``), an integer, or JSON."""
    sample = placeholder.sample
    if placeholder.quoted or isinstance(sample, str) or sample is None:
        return "text"
    if isinstance(sample, int) and not isinstance(sample, bool):
        return "integer"
    return "json"


def placeholder(found: Placeholder, *, dollars: int, kind: Kind | None = None) -> Placeholder:
    """``found`` (a parameter placeholder in any form) as the one expression for its place; other placeholders
    (Argo's own variables, expressions of your own) are returned as they are."""
    value = parse(found.expression)
    if value is None:
        return found
    written = kind or (kind_of(found) if _RAW.fullmatch(found.expression) else value.kind)
    encoded = Value(value.root, value.name, written, dollars)
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
    """A string holding parameter tags among other text (``job-{{inputs.parameters.i}}``) as one expression that
    joins them, written as one text scalar; a string without parameter tags stays as it is. The literal parts keep
    their meaning at the pod, each on its own (:func:`_pod_literal` where the kubelet expands, ``dollars`` above 1;
    their ``$`` doubled for argoexec's expansion, with ``executor``)."""
    tags = list(_TAG.finditer(text))
    if text.count("{{") != len(tags):
        raise ValidationError(field, "holds '{{' that no '}}' closes, on which Argo fails the step at run time")
    values = [_RAW.fullmatch(t.group(1)) for t in tags]
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
        parts.append(_read(value.group(1), value.group(2), dollars))
        last = tag.end()
    if last < len(text):
        parts.append(_literal(literal(text[last:]), executor))
    return Placeholder("=" + _no_braces(f"sprig.quote({' + '.join(parts)})"), text, quoted=False)


def _pod_field(path: tuple[str, ...]) -> bool:
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
        dollars = 1 + _pod_field(path)
        if isinstance(node, Placeholder):
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
_PART: Final = re.compile(
    rf"(?:'((?:[^'\\]|\\.)*)'|(?:replace\()?(inputs|workflow)\.parameters\['({_NAME})'\](?:, '\$', '\$+'\))?)(?: \+ |$)"
)


def sample(expression_text: str, values: Mapping[str, str]) -> str | None:
    """What Argo writes for an expression :func:`expression` or :func:`embedded` wrote, given parameter values by
    ``ROOT.parameters.NAME`` (lint's samples; ``$`` as given); None for any other expression."""
    value = parse(expression_text)
    if value is not None and not _RAW.fullmatch(expression_text):
        text = values.get(f"{value.root}.parameters.{value.name}", "")
        return go_quote(text).replace("{", "\\x7b") if value.kind == "text" else text
    joined = _JOINED.fullmatch(expression_text)
    if joined is None:
        return None
    out, at, body = [], 0, joined.group(1)
    while at < len(body):
        part = _PART.match(body, at)
        if part is None or part.end() == at:
            return None
        literal, root, name = part.groups()
        out.append(_unescape(literal) if literal is not None else values.get(f"{root}.parameters.{name}", ""))
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
