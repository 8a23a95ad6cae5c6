"""Issue 44.4: a local run (``hv.run_local``) returns what the cluster returns for the same job and arguments: a
PyTorch function (gloo all_reduce, the master and one worker), an mpi4py function on 3 ranks and a batch function on
2 replicas run as one workflow of three ``job_dag`` tasks; then each job runs here, on this machine's processes
(PyTorch and mpi4py under an interpreter that has them: this one, else Debian's, which ``make debian-tools``
installs with Open MPI), and both reports must be equal, and the values the functions' arithmetic says."""

from __future__ import annotations

import io
import subprocess
import sys
from typing import Any

import pytest
from functions import mpi_world_sum, replica_value, torch_world_sum
from harness import NAMESPACE, SERVICE_ACCOUNT, Batch, Cluster, Record, took

import hera_volcano as hv

#: This module's batched workflow runs about this long under CI's batch (three small gangs at once).
BATCH_WAITS = 120
MPI_IMAGE = "volcanosh/example-mpi:0.0.3"
PYTORCH_IMAGE = "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime"
BATCH_IMAGE = "python:3.11-slim"
#: The arguments of both runs: a number the values are made of, and a text that must arrive exactly.
ARGUMENTS = {"scale": "3", "tag": 'it\'s "local" $(HOME) $$ `id`'}
#: What each job's rank 0 reports, and what its arithmetic says the values are.
EXPECTED = {
    "pytorch": {"sum": "9", "world": "2", "tag": ARGUMENTS["tag"]},  # (1 + 2) * 3
    "mpi": {"sum": "18", "size": "3", "tag": ARGUMENTS["tag"]},  # (1 + 2 + 3) * 3
    "batch": {"index": "0", "value": "3", "tag": ARGUMENTS["tag"]},  # (0 + 1) * 3
}
#: The module each kind's local run needs in its interpreter.
NEEDS = {"pytorch": "torch", "mpi": "mpi4py", "batch": "json"}


def jobs() -> dict[str, hv.VolcanoJob]:
    args = {"scale": hv.Placeholder.input("scale", 1), "tag": hv.Placeholder.input("tag", "x")}
    return {
        "pytorch": hv.pytorch_job(
            image=PYTORCH_IMAGE, program=hv.Program.function(torch_world_sum, args=args), workers=1
        ),
        "mpi": hv.mpi_job(
            image=MPI_IMAGE,
            program=hv.Program.function(mpi_world_sum, args=args),
            workers=3,
            service_account=SERVICE_ACCOUNT,
        ),
        "batch": hv.batch_job(image=BATCH_IMAGE, program=hv.Program.function(replica_value, args=args), replicas=2),
    }


def workflow() -> str:
    """The three jobs, each its own task (job_dag), given the same arguments."""
    from hera.workflows import DAG, Workflow

    with Workflow(
        generate_name="local-same-", namespace=NAMESPACE, entrypoint="main", service_account_name=SERVICE_ACCOUNT
    ) as w:
        dags = {kind: hv.job_dag(job, name=f"{kind}-run", outputs=list(EXPECTED[kind])) for kind, job in jobs().items()}
        with DAG(name="main"):
            for kind, dag in dags.items():
                dag(name=kind, arguments=dict(ARGUMENTS))
        w.on_exit = hv.cleanup_on_failure()
    return hv.to_yaml(w)


def submit_batch(b: Batch, cluster: Cluster) -> None:
    if b.runs(test_run_local_returns_what_the_cluster_returns):
        b.submit("local", workflow())


def python_with(module: str) -> str:
    """An interpreter that imports ``module``: this one, else Debian's."""
    for python in (sys.executable, "/usr/bin/python3"):
        if subprocess.run([python, "-c", f"import {module}"], capture_output=True, check=False).returncode == 0:
            return python
    pytest.fail(f"no python imports {module}: run `make debian-tools`")


def outputs(wf: dict[str, Any], task: str) -> dict[str, str]:
    node = next(n for n in wf["status"]["nodes"].values() if n["displayName"] == task)
    return {p["name"]: str(p["value"]) for p in node["outputs"]["parameters"] if p["name"] in EXPECTED[task]}


@pytest.mark.batch
@pytest.mark.scenario(
    "44.4 run-local returns the cluster's values: PyTorch, MPI, batch; the same function and arguments"
)
def test_run_local_returns_what_the_cluster_returns(cluster: Cluster, batch: Batch, record_property: Record) -> None:
    entry, wf = batch.finish("local")
    record_property("took", took(wf, entry.submitted))
    assert wf["status"]["phase"] == "Succeeded", wf["status"].get("message")
    for kind, job in jobs().items():
        here = hv.run_local(job, ARGUMENTS, python=python_with(NEEDS[kind]), timeout=300, output=io.StringIO())
        assert outputs(wf, kind) == EXPECTED[kind], f"{kind} on the cluster"
        assert here == EXPECTED[kind], f"{kind} here: the cluster's values"
