"""References to parameters: ``{{workflow.parameters.X}}`` and ``{{inputs.parameters.X}}`` must name a declared
parameter, or Argo fails to resolve them."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping
from typing import Final

from hera_volcano.argo.parameters import workflow_parameters
from hera_volcano.shared.findings import Finding, as_list, as_map, entry, error
from hera_volcano.tools.lint.context import Workflow

_INPUT_PARAMETER: Final = re.compile(r"\{\{\s*inputs\.parameters\.([^{}\s]+?)\s*\}\}")


def _declared(holder: object) -> set[str]:
    return {str(p["name"]) for p in as_list(as_map(holder).get("parameters")) if isinstance(p, Mapping) and "name" in p}


def _undeclared(spec: Mapping[str, object], path: str, declared: set[str]) -> Iterator[tuple[str, str]]:
    """``(path, name)`` of each workflow parameter ``spec`` reads that is not in ``declared``."""
    # One C-speed serialisation tells whether the walk is needed at all.
    if "workflow.parameters" not in json.dumps(spec, default=str, skipkeys=True):
        return
    if declared:
        declared = {*declared, "json"}  # Argo's {{workflow.parameters.json}}: all of them as one JSON object
    yield from (
        (at, n) for at, n in references(spec, path, "workflow.parameters", workflow_parameters) if n not in declared
    )


def check_workflow_parameters(wf: Workflow) -> Iterator[Finding]:
    """A workflow parameter read anywhere in a Workflow must be a declared argument: Argo refuses the Workflow
    ("failed to resolve"), or for an expression fails the step when it runs. A WorkflowTemplate's may come from the
    Workflow that runs it (``workflowTemplateRef`` and its arguments, ``argo submit --from ... -p``): judged with
    that Workflow when both are linted together."""
    ref = as_map(wf.spec.get("workflowTemplateRef"))
    if not wf.runnable:
        return
    if not ref:
        for at, name in _undeclared(wf.spec, wf.spec_path, _declared(wf.spec.get("arguments"))):
            yield error(
                at,
                f"{{{{workflow.parameters.{name}}}}} is not declared in {wf.spec_path}.arguments.parameters:"
                f" Argo fails to resolve it in a {wf.kind}",
            )
        return
    stored = wf.stored.get((ref.get("clusterScope") is True, str(ref.get("name"))))
    if stored is None:
        return  # the template is elsewhere: not judged
    declared = _declared(wf.spec.get("arguments")) | _declared(stored.spec.get("arguments"))
    for at, name in _undeclared(stored.spec, "spec", declared):
        yield error(
            f"{wf.spec_path}.workflowTemplateRef",
            f"runs {stored.kind} {ref.get('name')!r}, whose {at} reads {{{{workflow.parameters.{name}}}}}, but"
            f" neither it nor this {wf.kind} declares it in arguments.parameters: Argo fails to resolve it",
        )


def check_input_references(template: Mapping[str, object], path: str) -> Iterator[Finding]:
    """``{{inputs.parameters.X}}`` in a template must name one of its inputs (Argo: "failed to resolve")."""
    if "inputs.parameters." not in json.dumps(template, default=str, skipkeys=True):
        return
    declared = _declared(template.get("inputs"))
    for at, name in references(template, path, "inputs.parameters.", _INPUT_PARAMETER.findall):
        if name not in declared:
            yield error(
                at,
                f"{{{{inputs.parameters.{name}}}}} is not an input of this template: declare it in"
                f" {path}.inputs.parameters, or Argo fails to resolve it",
            )


def references(node: object, path: str, needle: str, find: Callable[[str], list[str]]) -> Iterator[tuple[str, str]]:
    """``(path, name)`` of each distinct reference ``find`` finds in a string of ``node`` that holds ``needle``.

    Inline templates are skipped: they have inputs of their own.
    """
    if isinstance(node, str):
        if needle in node:
            yield from ((path, name) for name in dict.fromkeys(find(node)))
    elif isinstance(node, Mapping):
        for key, value in node.items():
            if key != "inline":
                yield from references(value, entry(path, key), needle, find)
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from references(value, f"{path}[{i}]", needle, find)
