"""What the follower does with rank 0's progress and metric lines, over both transports (the pod's API client and
the client's adapter) against the stand-in API server: in the pod (``publish``) it writes Argo's progress file as
each progress comes, puts the latest progress and metrics on the Volcano Job at most every ``publish_every``
seconds and once at the end, and gives the last metrics as ``job-metrics`` and as an output rank 0 reported only as
a metric; a refused line is said and changes nothing; the client's loop (no ``publish``) writes and patches nothing."""

from __future__ import annotations

import dataclasses
import functools
import json
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from hera_volcano.client.resources import JOBS, PODS
from hera_volcano.pods.progress import PROGRESS_ANNOTATION
from hera_volcano.pods.run import FollowLogs, Settings
from tests.client.follow_driver import Driver
from tests.client.harness import BOUND
from tests.client.recorded import World
from tests.follow_cases import MASTER, Await, Event, Job, Log, Step, ended, running
from tests.pods.test_follow_cases import SETTINGS, TRANSPORTS


def follow(
    tmp_path: Path,
    transport: str,
    events: list[Event | Callable[[World], None]],
    *,
    publish: bool = True,
    world: World | None = None,
    **changes: object,
) -> tuple[World, Driver, int, Settings]:
    """Follow ``events`` (after the step and a running job; a callable is a wait on the world) to their end; the
    world, what was shown, the exit status and the settings."""
    tmp_path.mkdir(exist_ok=True)
    world = world or World()
    driver = Driver(world)
    settings = dataclasses.replace(
        SETTINGS, progress_file=str(tmp_path / "argo" / "progress"), output_dir=str(tmp_path / "out"), **changes
    )
    for event in (Step(), Job("j-1", "Running")):
        driver.apply(event)
    codes: list[int] = []
    with TRANSPORTS[transport](world, tmp_path) as api:
        loop = FollowLogs(api, settings, driver.shown.append, report=lambda m: None, announce=False, publish=publish)
        thread = threading.Thread(target=lambda: codes.append(loop.run()), daemon=True)
        thread.start()
        try:
            world.settle(JOBS, PODS, timeout=BOUND)
            for event in events:
                event(world) if callable(event) else driver.apply(event)
            thread.join(BOUND)
            assert not thread.is_alive(), f"still following: {driver.shown}"
        finally:
            loop.close()
            world.close()
    return world, driver, codes[0], settings


def patches(world: World) -> list[str | None]:
    return [name for verb, resource, name in world.calls if verb == "patch" and resource == JOBS]


def annotation(world: World) -> dict[str, object]:
    return dict(json.loads(world.objects[JOBS]["j-1"]["metadata"]["annotations"][PROGRESS_ANNOTATION]))


def epochs(*lines: str, patched: bool = False) -> list[Event | Callable[[World], None]]:
    """Rank 0 runs, printing ``lines`` one at a time (each seen before the next; with ``patched``, each progress on
    the job before the next), then the job Completes."""
    shown: list[Event | Callable[[World], None]] = [
        Log(MASTER, "mpimaster", ("starting",)),
        running(),
        Await("starting"),
    ]
    for line in lines:
        shown += [Log(MASTER, "mpimaster", (line,)), Await(line)]
        if patched:
            shown.append(functools.partial(on_the_job, done=line.rpartition(" ")[2]))
    return [*shown, ended(), Job("j-1", "Completed")]


def on_the_job(world: World, done: str) -> None:
    """Until the job's annotation holds the progress ``done``."""
    deadline = time.monotonic() + BOUND
    while time.monotonic() < deadline:
        meta = world.objects[JOBS]["j-1"]["metadata"]
        if json.loads(meta.get("annotations", {}).get(PROGRESS_ANNOTATION, "{}")).get("progress") == done:
            return
        time.sleep(0.01)
    raise AssertionError(f"the job never showed progress {done}")


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_in_the_pod_progress_reaches_argos_file_and_the_job_and_metrics_the_outputs(
    tmp_path: Path, transport: str
) -> None:
    lines = [
        "hera-volcano:progress 1/4",
        "hera-volcano:metric loss=0.9",
        "hera-volcano:progress 2/4",
        "hera-volcano:metric loss=0.5",
        "hera-volcano:metric acc=0.75",
        "hera-volcano:progress 4/4",
        "hera-volcano:metric loss=0.25",
    ]
    world, driver, code, settings = follow(tmp_path, transport, epochs(*lines), outputs=("loss",))
    assert code == 0, driver.shown
    assert lines[0] in driver.shown and "Job j-1 is Completed" in driver.shown, "the lines are shown as they are"
    assert Path(settings.progress_file).read_text() == "4/4\n", "the last progress, one whole line"
    assert annotation(world) == {"progress": "4/4", "metrics": {"loss": 0.25, "acc": 0.75}}
    out = tmp_path / "out"
    assert (out / "loss").read_text() == "0.25", "an output reported only as a metric has its last value"
    assert json.loads((out / "job-metrics").read_text()) == {"loss": 0.25, "acc": 0.75}


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_the_job_is_patched_at_most_every_publish_seconds_and_once_at_the_end(tmp_path: Path, transport: str) -> None:
    lines = [f"hera-volcano:progress {k}/6" for k in range(1, 7)]
    world, driver, code, _ = follow(tmp_path, transport, epochs(*lines), publish_every=3600)
    assert code == 0, driver.shown
    assert patches(world) == ["j-1", "j-1"], "the first progress at once, then nothing for an hour but the last"
    assert annotation(world) == {"progress": "6/6", "metrics": {}}
    many, *_ = follow(tmp_path / "again", transport, epochs(*lines, patched=True), publish_every=0.01)
    assert patches(many) == ["j-1"] * 6, "due at every look: each change once, the last not again at the end"


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_reported_output_wins_over_a_metric_of_its_name(tmp_path: Path, transport: str) -> None:
    events = epochs("hera-volcano:metric loss=0.5", "hera-volcano:output loss=final")
    _, driver, code, _ = follow(tmp_path, transport, events, outputs=("loss",))
    assert code == 0 and (tmp_path / "out" / "loss").read_text() == "final", driver.shown


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_forged_or_malformed_lines_are_said_and_change_nothing(tmp_path: Path, transport: str) -> None:
    tag = "{" * 2 + "workflow.parameters.secret" + "}" * 2
    events = epochs(
        "hera-volcano:progress 2/10",
        "hera-volcano:metric loss=0.5",
        f"hera-volcano:progress {tag}",
        "hera-volcano:progress 11/10",
        f"hera-volcano:metric loss={tag}",
        'hera-volcano:metric lo"ss=0.1',
        "hera-volcano:metric loss=NaN",
    )
    world, driver, code, settings = follow(tmp_path, transport, events, outputs=("loss",))
    refused = [line for line in driver.shown if line.startswith("hera-volcano: ") and "is ignored" in line]
    assert len(refused) == 5, driver.shown
    assert "hera-volcano: progress line refused: done must be between 0 and the total 10, not 11" in refused[1]
    assert code == 0 and (tmp_path / "out" / "loss").read_text() == "0.5", "the last valid value"
    assert Path(settings.progress_file).read_text() == "2/10\n"
    assert annotation(world) == {"progress": "2/10", "metrics": {"loss": 0.5}}


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_an_output_reported_neither_way_still_fails_the_follower(tmp_path: Path, transport: str) -> None:
    _, driver, code, _ = follow(tmp_path, transport, epochs("hera-volcano:metric acc=0.5"), outputs=("loss",))
    assert code == 1
    assert any(
        "reported no value for: loss" in line and "hera-volcano:metric NAME=NUMBER" in line for line in driver.shown
    )


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_the_clients_loop_writes_and_patches_nothing(tmp_path: Path, transport: str) -> None:
    events = epochs("hera-volcano:progress 1/2", "hera-volcano:metric loss=0.5")
    world, driver, code, settings = follow(tmp_path, transport, events, publish=False)
    assert code == 0 and "hera-volcano:progress 1/2" in driver.shown
    assert patches(world) == [] and not Path(settings.progress_file).exists() and not (tmp_path / "out").exists()


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_job_the_account_may_not_patch_is_said_once_and_following_goes_on(tmp_path: Path, transport: str) -> None:
    refusing = World()
    refusing.refuse("patch", JOBS)
    events = epochs("hera-volcano:progress 1/3", "hera-volcano:progress 2/3", "hera-volcano:progress 3/3")
    world, driver, code, settings = follow(tmp_path, transport, events, world=refusing)
    said = [line for line in driver.shown if "the progress is not put on job j-1" in line]
    assert code == 0 and len(said) == 1, driver.shown
    assert patches(world) == ["j-1"], "not tried again once refused"
    assert Path(settings.progress_file).read_text() == "3/3\n", "Argo's file is written all the same"


def test_the_job_never_shows_a_steps_progress_with_some_of_the_next_steps_metrics(tmp_path: Path) -> None:
    """The e2e failure: a look between the next step's metric lines showed 8/10 with step 8's loss and step 7's
    step. The helper prints a step's metrics, then its progress line; the job shows what that line closed."""
    from types import SimpleNamespace

    from hera_volcano.pods.published import Published

    settings = SimpleNamespace(progress_file=str(tmp_path / "progress"), publish_every=0, output_dir=str(tmp_path))
    follow = SimpleNamespace(
        settings=settings,
        follower=SimpleNamespace(job="j-1", seen_job=None),
        say=lambda text: None,
        changed=lambda: None,
    )
    published = Published(follow, enabled=True)  # type: ignore[arg-type]
    shown: list[str] = []
    published._patch = lambda job, text, now: shown.append(text)  # type: ignore[method-assign]
    for line in ("metric loss=0.8", "metric step=1", "progress 1/2", "metric loss=0.64"):
        published.read("hera-volcano:" + line)
        published.publish(1)
    assert json.loads(shown[-1]) == {"progress": "1/2", "metrics": {"loss": 0.8, "step": 1}}, shown
    published.read("hera-volcano:metric step=2")
    published.publish(2, final=True)
    assert json.loads(shown[-1]) == {"progress": "1/2", "metrics": {"loss": 0.64, "step": 2}}, "the end: the last"
    assert json.loads((tmp_path / "job-metrics").read_text()) == {"loss": 0.64, "step": 2}
