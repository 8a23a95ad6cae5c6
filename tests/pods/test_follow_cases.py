"""The shared follower cases (tests/follow_cases.py) for the follower that runs in a workflow: bash, against the
fake kubectl."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from hera_volcano.kube import pod_scripts
from tests.follow_cases import CASES, GRACE, STEP_GRACE, Await, Case, Event, Gone, Job, Log, Pod, Step
from tests.pods.world import FOLLOW_ENV, Script, World

FOLLOW = pod_scripts.with_kubectl("hera_volcano.argo", "follow_logs.sh")
STEP = "wf-submit-1"


class Driver:
    """Turns the cases' events into changes of the fake kubectl's world."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.pending: dict[tuple[str, str], list[str]] = {}
        self.runs: dict[str, str] = {}  # pod -> the container ID of its current run
        self.live: set[str] = set()  # pods whose container runs
        self.run: Script | None = None

    def apply(self, event: Event) -> None:
        w = self.world
        if isinstance(event, Job):
            w.job(event.name, event.phase, lead=event.lead, created=event.created)
        elif isinstance(event, Pod):
            self._flush(event)
            w.pod(
                event.name, task=event.task, phase=event.phase, cid=event.cid, running=event.running,
                created=event.created, inits=dict(event.inits),
            )  # fmt: skip
        elif isinstance(event, Step):
            w.step_pod(STEP, phase=event.phase)
        elif isinstance(event, Gone):
            if event.kind == "job":
                w.remove_job(event.name)
            else:
                w.remove_pod(STEP if event.kind == "step" else event.name)
        elif isinstance(event, Log):
            key = (event.pod, event.container)
            if key[0] in self.live and event.container != "wait-for-workers":
                w.log(*key, *event.lines)  # the container runs: its stream gets them
            else:
                self.pending.setdefault(key, []).extend(event.lines)
        elif isinstance(event, Await):
            assert self.run is not None
            self.run.wait_line(event.text)

    def _flush(self, pod: Pod) -> None:
        """A new container run starts its own log; an init container's lines are its previous attempt's too."""
        for (name, container), lines in list(self.pending.items()):
            if name != pod.name:
                continue
            if container == pod.task and pod.cid and self.runs.get(name) != pod.cid:
                self.world.log(name, container, *lines, restarted=True)
            elif container != pod.task:
                self.world.log(name, container, *lines)
                previous = "\n".join(lines)
                self.world.change(lambda s, k=f"{name}/{container}", text=previous: s["previous"].update({k: text}))
            else:
                continue
            del self.pending[(name, container)]
        if pod.cid:
            self.runs[pod.name] = pod.cid
        if pod.running:
            self.live.add(pod.name)
        else:
            self.live.discard(pod.name)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_the_bash_follower(tmp_path: Path, case: Case) -> None:
    world = World(tmp_path)
    driver = Driver(world)
    for event in case.events[: case.start_after]:
        driver.apply(event)
    env = {**FOLLOW_ENV, "STEP_GRACE_SECONDS": str(STEP_GRACE), "GRACE_SECONDS": str(GRACE)}
    driver.run = run = Script(FOLLOW, world, env)
    try:
        run.wait_for(lambda: len(world.calls()) >= 2, "both watches")
        time.sleep(0.5)  # the watches' first lists reach the follower
        for event in case.events[case.start_after :]:
            driver.apply(event)
        code, _ = run.exit()
        assert code == 0
        assert run.output[1:] == list(case.shown), run.report()
    finally:
        run.kill()
