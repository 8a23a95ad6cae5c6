"""Restart and resume (issue 44.2) on the real cluster: a PyTorch gang (master + 1 worker, gloo on CPU) whose
function checkpoints every step through ``hera_volcano.runtime`` on the e2e workspace claim (``checkpoints=``):

- a worker pod deleted once rank 0 logged step 3: Volcano restarts the whole gang (``VolcanoRetry``, the same job),
  the function reports that it resumed at a step K > 0, and its final value is the uninterrupted run's;
- the same through an Argo retry of the job step (``ArgoRetry``): the first attempt fails on purpose after step 4, the
  second attempt is a new Volcano job that finds the same checkpoints and resumes at step 5.

In the batch of every batched scenario (harness.Batch)."""

from __future__ import annotations

import re
import time
from typing import Any

import pytest
from functions import resumable_sum
from harness import NAMESPACE, SERVICE_ACCOUNT, Batch, Cluster, Entry, Record, took
from test_data import CLAIM, claim

import hera_volcano as hv

#: This module's batched workflows run this long under CI's batch (measured: 344 s for the Argo retry with 20 steps,
#: 2026-12-07; now 12 steps of a second): conftest.py submits the longest first.
BATCH_WAITS = 240
PYTHON_IMAGE = "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime"
STEPS = 12
#: What an uninterrupted run computes (see resumable_sum): two ranks, each step adds 3 * (step + 1).
UNINTERRUPTED = 3 * STEPS * (STEPS + 1) / 2


def training(name: str, retry: hv.ArgoRetry | hv.VolcanoRetry, fail_first_attempt: bool) -> str:
    """A user's DAG: the training job (its checkpoints on the workspace claim) and its reported values."""
    from hera.workflows import DAG, Workflow

    job = hv.pytorch_job(
        image=PYTHON_IMAGE,
        program=hv.Program.function(resumable_sum, args={"steps": STEPS, "fail_first_attempt": fail_first_attempt}),
        workers=1,
        generate_name=f"{name}-",
        retry=retry,
        checkpoints=hv.Checkpoints(CLAIM),
    )
    with Workflow(
        generate_name=f"{name}-", namespace=NAMESPACE, entrypoint="main", service_account_name=SERVICE_ACCOUNT
    ) as w:
        run = hv.job_dag(job, name="train", outputs=["resumed_at", "value"])
        with DAG(name="main"):
            run(name="train")
        w.on_exit = hv.cleanup_on_failure()
    return hv.to_yaml(w)


def rank0_step(cluster: Cluster, job: str) -> int:
    """The last step rank 0 logged in the job's master pod (-1 before any). Only that pod has a container named
    ``master``: the job's other pods are not asked for it."""
    logs = cluster.core.read_namespaced_pod_log(f"{job}-master-0", NAMESPACE, container="master")
    return max((int(s) for s in re.findall(r"^rank 0: step (\d+) ", logs, re.MULTILINE)), default=-1)


def submit_batch(b: Batch, cluster: Cluster) -> None:
    if b.runs(test_a_gang_that_loses_a_worker_restarts_and_resumes_from_its_checkpoint) or b.runs(
        test_an_argo_retry_resumes_from_the_first_attempts_checkpoints
    ):
        claim(cluster)

    def lose_worker_after_step_3(entry: Entry) -> None:
        found: dict[str, Any] = {}

        def past_step_3() -> bool:
            for job in cluster.recorder.jobs_of(entry.name):
                try:
                    found["step"] = rank0_step(cluster, job)
                except Exception:  # kubernetes.client.ApiException: the pod is not there yet or not started
                    continue
                if found["step"] >= 3:
                    found["job"] = job
                    return True
            return False

        what = f"rank 0 of {entry.name} past step 3"
        cluster.wait_for(past_step_3, what, 400, seen=lambda: cluster.describe(entry.name))
        entry.acted = time.time()
        entry.seen.update(found)
        cluster.core.delete_namespaced_pod(f"{found['job']}-worker-0", NAMESPACE)

    if b.runs(test_a_gang_that_loses_a_worker_restarts_and_resumes_from_its_checkpoint):
        restarted = training("resume", hv.VolcanoRetry(max_retry=3, restart_on=["PodEvicted", "PodFailed"]), False)
        b.submit("resume", restarted, lose_worker_after_step_3)
    if b.runs(test_an_argo_retry_resumes_from_the_first_attempts_checkpoints):
        b.submit("resume-retried", training("resume-retried", hv.ArgoRetry(limit=2), True))


def outputs(wf: dict[str, Any]) -> dict[str, str]:
    """The reported values of the DAG task ``train``."""
    [node] = [n for n in wf["status"]["nodes"].values() if n.get("displayName") == "train" and n["type"] == "DAG"]
    return {p["name"]: p["value"] for p in node["outputs"]["parameters"]}


@pytest.mark.batch
@pytest.mark.scenario(
    "44.2 a worker deleted mid-run: the gang restarts (VolcanoRetry), resumes at step K > 0, ends with the same value"
)
def test_a_gang_that_loses_a_worker_restarts_and_resumes_from_its_checkpoint(
    cluster: Cluster, batch: Batch, record_property: Record
) -> None:
    entry, wf = batch.finish("resume")
    record_property("took", took(wf, entry.submitted))
    seen = cluster.describe(entry.name)
    assert wf["status"]["phase"] == "Succeeded", seen
    got = outputs(wf)
    logged = entry.seen["step"]
    # Rank 0 had checkpointed step `logged` before the deletion (a checkpoint is written before its step's line).
    assert logged + 1 <= int(got["resumed_at"]) <= STEPS - 1, (got, logged, seen)
    assert float(got["value"]) == UNINTERRUPTED, got
    [job] = cluster.recorder.jobs_of(entry.name)
    assert job == entry.seen["job"] and "Restarting" in cluster.recorder.phases(job), cluster.recorder.phases(job)


@pytest.mark.both_lines("the controller substitutes node.name in a retried resource template: the same each attempt")
@pytest.mark.batch
@pytest.mark.scenario(
    "44.2 an Argo retry of the job step: a new job resumes from the first attempt's checkpoints, the same value"
)
def test_an_argo_retry_resumes_from_the_first_attempts_checkpoints(
    cluster: Cluster, batch: Batch, record_property: Record
) -> None:
    entry, wf = batch.finish("resume-retried")
    record_property("took", took(wf, entry.submitted))
    seen = cluster.describe(entry.name)
    assert wf["status"]["phase"] == "Succeeded", seen
    got = outputs(wf)
    assert int(got["resumed_at"]) == 5 and float(got["value"]) == UNINTERRUPTED, (got, seen)
    jobs = cluster.recorder.jobs_of(entry.name)
    assert len(jobs) == 2, f"the retry made a new Volcano job: {jobs}"
    assert sorted("Terminated" in cluster.recorder.phases(j) for j in jobs) == [False, True], seen
