"""Run.wait on a stand-in API server that fails as real ones do: watches that expire, break, end with an ERROR event
or a 410 Gone (which the client must answer with a fresh list), bookmarks, busy or unreachable servers, slow
answers. Whatever happens, the progress stream shows every phase change exactly once and the final Result is right;
what cannot pass ends the wait with a ClusterError that says why, never a hang."""

from __future__ import annotations

import itertools
import threading
import time
from typing import Any

import pytest

from hera_volcano import ClusterError
from hera_volcano.client.patience import Patience
from hera_volcano.client.resources import JOBS, NODES, WORKFLOWS, Resource
from hera_volcano.client.result import Result
from hera_volcano.client.runs import Run
from tests.client.faults import (
    EXPIRED,
    INTERNAL,
    TOO_MANY,
    UNAVAILABLE,
    Answer,
    Drop,
    End,
    ErrorEvent,
    Fault,
    Raise,
    Slow,
    Unreachable,
    status,
)
from tests.client.harness import BOUND, Background, Progress, finish, job_phase, run_of
from tests.client.recorded import World, error, items, load

JOB = items("running", "jobs")[0]["metadata"]["name"]
RUNNING = f"  job {JOB} (mpi): Running, pods 3 running, 0 pending"
#: The recorded running scenario's workflow.
WORKFLOW = load("running/workflow.json")["metadata"]["name"]
COMPLETING = f"  job {JOB} (mpi): Completing, pods 3 running, 0 pending"
COMPLETED = f"  job {JOB} (mpi): Completed, pods 0 running, 0 pending, 3 succeeded"
#: A watch refused by RBAC, as the API server words it (the shape of fixtures/errors/forbidden-*.json).
FORBIDDEN_WATCH = status(
    403,
    "Forbidden",
    'jobs.batch.volcano.sh is forbidden: User "system:serviceaccount:argo:nobody" cannot watch resource "jobs" in'
    ' API group "batch.volcano.sh" in the namespace "argo"',
)


def waiting(run: Run, progress: Progress, timeout: float | None = BOUND) -> Background[Result]:
    return Background(lambda: run.wait(timeout=timeout, progress=progress))


def play(world: World, run: Run) -> tuple[Result, list[str]]:
    """The job completes step by step, then the workflow succeeds; each change is made once the previous one is on
    the progress stream. Returns the Result and the progress lines."""
    progress = Progress()
    wait = waiting(run, progress)
    progress.expect(RUNNING)
    job_phase(world, JOB, "Completing")
    progress.expect(COMPLETING)
    job_phase(world, JOB, "Completed", running=0, succeeded=3)
    progress.expect(COMPLETED)
    world.settle(WORKFLOWS, JOBS)
    finish(world, "running")
    return wait.result(), progress.lines


def check_played(run: Run, result: Result, lines: list[str]) -> None:
    """Every phase change shown once, in order; the final Result as the cluster left it."""
    assert lines[0].startswith(f"{run.name}: Running")
    assert lines[1:] == [RUNNING, COMPLETING, COMPLETED, f"{run.name}: Succeeded"]
    assert (result.phase, result.finished) == ("Succeeded", True)
    [job] = result.jobs
    assert (job.phase, job.running, job.succeeded, job.deleted) == ("Completed", 0, 3, False)


#: Faults after which the client resumes its watch where it was: every change comes as an event, once.
RESUMED: list[tuple[str, Resource, tuple[Fault, ...]]] = [
    ("watch", JOBS, (End(after=0),)),
    ("watch", JOBS, (End(after=1),)),
    ("watch", JOBS, (End(after=0), End(after=0), End(after=1))),
    ("watch", JOBS, (Drop(after=0),)),
    ("watch", JOBS, (Drop(after=1),)),
    ("watch", JOBS, (ErrorEvent(INTERNAL, after=1),)),
    ("watch", JOBS, (ErrorEvent(TOO_MANY, after=0),)),
    ("watch", JOBS, (Answer.of(UNAVAILABLE), Unreachable(), Answer(502, "Bad Gateway\n"))),
    ("watch", JOBS, (Drop(after=1), Answer.of(UNAVAILABLE), End(after=0), Drop(after=0))),
    ("watch", WORKFLOWS, (End(after=0), Drop(after=0), Unreachable())),
    ("list", JOBS, (Answer.of(UNAVAILABLE), Unreachable())),
    ("list", WORKFLOWS, (Answer.of(TOO_MANY), Answer(504, "upstream request timeout"))),
]
#: Faults after which the client lists the collection again (the version it had expired).
RELISTED: list[tuple[str, Resource, tuple[Fault, ...]]] = [
    ("watch", JOBS, (ErrorEvent(EXPIRED, after=0),)),
    ("watch", JOBS, (ErrorEvent(EXPIRED, after=1),)),
    ("watch", JOBS, (Answer.of(EXPIRED),)),
    ("watch", JOBS, (Answer.of(EXPIRED), ErrorEvent(EXPIRED, after=0), Answer.of(EXPIRED))),
    ("watch", WORKFLOWS, (ErrorEvent(EXPIRED, after=0), Answer.of(EXPIRED))),
]


@pytest.mark.parametrize(("verb", "resource", "faults"), RESUMED)
def test_a_resumed_watch_loses_and_repeats_no_change(
    world: World, verb: str, resource: Resource, faults: tuple[Fault, ...]
) -> None:
    run = run_of(world, "running")
    start = world.version
    world.fault(verb, resource, *faults)
    check_played(run, *play(world, run))
    for watched in (JOBS, WORKFLOWS):
        assert world.delivered(watched) == world.changes(watched, start), "each change came as one event"


@pytest.mark.parametrize(("verb", "resource", "faults"), RELISTED)
def test_an_expired_watch_lists_again_and_loses_and_repeats_no_change(
    world: World, verb: str, resource: Resource, faults: tuple[Fault, ...]
) -> None:
    run = run_of(world, "running")
    world.fault(verb, resource, *faults)
    check_played(run, *play(world, run))
    assert world.calls.count(("list", resource, None)) == 1 + len(faults), "one list more after each 410"
    for watched in (JOBS, WORKFLOWS):
        delivered = world.delivered(watched)
        assert delivered == sorted(set(delivered)), "no change came twice, none older than one already seen"


def test_a_dropped_watch_resumes_from_the_version_of_the_last_event_it_gave(world: World) -> None:
    run = run_of(world, "running")
    world.fault("watch", JOBS, Drop(after=1))
    check_played(run, *play(world, run))
    completing, _ = world.delivered(JOBS)
    jobs_watches = [version for resource, version in world.watched if resource == JOBS]
    assert jobs_watches[1:] == [str(completing)]


def test_a_bookmark_moves_the_version_a_watch_resumes_from(world: World) -> None:
    run = run_of(world, "running")
    progress = Progress()
    wait = waiting(run, progress)
    progress.expect(RUNNING)
    world.settle(JOBS)
    world.put(NODES, items("running", "nodes")[0])  # another collection's change moves the server's version on
    world.bookmark(JOBS)
    world.interrupt(JOBS, Drop())
    world.settle(JOBS)
    assert world.watched[-1] == (JOBS, str(world.version))
    job_phase(world, JOB, "Completing")
    progress.expect(COMPLETING)
    job_phase(world, JOB, "Completed", running=0, succeeded=3)
    progress.expect(COMPLETED)
    finish(world, "running")
    check_played(run, wait.result(), progress.lines)


def test_changes_made_while_the_client_was_away_come_on_its_return_or_with_a_new_list(world: World) -> None:
    """The watch breaks; while the client's next request is held up, the job changes twice, and then the server
    compacts its history: the client's version is gone (410 Gone), so it lists again and sees where the job is."""
    run = run_of(world, "running")
    progress = Progress()
    wait = waiting(run, progress)
    progress.expect(RUNNING)
    world.settle(JOBS)
    slow = Slow()
    world.fault("watch", JOBS, slow)
    world.interrupt(JOBS, Drop())
    slow.wait_entered()
    job_phase(world, JOB, "Completing")
    job_phase(world, JOB, "Completed", running=0, succeeded=3)
    world.compact()
    slow.release.set()
    progress.expect(COMPLETED)
    finish(world, "running")
    result, lines = wait.result(), progress.lines
    assert lines[1:] == [RUNNING, COMPLETED, f"{run.name}: Succeeded"], "the list shows where the job is now"
    assert result.jobs[0].phase == "Completed"
    assert world.calls.count(("list", JOBS, None)) == 2


def test_a_watch_the_server_keeps_ending_at_once_is_not_asked_again_in_a_tight_loop(world: World) -> None:
    """Each watch that brought nothing is followed by a pause (``patience.retry``) before the next one."""
    run = run_of(world, "running", Patience(grace=30, retry=0.05, wake=0.01))
    world.fault("watch", JOBS, *[End(after=0)] * 5)
    asked: list[float] = []
    watch = world.watch

    def timed(resource: Resource, *args: Any, **kwargs: Any) -> Any:
        if resource == JOBS:
            asked.append(time.monotonic())
        return watch(resource, *args, **kwargs)

    world.watch = timed  # type: ignore[method-assign]
    check_played(run, *play(world, run))
    assert len(asked) >= 6
    assert all(later - earlier >= 0.045 for earlier, later in itertools.pairwise(asked[:6]))


UNRECOVERABLE: list[tuple[str, Resource, tuple[Fault, ...], str]] = [
    ("watch", JOBS, (Answer.of(FORBIDDEN_WATCH),), "forbidden: system:serviceaccount:argo:nobody may not watch jobs"),
    ("watch", JOBS, (ErrorEvent(FORBIDDEN_WATCH),), "may not watch jobs.batch.volcano.sh in namespace argo"),
    (
        "watch",
        JOBS,
        (ErrorEvent(status(400, "BadRequest", "unable to decode an event from the watch stream")),),
        "cannot watch jobs.batch.volcano.sh in namespace argo: unable to decode an event from the watch stream",
    ),
    (
        "watch",
        WORKFLOWS,
        (Raise(RuntimeError("the library tripped")),),
        rf"the watch of workflows\.argoproj\.io \(metadata\.name={WORKFLOW}\) in namespace argo failed:"
        " RuntimeError: the library tripped",
    ),
    (
        "list",
        JOBS,
        (Raise(KeyError("metadata")),),
        rf"the watch of jobs\.batch\.volcano\.sh \(workflows\.argoproj\.io/workflow={WORKFLOW}\) in namespace argo"
        " failed: KeyError: 'metadata'",
    ),
    ("list", JOBS, (Answer(*error("unauthorized")),), r"does not accept these credentials \(401 Unauthorized\)"),
]


@pytest.mark.parametrize(("verb", "resource", "faults", "message"), UNRECOVERABLE)
@pytest.mark.parametrize("timeout", [None, BOUND])
def test_what_cannot_pass_ends_the_wait_with_a_cluster_error_that_says_why(
    world: World, verb: str, resource: Resource, faults: tuple[Fault, ...], message: str, timeout: float | None
) -> None:
    run = run_of(world, "running")
    world.fault(verb, resource, *faults)
    with pytest.raises(ClusterError, match=message):
        waiting(run, Progress(), timeout).result()


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_a_watcher_ended_by_something_not_even_an_exception_ends_the_wait(world: World) -> None:
    run = run_of(world, "running")
    world.fault("list", WORKFLOWS, Raise(SystemExit(3)))
    message = (
        rf"the watch of workflows\.argoproj\.io \(metadata\.name={WORKFLOW}\) in namespace argo stopped unexpectedly"
    )
    with pytest.raises(ClusterError, match=message):
        waiting(run, Progress(), None).result()


def test_an_error_event_after_changes_were_shown_ends_the_wait_with_it(world: World) -> None:
    run = run_of(world, "running")
    world.fault("watch", JOBS, ErrorEvent(FORBIDDEN_WATCH, after=1))
    progress = Progress()
    wait = waiting(run, progress, None)
    progress.expect(RUNNING)
    job_phase(world, JOB, "Completing")
    with pytest.raises(ClusterError, match=r"may not watch jobs\.batch\.volcano\.sh in namespace argo"):
        wait.result()
    assert progress.lines[1:] == [RUNNING, COMPLETING]


@pytest.mark.parametrize(
    ("verb", "resource", "fault", "message"),
    [
        ("watch", JOBS, Answer.of(UNAVAILABLE), "cannot watch jobs.* unable to handle the request"),
        ("watch", JOBS, ErrorEvent(TOO_MANY), "cannot watch jobs.* Too many requests, please try again later"),
        ("watch", WORKFLOWS, Unreachable(), r"cannot reach the API server at .*: \[Errno 111\] Connection refused"),
        ("watch", WORKFLOWS, ErrorEvent(INTERNAL), r'cannot watch workflows.* \("etcdserver: request timed out"\)'),
        (
            "list",
            JOBS,
            Answer(502, "Bad Gateway\n"),
            "cannot list jobs.batch.volcano.sh in namespace argo: Bad Gateway",
        ),
    ],
)
def test_failures_that_may_pass_are_reported_once_they_outlast_the_grace_period(
    world: World, verb: str, resource: Resource, fault: Fault, message: str
) -> None:
    run = run_of(world, "running", Patience(grace=0.1, retry=0.01, wake=0.01))
    world.fault(verb, resource, *[fault] * 1000)
    with pytest.raises(ClusterError, match=message):
        waiting(run, Progress()).result()


def test_streams_that_break_after_the_server_answered_are_resumed_however_long_it_lasts(world: World) -> None:
    """A proxy that cuts idle connections cuts every watch of a quiet collection: no reason to give up."""
    run = run_of(world, "running", Patience(grace=0, retry=0.01, wake=0.01))
    world.fault("watch", JOBS, *[Drop(after=0)] * 5)
    world.fault("watch", WORKFLOWS, *[Drop(after=0)] * 5)
    check_played(run, *play(world, run))


def test_a_slow_answer_delays_the_wait_and_loses_nothing(world: World) -> None:
    run = run_of(world, "running")
    slow = Slow()
    world.fault("list", JOBS, slow)
    progress = Progress()
    wait = waiting(run, progress)
    slow.wait_entered()
    job_phase(world, JOB, "Completing")  # before the list answers: the list holds it
    slow.release.set()
    progress.expect(COMPLETING)
    job_phase(world, JOB, "Completed", running=0, succeeded=3)
    progress.expect(COMPLETED)
    finish(world, "running")
    result, lines = wait.result(), progress.lines
    assert lines[1:] == [COMPLETING, COMPLETED, f"{run.name}: Succeeded"]
    assert result.jobs[0].phase == "Completed"


def test_a_timeout_ends_the_wait_at_once_although_a_request_hangs_and_its_thread_calls_no_more(
    world: World,
) -> None:
    run = run_of(world, "running")
    slow = Slow()
    world.fault("list", JOBS, slow)
    before = set(threading.enumerate())
    with pytest.raises(TimeoutError, match=r"has not finished after 1\.0 s"):
        Background(lambda: run.wait(timeout=1.0)).result()
    assert slow.entered.is_set() and not slow.release.is_set(), "the wait did not wait for the hanging request"
    [watcher] = [t for t in set(threading.enumerate()) - before if t.name == "hera-volcano-watch-jobs"]
    calls = len(world.calls)
    slow.release.set()
    watcher.join(BOUND)
    assert not watcher.is_alive()
    assert len(world.calls) == calls, "once answered, the stopped thread asked for nothing more"


def test_a_timeout_stops_every_watch(world: World) -> None:
    run = run_of(world, "running")
    before = set(threading.enumerate())
    with pytest.raises(TimeoutError):
        run.wait(timeout=0.1)
    assert not [t for t in set(threading.enumerate()) - before if t.name.startswith("hera-volcano-watch-")]
