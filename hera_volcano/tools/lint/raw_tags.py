"""Raw tags of values a submitter sets in a hand-written resource manifest (``{{inputs.parameters.x}}``,
``{{workflow.annotations.team}}``, ...).

Argo pastes a simple tag's value into the manifest's text before parsing it: a value holding a quote and a line
break ends its string and adds fields to the object (``hostNetwork: true``, another ``serviceAccountName``). The
builders read every such value through one expression (:mod:`hera_volcano.kube.values`) and refuse a tag in a
mapping key; this finds what they would not write, with the form they write in the message.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Final

from hera_volcano.kube import values
from hera_volcano.kube.loading import load_all
from hera_volcano.shared.errors import ValidationError
from hera_volcano.shared.findings import Finding, as_map, error
from hera_volcano.tools.lint.context import MANIFEST_SEPARATOR

_TAG: Final = re.compile(r"\{\{\s*([^{}]*?)\s*\}\}")
#: What stands for the i-th tag while the manifest is read before Argo substitutes it.
_MARK: Final = "hera-volcano-tag-{}-"
_MARKED: Final = re.compile(r"hera-volcano-tag-([0-9]+)-")
#: What stands before a tag that starts a bare scalar: a key's colon, a list's dash or a flow's bracket or comma.
_BARE: Final = re.compile(r"(?:(?:^|\s)-[ \t]+|:[ \t]+|[\[,][ \t]*)\Z")


@dataclass(frozen=True)
class _Tags:
    """The manifest's tags in order, and which of them are written bare (a number's)."""

    text: list[str]
    bare: set[int]


def _submitter_set(variable: str) -> bool:
    """Whether a simple tag of ``variable`` stands for a value a submitter sets (encodable or not)."""
    if variable.startswith("="):
        return False
    return values.parse(variable) is not None or values.raw_problem(variable) is not None


def check_raw_tags(template: Mapping[str, object], path: str) -> Iterator[Finding]:
    """Each key and each scalar of a resource template's manifest that holds a raw tag of a submitter-set value."""
    manifest = as_map(template.get("resource")).get("manifest")
    if not isinstance(manifest, str) or "{{" not in manifest:
        return
    tags = [m.group(0) for m in _TAG.finditer(manifest)]
    first = next((t for t in tags if any(_submitter_set(v) for v in _variables(t))), None)
    if first is None:
        return
    counter = iter(range(len(tags)))
    marked = _TAG.sub(lambda _: _MARK.format(next(counter)), manifest)
    # A tag written bare where a scalar starts (``replicas: {{inputs.parameters.n}}``) is a number's.
    bare = {i for i, m in enumerate(_TAG.finditer(manifest)) if _BARE.search(_before(manifest, m.start()))}
    at = f"{path}.resource.manifest{MANIFEST_SEPARATOR}"
    try:
        docs = list(load_all(marked))
    except Exception:  # the resource's own check reports what does not parse
        yield error(at.removesuffix(MANIFEST_SEPARATOR), _message(first, None, ()))
        return
    for doc in docs:
        if isinstance(doc, Mapping | list):  # a whole manifest given at run time is the submitter's object
            yield from _walk(doc, (), _Tags(tags, bare), at)


def _before(text: str, at: int) -> str:
    """What stands before ``at`` on its line (at most 200 characters: the scan stays linear in the text)."""
    return text[max(text.rfind("\n", 0, at) + 1, at - 200) : at]


def _restore(text: str, tags: _Tags) -> str:
    return _MARKED.sub(lambda m: tags.text[int(m.group(1))], text)


def _walk(node: object, where: tuple[str, ...], tags: _Tags, at: str) -> Iterator[Finding]:
    if isinstance(node, Mapping):
        for key, item in node.items():
            text = _restore(str(key), tags)
            here = (*where, text)
            if text != str(key) and any(_submitter_set(v) for v in _variables(text)):
                yield error(at + _dotted(here), _message(text, None, here, key=True))
            yield from _walk(item, here, tags, at)
    elif isinstance(node, list):
        for i, item in enumerate(node):
            yield from _walk(item, (*where, f"[{i}]"), tags, at)
    elif isinstance(node, str) and _MARKED.search(node):
        text = _restore(node, tags)
        if any(_submitter_set(v) for v in _variables(text)):
            only = _MARKED.fullmatch(node)
            number = only is not None and int(only.group(1)) in tags.bare
            yield error(at + _dotted(where), _message(text, _safe_form(text, where, number=number), where))


def _variables(text: str) -> list[str]:
    return [m.group(1) for m in _TAG.finditer(text)]


def _dotted(where: tuple[str, ...]) -> str:
    return "".join(p if p.startswith("[") else f".{p}" for p in where).lstrip(".")


def _safe_form(text: str, where: tuple[str, ...], *, number: bool = False) -> str | None:
    """What the builders write for ``text`` at ``where``: one expression whose result is one quoted scalar, ``$``
    doubled for each ``$(VAR)`` expansion the value passes (argoexec's, and a container's command, arguments and
    env); the literal text keeps the expansion it has now. None when no expression can carry it."""
    path = tuple(p.strip("[]") for p in where)
    value = values.parse(_variables(text)[0]) if number else None
    if value is not None:
        return "{{" + values.expression(values.Value(value.root, value.name, "integer")) + "}}"
    try:
        written = values.embedded(text, _dotted(where), dollars=1 + values.pod_field(path), executor=False)
    except ValidationError:
        return None
    return None if isinstance(written, str) else "{{" + written.expression + "}}"


def _message(text: str, safe: str | None, where: tuple[str, ...], *, key: bool = False) -> str:
    variables = ", ".join("{{" + v + "}}" for v in _variables(text) if _submitter_set(v))
    raw = f"holds {variables}, a value the submitter sets, which Argo pastes raw into the manifest"
    if key:
        return (
            f"is a mapping key that {raw}: a value with a quote and a line break adds fields, and no quoting stops a"
            " key from naming another entry; write the key itself and give the run-time value as the entry's value"
        )
    if safe is None:
        problems = [values.raw_problem(v) for v in _variables(text) if not v.startswith("=")]
        reason = next((p for p in problems if p is not None), "it cannot be read through one expression")
        return f"{raw}; {reason}"
    what = "an integer (anything else fails the step)" if "asInt(" in safe else "one quoted string"
    return (
        f"{raw}: a value with a quote and a line break ends the string and adds fields; write the scalar as {safe}"
        f" (unquoted: the expression writes {what}, as hera-volcano's builders do)"
    )
