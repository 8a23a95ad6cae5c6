"""Progress and metrics on the real cluster (issue 44.3): a function job reports its progress k/10 and its loss every
4 s for 40 s with the runtime's helper; while it runs, Argo's node of its follower shows a progress as rank 0
reported it (neither Argo's default 0/1 nor only the final value), and ``hera-volcano status`` shows the job's
progress and latest metrics; at the end the last metrics are the task's outputs (``job-metrics``, and ``loss``
reported only as a metric), which a later step reads. In the batch of every batched scenario (harness.Batch)."""

from __future__ import annotations

import json
import re
import sys
import time
from typing import Any

import pytest
from functions import counting
from harness import NAMESPACE, SERVICE_ACCOUNT, Batch, Cluster, Entry, Record, took

import hera_volcano as hv

#: This module's batched workflow runs about this long (the job's 40 s, its pods' start, the tick): conftest.py
#: submits the longest first.
BATCH_WAITS = 90
PYTHON_IMAGE = "python:3.11-slim"
STEPS = 10
EVERY = 4.0
#: The job's follower: the task ``logs`` of job_dag's DAG ``train``.
FOLLOWER, DAG_TASK = "logs", "train"


def progress_workflow() -> str:
    """The job (job_dag ``train``, its output ``loss`` only ever a metric), then a step that prints its outputs."""
    from hera.workflows import DAG, Container, Parameter, Workflow

    job = hv.batch_job(image=PYTHON_IMAGE, program=hv.Program.function(counting, args={"steps": STEPS, "every": EVERY}))
    with Workflow(
        generate_name="progress-", namespace=NAMESPACE, entrypoint="main", service_account_name=SERVICE_ACCOUNT
    ) as w:
        run = hv.job_dag(job, name="train", outputs=["loss"])
        show = Container(
            name="show",
            image="busybox:1.37.0",
            command=["sh", "-c", 'printf "loss %s metrics %s\\n" "$LOSS" "$METRICS"'],
            inputs=[Parameter(name="loss"), Parameter(name="metrics")],
            env={"LOSS": "{{inputs.parameters.loss}}", "METRICS": "{{inputs.parameters.metrics}}"},
        )
        outputs = "{{tasks.%s.outputs.parameters.%s}}"
        with DAG(name="main"):
            run(name=DAG_TASK) >> show(
                name="show",
                arguments={"loss": outputs % (DAG_TASK, "loss"), "metrics": outputs % (DAG_TASK, "job-metrics")},
            )
        w.on_exit = hv.cleanup_on_failure()
    return hv.to_yaml(w)


def node_progress(wf: dict[str, Any], name: str, kind: str) -> str | None:
    """The progress Argo shows on the workflow's node ``name`` of type ``kind`` (Pod: the follower; DAG: the job's
    DAG, its children summed)."""
    nodes = wf.get("status", {}).get("nodes", {}).values()
    found = [n.get("progress") for n in nodes if n.get("displayName") == name and n.get("type") == kind]
    return found[0] if found else None


def watch_while_it_runs(cluster: Cluster) -> Any:
    """The action beside the workflow: until it finishes, every second what Argo shows on the follower's node and
    the job's DAG node, and every few seconds what ``hera-volcano status -o json`` shows of its job."""

    def watch(entry: Entry) -> None:
        seen: dict[str, list[Any]] = {"follower": [], "dag": [], "status": []}
        entry.seen.update(seen)
        deadline = time.monotonic() + 600
        last_status = 0.0
        while time.monotonic() < deadline:
            wf = cluster.workflow(entry.name)
            for key, name, kind in (("follower", FOLLOWER, "Pod"), ("dag", DAG_TASK, "DAG")):
                value = node_progress(wf, name, kind)
                if value is not None and (not seen[key] or seen[key][-1] != value):
                    seen[key].append(value)
            if wf.get("status", {}).get("finishedAt"):
                break
            if time.monotonic() - last_status >= 3:
                last_status = time.monotonic()
                run = cluster.run([sys.executable, "-m", "hera_volcano", "status", entry.name, "-n", NAMESPACE,
                                   "-o", "json"], timeout=60)  # fmt: skip
                if run.out.strip().startswith("{"):
                    seen["status"] += [(j["progress"], j["metrics"]) for j in json.loads(run.out)["jobs"]]
            time.sleep(1)
        entry.acted = time.time()

    return watch


def submit_batch(b: Batch, cluster: Cluster) -> None:
    if b.runs(test_a_jobs_progress_and_metrics_show_while_it_runs_and_remain_as_outputs):
        b.submit("progress", progress_workflow(), watch_while_it_runs(cluster))


def reported(cluster: Cluster, workflow: str) -> list[str]:
    """The lines rank 0 printed, as its follower relayed them into the workflow's logs."""
    return [text for pod, _, text in cluster.lines(workflow) if f"-{FOLLOWER}-" in pod]


def intermediate(value: object) -> bool:
    """A progress rank 0 reported along the way: k/10 with 0 < k < 10 (not Argo's 0/1, not only the end)."""
    found = re.fullmatch(rf"(\d+)/{STEPS}", str(value))
    return found is not None and 0 < int(found[1]) < STEPS


@pytest.mark.both_lines(
    "Argo's executor reads the follower's progress file by line: 3.7 polls it every 3 s, 4.1 watches it with"
    " inotify (the follower replaces the file whole: a create event); each sends it on the controller's tick"
)
@pytest.mark.batch
@pytest.mark.scenario("44.3 a job's progress in argo get and its metrics in status while it runs; metrics as outputs")
def test_a_jobs_progress_and_metrics_show_while_it_runs_and_remain_as_outputs(
    cluster: Cluster, batch: Batch, record_property: Record
) -> None:
    entry, wf = batch.finish("progress")
    record_property("took", took(wf, entry.submitted))
    assert wf["status"]["phase"] == "Succeeded", wf["status"].get("message")
    lines = reported(cluster, entry.name)
    said = [line for line in lines if line.startswith("hera-volcano:progress ")]
    assert said == [f"hera-volcano:progress {k}/{STEPS}" for k in range(STEPS + 1)], lines
    seen = f"saw on the follower's node {entry.seen['follower']}, on the DAG {entry.seen['dag']}"
    # argo get, while it ran: the follower's node as rank 0 reported it; the DAG node sums its children with it.
    along = [p for p in entry.seen["follower"] if intermediate(p)]
    assert along, f"no progress k/{STEPS} (0 < k < {STEPS}) on the follower's node while it ran; {seen}"
    assert all(f"hera-volcano:progress {p}" in said for p in along), seen
    assert any(re.fullmatch(r"\d+/\d+", str(p)) and int(str(p).split("/")[1]) > STEPS for p in entry.seen["dag"]), (
        f"the job's DAG node never summed the follower's {STEPS} steps; {seen}"
    )
    assert node_progress(wf, FOLLOWER, "Pod") == f"{STEPS}/{STEPS}", "a node that Succeeded is complete"
    # hera-volcano status, while it ran: the progress and the metrics of the same step, as rank 0 printed them.
    running = [(p, m) for p, m in entry.seen["status"] if intermediate(p)]
    assert running, f"status never showed a progress along the way: {entry.seen['status']}"
    assert any(metrics for _, metrics in running), f"status never showed the metrics: {running}"
    for progress, metrics in running:
        # One look at the job: the helper prints a step's metrics, then its progress line, and the job shows what
        # that line closed: the metrics of the same step (none with 0/10), never some of the next step's.
        step = int(progress.split("/")[0])
        assert metrics.get("step", 0) == step, (progress, metrics)
        if metrics:
            assert f"step {metrics['step']} of {STEPS}: loss {metrics['loss']}" in lines, (progress, metrics, lines)
    # At the end: the last metrics are the task's outputs, and the next step reads them.
    final = round(0.8**STEPS, 6)
    train = next(n for n in wf["status"]["nodes"].values() if n.get("displayName") == DAG_TASK)
    outputs = {p["name"]: p["value"] for p in train["outputs"]["parameters"]}
    assert json.loads(outputs["job-metrics"]) == {"loss": final, "step": STEPS}, outputs
    assert json.loads(outputs["loss"]) == final, "an output rank 0 reported only as a metric: its last value"
    shown = [text for pod, _, text in cluster.lines(entry.name) if "-show-" in pod]
    assert f"loss {outputs['loss']} metrics {outputs['job-metrics']}" in shown, shown
