"""The builders of issue 16 on the real cluster: PyTorch and TensorFlow jobs wired by Volcano's plugins alone, and
pod settings reaching live pods.

1. The bundled PyTorch example, as a user runs it (``python -m hera_volcano.pytorch_hello | argo submit --wait -``):
   Succeeded, every rank's all-reduce sum through the log follower, one gang, the plugin's variables in the pods.
2. The same program under ``torchrun`` (``hera_volcano.torchrun``), one node per pod.
3. A failing rank fails the job's step within :data:`FAILING_RANK` seconds of its submission, and the Workflow.
4. A TensorFlow job (chief + 2 workers) whose tasks, in Python's standard library only, read ``TF_CONFIG``, listen
   on their own address's port and reach every other task.
5. An MPI job with CPU and memory requests, a limit, an environment variable and a ConfigMap volume: its live pods
   show them, and every rank prints the variable and the file.

Every pod runs an image that the cluster has under the public name: the PyTorch example's for the PyTorch and
TensorFlow pods (it has ``python3``), Volcano's MPI example's for the MPI job.
"""

from __future__ import annotations

import json
import re
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from harness import NAMESPACE, ROOT, SEEN, SERVICE_ACCOUNT, Batch, Cluster, Entry, Record, condition_fired, took
from test_bundled import follower_lines

import hera_volcano as hv
from hera_volcano.examples import pytorch_hello

#: Rank 2's pod fails at once (restartPolicy Never), PodFailed terminates the job, the step's condition fires within
#: harness.SEEN seconds of it. A job that hung instead would run into its 3600 s deadline. The time from submission
#: (the gang's start) and the exit handler's pod after the step (when Argo and the node get to it: over 2 minutes
#: later once in CI's full batch) are printed beside, not bounded.
#: This module's batched workflows run this long under CI's batch (the PyTorch job under torchrun, 2026-12-07):
#: conftest.py submits the longest first.
BATCH_WAITS = 200
#: How long the live pods of a job are waited for (scheduling and start, on a 2-CPU node).
PODS_UP = 300
SUM = re.compile(r"rank (\d+) of (\d+): all-reduce sum (\d+)")
REACHED = re.compile(r"^(\S+:\d+) reached (\S*)$")
GREETING_MAP = "e2e-greeting"
RANK_SAYS = re.compile(r"rank (\d+): GREETING=(\S*) file=(\S*)")


def workflow(name: str, job: hv.VolcanoJob, follow_task: str) -> str:
    """The YAML of a Workflow ``NAME-xxxxx`` shaped like the bundled hello worlds: the job's step and its log
    follower side by side, and the exit handler."""
    from hera.workflows import DAG, Workflow
    from hera.workflows.models import ContinueOn

    with Workflow(
        generate_name=f"{name}-", namespace=NAMESPACE, entrypoint="main", service_account_name=SERVICE_ACCOUNT
    ) as w:
        submit = hv.job_template(job, name="submit", job_label=name)
        follow = hv.follow_logs_template(submit, name="follow", task=follow_task)
        with DAG(name="main"):
            submit(name="submit-job")
            follow(name="follow-logs", continue_on=ContinueOn(failed=True, error=True))
        w.on_exit = hv.cleanup_on_failure()
    return hv.to_yaml(w)


def _rules(rbac: str) -> set[tuple[str, str, str]]:
    """(API group, resource, verb) of every Role rule in a YAML stream."""
    found = set()
    for doc in yaml.safe_load_all(rbac):
        if doc and doc["kind"] == "Role":
            for rule in doc["rules"]:
                for group in rule["apiGroups"]:
                    for resource in rule["resources"]:
                        found.update((group, resource, verb) for verb in rule["verbs"])
    return found


def ensure_rbac(cluster: Cluster, manifest: str) -> None:
    """The service account ``argo`` is bound to the bundled workflows' generated RBAC; a test workflow needing more
    gets the RBAC generated for the bundled workflows and it together (so the other scenarios keep theirs)."""
    with tempfile.TemporaryDirectory() as tmp:
        mine = Path(tmp) / "workflow.yaml"
        mine.write_text(manifest)
        needed = _rules(cluster.hera("rbac", str(mine)))
        if needed <= _rules(cluster.hera("rbac")):
            return
        bundled = sorted(str(p) for p in (ROOT / "workflows").glob("volcano-*.yaml"))
        cluster.kubectl("apply", "-f", "-", input=cluster.hera("rbac", *bundled, str(mine))).ok()
    time.sleep(2)  # the RBAC authorizer reads roles from an informer cache


def live_pods(cluster: Cluster, workflow_name: str, count: int) -> list[Any]:
    """The pods of the workflow's Volcano Job once ``count`` of them exist (read while the job runs: Volcano deletes
    the pods still running when the job completes)."""
    found: list[Any] = []

    def created() -> bool:
        jobs = cluster.recorder.jobs_of(workflow_name)
        found[:] = cluster.job_pods(jobs[0]) if jobs else []
        return len(found) == count

    cluster.wait_for(created, f"{count} pods of the job of {workflow_name}", PODS_UP)
    return sorted(found, key=lambda p: p.metadata.name)


def env_of(pod: Any) -> dict[str, str]:
    return {e.name: e.value for e in pod.spec.containers[0].env or [] if e.value is not None}


def capture_pods(cluster: Cluster, pods: int) -> Callable[[Entry], None]:
    """A batch action: record the job's live pods once ``pods`` of them exist."""

    def act(entry: Entry) -> None:
        entry.seen["pods"] = live_pods(cluster, entry.name, pods)

    return act


def torchrun_job() -> hv.VolcanoJob:
    # Debian's torch 1.13 on Python 3.11 (the cluster's stand-in image) fails in torchrun's default --redirects and
    # --tee ("0", which Python 3.11 no longer finds among its flags): stderr (2) tee'd keeps stdout as it is.
    command = hv.torchrun("--redirects=2", "--tee=2", "--no_python", "python3", "-c", pytorch_hello.PROGRAM)
    return hv.pytorch_job(
        image=pytorch_hello.PYTORCH_IMAGE, program=hv.Program.command(command), generate_name="torchrun-"
    )


def failing_rank_job() -> hv.VolcanoJob:
    program = 'import os, sys\nif os.environ["RANK"] == "2":\n    sys.exit("rank 2 fails on purpose")\n'
    return pytorch_hello.job(program=program + pytorch_hello.PROGRAM)


def tensorflow_job() -> hv.VolcanoJob:
    return hv.tensorflow_job(
        image=pytorch_hello.PYTORCH_IMAGE,
        program=hv.Program.command(["python3", "-c", TF_PROGRAM]),
        generate_name="tf-hello-",
    )


def mpi_settings_job() -> hv.VolcanoJob:
    return hv.mpi_job(
        image="volcanosh/example-mpi:0.0.3",
        program=hv.Program.command(
            [
                "sh",
                "-c",
                'read -r FILE < /etc/greeting/greeting.txt; echo "rank $OMPI_COMM_WORLD_RANK: GREETING=$GREETING'
                ' file=$FILE"',
            ]
        ),
        workers=2,
        service_account=SERVICE_ACCOUNT,
        generate_name="mpi-settings-",
        pod=hv.PodSettings(
            cpu="100m",
            memory="64Mi",
            env={"GREETING": "hello-from-env"},
            volumes=[hv.PodVolume.config_map("greeting", "/etc/greeting", config_map=GREETING_MAP)],
            labels={"e2e": "pod-settings"},
        ),
        worker_pod=hv.PodSettings(memory_limit="512Mi"),
    )


def greeting(cluster: Cluster) -> str:
    return "hello-from-configmap-" + cluster.line.replace(".", "-")


def submit_batch(b: Batch, cluster: Cluster) -> None:
    """This module's scenarios, with the batch (harness.Batch): each records its job's live pods as it runs."""
    cluster.kubectl("-n", NAMESPACE, "delete", "configmap", GREETING_MAP, "--ignore-not-found")
    cluster.kubectl(
        "-n", NAMESPACE, "create", "configmap", GREETING_MAP, f"--from-literal=greeting.txt={greeting(cluster)}"
    ).ok()
    b.teardowns.append(lambda: cluster.kubectl("-n", NAMESPACE, "delete", "configmap", GREETING_MAP))
    manifests = {
        key: (make(), pods)
        for key, test, make, pods in (
            ("pytorch-hello", test_pytorch_hello_world, lambda: cluster.hera("pytorch_hello"), 3),
            ("torchrun", test_pytorch_under_torchrun, lambda: workflow("torchrun", torchrun_job(), "master"), 3),
            ("failing-rank", test_a_failing_rank_fails_the_workflow,
             lambda: workflow("failing-rank", failing_rank_job(), "master"), 0),
            ("tensorflow", test_tensorflow_tasks_reach_each_other,
             lambda: workflow("tf-hello", tensorflow_job(), "chief"), 3),
            ("mpi-settings", test_mpi_pod_settings_reach_the_pods_and_the_ranks,
             lambda: workflow("mpi-settings", mpi_settings_job(), "mpimaster"), 3),
        )
        if b.runs(test)
    }  # fmt: skip
    for manifest, _ in manifests.values():
        ensure_rbac(cluster, manifest)
    for key, (manifest, pods) in manifests.items():
        b.submit(key, manifest, capture_pods(cluster, pods) if pods else None)


def finished(batch: Batch, key: str, record: Record) -> tuple[dict[str, Any], list[Any]]:
    """(the finished Workflow, its job's pods as they were while it ran)."""
    entry, wf = batch.finish(key)
    record("took", took(wf, entry.submitted))
    return wf, entry.seen.get("pods", [])


def sums(lines: list[str]) -> dict[int, tuple[int, int]]:
    """rank -> (world size, sum) from the program's lines."""
    found = {}
    for line in lines:
        m = SUM.search(line)
        if m:
            found[int(m.group(1))] = (int(m.group(2)), int(m.group(3)))
    return found


def check_pytorch_run(cluster: Cluster, wf: dict[str, Any], pods: list[Any], ranks: int) -> None:
    name = wf["metadata"]["name"]
    assert wf["status"]["phase"] == "Succeeded", wf["status"].get("message")
    assert sums(follower_lines(cluster, name)) == dict.fromkeys(range(ranks), (ranks, ranks * (ranks + 1) // 2))
    [job] = cluster.jobs(name)
    assert job["status"]["state"]["phase"] == "Completed"
    [group] = cluster.recorder.groups_of(job)
    assert group["spec"]["minMember"] == ranks, "one gang: master and workers"
    job_name = job["metadata"]["name"]
    bound = cluster.recorder.select(**{"volcano.sh/job-name": job_name})
    assert len(bound) == ranks and all(p.scheduler == "volcano" and p.node for p in bound), "bound by Volcano"
    master = f"{job_name}-master-0"
    assert len(pods) == ranks, "the job's pods, read while it ran"
    for pod in pods:
        env = env_of(pod)
        index = int(pod.metadata.name.rsplit("-", 1)[1])
        rank = 0 if pod.metadata.name == master else index + 1
        assert (env["MASTER_ADDR"], env["MASTER_PORT"]) == (f"{master}.{job_name}", "23456"), pod.metadata.name
        assert (env["WORLD_SIZE"], env["RANK"]) == (str(ranks), str(rank)), pod.metadata.name
        assert [(p.container_port, p.name) for p in pod.spec.containers[0].ports] == [(23456, "pytorchjob-port")]


@pytest.mark.both_lines("smoke: the bundled PyTorch hello world")
@pytest.mark.batch
@pytest.mark.scenario("16 PyTorch hello world: pytorch_hello | argo submit")
def test_pytorch_hello_world(cluster: Cluster, batch: Batch, record_property: Record) -> None:
    wf, pods = finished(batch, "pytorch-hello", record_property)
    check_pytorch_run(cluster, wf, pods, ranks=3)


@pytest.mark.batch
@pytest.mark.scenario("16 PyTorch under torchrun, one node per pod")
def test_pytorch_under_torchrun(cluster: Cluster, batch: Batch, record_property: Record) -> None:
    wf, pods = finished(batch, "torchrun", record_property)
    check_pytorch_run(cluster, wf, pods, ranks=3)


@pytest.mark.batch
@pytest.mark.scenario(f"16 a failing PyTorch rank fails its job, its step within {SEEN} s, and the Workflow")
def test_a_failing_rank_fails_the_workflow(cluster: Cluster, batch: Batch, record_property: Record) -> None:
    entry, wf = batch.finish("failing-rank", timeout=900)
    seconds = took(wf, entry.submitted, step="submit-job")
    record_property("took", seconds)
    # When each of the workflow's pods reached the node (the exit handler's last): Argo's and the node's part.
    steps = sorted(cluster.recorder.select(**{"workflows.argoproj.io/workflow": entry.name}), key=lambda p: p.name)
    placed = ", ".join(f"{p.name} +{p.bound_at - entry.submitted:.0f}" for p in steps if p.bound_at is not None)
    whole = took(wf, entry.submitted)
    print(f"the step failed {seconds:.0f} s after the submission, the Workflow {whole:.0f} s; pods placed: {placed}")
    assert wf["status"]["phase"] == "Failed", wf["status"]
    [job_name] = cluster.recorder.jobs_of(entry.name)
    assert {"Terminating", "Terminated"} & set(cluster.recorder.phases(job_name)), cluster.recorder.phases(job_name)
    condition_fired(cluster, wf, job_name)
    pods = {p.name: p for p in cluster.recorder.select(**{"volcano.sh/job-name": job_name})}
    assert "Failed" in pods[f"{job_name}-worker-1"].phases, "the pod of rank 2 failed (restartPolicy Never)"
    cluster.wait_for(lambda: not cluster.job_exists(job_name), "the exit handler to delete the job", 60)


#: Each TensorFlow task: read TF_CONFIG, listen on its own address's port, reach every other task (a line saying so
#: to the task), wait until every other task reached it, then tell the chief (which prints what every task
#: reached) and end. Python's standard library only.
TF_PROGRAM = """\
import json, os, socket, sys, threading, time

config = json.loads(os.environ["TF_CONFIG"])
me = "%s:%d" % (config["task"]["type"], config["task"]["index"])
tasks = {"%s:%d" % (kind, i): a for kind, addresses in config["cluster"].items() for i, a in enumerate(addresses)}
others = sorted(set(tasks) - {me})
deadline = time.monotonic() + 300
heard, done, lock = set(), {}, threading.Lock()
server = socket.create_server(("", int(tasks[me].rsplit(":", 1)[1])))


def serve():
    while True:
        connection, _ = server.accept()
        with connection:
            words = connection.makefile().readline().split()
        with lock:
            if words[:1] == ["hello"] and len(words) == 2:
                heard.add(words[1])
            elif words[:1] == ["done"] and len(words) == 3:
                done[words[1]] = words[2]


def send(task, message):
    host, port = tasks[task].rsplit(":", 1)
    while True:
        try:
            with socket.create_connection((host, int(port)), timeout=5) as connection:
                connection.sendall((message + "\\n").encode())
            return
        except OSError as e:
            if time.monotonic() > deadline:
                sys.exit("%s cannot reach %s at %s: %s" % (me, task, tasks[task], e))
            time.sleep(1)


def wait(what, ready):
    while True:
        with lock:
            if ready():
                return
        if time.monotonic() > deadline:
            sys.exit("%s: waited too long for %s" % (me, what))
        time.sleep(0.5)


threading.Thread(target=serve, daemon=True).start()
for task in others:
    send(task, "hello " + me)
reached = ",".join(others)
print("%s reached %s" % (me, reached), flush=True)
wait("every task to reach it", lambda: heard >= set(others))
if me != "chief:0":
    send("chief:0", "done %s %s" % (me, reached))
else:
    wait("every task to be done", lambda: set(done) >= set(others))
    for task in others:
        print("%s reached %s" % (task, done[task]), flush=True)
"""


@pytest.mark.batch
@pytest.mark.scenario("16 TensorFlow: every task reaches every other through TF_CONFIG")
def test_tensorflow_tasks_reach_each_other(cluster: Cluster, batch: Batch, record_property: Record) -> None:
    wf, pods = finished(batch, "tensorflow", record_property)
    name = wf["metadata"]["name"]
    assert wf["status"]["phase"] == "Succeeded", wf["status"].get("message")
    everyone = {"chief:0", "worker:0", "worker:1"}
    reached = {}
    for line in follower_lines(cluster, name):
        m = REACHED.match(line)
        if m:
            reached[m.group(1)] = set(m.group(2).split(","))
    assert reached == {task: everyone - {task} for task in everyone}, reached
    [job] = cluster.jobs(name)
    assert job["status"]["state"]["phase"] == "Completed"
    job_name = job["metadata"]["name"]
    hosts = {
        role: [f"{job_name}-{role}-{i}.{job_name}:2222" for i in range(n)] for role, n in (("chief", 1), ("worker", 2))
    }
    assert len(pods) == 3
    for pod in pods:
        config = json.loads(env_of(pod)["TF_CONFIG"])
        role, index = pod.metadata.name.removeprefix(f"{job_name}-").rsplit("-", 1)
        assert config == {"cluster": hosts, "task": {"type": role, "index": int(index)}}, pod.metadata.name


@pytest.mark.batch
@pytest.mark.scenario("16 MPI job with pod settings: requests, limit, env, ConfigMap volume")
def test_mpi_pod_settings_reach_the_pods_and_the_ranks(cluster: Cluster, batch: Batch, record_property: Record) -> None:
    wf, pods = finished(batch, "mpi-settings", record_property)
    name = wf["metadata"]["name"]
    assert wf["status"]["phase"] == "Succeeded", wf["status"].get("message")
    said = [RANK_SAYS.search(line) for line in follower_lines(cluster, name)]
    lines = sorted(m.groups() for m in said if m)
    assert lines == [(str(r), "hello-from-env", greeting(cluster)) for r in range(2)], lines
    assert len(pods) == 3, "the job's pods, read while it ran"
    for pod in pods:
        [container] = pod.spec.containers
        worker = "mpiworker" in pod.metadata.name
        assert container.resources.requests == {"cpu": "100m", "memory": "64Mi"}, pod.metadata.name
        assert (container.resources.limits or {}) == ({"memory": "512Mi"} if worker else {}), pod.metadata.name
        assert env_of(pod)["GREETING"] == "hello-from-env"
        mounts = {(m.name, m.mount_path, bool(m.read_only)) for m in container.volume_mounts}
        assert ("greeting", "/etc/greeting", True) in mounts, mounts
        volumes = {v.name: v.config_map.name for v in pod.spec.volumes if v.config_map is not None}
        assert volumes["greeting"] == GREETING_MAP
        assert pod.metadata.labels["e2e"] == "pod-settings"
