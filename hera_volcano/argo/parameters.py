"""Argo's rules for parameter lists: a workflow's or a call's ``arguments`` and a template's ``inputs``.

A Workflow submitted with an argument that has no value, or a step passing a parameter twice, is refused by Argo
at submission; lint reports it before. The rules are Argo's own (``validateWorkflowFieldNames`` and
``validateArgumentsValues``, alike in 3.7 and 4.1), applied to plain data; and ours: a Workflow argument holding
``{{`` or NUL, which Argo would substitute again wherever it is used (an expression that does not parse leaves the
run without a phase). Which arguments a call must pass, and may: :class:`CallArguments`, by which both the builders
and lint judge a call.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from hera_volcano.shared.errors import ValidationError
from hera_volcano.shared.findings import Finding, error, warning
from hera_volcano.shared.placeholders import refusal
from hera_volcano.shared.suggestions import did_you_mean

_NAME: Final = re.compile(r"[-a-zA-Z0-9_]+")
#: The ``valueFrom`` sources an argument may use; the others only make sense for a template's outputs.
_ARGUMENT_SOURCES: Final = ("configMapKeyRef", "event", "supplied")
_OUTPUT_SOURCES: Final = ("path", "jsonPath", "parameter", "expression")
#: What YAML 1.2 (Argo's Go decoder) reads as a number although PyYAML's YAML 1.1 keeps it a string, or the reverse.
_NUMBERISH: Final = re.compile(r"[-+]?(\.[0-9]+|[0-9][0-9_]*(\.[0-9]*)?)([eE][-+]?[0-9]+)?|0[xXoObB][0-9a-fA-F_]+")

_WORKFLOW_PARAMETER: Final = re.compile(r"\{\{\s*workflow\.parameters\.([^{}\s]+?)\s*\}\}")
#: An Argo expression, and a workflow parameter read in one (``workflow.parameters.x`` or ``['x']``).
_EXPRESSION: Final = re.compile(r"\{\{=(.*?)\}\}", re.DOTALL)
_IN_EXPRESSION: Final = re.compile(r"\bworkflow\.parameters(?:\.([a-zA-Z_][a-zA-Z0-9_]*)|\[['\"]([^'\"]+)['\"]\])")


def workflow_parameters(text: str) -> list[str]:
    """The workflow parameters a string reads: in ``{{workflow.parameters.X}}`` and in expressions ``{{=...}}``
    (lint judges a Workflow by it; :meth:`hera_volcano.Pipeline.workflow` its own)."""
    found = _WORKFLOW_PARAMETER.findall(text)
    for expression in _EXPRESSION.findall(text):
        found += [a or b for a, b in _IN_EXPRESSION.findall(expression)]
    return found


#: How an argument without a value is judged: ``optional`` in a WorkflowTemplate's own ``spec.arguments``;
#: ``submitted`` in a Workflow's (``argo submit -p NAME=VALUE`` may still supply it); ``required`` in a step or task.
Values = Literal["optional", "submitted", "required"]


def check_parameters(holder: object, path: str, *, values: Values | None) -> Iterator[Finding]:
    """Check ``holder.parameters`` (``holder`` is an ``arguments`` or ``inputs`` mapping at ``path``).

    ``values`` applies the value rules to arguments (see :data:`Values`); inputs (None) only declare names.
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
        if values is not None:
            yield from _check_value(param, here, values)
            if values == "optional" and param.get("enum") is not None and param.get("value") is None:
                values = None  # Argo stops checking values here (an early return), so later ones pass as they are


def _check_name(name: object, path: str, seen: dict[str, int], index: int, list_path: str) -> Iterator[Finding]:
    if name in (None, ""):
        yield error(f"{path}.name", "is required")
    elif not isinstance(name, str) or not _NAME.fullmatch(name):
        yield error(f"{path}.name", "must consist of letters, digits, '_' or '-', e.g. my_param_1 or MY-PARAM-1")
    elif name in seen:
        yield error(f"{path}.name", f"duplicate parameter name {name!r}: also {list_path}[{seen[name]}]")
    else:
        seen[name] = index


def _check_value(param: Mapping[str, Any], path: str, values: Values) -> Iterator[Finding]:
    value, source, enum = param.get("value"), param.get("valueFrom"), param.get("enum")
    if values != "required" and isinstance(value, str) and refusal(value) is not None:
        # A Workflow's own argument: Argo substitutes it when the run starts and again wherever it is used.
        yield error(f"{path}.value", f"{refusal(value)}: a submitted value must be plain text")
    if value is None and source is None and values == "submitted":
        yield warning(path, "has no value: argo submit refuses the Workflow unless given -p NAME=VALUE")
    elif value is None and source is None and values == "required":
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
        if values != "optional" and source is not None:  # without either, the missing value is reported above
            report = warning if values == "submitted" else error
            yield report(f"{path}.value", f"is required with an enum, even with valueFrom: one of {allowed}")
    # Argo compares the values as strings; only plain strings are compared here, and none that YAML 1.2 (Argo's
    # decoder) might read as a number, so that no spelling of a number is judged differently from Argo.
    elif _plain_text(value) and all(_plain_text(v) for v in enum) and value not in enum:
        yield error(f"{path}.value", f"must be one of the enum ({allowed}), not {value!r}")


def _plain_text(value: object) -> bool:
    return isinstance(value, str) and not _NUMBERISH.fullmatch(value)


def has_own_value(parameter: Mapping[str, object]) -> bool:
    """Whether Argo gives a template's input a value when a call passes it none (``common.ProcessArgs``): its
    ``default`` or ``value``, or the ConfigMap key it reads (``valueFrom.configMapKeyRef``: the key's value, or
    ``valueFrom.default`` when the ConfigMap lacks it). No other ``valueFrom`` gives one: Argo refuses the call
    ("inputs.parameters.NAME was not supplied")."""
    source = parameter.get("valueFrom")
    return (
        parameter.get("default") is not None
        or parameter.get("value") is not None
        or (isinstance(source, Mapping) and source.get("configMapKeyRef") is not None)
    )


@dataclass(frozen=True)
class CallArguments:
    """What is wrong with the parameters a call passes to a template, by Argo's rule for calls (a step's, a task's,
    the workflow's own to its entrypoint): ``unknown`` arguments name no input (Argo ignores them, and the input
    they meant keeps its own value or is missing); ``missing`` inputs have no value of their own and are not passed
    (Argo refuses the call). The builders (:mod:`hera_volcano.argo.calls`) and lint judge calls by it."""

    unknown: tuple[str, ...]
    missing: tuple[str, ...]

    @classmethod
    def judge(cls, inputs: Iterable[Mapping[str, object]], passed: Iterable[str]) -> CallArguments:
        """``inputs``: the template's input parameters, as Argo writes them; ``passed``: the names the call passes."""
        declared = list(inputs)
        names = {p.get("name") for p in declared}
        given = list(passed)
        return cls(
            unknown=tuple(name for name in given if name not in names),
            missing=tuple(str(p.get("name")) for p in declared if p.get("name") not in given and not has_own_value(p)),
        )


def check_arguments(of: str, inputs: Sequence[Mapping[str, object]], passed: Sequence[str]) -> None:
    """A call's arguments by :class:`CallArguments` (``of``: what is called, ``template 'train'``), as
    :class:`ValidationError`: the first argument that names no input (and the closest input), or the inputs
    without a value of their own that it leaves out."""
    known = [str(p.get("name")) for p in inputs]
    judged = CallArguments.judge(inputs, passed)
    for name in judged.unknown:
        choices = f"; its inputs are {', '.join(known)}" if known else "; it has no inputs"
        raise ValidationError(f"arguments.{name}", f"names no input of {of}{did_you_mean(name, known)}{choices}")
    if judged.missing:
        missing = judged.missing
        raise ValidationError(
            "arguments",
            f"must give the input{'s' if len(missing) > 1 else ''} {', '.join(missing)} of {of}: it has no default",
        )
