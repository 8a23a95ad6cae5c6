"""hera-volcano: typed, validated Volcano batch jobs for Argo Workflows, built on Hera.

Importing the package is cheap: the names that need ``hera.workflows`` (slow to import) load on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from hera_volcano.errors import ValidationError

if TYPE_CHECKING:
    from hera_volcano.argo import cleanup_on_failure, follow_logs_template, job_template
    from hera_volcano.emit import to_yaml
    from hera_volcano.job import Plugin, Policy, VolcanoJob, VolcanoTask
    from hera_volcano.mpi import mpi_job
    from hera_volcano.pipeline import ArgoRetry, JobShape, Pipeline, PipelineJob, VolcanoRetry, batch_job
    from hera_volcano.placeholders import Placeholder
    from hera_volcano.rbac import rbac_for

_LAZY = {
    "VolcanoJob": "hera_volcano.job",
    "VolcanoTask": "hera_volcano.job",
    "Policy": "hera_volcano.job",
    "Plugin": "hera_volcano.job",
    "Placeholder": "hera_volcano.placeholders",
    "mpi_job": "hera_volcano.mpi",
    "job_template": "hera_volcano.argo",
    "follow_logs_template": "hera_volcano.argo",
    "cleanup_on_failure": "hera_volcano.argo",
    "to_yaml": "hera_volcano.emit",
    "Pipeline": "hera_volcano.pipeline",
    "PipelineJob": "hera_volcano.pipeline",
    "JobShape": "hera_volcano.pipeline",
    "ArgoRetry": "hera_volcano.pipeline",
    "VolcanoRetry": "hera_volcano.pipeline",
    "batch_job": "hera_volcano.pipeline",
    "rbac_for": "hera_volcano.rbac",
}

__all__ = [
    "ArgoRetry",
    "JobShape",
    "Pipeline",
    "PipelineJob",
    "Placeholder",
    "Plugin",
    "Policy",
    "ValidationError",
    "VolcanoJob",
    "VolcanoRetry",
    "VolcanoTask",
    "batch_job",
    "cleanup_on_failure",
    "follow_logs_template",
    "job_template",
    "mpi_job",
    "rbac_for",
    "to_yaml",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'hera_volcano' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
