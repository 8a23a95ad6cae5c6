"""Steps and DAG tasks call templates: their names, the template they name and the arguments they pass."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from hera_volcano.argo.parameters import check_parameters
from hera_volcano.kube import names
from hera_volcano.shared.findings import Finding, error
from hera_volcano.tools.lint.context import Workflow


def check_call(call: Mapping[str, Any], path: str, wf: Workflow) -> Iterator[Finding]:
    """A step or task runs a template of this workflow (templateRef and inline templates are not followed)."""
    yield from check_parameters(call.get("arguments"), f"{path}.arguments", values="required")
    if call.get("templateRef") is not None or call.get("inline") is not None:
        return
    target = call.get("template")
    if target in (None, ""):
        yield error(f"{path}.template", "is required: the name of the template to run (or templateRef)")
    elif not isinstance(target, str):
        yield error(f"{path}.template", "must be a string: the name of a template")
    elif "{{" not in target and target not in wf.template_names:
        yield error(f"{path}.template", f"must name a template of {wf.spec_path}.templates; there is no {target!r}")


def check_call_name(call: Mapping[str, Any], path: str, seen: dict[str, str], what: str) -> Iterator[Finding]:
    """A step or task name follows Argo's rule and is unique among its siblings (``seen`` maps names to paths)."""
    name = call.get("name")
    if name in (None, ""):
        yield error(f"{path}.name", "is required")
        return
    message = names.argo_name(name)
    if message is not None:
        yield error(f"{path}.name", message)
    if isinstance(name, str):
        if name in seen:
            yield error(f"{path}.name", f"duplicate {what} name {name!r}: also {seen[name]}")
        else:
            seen[name] = path


def check_steps(groups: object, path: str, wf: Workflow) -> Iterator[Finding]:
    """A steps template: a list of groups, each a list of steps run in parallel."""
    if not isinstance(groups, list):
        yield error(path, "must be a list of step groups (each a list of steps run in parallel)")
        return
    seen: dict[str, str] = {}
    for g, group in enumerate(groups):
        at = f"{path}[{g}]"
        if not isinstance(group, list):
            yield error(
                at,
                "must be a list of steps run in parallel: steps is a list of lists, so a lone step is written"
                " '- - name: ...' (Argo refuses a step where a group belongs)",
            )
            continue
        for step_path, step in ((f"{at}[{s}]", step) for s, step in enumerate(group)):
            if not isinstance(step, Mapping):
                yield error(step_path, "must be a mapping: a step")
                continue
            yield from check_call_name(step, step_path, seen, "step")
            yield from check_call(step, step_path, wf)
