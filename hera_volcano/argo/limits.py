"""Argo facts several modules rely on: which kinds hold workflow templates, and the limits Argo enforces."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

#: Kinds whose templates run pods (CronWorkflow's under ``spec.workflowSpec``), with the length Argo allows for
#: ``metadata.name``.
WORKFLOW_KINDS: Final[Mapping[str, int]] = {
    "Workflow": 63,
    "WorkflowTemplate": 63,
    "ClusterWorkflowTemplate": 63,
    "CronWorkflow": 52,
}
#: Argo 4's full CRDs cap these lists (``kubectl apply`` and GitOps tools enforce it).
MAX_TEMPLATES: Final = 200
MAX_DAG_TASKS: Final = 200
