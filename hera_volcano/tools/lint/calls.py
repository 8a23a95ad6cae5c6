"""Steps and DAG tasks call templates: their names, the template they name and the arguments they pass."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from hera_volcano.argo.parameters import check_parameters
from hera_volcano.kube import names
from hera_volcano.shared.findings import Finding, as_map, error
from hera_volcano.shared.suggestions import did_you_mean
from hera_volcano.tools.lint.arguments import check_arguments
from hera_volcano.tools.lint.context import Workflow


def check_call(call: Mapping[str, object], path: str, wf: Workflow) -> Iterator[Finding]:
    """A step or task runs a template of this workflow, and passes it the inputs it declares (templateRef and inline
    templates are not followed)."""
    yield from check_parameters(call.get("arguments"), f"{path}.arguments", values="required")
    if call.get("templateRef") is not None:
        yield from _check_reference(call, path, wf)
        return
    if call.get("inline") is not None:
        return
    target = call.get("template")
    if target in (None, ""):
        yield error(f"{path}.template", "is required: the name of the template to run (or templateRef)")
    elif not isinstance(target, str):
        yield error(f"{path}.template", "must be a string: the name of a template")
    elif "{{" not in target:
        called = wf.templates.get(target)
        if called is None:
            yield error(f"{path}.template", f"must name a template of {wf.spec_path}.templates; there is no {target!r}")
        else:
            yield from check_arguments(call, path, f"template {target!r}", called)


def _check_reference(call: Mapping[str, object], path: str, wf: Workflow) -> Iterator[Finding]:
    """A call through ``templateRef`` to a WorkflowTemplate linted in the same stream: the template it names exists
    there, and gets its inputs. Templates lint did not see (on the cluster, in other files) are not judged."""
    ref = as_map(call.get("templateRef"))
    name, template, cluster = ref.get("name"), ref.get("template"), ref.get("clusterScope") is True
    if not isinstance(name, str) or not isinstance(template, str) or "{{" in name + template:
        return
    stored = wf.stored.get((cluster, name))
    if stored is None:
        return
    if not cluster and None not in (stored.namespace, wf.namespace) and stored.namespace != wf.namespace:
        return  # Argo looks in the workflow's namespace: this one is another WorkflowTemplate of that name
    called = stored.templates.get(template)
    if called is None:
        meant = did_you_mean(template, stored.templates)
        yield error(
            f"{path}.templateRef.template",
            f"must name a template of {stored.kind} {name!r}; there is no {template!r}{meant}",
        )
    else:
        yield from check_arguments(call, path, f"template {template!r} of {stored.kind} {name!r}", called)


def check_call_name(call: Mapping[str, object], path: str, seen: dict[str, str], what: str) -> Iterator[Finding]:
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
