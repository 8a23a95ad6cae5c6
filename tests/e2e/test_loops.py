"""Each follower follows its own job (issue 33) on the real cluster: a sweep of three iterations of one function
job (``with_items``) gives three different values downstream, each iteration's output under its own job; after an
Argo retry of the job step the follower follows the second attempt's job. A user's own DAGs, in the batch of
every batched scenario (harness.Batch)."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from functions import slow_host, times_ten, trial
from harness import NAMESPACE, SERVICE_ACCOUNT, Batch, Cluster, Entry, Record, took

import hera_volcano as hv

#: This module's batched workflows run this long under CI's batch (the Argo retry's two attempts, 2026-12-07):
#: conftest.py submits the longest first.
BATCH_WAITS = 200
PYTHON_IMAGE = "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime"  # python3, as built for the test cluster
RATES = ["0.01", "0.1", "1.5"]
#: The learning rates of the job called twice and looped: each call reports ten times its own.
DISTINCT_RATES = ["0.1", "0.01"]


def sweep() -> str:
    from hera.workflows import DAG, Container, Parameter, Workflow

    job = hv.batch_job(
        image=PYTHON_IMAGE, program=hv.Program.function(trial, args={"lr": hv.Placeholder.input("lr", "0.1")})
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


def distinct() -> str:
    """One job called twice in one DAG and in a loop of two (issue 42: the hand-wired pair called twice crossed,
    and each follower could report the other's value): job_dag, each call its own pair; a later step checks."""
    from hera.workflows import DAG, Container, Parameter, Workflow

    job = hv.batch_job(
        image=PYTHON_IMAGE, program=hv.Program.function(times_ten, args={"lr": hv.Placeholder.input("lr", "0.1")})
    )
    with Workflow(
        generate_name="distinct-", namespace=NAMESPACE, entrypoint="main", service_account_name=SERVICE_ACCOUNT
    ) as w:
        run = hv.job_dag(job, name="times-ten", outputs=["value"])
        check = Container(
            name="check",
            image="busybox:1.37.0",
            command=["sh", "-c", 'echo "a=$A b=$B loop=$LOOP"; test "$A" = 1.0 && test "$B" = 0.1'],
            inputs=[Parameter(name=n) for n in ("a", "b", "loop")],
            env={"A": "{{inputs.parameters.a}}", "B": "{{inputs.parameters.b}}", "LOOP": "{{inputs.parameters.loop}}"},
        )
        with DAG(name="main"):
            calls = [
                run(name="a", arguments={"lr": "0.1"}),
                run(name="b", arguments={"lr": "0.01"}),
                run(name="loop", arguments={"lr": "{{item}}"}, with_items=DISTINCT_RATES),
            ]
            given = {k: f"{{{{tasks.{k}.outputs.parameters.value}}}}" for k in ("a", "b", "loop")}
            calls >> check(name="check", arguments=given)
        w.on_exit = hv.cleanup_on_failure()
    return hv.to_yaml(w)


def retried() -> str:
    """The hand-wired pair, the follower built from the job step (issue 42: it took neither the job's ArgoRetry nor
    its start limit): ArgoRetry(2), the first attempt killed, the second attempt's value reported."""
    from hera.workflows import DAG, Workflow

    job = hv.pytorch_job(
        image=PYTHON_IMAGE,
        program=hv.Program.function(slow_host),
        workers=1,
        generate_name="retried-",
        retry=hv.ArgoRetry(limit=2),
    )
    with Workflow(
        generate_name="retried-", namespace=NAMESPACE, entrypoint="main", service_account_name=SERVICE_ACCOUNT
    ) as w:
        run = hv.job_template(job, name="run")
        logs = hv.follow_logs_template(run, outputs=["pod"])
        with DAG(name="main"):
            run(name="run")
            logs(name="logs")
        w.on_exit = hv.cleanup_on_failure()
    return hv.to_yaml(w)


def submit_batch(b: Batch, cluster: Cluster) -> None:
    if b.runs(test_each_iteration_of_a_sweep_reports_its_own_value):
        b.submit("sweep", sweep())
    if b.runs(test_one_job_called_twice_and_looped_reports_each_calls_own_value):
        b.submit("distinct", distinct())

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
@pytest.mark.scenario("33.2, 42 ArgoRetry(2), hand-wired: the follower built from the step follows the second attempt")
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
    follower = next(n for n in nodes(wf) if n.get("displayName") == "logs")
    pod = next(p["value"] for p in follower["outputs"]["parameters"] if p["name"] == "pod")
    assert pod.startswith(f"{second}-"), (pod, jobs, shown(wf))


@pytest.mark.batch
@pytest.mark.scenario("42 one job called twice in one DAG and in a loop: each call reports its own job's value")
def test_one_job_called_twice_and_looped_reports_each_calls_own_value(
    cluster: Cluster, batch: Batch, record_property: Record
) -> None:
    entry, wf = batch.finish("distinct")
    record_property("took", took(wf, entry.submitted))
    assert wf["status"]["phase"] == "Succeeded", shown(wf)
    reported = {
        n["displayName"]: next(p["value"] for p in n["outputs"]["parameters"] if p["name"] == "value")
        for n in nodes(wf)
        if n["type"] == "DAG" and n.get("displayName", "").startswith(("a", "b", "loop("))
    }
    assert (reported["a"], reported["b"]) == ("1.0", "0.1"), shown(wf)
    looped = sorted(v for k, v in reported.items() if k.startswith("loop("))
    assert looped == ["0.1", "1.0"], shown(wf)
    out = [text for pod, _, text in cluster.lines(entry.name) if "-check-" in pod]
    assert any(line.startswith("a=1.0 b=0.1 loop=") for line in out), out
    assert len(cluster.recorder.jobs_of(entry.name)) == 4
