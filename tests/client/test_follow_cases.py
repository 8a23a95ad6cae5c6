"""The shared follower cases (tests/follow_cases.py) for the Python client's follower: ``Run.logs()`` against the
stand-in API server."""

from __future__ import annotations

import functools
import threading

import pytest

from hera_volcano.client import runs
from hera_volcano.client.resources import JOBS, PODS, WORKFLOWS
from hera_volcano.client.runs import Run
from hera_volcano.pods.follow import Follower
from tests.client.follow_driver import Driver
from tests.client.harness import BOUND, QUICK
from tests.client.recorded import World
from tests.follow_cases import CASES, GRACE, STEP_GRACE, Case


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_the_python_follower(case: Case, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runs, "Follower", functools.partial(Follower, grace=GRACE, step_grace=STEP_GRACE))
    world = World()
    world.put(WORKFLOWS, {"metadata": {"name": "wf", "labels": {}}, "status": {"phase": "Running"}}, "ADDED")
    driver = Driver(world)
    for event in case.events[: case.start_after]:
        driver.apply(event)
    run = Run(world, "argo", "wf", patience=QUICK)  # type: ignore[arg-type]
    failed: list[BaseException] = []

    def follow() -> None:
        try:
            for line in run.logs(job="mpi"):
                driver.shown.append(line)
        except BaseException as e:
            failed.append(e)

    thread = threading.Thread(target=follow, daemon=True)
    thread.start()
    try:
        world.settle(JOBS, PODS, WORKFLOWS)
        for event in case.events[case.start_after :]:
            driver.apply(event)
        thread.join(BOUND)
        assert not thread.is_alive(), f"still following after {BOUND} s: {driver.shown}"
        assert not failed, failed
        assert driver.shown == list(case.shown)
    finally:
        world.close()
