"""The shared follower cases (tests/follow_cases.py), run once against the one loop (hera_volcano/pods/run.py's
``FollowLogs``) over both transports: the pod's own API client (``hera_volcano.pods.kubeapi.Api``, to the stand-in
API server served over HTTPS) and the client's adapter over the ``kubernetes`` package
(``hera_volcano.client.transport``, the stand-in in the place of its ``KubeApi``)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

import pytest

from hera_volcano.client.resources import JOBS, PODS
from hera_volcano.client.transport import KubeTransport
from hera_volcano.pods.kubeapi import Transport
from hera_volcano.pods.run import FollowLogs, Settings
from tests.client.follow_driver import Driver
from tests.client.harness import BOUND
from tests.client.recorded import World
from tests.follow_cases import CASES, GRACE, STEP_GRACE, Case
from tests.pods.world_server import world_api

SETTINGS = Settings(
    jobs="workflows.argoproj.io/workflow=wf,hera-volcano/job=mpi",
    pods="hera-volcano/workflow=wf,hera-volcano/job=mpi",
    grace=GRACE,
    step_grace=STEP_GRACE,
    drain=1.0,
    tick=0.05,
    backoff_max=2.0,
)


@contextmanager
def kubernetes_package(world: World, folder: Path) -> Iterator[Transport]:
    yield KubeTransport(world, "argo")  # type: ignore[arg-type]


TRANSPORTS: dict[str, Callable[[World, Path], AbstractContextManager[Transport]]] = {
    "pod": world_api,
    "kubernetes": kubernetes_package,
}


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_the_follower(case: Case, transport: str, tmp_path: Path) -> None:
    world = World()
    with TRANSPORTS[transport](world, tmp_path) as api:
        follow_case(case, world, api)


def follow_case(case: Case, world: World, api: Transport) -> None:
    driver = Driver(world)
    for event in case.events[: case.start_after]:
        driver.apply(event)
    follow = FollowLogs(api, SETTINGS, driver.shown.append, report=lambda message: None, announce=False)
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
