"""Driving the client against the stand-in API server (``recorded.World``): a Client and Runs on a World that try
again at once; calls made in a thread the test waits for with a bound, so that a regression fails rather than hangs;
and a progress stream the test can wait on, line by line."""

from __future__ import annotations

import copy
import io
import threading
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from hera_volcano.client.patience import Patience
from hera_volcano.client.resources import JOBS, WORKFLOWS
from hera_volcano.client.runs import Client, Run
from tests.client.recorded import World, load

T = TypeVar("T")
#: Tries again almost at once, so that faults cost the tests milliseconds; the grace outlasts every test's faults.
QUICK = Patience(grace=30, retry=0.01, wake=0.01)
#: The longest a test waits for anything before it fails.
BOUND = 20.0


def client(world: World, namespace: str | None = "argo", patience: Patience = QUICK) -> Client:
    c = Client.__new__(Client)  # the configuration loading is kubeapi.connect's, tested on the real cluster
    c._api = world  # type: ignore[assignment]
    c.namespace, c._explicit, c._patience = namespace or "default", namespace is not None, patience
    return c


def run_of(world: World, scenario: str, patience: Patience = QUICK) -> Run:
    """The run of a recorded scenario, its objects put in the world."""
    world.scenario(scenario)
    name = load(f"{scenario}/workflow.json")["metadata"]["name"]
    return Run(world, "argo", name, patience=patience)  # type: ignore[arg-type]


def finish(world: World, scenario: str, phase: str = "Succeeded") -> None:
    workflow = copy.deepcopy(world.objects[WORKFLOWS][load(f"{scenario}/workflow.json")["metadata"]["name"]])
    workflow["status"].update(phase=phase, finishedAt="2026-12-01T18:10:00Z")
    world.put(WORKFLOWS, workflow)


def job_phase(world: World, name: str, phase: str, **counts: int) -> None:
    """The Volcano Job ``name`` moves to ``phase`` (with these pod counts: running=..., succeeded=...)."""
    job = copy.deepcopy(world.objects[JOBS][name])
    job["status"]["state"]["phase"] = phase
    job["status"].update(counts)
    world.put(JOBS, job)


def in_background(action: Callable[[], Any]) -> threading.Thread:
    thread = threading.Thread(target=action, daemon=True)
    thread.start()
    return thread


class Background(Generic[T]):
    """``call()`` in a thread of its own; :meth:`result` waits for it (at most ``BOUND`` seconds) and returns what it
    returned or raises what it raised."""

    def __init__(self, call: Callable[[], T]) -> None:
        self._value: list[T] = []
        self._error: list[BaseException] = []
        self._thread = threading.Thread(target=self._run, args=(call,), daemon=True)
        self._thread.start()

    def _run(self, call: Callable[[], T]) -> None:
        try:
            self._value.append(call())
        except BaseException as e:
            self._error.append(e)

    def result(self, timeout: float = BOUND) -> T:
        self._thread.join(timeout)
        assert not self._thread.is_alive(), f"still running after {timeout} s: it would hang"
        if self._error:
            raise self._error[0]
        return self._value[0]


class Progress(io.StringIO):
    """A progress stream (not a terminal): what it got, line by line, and a way to wait until a line came."""

    def __init__(self) -> None:
        super().__init__()
        self._written = threading.Condition()

    def write(self, text: str) -> int:
        with self._written:
            written = super().write(text)
            self._written.notify_all()
        return written

    @property
    def lines(self) -> list[str]:
        with self._written:
            return self.getvalue().splitlines()

    def expect(self, line: str, timeout: float = BOUND) -> None:
        """Until ``line`` was written."""
        with self._written:
            came = self._written.wait_for(lambda: line in self.getvalue().splitlines(), timeout)
        assert came, f"{line!r} never came; got {self.lines}"
