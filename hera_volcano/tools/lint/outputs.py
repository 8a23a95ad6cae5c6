"""References to a DAG's tasks and a steps template's steps: ``{{tasks.NAME...}}`` in a DAG (``{{steps.NAME...}}`` in a
steps template) must name one of its tasks (steps), and ``{{tasks.NAME.outputs.parameters.X}}`` an output parameter
that NAME's template declares, or Argo fails to resolve it (a misspelt ``gird`` for ``grid``, ``los`` for
``loss``)."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Final

from hera_volcano.shared.findings import Finding, as_list, as_map, error
from hera_volcano.shared.suggestions import did_you_mean
from hera_volcano.tools.lint.context import Workflow
from hera_volcano.tools.lint.references import references

_NODE: Final = re.compile(r"\{\{\s*((?:tasks|steps)\.[^.{}\s]+\.[^{}\s]+?)\s*\}\}")
_OUTPUT: Final = re.compile(r"\{\{\s*((?:tasks|steps)\.[^.{}\s]+\.outputs\.parameters\.[^{}\s]+?)\s*\}\}")


def _calls(template: Mapping[str, object]) -> tuple[str, list[Mapping[str, object]]]:
    """``("tasks", its DAG's tasks)`` or ``("steps", its steps)``."""
    if template.get("dag") is not None:
        return "tasks", [as_map(t) for t in as_list(as_map(template.get("dag")).get("tasks"))]
    return "steps", [as_map(s) for group in as_list(template.get("steps")) for s in as_list(group)]


def _declared_outputs(call: Mapping[str, object], wf: Workflow) -> list[str] | None:
    """The output parameters the template ``call`` runs declares; None when lint cannot see that template."""
    name = call.get("template")
    ref = as_map(call.get("templateRef"))
    if isinstance(name, str):
        called = wf.templates.get(name)
    elif isinstance(ref.get("name"), str) and isinstance(ref.get("template"), str):
        stored = wf.stored.get((ref.get("clusterScope") is True, str(ref["name"])))
        called = None if stored is None else stored.templates.get(str(ref["template"]))
    else:
        called = as_map(call.get("inline")) or None
    if called is None:
        return None
    parameters = [as_map(p) for p in as_list(as_map(called.get("outputs")).get("parameters"))]
    return [str(p["name"]) for p in parameters if "name" in p]


def check_output_references(template: Mapping[str, object], path: str, wf: Workflow) -> Iterator[Finding]:
    """Each ``{{tasks|steps.NAME.outputs.parameters.X}}`` in a DAG or steps template whose NAME is one of its tasks
    or steps must name an output parameter of NAME's template."""
    kind, calls = _calls(template)
    outputs = {c["name"]: _declared_outputs(c, wf) for c in calls if isinstance(c.get("name"), str)}
    for at, reference in references(template, path, ".outputs.parameters.", _OUTPUT.findall):
        prefix, task, _, _, parameter = reference.split(".", 4)
        declared = outputs.get(task)
        if prefix != kind or declared is None or parameter in declared:
            continue
        given = ", ".join(sorted(declared)) or "none"
        yield error(
            at,
            f"{{{{{reference}}}}}: {kind[:-1]} {task!r} has no output parameter {parameter!r}"
            f"{did_you_mean(parameter, declared)} (its template declares: {given}); Argo fails to resolve it",
        )


def check_node_references(template: Mapping[str, object], path: str) -> Iterator[Finding]:
    """Each ``{{tasks.NAME.…}}`` or ``{{steps.NAME.…}}`` in a DAG's tasks or a steps template's steps: the DAG's
    own tasks (a steps template's own steps) are all Argo resolves such a tag to; any other fails the Workflow."""
    kind, calls = _calls(template)
    known = sorted({str(c["name"]) for c in calls if isinstance(c.get("name"), str)})
    holder = "DAG" if kind == "tasks" else "steps template"
    body, base = (template.get("dag"), f"{path}.dag") if kind == "tasks" else (template.get("steps"), f"{path}.steps")
    for at, reference in references(body, base, ".", _NODE.findall):
        prefix, name = reference.split(".", 2)[:2]
        if prefix != kind:
            yield error(
                at,
                f"{{{{{reference}}}}}: a {holder} names its {kind} as {{{{{kind}.NAME...}}}}; Argo fails to resolve"
                f" {{{{{prefix}...}}}} here",
            )
        elif name not in known:
            yield error(
                at,
                f"{{{{{reference}}}}}: this {holder} has no {kind[:-1]} {name!r}{did_you_mean(name, known)} (its"
                f" {kind}: {', '.join(known) or 'none'}); Argo fails to resolve it",
            )
