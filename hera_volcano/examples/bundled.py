"""The workflows hera-volcano ships, by name, for the RBAC command, GitOps rendering and tests."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from hera_volcano.argo.defaults import NAMESPACE, SERVICE_ACCOUNT

if TYPE_CHECKING:
    from hera.workflows import Workflow

#: name -> build(namespace, service_account, template)
Builder = Callable[[str, str, bool], "Workflow"]


def _mpi_hello(namespace: str, service_account: str, template: bool) -> Workflow:
    from hera_volcano.examples.mpi_hello import Options, build

    return build(Options(namespace=namespace, service_account=service_account, template=template))


def _pytorch_hello(namespace: str, service_account: str, template: bool) -> Workflow:
    from hera_volcano.examples.pytorch_hello import Options, build

    return build(Options(namespace=namespace, service_account=service_account, template=template))


def _data_pipeline(namespace: str, service_account: str, template: bool) -> Workflow:
    from hera_volcano.examples.data_pipeline import Options, build

    return build(Options(namespace=namespace, service_account=service_account, template=template))


def _steps(namespace: str, service_account: str, template: bool) -> Workflow:
    from hera_volcano.examples.hello_jobs import STEPS

    return STEPS.build(namespace=namespace, service_account=service_account, template=template)


def _dag(namespace: str, service_account: str, template: bool) -> Workflow:
    from hera_volcano.examples.hello_jobs import DAG

    return DAG.build(namespace=namespace, service_account=service_account, template=template)


BUNDLED: Mapping[str, Builder] = {
    "volcano-mpi-hello": _mpi_hello,
    "volcano-pytorch-hello": _pytorch_hello,
    "volcano-data-pipeline": _data_pipeline,
    "volcano-step-job": _steps,
    "volcano-dag-job": _dag,
}


def bundled(
    namespace: str = NAMESPACE, service_account: str = SERVICE_ACCOUNT, *, template: bool = True
) -> list[Workflow]:
    """Every bundled workflow, as WorkflowTemplates (the GitOps form) or Workflows."""
    return [build(namespace, service_account, template) for build in BUNDLED.values()]
