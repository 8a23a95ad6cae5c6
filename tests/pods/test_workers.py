"""The MPI master's wait for its workers (hera_volcano/pods/workers.py) against the stand-in API server: it ends once
every worker is Ready, watching rather than polling; gives up after its limit, saying how many were Ready; ends at
once, saying why, when the API server refuses it; counts only its own job's workers."""

from __future__ import annotations

import io
import re
import signal
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from hera_volcano.client.resources import PODS
from hera_volcano.pods.entry import start
from hera_volcano.pods.workers import WAIT_COMMAND, WaitSettings, is_ready, wait_for_workers
from tests.client.harness import BOUND
from tests.client.recorded import World
from tests.pods.world_api import WorldApi

SETTINGS = WaitSettings(job="j-1", task="mpiworker", count=2, seconds=60)


def worker(name: str, ready: bool, job: str = "j-1") -> dict[str, Any]:
    return {
        "metadata": {"name": name, "labels": {"volcano.sh/job-name": job, "volcano.sh/task-spec": "mpiworker"}},
        "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]},
    }


class Waiting:
    """The wait in a thread of its own, its output kept."""

    def __init__(self, world: World, workers: WaitSettings = SETTINGS) -> None:
        self.out = io.StringIO()
        self.reported: list[str] = []
        self.codes: list[int] = []
        api = WorldApi(world)
        self.thread = threading.Thread(
            target=lambda: self.codes.append(
                wait_for_workers(api, workers, self.out, report=self.reported.append)  # type: ignore[arg-type]
            ),
            daemon=True,
        )
        self.thread.start()

    def exit(self) -> int:
        self.thread.join(BOUND)
        assert not self.thread.is_alive(), f"still waiting: {self.out.getvalue()}"
        return self.codes[0]


@pytest.fixture
def world() -> World:
    return World()


@pytest.fixture
def handlers() -> Iterator[None]:
    """``start`` sets the process's SIGTERM and SIGINT handlers, as the pod's program does: put pytest's back."""
    saved = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}
    yield
    for sig, handler in saved.items():
        signal.signal(sig, handler)


def test_it_ends_once_every_worker_is_ready_on_what_the_watch_brings(world: World) -> None:
    world.put(PODS, worker("j-1-mpiworker-0", ready=False), "ADDED")
    waiting = Waiting(world)
    world.settle(PODS)
    world.put(PODS, worker("j-1-mpiworker-1", ready=True), "ADDED")
    world.put(PODS, worker("j-1-mpiworker-0", ready=True))
    assert waiting.exit() == 0
    assert waiting.out.getvalue().splitlines() == [
        "Waiting for 2 Ready pods labelled volcano.sh/job-name=j-1,volcano.sh/task-spec=mpiworker",
        "2 workers Ready",
    ]
    assert [c[0] for c in world.calls if c[1] == PODS].count("list") == 1, "listed once, then watched"


def test_another_jobs_ready_workers_do_not_count(world: World) -> None:
    world.put(PODS, worker("j-1-mpiworker-0", ready=True), "ADDED")
    world.put(PODS, worker("j-2-mpiworker-0", ready=True, job="j-2"), "ADDED")
    world.put(PODS, worker("j-2-mpiworker-1", ready=True, job="j-2"), "ADDED")
    waiting = Waiting(world, WaitSettings("j-1", "mpiworker", 2, 1))
    assert waiting.exit() == 1
    assert waiting.out.getvalue().splitlines()[-1] == "Only 1 of 2 workers Ready after 1 s"


def test_a_worker_deleted_after_it_was_ready_counts_no_more(world: World) -> None:
    world.put(PODS, worker("j-1-mpiworker-0", ready=True), "ADDED")
    waiting = Waiting(world, WaitSettings("j-1", "mpiworker", 2, 2))
    world.settle(PODS)
    world.remove(PODS, "j-1-mpiworker-0")
    world.put(PODS, worker("j-1-mpiworker-1", ready=True), "ADDED")
    assert waiting.exit() == 1
    assert waiting.out.getvalue().splitlines()[-1] == "Only 1 of 2 workers Ready after 2 s"


def test_a_refused_watch_ends_it_at_once_saying_why(world: World) -> None:
    """RBAC does not change while the master waits: it fails now, and its output says why, rather than after its
    limit with no word."""
    world.refuse("list", PODS)
    waiting = Waiting(world, WaitSettings("j-1", "mpiworker", 2, 600))
    assert waiting.exit() == 1
    assert "Cannot watch the worker pods: Forbidden" in waiting.out.getvalue()


def test_ready_means_the_ready_condition_true() -> None:
    assert is_ready(worker("w", ready=True))
    assert not is_ready(worker("w", ready=False))
    assert not is_ready({"status": {"conditions": [{"type": "ContainersReady", "status": "True"}]}})
    assert not is_ready({"metadata": {"name": "w"}})


def env(settings: WaitSettings, labels: dict[str, str] | None = None) -> dict[str, str]:
    """What the wait's process finds in its environment: the entries of ``to_env``, a label's field resolved as the
    kubelet does (from the master pod's ``labels``)."""
    found: dict[str, str] = {}
    for entry in settings.to_env():
        name = entry["name"]
        assert isinstance(name, str) and set(entry) in ({"name", "value"}, {"name", "valueFrom"})
        if "value" in entry:
            assert isinstance(entry["value"], str)
            found[name] = entry["value"]
            continue
        path = entry["valueFrom"]["fieldRef"]["fieldPath"]  # type: ignore[index]
        label = re.fullmatch(r"metadata\.labels\['([^']+)'\]", path)
        assert label is not None, path
        found[name] = (labels or {})[label[1]]
    return found


@pytest.mark.parametrize("job", ["j-1", "a" * 63])
def test_the_settings_the_builder_writes_are_those_the_pod_reads(job: str) -> None:
    given = WaitSettings(job, "mpiworker", 3, 600)
    assert WaitSettings.from_env(env(given)) == given
    from_label = WaitSettings(None, "worker-task", 1, 1)
    labels = {"volcano.sh/job-name": job}
    assert WaitSettings.from_env(env(from_label, labels)) == WaitSettings(job, "worker-task", 1, 1)
    assert [e["name"] for e in given.to_env()] == list(WaitSettings.NAMES)


def test_a_missing_or_garbled_setting_is_refused() -> None:
    complete = env(SETTINGS)
    for name in WaitSettings.NAMES:
        with pytest.raises(KeyError):
            WaitSettings.from_env({k: v for k, v in complete.items() if k != name})
    with pytest.raises(ValueError):
        WaitSettings.from_env({**complete, WaitSettings.COUNT: "two"})


def test_outside_a_cluster_the_wait_fails_saying_so(capsys: pytest.CaptureFixture[str], handlers: None) -> None:
    assert start(["-c", WAIT_COMMAND], env(SETTINGS)) == 1
    assert "hera-volcano wait-for-workers: NoCluster" in capsys.readouterr().err


def test_a_wrong_environment_is_said_not_a_traceback(capsys: pytest.CaptureFixture[str], handlers: None) -> None:
    assert start(["-c", WAIT_COMMAND], {**env(SETTINGS), WaitSettings.COUNT: "two"}) == 1
    assert "hera-volcano wait-for-workers: bad environment" in capsys.readouterr().err
