"""Sample values for a workflow's placeholders, so the manifests inside resource steps can be parsed and checked.

The convention is shared with the Go conformance harness and the cluster tests: ``{{inputs.parameters.X}}`` takes
the argument the template's first call site passes (templates in order, tasks or steps in order), else the input's
value or default; ``{{workflow.parameters.X}}`` the workflow argument, and the expressions that read either
(:mod:`hera_volcano.kube.values`) what Argo writes for that value;
``{{workflow.name|uid|namespace}}`` fixed samples; anything else ``sample``. A value that itself holds
``{{workflow.parameters.X}}`` is resolved once more.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from hera_volcano.kube import values as value_tags
from hera_volcano.shared.findings import as_list, as_map
from hera_volcano.shared.placeholders import DEFAULT_SAMPLE, WORKFLOW_SAMPLES, expressions, substitute_text


def _calls(templates: list[Mapping[str, Any]]) -> Iterator[Mapping[str, Any]]:
    """Every step or DAG task of every template, in order."""
    for template in templates:
        yield from (t for t in as_list(as_map(template.get("dag")).get("tasks")) if isinstance(t, Mapping))
        for group in as_list(template.get("steps")):
            if isinstance(group, list):
                yield from (s for s in group if isinstance(s, Mapping))
            elif isinstance(group, Mapping):
                yield group


def _parameters(holder: Any) -> list[Mapping[str, Any]]:
    return [p for p in as_list(as_map(holder).get("parameters")) if isinstance(p, Mapping)]


def workflow_values(workflow: Mapping[str, Any]) -> dict[str, str]:
    """Values for the workflow-wide expressions of ``workflow``."""
    meta = as_map(workflow.get("metadata"))
    spec = as_map(workflow.get("spec"))
    values = dict(WORKFLOW_SAMPLES)
    if meta.get("namespace"):
        values["workflow.namespace"] = str(meta["namespace"])
    base = dict(values)
    for p in _parameters(spec.get("arguments")):
        if "name" in p:
            value = substitute_text(str(p.get("value", DEFAULT_SAMPLE)), base)
            values[f"workflow.parameters.{p['name']}"] = value
    return values


def template_values(workflow: Mapping[str, Any]) -> dict[str, dict[str, str]]:
    """For each template name, the values of every expression its manifest may use."""
    spec = as_map(workflow.get("spec"))
    templates = [t for t in as_list(spec.get("templates")) if isinstance(t, Mapping)]
    wf_values = workflow_values(workflow)
    first_call: dict[str, dict[str, str]] = {}
    for call in _calls(templates):
        target = call.get("template")
        if isinstance(target, str):
            args = first_call.setdefault(target, {})
            for p in _parameters(call.get("arguments")):
                if "name" in p and "value" in p:
                    args.setdefault(str(p["name"]), str(p["value"]))
    out: dict[str, dict[str, str]] = {}
    for template in templates:
        name = str(template.get("name", ""))
        values = dict(wf_values)
        for p in _parameters(template.get("inputs")):
            pname = str(p.get("name", ""))
            raw = first_call.get(name, {}).get(pname)
            if raw is None:
                raw = p.get("value", p.get("default", DEFAULT_SAMPLE))
            values[f"inputs.parameters.{pname}"] = substitute_text(str(raw), wf_values)
        out[name] = values
    return out


def resolved_manifests(workflow: Mapping[str, Any]) -> list[tuple[int, str, str]]:
    """``(template index, template name, manifest with sample values)`` for every resource template."""
    spec = as_map(workflow.get("spec"))
    values = template_values(workflow)
    found = []
    for i, template in enumerate(as_list(spec.get("templates"))):
        if not isinstance(template, Mapping):
            continue
        resource = template.get("resource")
        if isinstance(resource, Mapping) and isinstance(resource.get("manifest"), str):
            name = str(template.get("name", ""))
            known = dict(values.get(name, {}))
            for expression in expressions(resource["manifest"]):
                written = value_tags.sample(expression, known)
                if written is not None:
                    known[expression] = written
            found.append((i, name, substitute_text(resource["manifest"], known)))
    return found
