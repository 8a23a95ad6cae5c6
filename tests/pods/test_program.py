"""The follower's program as a pod runs it: the modules of hera_volcano/pods joined into one ``python3 -c`` source,
run here in a process of its own (no hera_volcano importable: ``-I`` and another working folder) against the
stand-in API server over HTTPS, as its service account."""

from __future__ import annotations

import ast
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hera_volcano.pods import launcher, program
from hera_volcano.pods.run import Settings
from hera_volcano.pods.workers import WaitSettings
from tests.pods.https_server import Reply, Request, Server, serving

JOB = "j-1"
MASTER = "j-1-mpimaster-0"


def test_the_program_is_the_modules_joined_and_survives_argo_and_kubernetes_substitutions() -> None:
    text = program.source()
    assert text.startswith(program.TITLE)
    assert "{{" not in text and "$" not in text
    ast.parse(text)
    defined: dict[str, str] = {}
    for name in program.MODULES:
        tree = ast.parse(program.module_source(name))
        for node in tree.body:
            targets: list[str] = []
            if isinstance(node, ast.FunctionDef | ast.ClassDef):
                targets = [node.name]
            elif isinstance(node, ast.Assign):
                targets = [t.id for t in node.targets if isinstance(t, ast.Name)]
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                targets = [node.target.id]
            for target in targets:
                assert target not in defined, f"{target} is defined in {defined[target]} and {name}: one namespace"
                defined[target] = name


def job(phase: str) -> dict[str, Any]:
    return {
        "metadata": {"name": JOB, "uid": "u1", "creationTimestamp": "2026-01-01T00:00:00Z"},
        "status": {"state": {"phase": phase}},
    }


def master(running: bool) -> dict[str, Any]:
    state = {"running": {"startedAt": "2026-01-01T00:00:01Z"}} if running else {"terminated": {"exitCode": 0}}
    return {
        "metadata": {
            "name": MASTER,
            "uid": "p1",
            "creationTimestamp": "2026-01-01T00:00:00Z",
            "labels": {"volcano.sh/task-spec": "mpimaster", "volcano.sh/job-name": JOB},
        },
        "spec": {"containers": [{"name": "mpimaster"}]},
        "status": {
            "phase": "Running" if running else "Succeeded",
            "containerStatuses": [{"name": "mpimaster", "containerID": "c1", "state": state}],
        },
    }


class Cluster:
    """A cluster of one job and its master, as the stand-in serves it; watches stay open and quiet."""

    def __init__(self, phase: str, running: bool, log: list[bytes], log_forever: bool = False) -> None:
        self.phase, self.running, self.log, self.log_forever = phase, running, log, log_forever
        self.over = threading.Event()

    def quiet(self) -> Iterator[bytes]:
        self.over.wait(30)  # an open watch that brings nothing
        yield from ()

    def __call__(self, r: Request) -> Reply:
        if r.query.get("watch") == "true":
            return Reply(chunks=self.quiet())
        if r.path.endswith("/jobs"):
            return Reply(body={"metadata": {"resourceVersion": "5"}, "items": [job(self.phase)]})
        if r.path.endswith("/pods"):
            return Reply(body={"metadata": {"resourceVersion": "5"}, "items": [master(self.running)]})
        if r.path.endswith(f"/pods/{MASTER}/log"):
            lines = self.log

            def chunks() -> Iterator[bytes]:
                yield from lines
                if self.log_forever:
                    self.over.wait(30)

            return Reply(chunks=chunks())
        return Reply(404, {"kind": "Status", "reason": "NotFound", "code": 404})


def installed(folder: Path) -> Path:
    """The program as the kubelet mounts it from the ConfigMap ``hera-volcano rbac`` renders."""
    data = program.config_map("ns")["data"]
    path = folder / program.PROGRAM_FILE
    path.write_text(data[program.PROGRAM_FILE], encoding="utf-8")
    return path


def test_without_its_config_map_the_follower_fails_at_once_naming_it(tmp_path: Path) -> None:
    missing = tmp_path / "nothing-mounted" / program.PROGRAM_FILE
    env = {"PATH": os.environ.get("PATH", ""), "FOLLOWER_PROGRAM": str(missing)}
    done = subprocess.run(
        [sys.executable, "-I", "-c", program.bootstrap()], env=env, capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 1 and done.stdout == ""
    assert (
        f"ConfigMap {program.config_map_name()} (the program of the hera-volcano pods) is not in this namespace"
        in done.stderr
    )
    assert "apply what hera-volcano render (or rbac) writes" in done.stderr and "Traceback" not in done.stderr


def test_the_config_map_holds_the_program_under_a_name_that_changes_with_it(monkeypatch: pytest.MonkeyPatch) -> None:
    made = program.config_map("team-a")
    assert made["metadata"]["namespace"] == "team-a" and made["metadata"]["name"] == program.config_map_name()
    assert made["data"] == {
        program.PROGRAM_FILE: program.source(),
        program.LAUNCHER_FILE: program.launcher_source(),
        launcher.RUNTIME_FILE: program.runtime_source(),
    }
    assert program.is_config_map_name(program.config_map_name()) and not program.is_config_map_name("other")
    # Any module the files are made from, or the code that joins them, changed by one character: another name.
    original, read = program.config_map_name(), program.module_source
    names = set()
    every = tuple(dict.fromkeys((*program.MODULES, *program.LAUNCHER_MODULES, *program.RUNTIME_MODULES, "program")))
    assert "checkpoints" in every, "the runtime's modules are part of the version"
    for changed in every:
        monkeypatch.setattr(program, "module_source", lambda name, c=changed: read(name) + ("#" if name == c else ""))
        program.config_map_name.cache_clear()
        names.add(program.config_map_name())
    monkeypatch.setattr(program, "module_source", read)
    program.config_map_name.cache_clear()
    assert program.config_map_name() == original
    assert len(names) == len(every) and original not in names


def start(server: Server, tmp_path: Path, *argv: str, **env: str) -> subprocess.Popen[str]:
    """The pods' program as a container starts it (``argv`` after the bootstrap), as the service account the
    stand-in serves, from the ConfigMap's file; the follower's selectors unless ``env`` says otherwise."""
    environment = {
        "PATH": os.environ.get("PATH", ""),
        **server.env(),
        "SA_DIR": str(server.account),
        Settings.JOB_SELECTOR: "hera-volcano/job=mpi",
        Settings.POD_SELECTOR: "hera-volcano/job=mpi",
        Settings.TERMINATION_LOG: str(tmp_path / "termination-log"),
        # As the pod has it: the ConfigMap's file, started by the container's few lines.
        "FOLLOWER_PROGRAM": str(installed(tmp_path)),
        **env,
    }
    return subprocess.Popen(
        [sys.executable, "-I", "-c", program.bootstrap(), *argv],
        env=environment,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def test_the_program_follows_a_job_over_https_and_gives_what_rank_0_reported(tmp_path: Path) -> None:
    log = [b"2026-01-01T00:00:02.1Z Hello from rank 0\n", b"2026-01-01T00:00:02.2Z hera-volcano:output loss=0.5\n"]
    cluster = Cluster("Completed", running=False, log=log)
    out = tmp_path / "out"
    (tmp_path / "api").mkdir()
    with serving(tmp_path / "api") as server:
        server.handler = cluster
        proc = start(server, tmp_path, OUTPUTS="loss", OUTPUT_DIR=str(out), TICK_SECONDS="0.1")
        try:
            stdout, stderr = proc.communicate(timeout=30)
        finally:
            cluster.over.set()
    assert proc.returncode == 0, stderr
    assert stdout.splitlines() == [
        "Following the leading task of the job labelled hera-volcano/job=mpi",
        f"=== logs of {MASTER} (Succeeded)",
        "Hello from rank 0",
        "hera-volcano:output loss=0.5",
        f"Job {JOB} is Completed",
    ]
    assert (out / "loss").read_text() == "0.5"
    assert {r.token for r in server.requests} == {"token-1"}


def test_in_the_pod_the_program_writes_argos_progress_file_and_puts_progress_on_the_job(tmp_path: Path) -> None:
    """As Argo runs the follower (``ARGO_PROGRESS_FILE`` set by its controller): the last progress where its
    executor reads it, the latest progress and metrics on the job (a merge patch), the last metrics as an output."""
    log = [
        b"2026-01-01T00:00:02.1Z hera-volcano:progress 1/2\n",
        b"2026-01-01T00:00:02.2Z hera-volcano:metric loss=0.5\n",
        b"2026-01-01T00:00:02.3Z hera-volcano:progress 2/2\n",
    ]
    cluster = Cluster("Completed", running=False, log=log)
    patched: list[Request] = []

    def handler(r: Request) -> Reply:
        if r.method == "PATCH":
            patched.append(r)
            return Reply(body=job("Completed"))
        return cluster(r)

    out, progress = tmp_path / "out", tmp_path / "var-run-argo" / "progress"
    (tmp_path / "api").mkdir()
    with serving(tmp_path / "api") as server:
        server.handler = handler
        proc = start(server, tmp_path, OUTPUT_DIR=str(out), TICK_SECONDS="0.1", ARGO_PROGRESS_FILE=str(progress))
        try:
            _, stderr = proc.communicate(timeout=30)
        finally:
            cluster.over.set()
    assert proc.returncode == 0, stderr
    assert progress.read_text() == "2/2\n" and json.loads((out / "job-metrics").read_text()) == {"loss": 0.5}
    assert patched and {(r.path, r.content_type) for r in patched} == {
        (f"/apis/batch.volcano.sh/v1alpha1/namespaces/ns/jobs/{JOB}", "application/merge-patch+json")
    }
    annotation = json.loads(patched[-1].body)["metadata"]["annotations"]["hera-volcano/progress"]
    assert json.loads(annotation) == {"progress": "2/2", "metrics": {"loss": 0.5}}


def test_sigterm_ends_the_program_at_once(tmp_path: Path) -> None:
    cluster = Cluster("Running", running=True, log=[b"2026-01-01T00:00:02Z streaming\n"], log_forever=True)
    (tmp_path / "api").mkdir()
    with serving(tmp_path / "api") as server:
        server.handler = cluster
        proc = start(server, tmp_path, TICK_SECONDS="0.1")
        try:
            assert proc.stdout is not None
            deadline = time.monotonic() + 20
            lines = []
            while "streaming" not in lines and time.monotonic() < deadline:
                lines.append(proc.stdout.readline().rstrip("\n"))
            assert "streaming" in lines, lines
            sent = time.monotonic()
            proc.send_signal(signal.SIGTERM)
            code = proc.wait(5)
            assert code == 143 and time.monotonic() - sent < 2
        finally:
            cluster.over.set()
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)


@pytest.mark.parametrize("outputs", ["", "loss"])
def test_outside_a_cluster_it_says_so_and_fails_only_with_values_to_give(tmp_path: Path, outputs: str) -> None:
    r = subprocess.run(
        [sys.executable, "-I", "-c", program.source()],
        env={Settings.JOB_SELECTOR: "a=b", Settings.POD_SELECTOR: "a=b", Settings.OUTPUTS: outputs},
        capture_output=True,
        text=True,
        timeout=30,
        cwd=tmp_path,
    )
    assert "KUBERNETES_SERVICE_HOST is not set" in r.stderr
    assert r.returncode == (1 if outputs else 0)


class Workers:
    """Two worker pods, Ready or not, as the stand-in serves them; watches stay open and quiet."""

    def __init__(self, ready: bool) -> None:
        self.ready = ready
        self.over = threading.Event()

    def __call__(self, r: Request) -> Reply:
        if r.query.get("watch") == "true":

            def quiet() -> Iterator[bytes]:
                self.over.wait(30)
                yield from ()

            return Reply(chunks=quiet())
        if r.path.endswith("/pods"):
            status = "True" if self.ready else "False"
            pods = [
                {
                    "metadata": {"name": f"{JOB}-mpiworker-{i}"},
                    "status": {"conditions": [{"type": "Ready", "status": status}]},
                }
                for i in range(2)
            ]
            return Reply(body={"metadata": {"resourceVersion": "5"}, "items": pods})
        return Reply(404, {"kind": "Status", "reason": "NotFound", "code": 404})


def waiting(server: Server, tmp_path: Path) -> subprocess.Popen[str]:
    """The MPI master's init container: the same program, with the argument ``wait-for-workers``."""
    settings = WaitSettings(JOB, "mpiworker", 2, 600).to_env()
    return start(server, tmp_path, "wait-for-workers", **{str(e["name"]): str(e["value"]) for e in settings})


def test_the_program_waits_for_ready_workers_over_https(tmp_path: Path) -> None:
    cluster = Workers(ready=True)
    (tmp_path / "api").mkdir()
    with serving(tmp_path / "api") as server:
        server.handler = cluster
        proc = waiting(server, tmp_path)
        try:
            stdout, stderr = proc.communicate(timeout=30)
        finally:
            cluster.over.set()
    assert proc.returncode == 0, stderr
    assert stdout.splitlines() == [
        f"Waiting for 2 Ready pods labelled volcano.sh/job-name={JOB},volcano.sh/task-spec=mpiworker",
        "2 workers Ready",
    ]
    [listed] = [r for r in server.requests if r.query.get("watch") != "true"]
    assert listed.query.get("labelSelector") == f"volcano.sh/job-name={JOB},volcano.sh/task-spec=mpiworker"


def test_sigterm_ends_the_wait_at_once(tmp_path: Path) -> None:
    """The job deleted (or `argo stop`) while the master waits: its pod goes at once, not after its grace period."""
    cluster = Workers(ready=False)
    (tmp_path / "api").mkdir()
    with serving(tmp_path / "api") as server:
        server.handler = cluster
        proc = waiting(server, tmp_path)
        try:
            assert proc.stdout is not None
            assert proc.stdout.readline().startswith("Waiting for 2 Ready pods")
            deadline = time.monotonic() + 20
            while not any(r.query.get("watch") == "true" for r in server.requests) and time.monotonic() < deadline:
                time.sleep(0.05)
            sent = time.monotonic()
            proc.send_signal(signal.SIGTERM)
            code = proc.wait(5)
            assert code == 143 and time.monotonic() - sent < 2
        finally:
            cluster.over.set()
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)


@pytest.mark.parametrize("bootstrap", [program.bootstrap, program.launcher_bootstrap], ids=["program", "launcher"])
def test_sigterm_ends_it_while_the_program_is_still_loading(tmp_path: Path, bootstrap: Any) -> None:
    """As a container's PID 1, Python ignores SIGTERM until it has a handler: the bootstrap sets one before it loads
    anything (here a program that takes long to load: exit 143, the handler's, not death by the signal, -15)."""
    slow = tmp_path / "slow.py"
    slow.write_text("import time\ntime.sleep(30)\n")
    env = {"PATH": os.environ.get("PATH", ""), "FOLLOWER_PROGRAM": str(slow), "HERA_VOLCANO_LAUNCHER": str(slow)}
    proc = subprocess.Popen([sys.executable, "-I", "-c", bootstrap()], env=env, cwd=tmp_path, start_new_session=True)
    try:
        time.sleep(1)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(5) == 143
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
