"""Argo's field names at every level of a workflow object, checked as strictly as ``argo lint`` decodes them.

Argo's CLI and API server decode workflows strictly: an unknown field anywhere (a typo such as ``entrypiont``, a
field at the wrong level) fails the submission. Lint says which field, where, and which name was meant. Fields one
supported Argo line knows and the other does not get a warning that says which. A mapping or a list where Argo wants
a string, a number or a boolean (``podSpecPatch`` written as YAML instead of text) is an error too.
"""

from __future__ import annotations

import typing
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from hera_volcano.argo import workflow_fields
from hera_volcano.kube.pod_fields import FieldKind, model_name
from hera_volcano.kube.quantities import json_quantity
from hera_volcano.shared.checks import INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN
from hera_volcano.shared.findings import Finding, entry, error, warning
from hera_volcano.shared.suggestions import did_you_mean

_SCALARS: Final[Mapping[str, str]] = {
    "str": "a string",
    "int": "an integer",
    "bool": "true or false",
    "int32": "an integer",
    "int-or-str": "an integer or a string",
    "quantity": "a quantity such as 500m or 1Gi (Kubernetes' resource.Quantity)",
    "any-scalar": "a string, a number or true/false",
}
#: How to write what people most often get wrong.
_HINTS: Final[Mapping[str, str]] = {
    "podSpecPatch": ": podSpecPatch is a patch written as text (podSpecPatch: | followed by YAML or JSON)",
}


@dataclass(frozen=True)
class FieldFindings:
    """``names``: unknown fields and fields of one Argo line only; ``types``: a mapping or list where a scalar
    belongs, or the other way round (other rules may already say more about those fields, so they are reported only
    where nothing else is)."""

    names: list[Finding]
    types: list[Finding]


def check_fields(doc: Mapping[str, object], kind: str) -> FieldFindings:
    """Every field of a workflow object of ``kind`` (a root of :data:`workflow_fields.ROOTS`) against Argo's."""
    walker = _Walker()
    walker.walk(doc, {"model": kind})
    return walker.found


def _shape(value: object) -> str:
    return "a mapping" if isinstance(value, Mapping) else "a list"


def _what(name: str) -> str:
    shown = name.removeprefix("meta.")
    owner = "Argo" if name in workflow_fields.table() else "Kubernetes"
    return f"{'an' if owner == 'Argo' else 'a'} {owner} {shown}"


#: Plain YAML scalars: nothing to walk into (checked first: most values are these).
_PLAIN: Final = (str, int, bool, float)
#: A field Argo decodes from any scalar (``AnyString``): a parameter's value may be written 3 or true.
_ANY_SCALAR: Final = "any-scalar"


def _loosen(kind: FieldKind) -> FieldKind:
    """An AnyString field's kind: its strings (a list's items too, as ``enum``'s) take any scalar."""
    if kind == "str":
        return _ANY_SCALAR
    return {"list": _loosen(kind["list"])} if isinstance(kind, Mapping) and "list" in kind else kind


def _narrow(kind: FieldKind) -> FieldKind:
    """An int32 field's kind (a list's items too): Go refuses a number beyond the int32 range in it."""
    if kind == "int":
        return "int32"
    return {"list": _narrow(kind["list"])} if isinstance(kind, Mapping) and "list" in kind else kind


def _field_kind(model: str, field: str, kind: FieldKind) -> FieldKind:
    """The kind to check a model's field against: loosened for Argo's AnyString, narrowed for Go's int32."""
    if field in workflow_fields.ANY_SCALAR.get(model, ()):
        return _loosen(kind)
    return _narrow(kind) if field in workflow_fields.INT32_FIELDS.get(model, ()) else kind


#: The range Go decodes into each integer kind; an IntOrString holds an int32.
_RANGES: Final[Mapping[str, tuple[int, int, str]]] = {
    "int": (INT64_MIN, INT64_MAX, "int64"),
    "int32": (INT32_MIN, INT32_MAX, "int32"),
    "int-or-str": (INT32_MIN, INT32_MAX, "int32"),
}


def _whole(value: object) -> bool:
    """YAML writes a whole float such as ``2.0`` as the integer 2, so it passes as one."""
    return (isinstance(value, int) and not isinstance(value, bool)) or (isinstance(value, float) and value.is_integer())


def _decodes(value: object, kind: str) -> bool:
    """Whether Go's JSON decoding (what Argo's strict parser does after YAML) takes the scalar ``value`` for a field
    of ``kind``: the right type, an integer in its Go type's range, a quantity Kubernetes parses."""
    if kind == "str":
        return isinstance(value, str)
    if kind == "bool":
        return isinstance(value, bool)
    if kind in _RANGES:
        low, high, _ = _RANGES[kind]
        return (_whole(value) and low <= typing.cast(float, value) <= high) or (
            kind == "int-or-str" and isinstance(value, str)
        )
    if kind == "quantity":
        return json_quantity(value)
    return True  # "any" and any-scalar take every scalar


def _type_message(value: object, kind: str) -> str:
    if kind in _RANGES and _whole(value):
        low, high, go_type = _RANGES[kind]
        return f"must be between {low} and {high} (a Go {go_type}), not the number {value}"
    return f"must be {_SCALARS[kind]}, not {_scalar(value)}"


def _scalar(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f"the string {value[:40]!r}"
    return f"the number {value}"


class _Walker:
    """One walk over a document. The path is a stack of keys and indices, turned into text only for a finding
    (most fields are fine, and formatting every path would double the walk's cost)."""

    def __init__(self) -> None:
        self.found = FieldFindings([], [])
        self.parts: list[object] = []

    def path(self) -> str:
        path = ""
        for part in self.parts:
            path = f"{path}[{part}]" if isinstance(part, int) else entry(path, part)
        return path

    def walk(self, value: object, kind: FieldKind) -> None:
        """Check ``value`` against the table kind ``kind`` (``null`` always passes, as the API server decodes it)."""
        if value is None or kind == "any":
            return
        if isinstance(kind, str):
            if not isinstance(value, _PLAIN) and isinstance(value, (Mapping, list)):
                field = str(self.parts[-1]) if self.parts else ""
                message = f"must be {_SCALARS.get(kind, 'a scalar')}, not {_shape(value)}{_HINTS.get(field, '')}"
                self.found.types.append(error(self.path(), message))
            elif not _decodes(value, kind):
                message = f"{_type_message(value, kind)}: Argo's strict decoding refuses the workflow"
                self.found.types.append(error(self.path(), message))
            return
        if "list" in kind:
            if not isinstance(value, list):
                self.found.types.append(error(self.path(), "must be a list"))
                return
            for i, item in enumerate(value):
                self.parts.append(i)
                self.walk(item, kind["list"])
                self.parts.pop()
            return
        if not isinstance(value, Mapping):
            what = "a mapping" if "map" in kind else f"a mapping: {_what(model_name(kind))}"
            self.found.types.append(error(self.path(), f"must be {what}"))
            return
        if "map" in kind:
            for key, item in value.items():
                self.parts.append(str(key))
                self.walk(item, kind["map"])
                self.parts.pop()
            return
        self.walk_model(value, model_name(kind))

    def walk_model(self, value: Mapping[str, object], name: str) -> None:
        fields = workflow_fields.model(name)
        removed = workflow_fields.ARGO_37_ONLY.get(name, {})
        added = workflow_fields.ARGO_4_ONLY.get(name, ())
        for key, item in value.items():
            self.parts.append(str(key))
            if key in added:
                self.found.names.append(
                    warning(self.path(), "is new in Argo 4: Argo 3.7 refuses it as an unknown field")
                )
            if key in fields:
                self.walk(item, _field_kind(name, key, fields[key]))
            elif key in removed:
                self.found.names.append(
                    warning(
                        self.path(),
                        f"is known to Argo 3.7 only: Argo 4 removed it (its CRDs and CLI refuse the workflow);"
                        f" use {removed[key]}",
                    )
                )
            elif key not in added:
                hint = did_you_mean(str(key), [*fields, *added])
                self.found.names.append(
                    error(self.path(), f"unknown field {key!r}: not a field of {_what(name)}{hint}")
                )
            self.parts.pop()
