"""Workflows for the fault scenarios, built with the public API as a user would: the MPI hello world's shape (a
DAG of the job step and its log follower, the exit handler) around an MPI job whose program, workers or
deadline the scenario changes."""

from __future__ import annotations

import copy
from dataclasses import replace
from typing import Any

import hera_volcano as hv
from hera_volcano.argo.defaults import SERVICE_ACCOUNT

MPI_IMAGE = "volcanosh/example-mpi:0.0.3"
WORKER = "mpiworker"
LABEL = "mpi"


def _with_workers(job: hv.VolcanoJob, change: dict[str, Any]) -> hv.VolcanoJob:
    """``job`` with ``change`` merged into its workers' container (command, resources)."""
    tasks = []
    for task in job.tasks:
        if task.name == WORKER:
            template = copy.deepcopy(task.template)
            template["spec"]["containers"][0].update(change)
            task = replace(task, template=template)
        tasks.append(task)
    return replace(job, tasks=tasks)


def mpi_workflow(
    name: str,
    *,
    command: list[str],
    workers: int = 2,
    deadline: int = 3600,
    follow_timeout: int | None = None,
    wait_seconds: int = 600,
    worker: dict[str, Any] | None = None,
    service_account: str = SERVICE_ACCOUNT,
    poll_seconds: int | None = None,
) -> str:
    """The YAML of a Workflow ``NAME-xxxxx`` running ``command`` under mpiexec on ``workers`` workers."""
    from hera.workflows import DAG, Workflow
    from hera.workflows.models import ContinueOn

    job = hv.mpi_job(
        image=MPI_IMAGE,
        program=hv.Program.command(command),
        workers=workers,
        service_account=service_account,
        wait_seconds=wait_seconds,
        generate_name=f"{name}-",
        deadline=deadline,
    )
    if worker:
        job = _with_workers(job, worker)
    with Workflow(
        generate_name=f"{name}-", namespace="argo", entrypoint="main", service_account_name=service_account
    ) as w:
        submit = hv.job_template(job, name="submit", job_label=LABEL, poll_seconds=poll_seconds)
        follow = hv.follow_logs_template(submit, name="follow", timeout=follow_timeout or deadline + 60)
        with DAG(name="main"):
            submit(name="submit-job")
            follow(name="follow-logs", continue_on=ContinueOn(failed=True, error=True))
        w.on_exit = hv.cleanup_on_failure()
    return hv.to_yaml(w)


#: An image with bash and kubectl that the test cluster builds (cluster/images/build.py).
PROBE_IMAGE = "alpine/k8s:1.37.2"


def kubectl_probe(commands: str) -> str:
    """A Workflow whose one pod runs ``commands`` (bash) in the kubectl image as the bundled workflows' account."""
    from hera.workflows import Container, Workflow

    with Workflow(
        generate_name="probe-", namespace="argo", entrypoint="probe", service_account_name=SERVICE_ACCOUNT
    ) as w:
        Container(name="probe", image=PROBE_IMAGE, command=["bash", "-c", commands])
    return hv.to_yaml(w)


def terminate_command(namespace: str, job: str, uid: str) -> dict[str, Any]:
    """What `vcctl job terminate` creates: a bus.volcano.sh Command whose TerminateJob action Volcano's controller
    carries out on the job (the way an operator ends a job by hand)."""
    return {
        "apiVersion": "bus.volcano.sh/v1alpha1",
        "kind": "Command",
        "metadata": {"generateName": f"{job}-terminate-", "namespace": namespace},
        "action": "TerminateJob",
        "target": {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "name": job, "uid": uid},
    }
