"""Argo's rules for parameter lists: a workflow's or a call's ``arguments`` and a template's ``inputs``.

A Workflow submitted with an argument that has no value, or a step passing a parameter twice, is refused by Argo
at submission; lint reports it before. The rules are Argo's own (``validateWorkflowFieldNames`` and
``validateArgumentsValues``, alike in 3.7 and 4.1), applied to plain data.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any, Final

from hera_volcano.findings import Finding, error

_NAME: Final = re.compile(r"[-a-zA-Z0-9_]+")
#: The ``valueFrom`` sources an argument may use; the others only make sense for a template's outputs.
_ARGUMENT_SOURCES: Final = ("configMapKeyRef", "event", "supplied")
_OUTPUT_SOURCES: Final = ("path", "jsonPath", "parameter", "expression")


def check_parameters(holder: object, path: str, *, arguments: bool, require_values: bool) -> Iterator[Finding]:
    """Check ``holder.parameters`` (``holder`` is an ``arguments`` or ``inputs`` mapping at ``path``).

    ``arguments`` applies the value rules (inputs declare, arguments supply); ``require_values`` is false where
    Argo lets an argument stay open, as in a WorkflowTemplate's own ``spec.arguments``.
    """
    if holder is None:
        return
    if not isinstance(holder, Mapping):
        yield error(path, "must be a mapping with parameters")
        return
    params = holder.get("parameters")
    at = f"{path}.parameters"
    if params is None:
        return
    if not isinstance(params, list):
        yield error(at, "must be a list of parameters, each with a name")
        return
    seen: dict[str, int] = {}
    for i, param in enumerate(params):
        here = f"{at}[{i}]"
        if not isinstance(param, Mapping):
            yield error(here, "must be a mapping: a parameter with a name")
            continue
        yield from _check_name(param.get("name"), here, seen, i, at)
        if arguments:
            yield from _check_value(param, here, require_values)


def _check_name(name: object, path: str, seen: dict[str, int], index: int, list_path: str) -> Iterator[Finding]:
    if name in (None, ""):
        yield error(f"{path}.name", "is required")
    elif not isinstance(name, str) or not _NAME.fullmatch(name):
        yield error(f"{path}.name", "must consist of letters, digits, '_' or '-', e.g. my_param_1 or MY-PARAM-1")
    elif name in seen:
        yield error(f"{path}.name", f"duplicate parameter name {name!r}: also {list_path}[{seen[name]}]")
    else:
        seen[name] = index


def _check_value(param: Mapping[str, Any], path: str, require_values: bool) -> Iterator[Finding]:
    value, source, enum = param.get("value"), param.get("valueFrom"), param.get("enum")
    if value is None and source is None and require_values:
        yield error(path, "needs a value or valueFrom: Argo refuses an argument without one")
    if source is not None:
        given = source if isinstance(source, Mapping) else {}
        if not any(given.get(k) not in (None, "") for k in _ARGUMENT_SOURCES) or any(
            given.get(k) not in (None, "") for k in _OUTPUT_SOURCES
        ):
            yield error(f"{path}.valueFrom", "may only use configMapKeyRef, event or supplied (with default)")
    if enum is None:
        return
    if not isinstance(enum, list) or not enum:
        yield error(f"{path}.enum", "must list at least one value")
        return
    allowed = ", ".join(str(v) for v in enum)
    if value is None:
        if require_values and source is not None:  # without either, the missing value is reported above
            yield error(f"{path}.value", f"is required with an enum, even with valueFrom: one of {allowed}")
    # Argo compares the values as strings; only plain strings are compared here, so YAML's number forms need no guess.
    elif isinstance(value, str) and all(isinstance(v, str) for v in enum) and value not in enum:
        yield error(f"{path}.value", f"must be one of the enum ({allowed}), not {value!r}")
