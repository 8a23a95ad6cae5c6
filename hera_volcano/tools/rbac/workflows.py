"""The workflows ``rbac_for`` and ``program_for`` read: each checked for its kind, with its name, namespace, spec and
templates."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from hera_volcano.argo.limits import WORKFLOW_KINDS
from hera_volcano.kube import names
from hera_volcano.kube.emit import plain
from hera_volcano.shared.errors import ValidationError
from hera_volcano.shared.findings import as_map

#: Where a workflow that names no namespace runs, as ``hera-volcano rbac`` assumes it (Argo's own).
DEFAULT_NAMESPACE = "argo"


@dataclass(frozen=True)
class WorkflowView:
    """A workflow as read here: ``field`` its place among those given (``workflows[I]``), ``spec`` its spec (a
    CronWorkflow's ``workflowSpec``), ``templates`` each with its place (``templates[J]``)."""

    kind: str
    name: str
    namespace: str
    field: str
    spec: Mapping[str, object]
    templates: tuple[tuple[int, Mapping[str, object]], ...]


def read(workflows: tuple[object, ...], namespace: str | None) -> Iterator[WorkflowView]:
    """Each workflow (a Hera object or a mapping), checked; ``namespace`` overrides their own."""
    if not workflows:
        raise ValidationError("workflows", "give at least one workflow")
    if namespace is not None:
        names.check("namespace", namespace, names.dns1123_label)
    for i, workflow in enumerate(workflows):
        wf = plain(workflow, "workflow")
        kind = wf.get("kind")
        if not isinstance(kind, str) or kind not in WORKFLOW_KINDS:
            raise ValidationError(f"workflows[{i}].kind", f"must be one of {', '.join(WORKFLOW_KINDS)}, not {kind!r}")
        meta = as_map(wf.get("metadata"))
        spec = as_map(wf.get("spec"))
        if kind == "CronWorkflow":
            spec = as_map(spec.get("workflowSpec"))
        ns = namespace or meta.get("namespace") or DEFAULT_NAMESPACE
        names.check(f"workflows[{i}].metadata.namespace", ns, names.dns1123_label)
        templates = spec.get("templates")
        if not isinstance(templates, list) or not templates:
            raise ValidationError(f"workflows[{i}].spec.templates", "must be a non-empty list of templates")
        for j, template in enumerate(templates):
            if not isinstance(template, Mapping):
                raise ValidationError(f"workflows[{i}].spec.templates[{j}]", "must be a mapping: a template")
        name = str(meta.get("name") or meta.get("generateName") or f"workflows[{i}]")
        yield WorkflowView(kind, name, str(ns), f"workflows[{i}]", spec, tuple(enumerate(templates)))
