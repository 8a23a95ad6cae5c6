"""The bundled workflows, run as a user runs them, on both Argo lines (issue 12's scenarios 1-5)."""

from __future__ import annotations

import contextlib
import io
import re
from datetime import datetime
from typing import Any

import pytest
import yaml
from harness import ROOT, Cluster


def follower_lines(cluster: Cluster, workflow: str) -> list[str]:
    """What the workflow's log follower printed (``argo logs`` prefixes each line with its pod)."""
    out = cluster.argo("logs", workflow, "--no-color", timeout=120).ok().out
    return [line.split(": ", 1)[1] for line in out.splitlines() if re.match(r"\S*follow\S*: ", line)]


def hello_ranks(lines: list[str]) -> dict[int, int]:
    """rank -> number of processors, from the MPI program's lines."""
    found = {}
    for line in lines:
        m = re.search(r"Hello world from processor \S+, rank (\d+) out of (\d+) processors", line)
        if m:
            found[int(m.group(1))] = int(m.group(2))
    return found


def check_mpi_run(cluster: Cluster, wf: dict[str, Any], ranks: int, workers: int) -> dict[str, Any]:
    """The common outcome of an MPI hello world: returns its Volcano Job."""
    name = wf["metadata"]["name"]
    assert wf["status"]["phase"] == "Succeeded", wf["status"].get("message")
    assert hello_ranks(follower_lines(cluster, name)) == dict.fromkeys(range(ranks), ranks), "every rank, once"
    [job] = cluster.jobs(name)
    assert job["status"]["state"]["phase"] == "Completed"
    [group] = cluster.recorder.groups_of(job)
    assert group["spec"]["minMember"] == workers + 1, "one gang: master and workers"
    pods = cluster.recorder.select(**{"volcano.sh/job-name": job["metadata"]["name"]})
    assert len(pods) == workers + 1, [p.name for p in pods]
    assert all(p.scheduler == "volcano" and p.node for p in pods), "bound by Volcano's scheduler"
    [master] = [p for p in pods if p.labels.get("volcano.sh/task-spec") == "mpimaster"]
    assert set(master.restarts.values()) == {0}, f"the master restarted: {master.restarts}"
    return job


@pytest.mark.scenario("1 MPI hello world: mpi_hello | argo submit --wait -")
def test_mpi_hello_world(cluster: Cluster) -> None:
    wf = cluster.submit(cluster.hera("mpi_hello"))
    job = check_mpi_run(cluster, wf, ranks=2, workers=2)
    owners = job["metadata"]["ownerReferences"]
    assert [(o["kind"], o["name"], o.get("controller")) for o in owners] == [("Workflow", wf["metadata"]["name"], True)]


@pytest.mark.scenario("2 more ranks, the mpi plugin")
@pytest.mark.parametrize(
    "variant",
    [
        ("3 workers x 2 slots", ["--workers", "3", "--slots-per-worker", "2"], 6, 3),
        ("--mpi-plugin", ["--mpi-plugin"], 2, 2),
    ],
    ids=["6-ranks", "mpi-plugin"],
)
def test_mpi_variants(cluster: Cluster, variant: tuple[str, list[str], int, int]) -> None:
    _, args, ranks, workers = variant
    wf = cluster.submit(cluster.hera("mpi_hello", *args))
    job = check_mpi_run(cluster, wf, ranks=ranks, workers=workers)
    if "--mpi-plugin" in args:
        assert {"mpi", "ssh", "svc"} <= set(job["spec"]["plugins"]), "Volcano's webhook adds ssh and svc"


@pytest.mark.scenario("3 WorkflowTemplate: kubectl apply, argo submit --from -p job-name=X")
def test_template_submitted_by_name(cluster: Cluster) -> None:
    cluster.kubectl("apply", "-f", "-", input=cluster.hera("mpi_hello", "--template")).ok()
    job_name = "e2e-fixed-" + cluster.line.replace(".", "-")
    run = cluster.argo(
        "submit", "--from", "workflowtemplate/volcano-mpi-hello", "-p", f"job-name={job_name}", "--wait", "-o", "json"
    )
    wf = cluster.workflow(yaml.safe_load(run.ok().out)["metadata"]["name"])
    job = check_mpi_run(cluster, wf, ranks=2, workers=2)
    assert job["metadata"]["name"] == job_name


def _time(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


@pytest.mark.scenario("4 steps and DAG pipelines, in order")
@pytest.mark.parametrize(
    "variant",
    [
        (
            "steps",
            "steps",
            {"hello1": ("hello1", []), "hello2a": ("hello2a", ["hello1"]), "hello2b": ("hello2b", ["hello1"])},
        ),
        ("dag", "dag", {"aaa": ("A", []), "bbb": ("B", ["aaa"]), "ccc": ("C", ["aaa"]), "ddd": ("D", ["bbb", "ccc"])}),
    ],
    ids=["steps", "dag"],
)
def test_pipelines_run_in_order(cluster: Cluster, variant: tuple[str, str, dict[str, tuple[str, list[str]]]]) -> None:
    _, module, tasks = variant
    wf = cluster.submit(cluster.hera(module))
    assert wf["status"]["phase"] == "Succeeded", wf["status"].get("message")
    jobs = {j["metadata"]["labels"]["hera-volcano/job"]: j for j in cluster.jobs(wf["metadata"]["name"])}
    assert set(jobs) == set(tasks)
    for task, job in jobs.items():
        assert job["status"]["state"]["phase"] == "Completed"
        for parent in tasks[task][1]:
            done = _time(jobs[parent]["status"]["state"]["lastTransitionTime"])
            assert _time(job["metadata"]["creationTimestamp"]) >= done, f"{task} started before {parent} completed"
    # Each job's two pods printed its message (the pods carry the workflow's label, so `argo logs -c` finds them).
    out = cluster.argo("logs", wf["metadata"]["name"], "-c", "hello", "--no-color", timeout=120).ok().out
    for message, _ in tasks.values():
        assert sum(1 for line in out.splitlines() if line.endswith(f": {message}")) == 2, (message, out)


def readme_workflows() -> list[str]:
    """The Workflows the README's Python examples print, as YAML documents."""
    docs = []
    for code in re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), flags=re.S):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(code, "README.md", "exec"), {})
        docs += [yaml.safe_dump(d) for d in yaml.safe_load_all(out.getvalue()) if d]
    return docs


@pytest.mark.scenario("5 the README's Python API examples")
def test_readme_examples_run(cluster: Cluster) -> None:
    docs = readme_workflows()
    assert len(docs) >= 3
    for doc in docs:
        wf = cluster.submit(doc)
        assert wf["status"]["phase"] == "Succeeded", (wf["metadata"]["name"], wf["status"].get("message"))
        assert cluster.jobs(wf["metadata"]["name"]), "each example runs Volcano jobs"
