"""References to parameters: ``{{workflow.parameters.X}}`` and ``{{inputs.parameters.X}}`` must name a declared
parameter, or Argo fails to resolve them."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from typing import Final

from hera_volcano.shared.findings import Finding, as_list, as_map, entry, error
from hera_volcano.tools.lint.context import Workflow

_WORKFLOW_PARAMETER: Final = re.compile(r"\{\{\s*workflow\.parameters\.([^{}\s]+?)\s*\}\}")
_INPUT_PARAMETER: Final = re.compile(r"\{\{\s*inputs\.parameters\.([^{}\s]+?)\s*\}\}")


def _declared(holder: object) -> set[str]:
    return {str(p["name"]) for p in as_list(as_map(holder).get("parameters")) if isinstance(p, Mapping) and "name" in p}


def check_workflow_parameters(wf: Workflow) -> Iterator[Finding]:
    """``{{workflow.parameters.X}}`` anywhere in a Workflow must name a declared argument (templates are exempt)."""
    # One C-speed serialisation tells whether the walk is needed at all.
    if "workflow.parameters." not in json.dumps(wf.spec, default=str):
        return
    declared = _declared(wf.spec.get("arguments"))
    if declared:
        declared.add("json")  # Argo's {{workflow.parameters.json}}: all of them as one JSON object
    for at, name in _references(wf.spec, wf.spec_path, "workflow.parameters.", _WORKFLOW_PARAMETER):
        if name not in declared:
            yield error(
                at,
                f"{{{{workflow.parameters.{name}}}}} is not declared in {wf.spec_path}.arguments.parameters:"
                f" Argo fails to resolve it in a {wf.kind}",
            )


def check_input_references(template: Mapping[str, object], path: str) -> Iterator[Finding]:
    """``{{inputs.parameters.X}}`` in a template must name one of its inputs (Argo: "failed to resolve")."""
    if "inputs.parameters." not in json.dumps(template, default=str):
        return
    declared = _declared(template.get("inputs"))
    for at, name in _references(template, path, "inputs.parameters.", _INPUT_PARAMETER):
        if name not in declared:
            yield error(
                at,
                f"{{{{inputs.parameters.{name}}}}} is not an input of this template: declare it in"
                f" {path}.inputs.parameters, or Argo fails to resolve it",
            )


def _references(node: object, path: str, needle: str, pattern: re.Pattern[str]) -> Iterator[tuple[str, str]]:
    """``(path, name)`` of each distinct reference ``pattern`` finds in a string of ``node``.

    Inline templates are skipped: they have inputs of their own.
    """
    if isinstance(node, str):
        if needle in node:
            yield from ((path, name) for name in dict.fromkeys(pattern.findall(node)))
    elif isinstance(node, Mapping):
        for key, value in node.items():
            if key != "inline":
                yield from _references(value, entry(path, key), needle, pattern)
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _references(value, f"{path}[{i}]", needle, pattern)
