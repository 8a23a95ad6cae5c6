"""The Python client and its commands on the real cluster (issue 15): submit, wait, follow the master's log, explain a
gang that cannot fit, refuse clearly without RBAC, stop and delete; and the documentation's ```python cluster examples.

Each scenario runs alone, after the batch (the client's own waits and watches are what is under test).
"""

from __future__ import annotations

import json
import re
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from harness import NAMESPACE, SERVICE_ACCOUNT, Cluster, Run
from test_bundled import hello_ranks
from workloads import mpi_workflow

import hera_volcano as hv
from tests.doc_blocks import blocks, run_python

#: Bounds in seconds: an MPI hello world ends in about 40 s here; the scheduler says Unschedulable within seconds.
HELLO = 240
UNSCHEDULABLE_SEEN = 90
GONE = 90


@pytest.fixture
def client(cluster: Cluster) -> Iterator[hv.Client]:
    with hv.Client(namespace=NAMESPACE, kubeconfig=cluster.node.paths.kubeconfig) as c:
        yield c


def cli(cluster: Cluster, *args: str, input: str | None = None, kubeconfig: Path | None = None) -> Run:
    """``hera-volcano ARGS`` as a user runs it, against the cluster (KUBECONFIG from the environment)."""
    env = ["--kubeconfig", str(kubeconfig)] if kubeconfig else []
    return cluster.run([sys.executable, "-m", "hera_volcano", *args, *env], input=input, timeout=600)


@pytest.mark.both_lines("the client creates and reads Workflow objects: the CRDs and status differ by line")
@pytest.mark.scenario("15.1 client: submit, logs, wait: the hello lines, then Succeeded with the job Completed")
def test_submit_follow_and_wait(cluster: Cluster, client: hv.Client) -> None:
    run = client.submit(cluster.hera("mpi_hello"))
    assert re.fullmatch(r"volcano-mpi-hello-[a-z0-9]{5}", run.name), run.name
    started = time.monotonic()
    lines = list(run.logs())  # follows the master across restarts until its job has finished
    assert hello_ranks(lines) == {0: 2, 1: 2}, lines
    result = run.wait(timeout=HELLO)
    assert time.monotonic() - started <= HELLO
    assert result.succeeded and result.finished, result
    phases = {s.name: s.phase for s in result.steps.values()}
    assert phases.items() >= {"submit-job": "Succeeded", "follow-logs": "Succeeded"}.items(), phases
    [job] = result.jobs  # Volcano zeroes a finished job's pod counts: its phase and gang size are what stay
    assert (job.phase, job.min_available, job.deleted) == ("Completed", 3, False), job
    # The commands on the same run: status exits 0 and says so; logs without --follow has the lines too.
    status = cli(cluster, "status", run.name, "-n", NAMESPACE)
    assert status.code == 0 and f"Workflow {run.name} in {NAMESPACE}: Succeeded" in status.out, status
    logs = cli(cluster, "logs", run.name, "-n", NAMESPACE, "--no-follow")
    assert logs.code == 0 and hello_ranks(logs.out.splitlines()) == {0: 2, 1: 2}, logs


@pytest.mark.scenario("15.2 client: explain names the gang's Unschedulable reason and the missing cpu; delete")
def test_explain_a_gang_that_cannot_fit_then_delete(cluster: Cluster, client: hv.Client) -> None:
    # 3 workers asking a whole CPU each: the gang asks 3 CPUs of a node with 2.
    run = client.submit(
        mpi_workflow("no-fit", command=["mpi_hello_world"], workers=3, worker={"resources": {"requests": {"cpu": "1"}}})
    )
    deadline = time.monotonic() + UNSCHEDULABLE_SEEN
    report = run.explain()
    while "Unschedulable" not in report and time.monotonic() < deadline:
        time.sleep(3)
        report = run.explain()
    assert "Unschedulable" in report, report
    assert re.search(r"PodGroup \S+: (Pending|Inqueue), minMember 4, queue default", report), report
    assert re.search(r"- cpu: the gang \(4 pods\) asks 3, but .* 2 allocatable", report), report
    assert "change:" in report
    explained = cli(cluster, "explain", run.name, "-n", NAMESPACE)
    assert explained.code == 0 and "- cpu: the gang (4 pods) asks 3" in explained.out, explained
    [job] = run.status().jobs
    assert job.phase == "Pending" and job.running == 0, job
    run.delete()  # the Volcano Job goes with it, through its owner reference
    cluster.wait_for(lambda: not cluster.job_exists(job.name), f"job {job.name} deleted with its workflow", GONE)
    with pytest.raises(hv.ClusterError) as e:
        client.get(run.name)
    assert e.value.reason == "NotFound"


@pytest.mark.scenario("15.3 client: stop runs the exit handler; a failed run exits 1 on the command line")
def test_stop_and_exit_codes(cluster: Cluster, client: hv.Client) -> None:
    run = client.submit(mpi_workflow("stop-me", command=["sleep", "600"]))
    cluster.wait_for(lambda: any(j.running == 3 for j in run.status().jobs), "the job running", HELLO)
    [job] = run.status().jobs
    run.stop()
    result = run.wait(timeout=GONE)
    assert result.phase == "Failed", result
    cluster.wait_for(lambda: not cluster.job_exists(job.name), f"job {job.name} deleted by the exit handler", GONE)
    status = cli(cluster, "status", run.name, "-n", NAMESPACE)
    assert status.code == 1 and "Failed" in status.out, status
    # A workflow that fails at once, through `submit --wait`: its name first, then the result; exit code 1.
    failing = json.dumps(
        {
            "apiVersion": "argoproj.io/v1alpha1",
            "kind": "Workflow",
            "metadata": {"generateName": "exit-3-", "namespace": NAMESPACE},
            "spec": {
                "entrypoint": "main",
                "serviceAccountName": SERVICE_ACCOUNT,
                "templates": [
                    {"name": "main", "container": {"image": "busybox:1.37.0", "command": ["sh", "-c", "exit 3"]}}
                ],
            },
        }
    )
    submitted = cli(cluster, "submit", "-", "--wait", "--quiet", input=failing)
    assert submitted.code == 1, submitted
    name = submitted.out.splitlines()[0]
    assert name.startswith("exit-3-") and f"Workflow {name} in {NAMESPACE}: Failed" in submitted.out, submitted


def _token_kubeconfig(cluster: Cluster, account: str, directory: Path) -> Path:
    """A kubeconfig that authenticates as ``account`` of NAMESPACE with a short-lived token."""
    cluster.kubectl("-n", NAMESPACE, "create", "serviceaccount", account)  # may exist from the other Argo line
    token = cluster.kubectl("-n", NAMESPACE, "create", "token", account, "--duration=10m").ok().out.strip()
    admin = json.loads(cluster.node.paths.kubeconfig.read_text())
    [entry] = admin["clusters"]
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [entry],
        "users": [{"name": account, "user": {"token": token}}],
        "contexts": [{"name": account, "context": {"cluster": entry["name"], "user": account, "namespace": NAMESPACE}}],
        "current-context": account,
    }
    path = directory / f"{account}.kubeconfig"
    path.write_text(json.dumps(config))
    return path


@pytest.mark.scenario("15.4 client: without RBAC, a ClusterError naming the verb and resource; the CLI exits 2")
def test_forbidden_names_what_was_refused(cluster: Cluster, tmp_path: Path) -> None:
    nobody = "e2e-nobody-" + cluster.line.replace(".", "-")  # no role yet (one per Argo line: the end grants it one)
    kubeconfig = _token_kubeconfig(cluster, nobody, tmp_path)
    with hv.Client(kubeconfig=kubeconfig) as refused, pytest.raises(hv.ClusterError) as e:
        refused.submit(cluster.hera("mpi_hello"))
    err = e.value
    assert (err.reason, err.status, err.verb, err.resource, err.group) == (
        "Forbidden",
        403,
        "create",
        "workflows",
        "argoproj.io",
    ), vars(err)
    assert err.user == f"system:serviceaccount:{NAMESPACE}:{nobody}"
    assert "create" in str(err) and "workflows" in str(err) and "\n" not in str(err)
    r = cli(cluster, "submit", "-", input=cluster.hera("mpi_hello"), kubeconfig=kubeconfig)
    assert (r.code, r.out) == (3, ""), r  # forbidden: the cluster refuses, exit code 3
    [line] = r.err.splitlines()
    assert line.startswith("hera-volcano submit: error: ") and "create" in line and "workflows" in line, line
    # What `rbac --submitter` grants is what the client needs: with it applied, the same account submits and waits.
    grants = cluster.hera("rbac", "--submitter", nobody)
    cluster.kubectl("apply", "-f", "-", input=grants).ok()
    time.sleep(2)  # the RBAC authorizer reads roles from an informer cache
    with hv.Client(kubeconfig=kubeconfig) as submitter:
        run = submitter.submit(cluster.hera("mpi_hello"))
        assert run.wait(timeout=HELLO).succeeded
        assert hello_ranks(list(run.logs(follow=False))) == {0: 2, 1: 2}
        assert "Volcano Job" in run.explain()
        run.delete()


@pytest.mark.scenario("15.5 the documentation's examples that run on a cluster")
def test_readme_client_examples_run(cluster: Cluster, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The ```python cluster examples of the README and docs/ (tests/doc_blocks.py), run as a user runs them."""
    examples = blocks("python", "cluster")
    assert len(examples) >= 2
    monkeypatch.setenv("KUBECONFIG", str(cluster.node.paths.kubeconfig))
    printed = ""
    for i, block in enumerate(examples):
        (tmp_path / str(i)).mkdir()
        printed += run_python(block, tmp_path / str(i))
    assert hello_ranks(printed.splitlines()) == {0: 2, 1: 2}, printed
    assert "Succeeded" in printed and "Unschedulable" in printed, printed


@pytest.mark.both_lines("the CronWorkflow CRD differs (4.x removed `schedule`)")
@pytest.mark.scenario("15.6 client: a CronWorkflow created by submit runs once with --from cronwf/NAME, then goes")
def test_a_cron_workflow_created_by_submit_runs_once_with_from(cluster: Cluster, tmp_path: Path) -> None:
    from hera.workflows import Container, CronWorkflow

    name = "e2e-nightly-" + cluster.line.replace(".", "-")
    # As a user writes it with Hera: suspended, so only --from runs it here (Argo's --from ignores suspend).
    with CronWorkflow(
        name=name,
        namespace=NAMESPACE,
        schedules=["0 3 * * *"],
        cron_suspend=True,
        entrypoint="main",
        service_account_name=SERVICE_ACCOUNT,
        arguments={"greeting": "hello"},
    ) as cron:
        Container(
            name="main",
            image="busybox:1.37.0",
            command=["echo", "{{workflow.parameters.greeting}} at {{workflow.scheduledTime}}"],
        )
    path = tmp_path / "cron.yaml"
    path.write_text(cron.to_yaml())
    created = cli(cluster, "submit", str(path))
    assert (created.code, created.out) == (0, f"{name}\n"), created
    try:
        ran = cli(
            cluster,
            "submit",
            "--from",
            f"cronwf/{name}",
            "-n",
            NAMESPACE,
            "-p",
            "greeting=hi",
            "--wait",
            "-q",
            "-o",
            "json",
        )
        assert ran.code == 0, ran
        result = json.loads(ran.out)
        assert result["phase"] == "Succeeded" and result["name"].startswith(f"{name}-"), result
        run = json.loads(cluster.kubectl("-n", NAMESPACE, "get", "workflow", result["name"], "-o", "json").ok().out)
        assert run["metadata"]["labels"]["workflows.argoproj.io/cron-workflow"] == name
        [owner] = run["metadata"]["ownerReferences"]
        assert (owner["kind"], owner["name"]) == ("CronWorkflow", name)
        # {{workflow.scheduledTime}} resolved from the annotation submit wrote, as for a scheduled run.
        assert re.search(r"hi at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", cluster.logs(result["name"])), result["name"]
        mine = cluster.kubectl(
            "-n", NAMESPACE, "get", "workflows", "-l", f"workflows.argoproj.io/cron-workflow={name}", "-o", "name"
        )
        assert mine.ok().out.split() == [f"workflow.argoproj.io/{result['name']}"], "one run, the one --from made"
    finally:
        cluster.kubectl("-n", NAMESPACE, "delete", "cronworkflow", name, "--wait=false")
    # Owned by the CronWorkflow: deleting it deletes the run, as it deletes the runs of its schedule.
    cluster.wait_for(
        lambda: (
            not cluster.kubectl(
                "-n", NAMESPACE, "get", "workflow", result["name"], "--ignore-not-found", "-o", "name"
            ).out.strip()
        ),
        f"workflow {result['name']} deleted with its CronWorkflow",
        GONE,
    )
