"""hera-volcano: typed, validated Volcano batch jobs for Argo Workflows, built on Hera.

Importing the package is cheap: each public name loads from its layer on first use (most need ``hera.workflows``,
slow to import). ``_PUBLIC`` is the one list of public names: ``__all__``, ``__dir__`` and the lazy loading follow
from it; the ``TYPE_CHECKING`` imports below are for type checkers, and ``tests/test_lazy_import.py`` holds them
equal to it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from hera_volcano.shared.version import __version__ as __version__

if TYPE_CHECKING:
    from hera_volcano.argo.cleanup import cleanup_on_failure as cleanup_on_failure
    from hera_volcano.argo.follow_logs import follow_logs_template as follow_logs_template
    from hera_volcano.argo.job_dag import job_dag as job_dag
    from hera_volcano.argo.job_template import job_template as job_template
    from hera_volcano.argo.space import Grid as Grid
    from hera_volcano.argo.space import IntRange as IntRange
    from hera_volcano.argo.space import RandomSearch as RandomSearch
    from hera_volcano.argo.space import Trials as Trials
    from hera_volcano.argo.space import TrialsFrom as TrialsFrom
    from hera_volcano.argo.space import Uniform as Uniform
    from hera_volcano.argo.sweep import sweep as sweep
    from hera_volcano.builders.batch import batch_job as batch_job
    from hera_volcano.builders.checkpoints import Checkpoints as Checkpoints
    from hera_volcano.builders.mpi import mpi_job as mpi_job
    from hera_volcano.builders.pipeline import Pipeline as Pipeline
    from hera_volcano.builders.pipeline_entries import PipelineJob as PipelineJob
    from hera_volcano.builders.pipeline_entries import PipelineStep as PipelineStep
    from hera_volcano.builders.pipeline_entries import PipelineSweep as PipelineSweep
    from hera_volcano.builders.pipeline_entries import StepOutput as StepOutput
    from hera_volcano.builders.pod import PodSettings as PodSettings
    from hera_volcano.builders.pod import PodVolume as PodVolume
    from hera_volcano.builders.pod import Toleration as Toleration
    from hera_volcano.builders.program import Program as Program
    from hera_volcano.builders.pytorch import pytorch_job as pytorch_job
    from hera_volcano.builders.pytorch import torchrun as torchrun
    from hera_volcano.builders.settings import JobSettings as JobSettings
    from hera_volcano.builders.tensorflow import tensorflow_job as tensorflow_job
    from hera_volcano.builders.workspace import Workspace as Workspace
    from hera_volcano.client.local import run_local as run_local
    from hera_volcano.client.result import Result as Result
    from hera_volcano.client.runs import Client as Client
    from hera_volcano.client.runs import Cron as Cron
    from hera_volcano.client.runs import Run as Run
    from hera_volcano.client.runs import RunSummary as RunSummary
    from hera_volcano.kube.emit import to_yaml as to_yaml
    from hera_volcano.shared.errors import ClusterError as ClusterError
    from hera_volcano.shared.errors import LocalRunError as LocalRunError
    from hera_volcano.shared.errors import ValidationError as ValidationError
    from hera_volcano.shared.placeholders import Placeholder as Placeholder
    from hera_volcano.tools.job_policy import JobPolicy as JobPolicy
    from hera_volcano.tools.program import program_for as program_for
    from hera_volcano.tools.rbac import rbac_for as rbac_for
    from hera_volcano.volcano.job import Plugin as Plugin
    from hera_volcano.volcano.job import Policy as Policy
    from hera_volcano.volcano.job import VolcanoJob as VolcanoJob
    from hera_volcano.volcano.job import VolcanoTask as VolcanoTask
    from hera_volcano.volcano.queue import Queue as Queue
    from hera_volcano.volcano.step import ArgoRetry as ArgoRetry
    from hera_volcano.volcano.step import VolcanoRetry as VolcanoRetry

# Each public name and the module it lives in.
_PUBLIC = {
    "ArgoRetry": "hera_volcano.volcano.step",
    "Checkpoints": "hera_volcano.builders.checkpoints",
    "Client": "hera_volcano.client.runs",
    "ClusterError": "hera_volcano.shared.errors",
    "Cron": "hera_volcano.client.runs",
    "Grid": "hera_volcano.argo.space",
    "IntRange": "hera_volcano.argo.space",
    "JobPolicy": "hera_volcano.tools.job_policy",
    "JobSettings": "hera_volcano.builders.settings",
    "LocalRunError": "hera_volcano.shared.errors",
    "Pipeline": "hera_volcano.builders.pipeline",
    "PipelineJob": "hera_volcano.builders.pipeline_entries",
    "PipelineStep": "hera_volcano.builders.pipeline_entries",
    "PipelineSweep": "hera_volcano.builders.pipeline_entries",
    "Placeholder": "hera_volcano.shared.placeholders",
    "Plugin": "hera_volcano.volcano.job",
    "PodSettings": "hera_volcano.builders.pod",
    "PodVolume": "hera_volcano.builders.pod",
    "Policy": "hera_volcano.volcano.job",
    "Program": "hera_volcano.builders.program",
    "Queue": "hera_volcano.volcano.queue",
    "RandomSearch": "hera_volcano.argo.space",
    "Result": "hera_volcano.client.result",
    "Run": "hera_volcano.client.runs",
    "RunSummary": "hera_volcano.client.runs",
    "StepOutput": "hera_volcano.builders.pipeline_entries",
    "Toleration": "hera_volcano.builders.pod",
    "Trials": "hera_volcano.argo.space",
    "TrialsFrom": "hera_volcano.argo.space",
    "Uniform": "hera_volcano.argo.space",
    "ValidationError": "hera_volcano.shared.errors",
    "VolcanoJob": "hera_volcano.volcano.job",
    "VolcanoRetry": "hera_volcano.volcano.step",
    "VolcanoTask": "hera_volcano.volcano.job",
    "Workspace": "hera_volcano.builders.workspace",
    "batch_job": "hera_volcano.builders.batch",
    "cleanup_on_failure": "hera_volcano.argo.cleanup",
    "follow_logs_template": "hera_volcano.argo.follow_logs",
    "job_dag": "hera_volcano.argo.job_dag",
    "job_template": "hera_volcano.argo.job_template",
    "mpi_job": "hera_volcano.builders.mpi",
    "pytorch_job": "hera_volcano.builders.pytorch",
    "program_for": "hera_volcano.tools.program",
    "rbac_for": "hera_volcano.tools.rbac",
    "run_local": "hera_volcano.client.local",
    "sweep": "hera_volcano.argo.sweep",
    "tensorflow_job": "hera_volcano.builders.tensorflow",
    "to_yaml": "hera_volcano.kube.emit",
    "torchrun": "hera_volcano.builders.pytorch",
}

__all__ = sorted(_PUBLIC)


if not TYPE_CHECKING:  # type checkers see the imports above, so a misspelt name is their error

    def __getattr__(name: str) -> object:
        module = _PUBLIC.get(name)
        if module is None:
            raise AttributeError(f"module 'hera_volcano' has no attribute {name!r}")
        value: object = getattr(importlib.import_module(module), name)
        globals()[name] = value
        return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_PUBLIC))
