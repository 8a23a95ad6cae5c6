"""Each follower follows its own job (issue 33) on the real cluster: a sweep of three iterations of one function
job (``with_items``) gives three different values downstream, each iteration's output under its own job; after an
Argo retry of the job step the follower follows the second attempt's job. A user's own DAGs, in the batch of
every batched scenario (harness.Batch)."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from functions import slow_host, trial
from harness import NAMESPACE, SERVICE_ACCOUNT, Batch, Cluster, Entry, Record, took

import hera_volcano as hv

#: This module's batched workflows run this long under CI's batch (the Argo retry's two attempts, 2026-12-07):
#: conftest.py submits the longest first.
BATCH_WAITS = 200
PYTHON_IMAGE = "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime"  # python3, as built for the test cluster
RATES = ["0.01", "0.1", "1.5"]


def sweep() -> str:
    from hera.workflows import DAG, Container, Parameter, Workflow

    job = hv.pytorch_job(
        image=PYTHON_IMAGE,
        program=hv.Program.function(trial, args={"lr": hv.Placeholder.input("lr", "0.1")}),
        workers=1,
    )
    with Workflow(
        generate_name="sweep-", namespace=NAMESPACE, entrypoint="main", service_account_name=SERVICE_ACCOUNT
    ) as w:
        run = hv.job_dag(job, name="trial", outputs=["lr"])
        show = Container(
            name="show",
            image="busybox:1.37.0",
            command=["sh", "-c", 'printf "downstream got: %s\\n" "$VALUES"'],
            inputs=[Parameter(name="values")],
            env={"VALUES": "{{inputs.parameters.values}}"},
        )
        with DAG(name="main"):
            t = run(name="sweep", arguments={"lr": "{{item}}"}, with_items=RATES)
            t >> show(name="show", arguments={"values": "{{tasks.sweep.outputs.parameters.lr}}"})
        w.on_exit = hv.cleanup_on_failure()
    return hv.to_yaml(w)


def retried() -> str:
    from hera.workflows import DAG, Workflow

    job = hv.pytorch_job(
        image=PYTHON_IMAGE,
        program=hv.Program.function(slow_host),
        workers=1,
        generate_name="retried-",
        retry=hv.ArgoRetry(limit=1),
    )
    with Workflow(
        generate_name="retried-", namespace=NAMESPACE, entrypoint="main", service_account_name=SERVICE_ACCOUNT
    ) as w:
        run = hv.job_dag(job, name="run", outputs=["pod"])
        with DAG(name="main"):
            run(name="run")
        w.on_exit = hv.cleanup_on_failure()
    return hv.to_yaml(w)


def submit_batch(b: Batch, cluster: Cluster) -> None:
    if b.runs(test_each_iteration_of_a_sweep_reports_its_own_value):
        b.submit("sweep", sweep())

    def kill_first_attempt(entry: Entry) -> None:
        found: dict[str, str] = {}

        def master_runs() -> bool:
            for job in cluster.recorder.jobs_of(entry.name):
                pods = [p for p in cluster.job_pods(job) if p.metadata.name == f"{job}-master-0"]
                if pods and pods[0].status.phase == "Running":
                    found["job"] = job
                    return True
            return False

        cluster.wait_for(master_runs, f"the first attempt's master of {entry.name} Running", 300)
        entry.acted = time.time()
        entry.seen["first"] = found["job"]
        cluster.core.delete_namespaced_pod(f"{found['job']}-master-0", NAMESPACE)

    if b.runs(test_after_an_argo_retry_the_follower_follows_the_new_attempts_job):
        b.submit("retried", retried(), kill_first_attempt)


def nodes(wf: dict[str, Any]) -> list[dict[str, Any]]:
    return list(wf["status"]["nodes"].values())


def shown(wf: dict[str, Any]) -> str:
    """Each node's name, phase and message: what the test saw, for a failure message."""
    return "; ".join(f"{n['name']}: {n.get('phase')} {n.get('message', '')}".strip() for n in nodes(wf))


@pytest.mark.both_lines("the controller expands loops and names their pods")
@pytest.mark.batch
@pytest.mark.scenario("33.2 a sweep of 3 iterations of one function job: 3 different values downstream")
def test_each_iteration_of_a_sweep_reports_its_own_value(
    cluster: Cluster, batch: Batch, record_property: Record
) -> None:
    entry, wf = batch.finish("sweep")
    record_property("took", took(wf, entry.submitted))
    assert wf["status"]["phase"] == "Succeeded", shown(wf)
    # Each iteration's own value: the DAG node of iteration i reports RATES[i].
    reported = {}
    for node in nodes(wf):
        if node["type"] == "DAG" and node.get("displayName", "").startswith("sweep("):
            index = int(node["displayName"].split("(")[1].split(":")[0])
            reported[index] = next(p["value"] for p in node["outputs"]["parameters"] if p["name"] == "lr")
    assert reported == dict(enumerate(RATES)), shown(wf)
    out = [text for pod, _, text in cluster.lines(entry.name) if "-show-" in pod]
    assert any(f"downstream got: {json.dumps(RATES, separators=(',', ':'))}" in line for line in out), out
    # Each iteration's output in argo logs under its own job: one follower per job, each showing its own trial.
    jobs = cluster.recorder.jobs_of(entry.name)
    assert len(jobs) == 3, jobs
    followed = {}
    for pod, _, text in cluster.lines(entry.name):
        if "-logs-" in pod and text.startswith("trial with lr="):
            followed.setdefault(pod, set()).add(text.removeprefix("trial with lr="))
    assert sorted(v for values in followed.values() for v in values) == sorted(RATES), followed
    assert all(len(values) == 1 for values in followed.values()), followed
    # The client shows each iteration's job by its name, as status lists them.
    with hv.Client(namespace=NAMESPACE, kubeconfig=cluster.node.paths.kubeconfig) as c:
        run = c.get(entry.name)
        listed = [job.name for job in run.status().jobs]
        assert sorted(listed) == sorted(jobs), listed
        trials = {name: [t for t in run.logs(follow=False, job_name=name) if "trial with lr=" in t] for name in listed}
    shown_rates = sorted(line.split("trial with lr=")[1].strip() for lines in trials.values() for line in lines)
    assert shown_rates == sorted(RATES), trials


@pytest.mark.both_lines("the controller runs retries and names their pods")
@pytest.mark.batch
@pytest.mark.scenario("33.2 an Argo retry of the job step: the follower follows the second attempt's job")
def test_after_an_argo_retry_the_follower_follows_the_new_attempts_job(
    cluster: Cluster, batch: Batch, record_property: Record
) -> None:
    entry, wf = batch.finish("retried")
    record_property("took", took(wf, entry.submitted))
    assert wf["status"]["phase"] == "Succeeded", shown(wf)
    jobs = cluster.recorder.jobs_of(entry.name)
    first = entry.seen["first"]
    assert len(jobs) == 2 and first in jobs, jobs
    [second] = [j for j in jobs if j != first]
    dag = next(n for n in nodes(wf) if n.get("displayName") == "run")
    pod = next(p["value"] for p in dag["outputs"]["parameters"] if p["name"] == "pod")
    assert pod.startswith(f"{second}-"), (pod, jobs, shown(wf))
