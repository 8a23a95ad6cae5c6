"""Time limits on the real cluster (issue 32): no default ends a job that runs; a gang that cannot start is ended at
its start limit with the scheduler's reason in its task's message; a job killed before its rank 0 reports leaves
its task Failed, and the step that needs the value never runs. Each a user's own DAG: ``job_dag`` then a step that
prints the value it was given. All in the batch of every batched scenario (harness.Batch)."""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

import pytest
from harness import NAMESPACE, SERVICE_ACCOUNT, WORKFLOW_LABEL, Batch, Cluster, Entry, Record, took

import hera_volcano as hv

MPI_IMAGE = "volcanosh/example-mpi:0.0.3"
#: Short for the test: a job that starts later than this is ended. The jobs that run start within about 20 s when
#: alone, later in the loaded batch: the limit leaves them room.
START_LIMIT = 120
#: How long the job that starts in time runs: well past its start limit.
RUNS = 180
#: This module's batched workflows wait this long at least (conftest.py submits the longest waits first).
BATCH_WAITS = RUNS + 60  # measured: 238 s under CI's batch (2026-12-07)
#: How long after its start limit the follower of a gang that cannot start may take to say so: one more look at
#: the job, its PodGroup's reason, the delete.
FOLLOWER_SLACK = 30
#: The start limit of the pipeline's job that no log follower follows (issue 42): its quiet follower keeps it.
PIPELINE_START_LIMIT = 60
#: What rank 0 reports.
VALUE = "42"


def with_downstream(name: str, job: hv.VolcanoJob, *, start_limit: int) -> str:
    """The user's DAG: the job's task (reporting ``value``), then a step printing it."""
    from hera.workflows import DAG, Container, Parameter, Workflow

    with Workflow(
        generate_name=f"{name}-", namespace=NAMESPACE, entrypoint="main", service_account_name=SERVICE_ACCOUNT
    ) as w:
        run = hv.job_dag(replace(job, start_limit=start_limit), name="run", outputs=["value"])
        show = Container(
            name="show",
            image="busybox:1.37.0",
            command=["sh", "-c", 'printf "downstream got: [%s]\\n" "$VALUE"'],
            inputs=[Parameter(name="value")],
            env={"VALUE": "{{inputs.parameters.value}}"},
        )
        with DAG(name="main"):
            run(name="ranks") >> show(name="show", arguments={"value": "{{tasks.ranks.outputs.parameters.value}}"})
        w.on_exit = hv.cleanup_on_failure()
    return hv.to_yaml(w)


def mpi(command: str, *, workers: int = 2, cpu: str | None = None) -> hv.VolcanoJob:
    return hv.mpi_job(
        image=MPI_IMAGE,
        program=hv.Program.command(["sh", "-c", command]),
        workers=workers,
        service_account=SERVICE_ACCOUNT,
        worker_pod=hv.PodSettings(cpu=cpu) if cpu else None,
    )


def submit_batch(b: Batch, cluster: Cluster) -> None:
    report = f"echo hera-volcano:output value={VALUE}"
    if b.runs(test_a_job_that_started_in_time_is_not_ended_by_its_start_limit):
        b.submit("runs long", with_downstream("runs-long", mpi(f"sleep {RUNS}; {report}"), start_limit=START_LIMIT))
    if b.runs(test_a_gang_that_cannot_start_is_ended_at_its_start_limit_with_the_schedulers_reason):
        # 3 workers asking for a whole CPU each: more than the node's 2. The gang (4 pods) is all or nothing.
        b.submit(
            "never starts",
            with_downstream("never-starts", mpi(report, workers=3, cpu="1"), start_limit=START_LIMIT),
        )

    if b.runs(test_a_pipeline_job_nobody_follows_is_ended_at_its_start_limit_with_the_podgroups_reason):
        lonely = replace(mpi(report, workers=3, cpu="1"), start_limit=PIPELINE_START_LIMIT)
        pipeline = hv.Pipeline([hv.PipelineJob("lonely", lonely)])
        made = pipeline.workflow("nobody-follows", namespace=NAMESPACE, service_account=SERVICE_ACCOUNT)
        b.submit("nobody follows", hv.to_yaml(made))

    def kill_master(entry: Entry) -> None:
        job = running(cluster, entry.name)
        entry.acted = time.time()
        cluster.core.delete_namespaced_pod(f"{job}-mpimaster-0", NAMESPACE)

    if b.runs(test_a_job_killed_before_it_reports_fails_its_task_and_stops_the_downstream_step):
        killed = with_downstream("killed", mpi(f"sleep 600; {report}"), start_limit=START_LIMIT)
        b.submit("killed", killed, kill_master)


def running(cluster: Cluster, workflow: str, timeout: float = 240) -> str:
    """The workflow's Volcano Job once its master runs; its name."""
    found: dict[str, str] = {}

    def master_runs() -> bool:
        for job in cluster.recorder.jobs_of(workflow):
            pods = [p for p in cluster.job_pods(job) if p.metadata.name == f"{job}-mpimaster-0"]
            if pods and pods[0].status.phase == "Running":
                found["job"] = job
                return True
        return False

    cluster.wait_for(master_runs, f"the master of {workflow}'s job Running", timeout)
    return found["job"]


def nodes(wf: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {n["displayName"]: n for n in wf["status"]["nodes"].values()}


def shown(wf: dict[str, Any]) -> str:
    """What the test saw, for a failure message: each node's phase and message."""
    return "; ".join(f"{k}: {n.get('phase')} {n.get('message', '')}".strip() for k, n in sorted(nodes(wf).items()))


@pytest.mark.batch
@pytest.mark.scenario(f"32.3 a job that started in time runs {RUNS} s, past its {START_LIMIT} s start limit: not ended")
def test_a_job_that_started_in_time_is_not_ended_by_its_start_limit(
    cluster: Cluster, batch: Batch, record_property: Record
) -> None:
    entry, wf = batch.finish("runs long")
    record_property("took", took(wf, entry.submitted))
    assert wf["status"]["phase"] == "Succeeded", shown(wf)
    assert took(wf, entry.submitted) > RUNS, "the job really ran past its start limit"
    value = next(p["value"] for p in nodes(wf)["ranks"]["outputs"]["parameters"] if p["name"] == "value")
    assert value == VALUE, (value, shown(wf))
    assert any(f"downstream got: [{VALUE}]" in text for _, _, text in cluster.lines(entry.name)), shown(wf)


@pytest.mark.batch
@pytest.mark.scenario(f"32.3 a gang that cannot start is ended at its {START_LIMIT} s start limit, saying why")
def test_a_gang_that_cannot_start_is_ended_at_its_start_limit_with_the_schedulers_reason(
    cluster: Cluster, batch: Batch, record_property: Record
) -> None:
    entry, wf = batch.finish("never starts", timeout=START_LIMIT + 300)
    record_property("took", took(wf, entry.submitted))
    assert wf["status"]["phase"] == "Failed", shown(wf)
    found = nodes(wf)
    message = found["logs"].get("message", "")
    assert found["logs"]["phase"] == "Failed" and f"did not start within {START_LIMIT} s" in message, shown(wf)
    assert "PodGroup" in message and ("Unschedulable" in message or "Pending" in message), message
    assert found.get("show", {}).get("phase") in (None, "Omitted"), "the downstream step never ran"
    [job] = cluster.recorder.jobs_of(entry.name)
    assert not any(p.node for p in cluster.recorder.select(**{"volcano.sh/job-name": job})), "no pod was bound"
    cluster.wait_for(lambda: not cluster.job_exists(job), f"job {job} deleted at its start limit", 60)
    # The limit runs from when the follower began following (its first line), so that to its giving up is what the
    # template decides. Before it, its pod's wait to start and Python's start are the node's time: under CI's full
    # batch the pod started 172 s after submission once, and the follower's first line came 33 s after its
    # container's start once (2 cores, about 30 workflows starting at once). Both are printed beside.
    [follower] = [p for p in cluster.recorder.select(**{WORKFLOW_LABEL: entry.name}) if p.step.endswith(".logs")]
    said = [(at.timestamp(), text) for pod, at, text in cluster.lines(entry.name) if pod == follower.name]
    began = next(at for at, text in said if text.startswith("Following "))
    gave_up = next(at for at, text in said if f"did not start within {START_LIMIT} s" in text)
    ran = gave_up - began
    print(
        f"{entry.name}: the follower's container started {follower.started['main'] - entry.submitted:.0f} s after"
        f" submission, began following {began - follower.started['main']:.0f} s later, gave up {ran:.0f} s after"
        f" that; the Workflow ended {took(wf, entry.submitted):.0f} s after submission"
    )
    # the last look at the job, the PodGroup's reason and the delete come after the limit
    assert START_LIMIT <= ran <= START_LIMIT + FOLLOWER_SLACK, f"gave up {ran:.0f} s\n{cluster.describe(entry.name)}"


@pytest.mark.batch
@pytest.mark.scenario("32.3 a job killed before rank 0 reports: its task Failed, the downstream step never ran")
def test_a_job_killed_before_it_reports_fails_its_task_and_stops_the_downstream_step(
    cluster: Cluster, batch: Batch, record_property: Record
) -> None:
    entry, wf = batch.finish("killed")
    record_property("took", took(wf, entry.submitted))
    assert wf["status"]["phase"] == "Failed", shown(wf)
    found = nodes(wf)
    assert found["ranks"]["phase"] == "Failed" and found["logs"]["phase"] == "Failed", shown(wf)
    assert found.get("show", {}).get("phase") in (None, "Omitted"), "the downstream step never ran on an empty value"
    out = "\n".join(text for pod, _, text in cluster.lines(entry.name) if "-logs-" in pod)
    assert "No values for: value (the job did not complete)" in out, out


@pytest.mark.batch
@pytest.mark.scenario(f"42 a PipelineJob without a follower that cannot fit ends at its {PIPELINE_START_LIMIT} s limit")
def test_a_pipeline_job_nobody_follows_is_ended_at_its_start_limit_with_the_podgroups_reason(
    cluster: Cluster, batch: Batch, record_property: Record
) -> None:
    """A PipelineJob without follow_logs had no start limit: a gang that could not fit waited for ever. Its quiet
    follower (task lonely-start) keeps the limit and fails with the PodGroup's reason as its message."""
    entry, wf = batch.finish("nobody follows", timeout=PIPELINE_START_LIMIT + 300)
    record_property("took", took(wf, entry.submitted))
    assert wf["status"]["phase"] == "Failed", shown(wf)
    message = nodes(wf)["lonely-start"].get("message", "")
    assert f"did not start within {PIPELINE_START_LIMIT} s" in message and "PodGroup" in message, shown(wf)
    assert "Unschedulable" in message or "Pending" in message, message
    [job] = cluster.recorder.jobs_of(entry.name)
    cluster.wait_for(lambda: not cluster.job_exists(job), f"job {job} deleted at its start limit", 60)
    assert not any(text.startswith("=== logs of") for _, _, text in cluster.lines(entry.name)), "it streams nothing"
