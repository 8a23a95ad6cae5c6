"""The MPI master's wait for its workers (hera_volcano/builders/scripts/wait_for_workers.sh), under bash against the
fake kubectl: it waits on a watch once every worker exists, gives up after its limit, shows kubectl's errors once,
and ends within 2 s of SIGTERM whatever it is doing (issue 19)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import yaml

from hera_volcano.kube import pod_scripts
from tests.pods.world import Script, World, group_alive, running

WAIT = pod_scripts.with_kubectl("hera_volcano.builders", "wait_for_workers.sh")
ENV = {"JOB_NAME": "j", "NAMESPACE": "ns", "WORKER_TASK": "mpiworker", "WORKERS": "3", "WAIT_SECONDS": "30"}
WORKER_LABELS = {"volcano.sh/job-name": "j"}


@pytest.fixture
def world(tmp_path: Path) -> World:
    return World(tmp_path)


def workers(world: World, count: int, ready: int) -> None:
    for i in range(count):
        world.pod(f"j-mpiworker-{i}", task="mpiworker", phase="Running", ready=i < ready, labels=WORKER_LABELS)


def verbs(world: World) -> list[str]:
    return [next(a for a in c["args"] if not a.startswith("-")) for c in world.calls()]


def test_waits_until_every_worker_is_ready_watching_once_they_all_exist(world: World) -> None:
    workers(world, 1, 0)
    with running(WAIT, world, ENV) as run:
        run.wait_for(lambda: len(world.calls()) >= 2, "the master to look twice")
        assert verbs(world)[:2] == ["get", "get"], "polls while a worker does not exist yet"
        workers(world, 3, 0)
        run.wait_for(lambda: "wait" in verbs(world), "the master to wait with a watch")
        polls = len(world.calls())
        time.sleep(1)
        assert len(world.calls()) == polls, "no polling while it watches"
        workers(world, 3, 3)
        code, _ = run.exit()
        assert code == 0 and "3 workers Ready" in run.output
    [wait] = [c["args"] for c in world.calls() if "wait" in c["args"]]
    assert "--for=condition=Ready" in wait and "volcano.sh/job-name=j,volcano.sh/task-spec=mpiworker" in wait
    assert any(a.startswith("--timeout=") for a in wait)


def test_gives_up_after_its_limit_so_the_pod_restarts(world: World) -> None:
    workers(world, 1, 1)
    with running(WAIT, world, {**ENV, "WAIT_SECONDS": "1"}) as run:
        code, _ = run.exit()
        assert code == 1 and "Only 1 of 3 workers Ready after 1 s" in run.output


@pytest.mark.parametrize("state", ["watching", "pausing", "a slow call"])
def test_sigterm_ends_the_wait_within_2_s_in_every_state(world: World, state: str) -> None:
    """As PID 1 of its container bash runs a trap only between commands: a deleted pod would linger for its grace
    period while kubectl waits."""
    if state == "watching":
        workers(world, 3, 0)
        ready = lambda: "wait" in verbs(world)  # noqa: E731
    elif state == "pausing":
        workers(world, 1, 0)
        ready = lambda: len(world.calls()) >= 1 and time.sleep(0.3) is None  # noqa: E731
    else:
        world.fault("get-pods", delay=20)
        ready = lambda: len(world.calls()) >= 1  # noqa: E731
    with running(WAIT, world, ENV) as run:
        run.wait_for(ready, state)
        sent = run.terminate()
        code, ended = run.exit(5)
        assert code == 143 and ended - sent < 2, ended - sent
        time.sleep(0.3)
        assert not group_alive(run.proc.pid), "kubectl outlived the wait"


def test_kubectl_errors_are_shown_once_per_message_not_swallowed(world: World) -> None:
    world.fault("get-pods", fail=3, error="error: connection refused")
    workers(world, 3, 3)
    with running(WAIT, world, ENV) as run:
        code, _ = run.exit(30)
        assert code == 0
        assert run.errors == ["kubectl: error: connection refused"], "a repeat waits 30 s; none is lost"


def in_pod(tmp_path: Path) -> dict[str, str]:
    """A pod's service-account folder (at a test path) and the Service variables."""
    sa = tmp_path / "sa"
    sa.mkdir()
    for name, text in (("token", "t0ken"), ("ca.crt", "CA"), ("namespace", "ns")):
        (sa / name).write_text(text)
    return {"SA_DIR": str(sa), "KUBERNETES_SERVICE_HOST": "10.96.0.1", "KUBERNETES_SERVICE_PORT": "443"}


@pytest.mark.parametrize(
    ("host", "server"), [("10.96.0.1", "https://10.96.0.1:443"), ("fd00::1", "https://[fd00::1]:443")]
)
def test_kubectl_in_a_pod_gets_the_in_cluster_configuration_as_a_kubeconfig(
    world: World, host: str, server: str
) -> None:
    """kubectl drops its in-cluster configuration once a flag such as --request-timeout is given
    (kubernetes/kubernetes#93474): the prelude writes it out."""
    workers(world, 3, 3)
    env = {**ENV, **in_pod(world.folder), "KUBERNETES_SERVICE_HOST": host}
    with running(WAIT, world, env) as run:
        assert run.exit()[0] == 0
    [kubeconfig] = {c["kubeconfig"] for c in world.calls()}
    config = yaml.safe_load(Path(kubeconfig).read_text())
    [cluster] = config["clusters"]
    [user] = config["users"]
    assert cluster["cluster"] == {"server": server, "certificate-authority": str(world.folder / "sa" / "ca.crt")}
    assert user["user"] == {"tokenFile": str(world.folder / "sa" / "token")}, "the token file, re-read as it rotates"
    assert config["current-context"] == "in-cluster" and config["contexts"][0]["context"]["user"] == "in-cluster"


def test_a_kubeconfig_given_to_the_pod_is_kept(world: World) -> None:
    workers(world, 3, 3)
    with running(WAIT, world, {**ENV, **in_pod(world.folder), "KUBECONFIG": "/mine"}) as run:
        assert run.exit()[0] == 0
    assert {c["kubeconfig"] for c in world.calls()} == {"/mine"}


def test_outside_a_pod_kubectl_keeps_its_own_configuration(world: World) -> None:
    workers(world, 3, 3)
    with running(WAIT, world, ENV) as run:
        assert run.exit()[0] == 0
    assert {c["kubeconfig"] for c in world.calls()} == {""}


def test_kubectl_keeps_its_discovery_cache_in_a_writable_folder(world: World) -> None:
    workers(world, 3, 3)
    script = Script(WAIT, world, ENV)
    try:
        assert script.exit()[0] == 0
    finally:
        script.kill()
    [cache] = {c["cache"] for c in world.calls()}
    assert cache.startswith(str(world.folder)) and Path(cache).parent.is_dir()
