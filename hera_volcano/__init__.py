"""hera-volcano: typed, validated Volcano batch jobs for Argo Workflows, built on Hera.

Importing the package is cheap: the names that need ``hera.workflows`` (slow to import) load on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from hera_volcano.shared.errors import ValidationError
from hera_volcano.shared.version import __version__ as __version__

if TYPE_CHECKING:
    from hera_volcano.argo.cleanup import cleanup_on_failure
    from hera_volcano.argo.follow_logs import follow_logs_template
    from hera_volcano.argo.job_dag import job_dag
    from hera_volcano.argo.job_template import job_template
    from hera_volcano.builders.batch import batch_job
    from hera_volcano.builders.mpi import mpi_job
    from hera_volcano.builders.pipeline import Pipeline
    from hera_volcano.builders.pipeline_entries import PipelineJob, PipelineStep, StepOutput
    from hera_volcano.builders.pod import PodSettings, PodVolume, Toleration
    from hera_volcano.builders.program import Program
    from hera_volcano.builders.pytorch import pytorch_job, torchrun
    from hera_volcano.builders.tensorflow import tensorflow_job
    from hera_volcano.builders.workspace import Workspace
    from hera_volcano.client.result import Result
    from hera_volcano.client.runs import Client, Run
    from hera_volcano.kube.emit import to_yaml
    from hera_volcano.shared.errors import ClusterError
    from hera_volcano.shared.placeholders import Placeholder
    from hera_volcano.tools.job_policy import JobPolicy
    from hera_volcano.tools.rbac import rbac_for
    from hera_volcano.volcano.job import Plugin, Policy, VolcanoJob, VolcanoTask
    from hera_volcano.volcano.queue import Queue
    from hera_volcano.volcano.step import ArgoRetry, VolcanoRetry

_LAZY = {
    "VolcanoJob": "hera_volcano.volcano.job",
    "VolcanoTask": "hera_volcano.volcano.job",
    "Policy": "hera_volcano.volcano.job",
    "Plugin": "hera_volcano.volcano.job",
    "Queue": "hera_volcano.volcano.queue",
    "Placeholder": "hera_volcano.shared.placeholders",
    "mpi_job": "hera_volcano.builders.mpi",
    "job_template": "hera_volcano.argo.job_template",
    "follow_logs_template": "hera_volcano.argo.follow_logs",
    "cleanup_on_failure": "hera_volcano.argo.cleanup",
    "to_yaml": "hera_volcano.kube.emit",
    "Pipeline": "hera_volcano.builders.pipeline",
    "PipelineJob": "hera_volcano.builders.pipeline_entries",
    "PipelineStep": "hera_volcano.builders.pipeline_entries",
    "StepOutput": "hera_volcano.builders.pipeline_entries",
    "Program": "hera_volcano.builders.program",
    "job_dag": "hera_volcano.argo.job_dag",
    "ArgoRetry": "hera_volcano.volcano.step",
    "VolcanoRetry": "hera_volcano.volcano.step",
    "batch_job": "hera_volcano.builders.batch",
    "PodSettings": "hera_volcano.builders.pod",
    "PodVolume": "hera_volcano.builders.pod",
    "Toleration": "hera_volcano.builders.pod",
    "pytorch_job": "hera_volcano.builders.pytorch",
    "torchrun": "hera_volcano.builders.pytorch",
    "tensorflow_job": "hera_volcano.builders.tensorflow",
    "Workspace": "hera_volcano.builders.workspace",
    "rbac_for": "hera_volcano.tools.rbac",
    "JobPolicy": "hera_volcano.tools.job_policy",
    "Client": "hera_volcano.client.runs",
    "Run": "hera_volcano.client.runs",
    "Result": "hera_volcano.client.result",
    "ClusterError": "hera_volcano.shared.errors",
}

__all__ = [
    "ArgoRetry",
    "Client",
    "ClusterError",
    "JobPolicy",
    "Pipeline",
    "PipelineJob",
    "PipelineStep",
    "Placeholder",
    "Plugin",
    "PodSettings",
    "PodVolume",
    "Policy",
    "Program",
    "Queue",
    "Result",
    "Run",
    "StepOutput",
    "Toleration",
    "ValidationError",
    "VolcanoJob",
    "VolcanoRetry",
    "VolcanoTask",
    "Workspace",
    "batch_job",
    "cleanup_on_failure",
    "follow_logs_template",
    "job_dag",
    "job_template",
    "mpi_job",
    "pytorch_job",
    "rbac_for",
    "tensorflow_job",
    "to_yaml",
    "torchrun",
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
