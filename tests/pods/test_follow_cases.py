"""The shared follower cases (tests/follow_cases.py) for the follower that runs in a workflow's pod
(hera_volcano/pods/run.py), against the stand-in API server the client's cases use."""

from __future__ import annotations

import threading

import pytest

from hera_volcano.client.resources import JOBS, PODS
from hera_volcano.pods.run import FollowLogs, Settings
from tests.client.follow_driver import Driver
from tests.client.harness import BOUND
from tests.client.recorded import World
from tests.follow_cases import CASES, GRACE, STEP_GRACE, Case
from tests.pods.world_api import WorldApi

SETTINGS = Settings(
    jobs="workflows.argoproj.io/workflow=wf,hera-volcano/job=mpi",
    pods="hera-volcano/workflow=wf,hera-volcano/job=mpi",
    grace=GRACE,
    step_grace=STEP_GRACE,
    drain=1.0,
    tick=0.05,
    backoff_max=2.0,
)


class Shown:
    """The follower's output, line by line, into the driver's list (which ``Await`` events wait on)."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self._partial = ""

    def write(self, text: str) -> int:
        *complete, self._partial = (self._partial + text).split("\n")
        self.lines.extend(complete)
        return len(text)

    def flush(self) -> None:
        pass


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_the_follower_in_a_pod(case: Case) -> None:
    world = World()
    driver = Driver(world)
    for event in case.events[: case.start_after]:
        driver.apply(event)
    follow = FollowLogs(WorldApi(world), SETTINGS, Shown(driver.shown), report=lambda message: None)  # type: ignore[arg-type]
    codes: list[int] = []
    thread = threading.Thread(target=lambda: codes.append(follow.run()), daemon=True)
    thread.start()
    try:
        world.settle(JOBS, PODS, timeout=BOUND)
        for event in case.events[case.start_after :]:
            driver.apply(event)
        thread.join(BOUND)
        assert not thread.is_alive(), f"still following after {BOUND} s: {driver.shown}"
        assert codes == [0]
        assert driver.shown[1:] == list(case.shown)
    finally:
        follow.close()
        world.close()
