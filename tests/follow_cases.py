"""The cases both loops of the log follower's state machine (hera_volcano/pods/follow.py) must pass: the one that
runs inside a workflow (hera_volcano/pods/run.py, driven in tests/pods/test_follow_cases.py) and the Python client's
``Run.logs()`` (driven in tests/client/test_follow_cases.py), both against the stand-in API server. Each case is
what happens in the cluster, in order, and exactly what a follower prints.

Events: ``Job``/``Pod``/``Step`` create or change an object (``Step`` is the pod of the job's step), ``Gone`` deletes
one, ``Log`` adds lines to a container's log, ``Await`` waits until the follower has printed a line with that text
before the next event. Following starts after the first ``start_after`` events, once the follower has seen them; a
container's log stream stays open while it runs and ends when it stops, as the kubelet's does.
"""

from __future__ import annotations

from dataclasses import dataclass

MASTER = "j-1-mpimaster-0"
#: Short timings both followers are given in these cases (seconds): the step's grace, and the grace while
#: nothing at all exists.
STEP_GRACE = 2
GRACE = 3


@dataclass(frozen=True)
class Job:
    name: str
    phase: str | None = None
    lead: str = "mpimaster"
    created: int = 0


@dataclass(frozen=True)
class Pod:
    name: str
    task: str = "mpimaster"
    phase: str = "Pending"
    cid: str = ""
    running: bool = False
    created: int = 0
    #: init container name -> restarts
    inits: tuple[tuple[str, int], ...] = ()
    #: the init container waiting to be restarted after a failure, if any, in ``init_state``: "terminated" (with its
    #: error, for most of the back-off) or "backoff" (CrashLoopBackOff, just before the restart)
    backoff: str = ""
    init_state: str = "backoff"
    #: the kubelet has no previous run of the init containers yet, though their restarts are counted
    no_previous: bool = False


@dataclass(frozen=True)
class Step:
    phase: str = "Running"


@dataclass(frozen=True)
class Gone:
    kind: str  # "job", "pod" or "step"
    name: str = ""


@dataclass(frozen=True)
class Log:
    pod: str
    container: str
    lines: tuple[str, ...]


@dataclass(frozen=True)
class Await:
    text: str


Event = Job | Pod | Step | Gone | Log | Await


@dataclass(frozen=True)
class Case:
    id: str
    events: tuple[Event, ...]
    shown: tuple[str, ...]
    #: Start following only after the first this many events.
    start_after: int = 0


def running(cid: str = "c1", name: str = MASTER, created: int = 0) -> Pod:
    return Pod(name, phase="Running", cid=cid, running=True, created=created)


def ended(cid: str = "c1", name: str = MASTER, phase: str = "Succeeded", created: int = 0) -> Pod:
    return Pod(name, phase=phase, cid=cid, created=created)


CASES = (
    Case(
        "streams the master until the job completes",
        (
            Step(),
            Job("j-1", "Pending"),
            Log(MASTER, "mpimaster", ("rank 0 says hello", "rank 1 says hello")),
            running(),
            Await("rank 1 says hello"),
            ended(),
            Job("j-1", "Completed"),
        ),
        (f"=== logs of {MASTER} (Running)", "rank 0 says hello", "rank 1 says hello", "Job j-1 is Completed"),
        start_after=2,
    ),
    Case(
        "shows a job that ran before following began",
        (Step(), Job("j-1", "Completed"), Log(MASTER, "mpimaster", ("quick",)), ended()),
        (f"=== logs of {MASTER} (Succeeded)", "quick", "Job j-1 is Completed"),
        start_after=4,
    ),
    Case(
        "follows a restarted container and a new pod",
        (
            Step(),
            Job("j-1", "Running"),
            Log(MASTER, "mpimaster", ("try 1",)),
            running("c1"),
            Await("try 1"),
            ended("c1", phase="Running"),
            Log(MASTER, "mpimaster", ("try 2",)),
            running("c2"),
            Await("try 2"),
            ended("c2", phase="Failed"),
            Log("j-1-mpimaster-0b", "mpimaster", ("try 3",)),
            running("c3", "j-1-mpimaster-0b", created=5),
            Await("try 3"),
            ended("c3", "j-1-mpimaster-0b", created=5),
            Job("j-1", "Completed"),
        ),
        (
            f"=== logs of {MASTER} (Running)",
            "try 1",
            f"=== logs of {MASTER} (Running)",
            "try 2",
            "=== logs of j-1-mpimaster-0b (Running)",
            "try 3",
            "Job j-1 is Completed",
        ),
        start_after=2,
    ),
    Case(
        "follows the task the job's lead-task annotation names",
        (
            Step(),
            Job("j-1", "Running", lead="master"),
            Log("j-1-worker-0", "worker", ("a worker",)),
            Pod("j-1-worker-0", task="worker", phase="Running", cid="w1", running=True),
            Log("j-1-master-0", "master", ("the master",)),
            Pod("j-1-master-0", task="master", phase="Running", cid="m1", running=True),
            Await("the master"),
            Pod("j-1-master-0", task="master", phase="Succeeded", cid="m1"),
            Job("j-1", "Completed", lead="master"),
        ),
        ("=== logs of j-1-master-0 (Running)", "the master", "Job j-1 is Completed"),
        start_after=2,
    ),
    Case(
        "a failed job ends the following",
        (
            Step(),
            Job("j-1", "Running"),
            Log(MASTER, "mpimaster", ("about to fail",)),
            running(),
            Await("about to fail"),
            ended(phase="Failed"),
            Job("j-1", "Terminated"),
        ),
        (f"=== logs of {MASTER} (Running)", "about to fail", "Job j-1 is Terminated"),
        start_after=2,
    ),
    Case(
        "stops when the job's step failed before creating a job",
        (Step(), Step("Failed")),
        ("The job's step has ended without creating a job",),
        start_after=1,
    ),
    Case(
        "stops when the step's pod is gone and no job runs",
        (Step(), Gone("step")),
        ("The job's step has ended without creating a job",),
        start_after=1,
    ),
    Case(
        "stops when the step gave up on a job that never ran",
        (Step(), Job("j-1", "Pending"), Step("Failed")),
        ("The job's step has ended; job j-1 is Pending",),
        start_after=2,
    ),
    Case(
        "stops when a job it saw is gone",
        (Step(), Job("j-1", "Running"), Gone("job", "j-1")),
        ("Job j-1 is gone",),
        start_after=2,
    ),
    Case(
        "gives up when neither the step nor a job appears",
        (),
        (
            "Neither the job's step nor a job labelled workflows.argoproj.io/workflow=wf,hera-volcano/job=mpi"
            f" appeared within {GRACE} s",
        ),
    ),
    Case(
        "shows each failed init container, then why the master never started",
        (
            Step(),
            Job("j-1", "Running"),
            Log(MASTER, "wait-for-workers", ("Only 0 of 2 workers Ready",)),
            Pod(MASTER, inits=(("wait-for-workers", 1),)),
            Await("Only 0 of 2 workers Ready"),
            Job("j-1", "Terminated"),
        ),
        (
            f"=== {MASTER}: init container wait-for-workers failed (restart 1); the end of its output:",
            "Only 0 of 2 workers Ready",
            "Job j-1 is Terminated",
            f"=== mpimaster never started in {MASTER}",
            f"[pod/{MASTER}/wait-for-workers] Only 0 of 2 workers Ready",
        ),
        start_after=2,
    ),
    Case(
        # The status counts the restart before the kubelet that answers has the failed run as its previous one.
        "shows an init container's failure from its current log when the kubelet has no previous run yet",
        (
            Step(),
            Job("j-1", "Running"),
            Log(MASTER, "wait-for-workers", ("Only 0 of 2 workers Ready",)),
            Pod(MASTER, inits=(("wait-for-workers", 1),), no_previous=True),
            Await("Only 0 of 2 workers Ready"),
            Job("j-1", "Terminated"),
        ),
        (
            f"=== {MASTER}: init container wait-for-workers failed (restart 1); the end of its output:",
            "Only 0 of 2 workers Ready",
            "Job j-1 is Terminated",
            f"=== mpimaster never started in {MASTER}",
            f"[pod/{MASTER}/wait-for-workers] Only 0 of 2 workers Ready",
        ),
        start_after=2,
    ),
    Case(
        # Volcano deletes the pod as soon as the restart that reaches the task's maxRetry begins: the failure before
        # it is shown from the current log while the kubelet waits to restart it (not when the restart comes, when
        # the pod may be gone at once), and not again once restarted.
        "shows an init container's failure while it waits to be restarted, before its pod can go",
        (
            Step(),
            Job("j-1", "Running"),
            Log(MASTER, "wait-for-workers", ("Only 0 of 2 workers Ready",)),
            Pod(MASTER, inits=(("wait-for-workers", 0),), backoff="wait-for-workers"),
            Await("Only 0 of 2 workers Ready"),
            Pod(MASTER, inits=(("wait-for-workers", 1),)),
            Gone("pod", MASTER),
            Job("j-1", "Terminated"),
        ),
        (
            f"=== {MASTER}: init container wait-for-workers failed (restart 1); the end of its output:",
            "Only 0 of 2 workers Ready",
            "Job j-1 is Terminated",
            f"=== mpimaster never started in {MASTER}",
        ),
        start_after=2,
    ),
    Case(
        # Volcano deletes the pod as soon as the restart that reaches the task's maxRetry begins: the failure before
        # it is shown from the current log while the kubelet waits to restart it (not when the restart comes, when
        # the pod may be gone at once), and not again once restarted.
        "shows an init container's failure as it ends, before its pod can go",
        (
            Step(),
            Job("j-1", "Running"),
            Log(MASTER, "wait-for-workers", ("Only 0 of 2 workers Ready",)),
            Pod(MASTER, inits=(("wait-for-workers", 0),), backoff="wait-for-workers", init_state="terminated"),
            Await("Only 0 of 2 workers Ready"),
            Pod(MASTER, inits=(("wait-for-workers", 1),)),
            Gone("pod", MASTER),
            Job("j-1", "Terminated"),
        ),
        (
            f"=== {MASTER}: init container wait-for-workers failed (restart 1); the end of its output:",
            "Only 0 of 2 workers Ready",
            "Job j-1 is Terminated",
            f"=== mpimaster never started in {MASTER}",
        ),
        start_after=2,
    ),
)
