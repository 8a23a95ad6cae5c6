"""The shared follower cases (tests/follow_cases.py), run once against the one loop (hera_volcano/pods/run.py's
``FollowLogs``) over both transports: the one the pod speaks (``hera_volcano.pods.kubeapi.Transport``, here to the
stand-in API server) and the client's adapter over the ``kubernetes`` package (``hera_volcano.client.transport``,
the stand-in in the place of its ``KubeApi``)."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest

from hera_volcano.client.resources import JOBS, PODS
from hera_volcano.client.transport import KubeTransport
from hera_volcano.pods.kubeapi import Transport
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
TRANSPORTS: dict[str, Callable[[World], Transport]] = {
    "pod": WorldApi,
    "kubernetes": lambda world: KubeTransport(world, "argo"),  # type: ignore[arg-type]
}


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_the_follower(case: Case, transport: str) -> None:
    world = World()
    driver = Driver(world)
    for event in case.events[: case.start_after]:
        driver.apply(event)
    follow = FollowLogs(
        TRANSPORTS[transport](world), SETTINGS, driver.shown.append, report=lambda message: None, announce=False
    )
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
        assert driver.shown == list(case.shown)
    finally:
        follow.close()
        world.close()
