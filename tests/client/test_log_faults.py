"""Run.logs(follow=True) on a stand-in API server that fails as real ones do: log streams that drop or that the
server ends while the container runs, log requests answered 5xx or not at all, slow answers, and watches of the
pods and jobs that expire or break meanwhile. The output has every log line exactly once; what cannot pass ends the
logs with a ClusterError that says why, and a timeout ends them at the deadline, never a hang."""

from __future__ import annotations

import copy

import pytest

from hera_volcano import ClusterError
from hera_volcano.client.patience import Patience
from hera_volcano.client.resources import JOBS, PODS, WORKFLOWS, Resource
from hera_volcano.client.runs import Run
from tests.client.faults import (
    EXPIRED,
    INTERNAL,
    UNAVAILABLE,
    Answer,
    Drop,
    End,
    ErrorEvent,
    Fault,
    Raise,
    Slow,
    Unreachable,
)
from tests.client.harness import Background, finish, job_phase, run_of
from tests.client.recorded import World, error, items

JOB = items("running", "jobs")[0]["metadata"]["name"]
MASTER = next(p for p in items("running", "pods") if p["metadata"]["name"].endswith("mpimaster-0"))
POD = MASTER["metadata"]["name"]
HEADER = f"=== logs of {POD} (Running)"
REATTACHED = f"=== reattaching to {POD}"
DONE = f"Job {JOB} is Completed"
#: What the kubelet sends with ``timestamps=true``: each line after its time, to the nanosecond.
LOG = [f"2026-12-01T18:15:0{i}.00000000{i}Z rank 0: step {i}" for i in range(1, 5)]
STEPS = [f"rank 0: step {i}" for i in range(1, 5)]


def logged(world: World, lines: list[str] = LOG) -> None:
    """The master's log; the job completes once all of it was read."""
    world.logs[(POD, "mpimaster")] = lines
    world.after_log[(POD, "mpimaster")] = lambda: job_phase(world, JOB, "Completed", running=0, succeeded=3)


def followed(run: Run, **options: object) -> list[str]:
    return Background(lambda: list(run.logs(**options))).result()  # type: ignore[arg-type]


LOG_FAULTS: list[tuple[tuple[Fault, ...], list[str]]] = [
    ((Drop(after=2),), [HEADER, *STEPS[:2], REATTACHED, *STEPS[2:], DONE]),
    ((End(after=2),), [HEADER, *STEPS[:2], REATTACHED, *STEPS[2:], DONE]),
    ((Drop(after=0),), [HEADER, REATTACHED, *STEPS, DONE]),
    ((Answer.of(UNAVAILABLE),), [HEADER, REATTACHED, *STEPS, DONE]),
    ((Unreachable(),), [HEADER, REATTACHED, *STEPS, DONE]),
    ((Answer(502, "Bad Gateway"), Answer.of(INTERNAL)), [HEADER, REATTACHED, REATTACHED, *STEPS, DONE]),
    (
        (Answer.of(INTERNAL), Drop(after=1), End(after=3)),
        [HEADER, REATTACHED, STEPS[0], REATTACHED, *STEPS[1:3], REATTACHED, STEPS[3], DONE],
    ),
]


@pytest.mark.parametrize(("faults", "expected"), LOG_FAULTS)
def test_a_broken_log_stream_is_reattached_without_losing_or_repeating_a_line(
    world: World, faults: tuple[Fault, ...], expected: list[str]
) -> None:
    run = run_of(world, "running")
    logged(world)
    world.fault("log", PODS, *faults)
    assert followed(run) == expected


def test_a_reattached_stream_asks_for_timestamps_from_before_the_last_line(world: World) -> None:
    run = run_of(world, "running")
    logged(world)
    world.fault("log", PODS, Drop(after=2))
    followed(run)
    first, again = (options for _, _, options in world.log_calls)
    assert (first["timestamps"], first["since_seconds"]) == (True, None)
    assert again["timestamps"] and again["since_seconds"] >= 10


@pytest.mark.parametrize("after", [1, 2, 3])
def test_lines_of_the_same_instant_are_neither_lost_nor_repeated_across_a_drop(world: World, after: int) -> None:
    run = run_of(world, "running")
    same = "2026-12-01T18:15:01.5Z"
    logged(world, ["2026-12-01T18:15:01Z a", f"{same} b", f"{same} b", f"{same} c", "2026-12-01T18:15:02Z d"])
    world.fault("log", PODS, Drop(after=after))
    texts = ["a", "b", "b", "c", "d"]
    assert followed(run) == [HEADER, *texts[:after], REATTACHED, *texts[after:], DONE]


def test_a_slow_log_answer_loses_nothing(world: World) -> None:
    run = run_of(world, "running")
    logged(world)
    slow = Slow()
    world.fault("log", PODS, slow)
    following = Background(lambda: list(run.logs()))
    slow.wait_entered()
    slow.release.set()
    assert following.result() == [HEADER, *STEPS, DONE]


WATCH_FAULTS: list[tuple[str, Resource, tuple[Fault, ...]]] = [
    ("watch", PODS, (Drop(after=0), End(after=0))),
    ("watch", PODS, (ErrorEvent(EXPIRED),)),
    ("watch", PODS, (Answer.of(EXPIRED), Answer.of(UNAVAILABLE), Unreachable())),
    ("watch", JOBS, (ErrorEvent(INTERNAL), Drop(after=0))),
    ("watch", JOBS, (ErrorEvent(EXPIRED), Answer.of(EXPIRED))),
    ("watch", WORKFLOWS, (End(after=0), ErrorEvent(EXPIRED))),
    ("list", PODS, (Answer.of(UNAVAILABLE), Unreachable())),
]


@pytest.mark.parametrize(("verb", "resource", "faults"), WATCH_FAULTS)
def test_a_restart_is_followed_while_the_watches_fail(
    world: World, verb: str, resource: Resource, faults: tuple[Fault, ...]
) -> None:
    run = run_of(world, "running")
    world.fault(verb, resource, *faults)

    def restart() -> None:
        again = copy.deepcopy(MASTER)
        again["status"]["containerStatuses"][0].update(containerID="containerd://" + "b" * 64, restartCount=1)
        logged(world, ["2026-12-01T18:20:00Z after the restart"])
        world.put(PODS, again)

    world.logs[(POD, "mpimaster")] = LOG[:2]
    world.after_log[(POD, "mpimaster")] = restart
    # While a watch is away, the follower may reattach to the running container once more before it learns that
    # the job completed: a line of its own, no log line twice.
    lines = [line for line in followed(run) if line != REATTACHED]
    assert lines == [HEADER, *STEPS[:2], HEADER, "after the restart", DONE]


def test_a_refused_log_ends_the_logs_with_the_refusal(world: World) -> None:
    run = run_of(world, "running")
    logged(world)
    world.fault("log", PODS, Answer(*error("forbidden-pods-log")))
    with pytest.raises(ClusterError, match=r"may not get pods/log in namespace argo") as raised:
        followed(run)
    assert raised.value.reason == "Forbidden"


def test_log_failures_that_outlast_the_grace_period_end_the_logs(world: World) -> None:
    run = run_of(world, "running", Patience(grace=0.1, retry=0.01, wake=0.01))
    logged(world)
    world.fault("log", PODS, *[Answer.of(UNAVAILABLE), Unreachable()] * 1000)
    with pytest.raises(ClusterError) as raised:
        followed(run)
    assert raised.value.reason in ("ServiceUnavailable", "Unreachable")


def test_streams_that_break_after_the_server_answered_are_never_given_up(world: World) -> None:
    """A log stream the server opened and that broke, with lines or without (a quiet program behind a proxy that
    cuts idle connections), is reattached however often it happens."""
    run = run_of(world, "running", Patience(grace=0, retry=0.01, wake=0.01))
    logged(world)
    world.fault("log", PODS, Drop(after=0), Drop(after=1), Drop(after=0), Drop(after=2), Drop(after=3))
    assert followed(run) == [
        HEADER,
        REATTACHED,
        STEPS[0],
        REATTACHED,
        REATTACHED,
        STEPS[1],
        REATTACHED,
        STEPS[2],
        REATTACHED,
        STEPS[3],
        DONE,
    ]


def test_a_watch_that_cannot_go_on_ends_the_logs_with_why(world: World) -> None:
    run = run_of(world, "running")
    logged(world)
    world.fault("list", PODS, Raise(ValueError("garbled")))
    with pytest.raises(ClusterError, match=r"the watch of pods \(.*\) in namespace argo failed: ValueError: garbled"):
        followed(run)


def test_a_timeout_cuts_a_stream_in_progress(world: World) -> None:
    run = run_of(world, "running")
    stream = world.open_log(POD, "mpimaster")
    stream.push(LOG[0])
    got: list[str] = []

    def follow() -> None:
        for line in run.logs(timeout=2.0):
            got.append(line)

    with pytest.raises(TimeoutError, match=r"still following its logs after 2\.0 s"):
        Background(follow).result()
    assert got == [HEADER, STEPS[0]]
    assert stream.closed


def test_a_timeout_ends_a_wait_for_a_pod_that_does_not_start(world: World) -> None:
    run = run_of(world, "tight")
    with pytest.raises(TimeoutError):
        followed(run, timeout=0.2)


def test_a_workflow_that_finishes_meanwhile_ends_the_logs(world: World) -> None:
    run = run_of(world, "tight")
    world.fault("watch", WORKFLOWS, Drop(after=0))
    finish(world, "tight", "Failed")
    lines = followed(run)
    assert lines[0] == "Workflow is Failed"
