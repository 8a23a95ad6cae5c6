"""The bundled workflows, run as a user runs them, on both Argo lines (issue 12's scenarios 1-5).

Scenario 1 runs alone, exactly as a user's first command (`... | argo submit --wait -`); the others are submitted
with the batch of every batched scenario (harness.Batch) and checked each on its own.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
import yaml
from harness import ROOT, Batch, Cluster, Record, took

from tests.doc_blocks import blocks, run_python

#: This module's batched workflows run this long under CI's batch (the DAG pipeline's jobs in turn, 2026-12-07):
#: conftest.py submits the longest first.
BATCH_WAITS = 150
MPI_VARIANTS = {"6-ranks": ["--workers", "3", "--slots-per-worker", "2"], "mpi-plugin": ["--mpi-plugin"]}
PIPELINES = ("steps", "dag")


def template_job(cluster: Cluster) -> str:
    return "e2e-fixed-" + cluster.line.replace(".", "-")


def submit_batch(b: Batch, cluster: Cluster) -> None:
    """Scenarios 2-5 of this line: the MPI variants, the WorkflowTemplate, the pipelines, the documentation's
    examples."""
    if b.runs(test_mpi_variants):
        for key, args in MPI_VARIANTS.items():
            b.submit(key, cluster.hera("mpi_hello", *args))
    if b.runs(test_template_submitted_by_name):
        cluster.kubectl("apply", "-f", "-", input=cluster.hera("mpi_hello", "--template")).ok()
        b.submit(
            "template",
            None,
            args=["--from", "workflowtemplate/volcano-mpi-hello", "-p", f"job-name={template_job(cluster)}"],
        )
    if b.runs(test_pipelines_run_in_order):
        for module in PIPELINES:
            b.submit(module, cluster.hera(module))
    if b.runs(test_readme_examples_run):
        for i, doc in enumerate(readme_workflows()):
            b.submit(f"readme {i}", doc)


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
    lines = follower_lines(cluster, name)
    assert hello_ranks(lines) == dict.fromkeys(range(ranks), ranks), (
        "every rank, once; the follower printed:\n" + "\n".join(lines) + "\n" + cluster.describe(name)
    )
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


@pytest.mark.both_lines("smoke: the bundled MPI hello world; Argo's executor runs the resource step and the follower")
@pytest.mark.scenario("1 MPI hello world: mpi_hello | argo submit --wait -")
def test_mpi_hello_world(cluster: Cluster) -> None:
    wf = cluster.submit(cluster.hera("mpi_hello"))
    job = check_mpi_run(cluster, wf, ranks=2, workers=2)
    owners = job["metadata"]["ownerReferences"]
    assert [(o["kind"], o["name"], o.get("controller")) for o in owners] == [("Workflow", wf["metadata"]["name"], True)]
    # What every Argo user types first prints the run's output, with no error line: the job's pods do not carry
    # Argo's workflow label, so argo asks none of them for a `main` container they do not have.
    for follow in ((), ("-f",)):
        logs = cluster.argo("logs", wf["metadata"]["name"], *follow, "--no-color", timeout=120)
        assert logs.code == 0, logs
        assert "ERROR" not in logs.out + logs.err and "Failed to get pod logs" not in logs.out + logs.err, logs
        assert hello_ranks(logs.out.splitlines()) == {0: 2, 1: 2}, logs.out


@pytest.mark.batch
@pytest.mark.scenario("2 more ranks, the mpi plugin")
@pytest.mark.parametrize(
    "variant", [("3 workers x 2 slots", "6-ranks", 6, 3), ("--mpi-plugin", "mpi-plugin", 2, 2)], ids=list(MPI_VARIANTS)
)
def test_mpi_variants(
    cluster: Cluster, batch: Batch, variant: tuple[str, str, int, int], record_property: Record
) -> None:
    _, key, ranks, workers = variant
    entry, wf = batch.finish(key)
    record_property("took", took(wf, entry.submitted))
    job = check_mpi_run(cluster, wf, ranks=ranks, workers=workers)
    if key == "mpi-plugin":
        assert {"mpi", "ssh", "svc"} <= set(job["spec"]["plugins"]), "Volcano's webhook adds ssh and svc"


@pytest.mark.both_lines("the controller substitutes -p into a WorkflowTemplate")
@pytest.mark.batch
@pytest.mark.scenario("3 WorkflowTemplate: kubectl apply, argo submit --from -p job-name=X")
def test_template_submitted_by_name(cluster: Cluster, batch: Batch, record_property: Record) -> None:
    entry, wf = batch.finish("template")
    record_property("took", took(wf, entry.submitted))
    job = check_mpi_run(cluster, wf, ranks=2, workers=2)
    assert job["metadata"]["name"] == template_job(cluster)


def _time(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


@pytest.mark.both_lines("smoke: the bundled steps and DAG pipelines; the controller orders the steps")
@pytest.mark.batch
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
    ids=list(PIPELINES),
)
def test_pipelines_run_in_order(
    cluster: Cluster,
    batch: Batch,
    variant: tuple[str, str, dict[str, tuple[str, list[str]]]],
    record_property: Record,
) -> None:
    _, module, tasks = variant
    entry, wf = batch.finish(module)
    record_property("took", took(wf, entry.submitted))
    assert wf["status"]["phase"] == "Succeeded", wf["status"].get("message")
    jobs = {j["metadata"]["labels"]["hera-volcano/job"]: j for j in cluster.jobs(wf["metadata"]["name"])}
    assert set(jobs) == set(tasks)
    for task, job in jobs.items():
        assert job["status"]["state"]["phase"] == "Completed"
        for parent in tasks[task][1]:
            done = _time(jobs[parent]["status"]["state"]["lastTransitionTime"])
            assert _time(job["metadata"]["creationTimestamp"]) >= done, f"{task} started before {parent} completed"
    # Each job's two pods printed its message (read from the pods: they do not carry Argo's workflow label, so
    # that `argo logs WF` does not ask them for a `main` container).
    for task, job in jobs.items():
        logs = cluster.job_logs(job["metadata"]["name"], "hello")
        assert len(logs) == 2 and all(text.splitlines() == [tasks[task][0]] for text in logs.values()), (task, logs)


def readme_workflows() -> list[str]:
    """The Workflows the ```python examples of the README and docs/ print (tests/doc_blocks.py), as YAML documents."""
    docs = []
    with tempfile.TemporaryDirectory() as folder:
        for i, block in enumerate(blocks("python")):
            (Path(folder) / str(i)).mkdir()
            printed = run_python(block, Path(folder) / str(i))
            docs += [yaml.safe_dump(d) for d in yaml.safe_load_all(printed) if d]
    return docs


@pytest.mark.batch
@pytest.mark.scenario("5 the documentation's Python API examples")
def test_readme_examples_run(cluster: Cluster, batch: Batch, record_property: Record) -> None:
    keys = [k for k in batch.entries if k.startswith("readme ")]
    assert len(keys) == len(readme_workflows()) >= 3
    slowest = 0.0
    for key in keys:
        entry, wf = batch.finish(key)
        slowest = max(slowest, took(wf, entry.submitted))
        name = wf["metadata"]["name"]
        assert wf["status"]["phase"] == "Succeeded", f"{key}: {cluster.describe(name)}\n{cluster.logs(name)}"
        assert cluster.jobs(name), "each example runs Volcano jobs"
        if wf["metadata"]["name"].startswith("sums-"):  # what the README says the example prints
            assert "the ranks summed to 30" in cluster.logs(wf["metadata"]["name"])
    record_property("took", slowest)


#: What a person's own shell does not have but this test's process may: make's variables (the suite runs under `make
#: test-e2e`; with them a `make` in the shell is a sub-make, which prints "make[N]: Entering directory" on stdout,
#: into the pipe) and the kubeconfig the exports set.
NOT_IN_A_PLAIN_SHELL = (
    "KUBECONFIG", "MAKELEVEL", "MAKEFLAGS", "MFLAGS", "MAKEOVERRIDES", "MAKE_TERMOUT", "MAKE_TERMERR",
)  # fmt: skip


def plain_shell_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in NOT_IN_A_PLAIN_SHELL}


def _text(value: str | bytes | None) -> str:
    return value.decode(errors="replace") if isinstance(value, bytes) else value or ""


@pytest.mark.scenario(
    "21.5 what make cluster-up prints works as printed: make run, in a terminal, runs the hello world"
)
def test_what_cluster_up_prints_works_as_printed(cluster: Cluster, tmp_path: Path) -> None:
    """The exports, then the next command, exactly as `make cluster-up` prints them, in a plain shell in a terminal
    (`script` gives it one): `make run` submits the MPI hello world there and watches it to Succeeded. Into a pipe,
    the same command prints the Workflow for `argo submit -` and submits nothing."""
    import welcome

    typed = tmp_path / "typed.sh"
    typed.write_text("\n".join([*welcome.exports(cluster.node), welcome.NEXT]) + "\n")
    piped = tmp_path / "piped.sh"
    pipe = "make --no-print-directory run | cat"
    piped.write_text("\n".join(["set -o pipefail", *welcome.exports(cluster.node), pipe]) + "\n")
    timeout = 600
    try:
        run = subprocess.run(
            ["script", "-qefc", f"bash -e {typed}", "/dev/null"],
            cwd=ROOT, env=plain_shell_env(), capture_output=True, text=True, timeout=timeout,
        )  # fmt: skip
        code, out, err = str(run.returncode), run.stdout, run.stderr
    except subprocess.TimeoutExpired as e:
        code, out, err = f"none: still running after {timeout} s", _text(e.stdout), _text(e.stderr)
    out = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", out)  # a terminal's colours and redraws
    names = re.findall(r"\bName:\s+(\S+)", out)
    seen = cluster.describe(names[0]) if names else "argo printed no workflow name: nothing was submitted"
    what = f"{typed.read_text()}exit code {code}\nterminal (end):\n{out[-3000:]}\nstderr (end):\n{err[-3000:]}\n{seen}"
    assert code == "0" and re.search(r"\bStatus:\s+Succeeded\b", out), f"expected Succeeded from\n{what}"
    before = {w["metadata"]["name"] for w in cluster.workflows()}
    printed = subprocess.run(
        ["bash", "-e", str(piped)], cwd=ROOT, env=plain_shell_env(), capture_output=True, text=True, timeout=120
    )
    assert printed.returncode == 0, printed.stderr
    [doc] = [d for d in yaml.safe_load_all(printed.stdout) if d]
    assert doc["kind"] == "Workflow", printed.stdout[:500]
    assert {w["metadata"]["name"] for w in cluster.workflows()} == before, "into a pipe, make run submits nothing"
