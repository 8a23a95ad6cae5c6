"""Following a Volcano Job's lead task, decided from what the API shows: the state machine of the log follower,
whose steps the one loop carries out (:mod:`hera_volcano.pods.run`), in the workflow and in the client's
``Run.logs()``; tests/follow_cases.py holds that loop to its cases over both transports.

Each look (:class:`Seen`: the jobs, the pods of the jobs and of their steps, the time since following began) gives
the steps to take. The job followed is the newest one our own step created: with the follower's Argo node name
known, a job whose ``hera-volcano/step-pod`` names the pod of an attempt of a sibling step (same parent node, same
loop item), so in a loop, after an Argo retry, or beside other steps that share its label it follows exactly its
own. The newest pod of the job's lead task is the one to follow. Its container is streamed when it has started and
was not streamed yet (a new pod, or a restarted container: a new container ID), or again after a dropped stream
while it still runs and the job has not finished (after a back-off while streams keep ending at once). While the
container has not started, each failed attempt of an init container is shown. It stops once the job has finished
(unless Argo retries its step: then the next attempt's job is followed), when a job it saw is gone, when the job's
step has ended and ``step_grace`` seconds passed without the job finishing (``retry_grace`` while Argo retries it),
when neither the step nor a job appeared within ``grace`` seconds, or when the workflow has finished. A job that has
not started ``start_limit`` seconds after following began is given up.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone

from hera_volcano.pods.labels import (
    JOB_NAME_LABEL,
    LEAD_TASK_ANNOTATION,
    NODE_NAME_ANNOTATION,
    STEP_POD_ANNOTATION,
    TASK_INDEX_LABEL,
    TASK_LABEL,
)

#: Phases of a Volcano Job that will not run again.
JOB_FINISHED = ("Completed", "Failed", "Terminated", "Aborted")
#: Final phases of an Argo Workflow.
WORKFLOW_FINISHED = ("Succeeded", "Failed", "Error")
#: Seconds to wait while neither the job's step nor a Volcano Job exists. Argo starts the follower and the job's step
#: together, so the step's pod exists seconds after the follower's; without one by then, Argo refused the step before
#: creating a pod (say, a substituted value made its manifest invalid) and the workflow waits on the follower alone.
DEFAULT_GRACE = 120
#: Seconds after the job's step ended (its pod finished or went) before concluding the job will not finish.
STEP_GRACE = 15.0
#: The same while Argo retries the step: its next attempt has this long to create the next job.
RETRY_GRACE = 60.0
#: Seconds a log stream gets to end by itself once its job has finished (a fake node's never does).
DRAIN = 5.0
#: A stream that ended within this many seconds is tried again only after a back-off: 2 s, doubling up to the
#: longest back-off.
QUICK_STREAM = 5.0
FIRST_BACKOFF = 2.0
BACKOFF_MAX = 30.0
#: Lines of each container shown when the followed container never started, or an init container failed.
TAIL_LINES = 20
#: The leading task of a Volcano Job that names none: hera-volcano made only MPI jobs before jobs named theirs.
DEFAULT_LEAD_TASK = "mpimaster"
_ENDED = ("Succeeded", "Failed")
_DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")
#: An Argo step's or task's name, and the last part of its node's name: the name, the loop's ``(N:ITEM)`` (the
#: item as Argo writes it, anything in it), the attempt ``(N)`` of a retried step.
_STEP_NAME = r"[a-zA-Z0-9][-a-zA-Z0-9]*"
_STEP = re.compile(rf"(?P<name>{_STEP_NAME})(?P<item>\(\d+:.*?\))?(?:\((?P<attempt>\d+)\))?", re.DOTALL)
_TIMESTAMP = re.compile(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:\d\d) ?")


def as_map(value: object) -> Mapping[str, object]:
    return value if isinstance(value, Mapping) else {}


def as_list(value: object) -> list[object]:
    return value if isinstance(value, list) else []


def _meta(obj: Mapping[str, object]) -> Mapping[str, object]:
    return as_map(obj.get("metadata"))


def name_of(obj: Mapping[str, object]) -> str:
    return str(_meta(obj).get("name") or "")


def labels_of(obj: Mapping[str, object]) -> Mapping[str, object]:
    return as_map(_meta(obj).get("labels"))


def annotations_of(obj: Mapping[str, object]) -> Mapping[str, object]:
    return as_map(_meta(obj).get("annotations"))


@dataclass(frozen=True)
class PodState:
    """What the follower needs of a pod: which container run of ``container`` it has (its ID, empty until it
    starts), whether it runs now, how often each init container failed, and which one (if any) waits to be
    restarted after a failure, and when each init container's last failed run began and ended (which of its logs
    is that run's: :func:`failure_lines`)."""

    uid: str
    name: str
    phase: str
    container_id: str
    running: bool
    init_restarts: tuple[tuple[str, int], ...] = ()
    containers: tuple[str, ...] = ()
    init_backoff: str = ""
    #: Each init container's last failed run: (name, start, end), seconds since the epoch.
    init_failures: tuple[tuple[str, int, int], ...] = ()


def pod_state(pod: Mapping[str, object], container: str) -> PodState:
    meta, spec, status = _meta(pod), as_map(pod.get("spec")), as_map(pod.get("status"))
    own = next((as_map(c) for c in as_list(status.get("containerStatuses")) if as_map(c).get("name") == container), {})
    inits = [as_map(c) for c in as_list(status.get("initContainerStatuses"))]
    # Init containers run one at a time: at most one waits to be restarted, having failed once more than it
    # restarted. One killed as its pod is deleted (Volcano ending the job) did not fail.
    deleting = bool(meta.get("deletionTimestamp"))
    backoff = "" if deleting else next((str(c.get("name")) for c in inits if _failed(c)), "")
    restarts = tuple(
        (str(c.get("name")), _count(c.get("restartCount")) + (1 if str(c.get("name")) == backoff else 0)) for c in inits
    )
    declared = [as_map(c).get("name") for c in as_list(spec.get("initContainers")) + as_list(spec.get("containers"))]
    return PodState(
        uid=str(meta.get("uid", "")),
        name=str(meta.get("name", "")),
        phase=str(status.get("phase") or "Pending"),
        container_id=str(own.get("containerID") or ""),
        running="running" in as_map(own.get("state")),
        init_restarts=restarts,
        containers=tuple(str(n) for n in declared if n),
        init_backoff=backoff,
        init_failures=tuple(f for f in map(_last_failure, inits) if f[1:] != (0, 0)),
    )


def _count(value: object) -> int:
    return value if isinstance(value, int) else 0


def _last_failure(status: Mapping[str, object]) -> tuple[str, int, int]:
    """An init container's last ended run (its current state if it has ended, else its last state): its name, start
    and end; zeros when unknown."""
    ended = as_map(as_map(status.get("state")).get("terminated")) or as_map(
        as_map(status.get("lastState")).get("terminated")
    )
    return str(status.get("name")), _epoch(ended.get("startedAt")), _epoch(ended.get("finishedAt"))


def _epoch(value: object) -> int:
    """An RFC 3339 time of the API (whole seconds) as seconds since the epoch; 0 for none."""
    if not isinstance(value, str) or not value:
        return 0
    return int(datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp())


def _failed(status: Mapping[str, object]) -> bool:
    """The container failed and waits to be restarted: terminated (reason Error) for most of the back-off, then
    CrashLoopBackOff."""
    state = as_map(status.get("state"))
    return as_map(state.get("terminated")).get("reason") == "Error" or (
        as_map(state.get("waiting")).get("reason") == "CrashLoopBackOff"
    )


def lead_task(job: Mapping[str, object] | None) -> str:
    """The task whose pod leads a Volcano Job (whose output to follow), as the job's annotation names it; the MPI
    master when there is no job yet, or it names none (made by an older hera-volcano) or no task name."""
    named = annotations_of(as_map(job)).get(LEAD_TASK_ANNOTATION)
    return named if isinstance(named, str) and _DNS1123_LABEL.fullmatch(named) else DEFAULT_LEAD_TASK


def job_phase(job: Mapping[str, object]) -> str:
    return str(as_map(as_map(job.get("status")).get("state")).get("phase") or "")


def workflow_final(workflow: Mapping[str, object]) -> str | None:
    """A Workflow's final phase once it has finished for good (Argo writes ``finishedAt`` with it, after the exit
    handler has run); None while it runs."""
    status = as_map(workflow.get("status"))
    phase = status.get("phase")
    return str(phase) if status.get("finishedAt") and phase in WORKFLOW_FINISHED else None


def newest(objects: Iterable[Mapping[str, object]]) -> Mapping[str, object] | None:
    """The most recently created object (by creation time, then name)."""

    def key(obj: Mapping[str, object]) -> tuple[str, str]:
        return str(_meta(obj).get("creationTimestamp", "")), name_of(obj)

    return max(objects, key=key, default=None)


def task_index(pod: Mapping[str, object]) -> str | None:
    """A job's pod's index in its task: Volcano's label, else the end of its name (``JOB-TASK-INDEX``); None when
    neither says."""
    index = labels_of(pod).get(TASK_INDEX_LABEL)
    if index is not None:
        return str(index)
    end = name_of(pod).rpartition("-")[2]
    return end if end.isdigit() else None


def podgroup_said(group: Mapping[str, object]) -> str:
    """The scheduler's last word on a PodGroup: its phase, then each condition's type, reason and message."""
    status = as_map(group.get("status"))
    said = str(status.get("phase") or "")
    for condition in as_list(status.get("conditions")):
        c = as_map(condition)
        said += f"; {c.get('type', '')} {c.get('reason', '')}: {c.get('message', '')}"
    return said


# ------------------------------------------------------------------------------------------- Argo node names


def _splits(node: str) -> Iterator[tuple[str, str | None, str | None]]:
    """Each way to read ``node`` as ``PARENT.NAME[(N:ITEM)][(ATTEMPT)]``, its last dot first: (parent, the loop's
    ``(N:ITEM)`` or None, the attempt or None). A loop's item may hold dots, parentheses or anything else, so a dot
    inside it may look like the last one; the caller tries each reading."""
    for dot in range(len(node) - 1, -1, -1):
        if node[dot] == ".":
            found = _STEP.fullmatch(node, dot + 1)
            if found is not None:
                yield node[:dot], found["item"], found["attempt"]


def _nested(rest: str) -> bool:
    """``rest`` has a dot outside parentheses: a node below a sibling, not a sibling."""
    depth = 0
    for char in reversed(rest):
        depth += (char == ")") - (char == "(")
        if char == "." and depth == 0:
            return True
    return False


def sibling(own: str, node: str) -> bool:
    """Whether the step node ``node`` is a sibling of the follower's node ``own``: the same parent, of the same loop
    iteration when the follower is looped (its node is ``PARENT.NAME(N:ITEM)``, and the sibling's must end in the
    same item, whatever it holds; a retry's ``NAME(N)`` is no loop). Any node is when ``own`` is unknown."""
    if not own:
        return True
    for parent, item, _ in _splits(own):
        if node == own or not node.startswith(parent + "."):
            continue
        rest = node[len(parent) + 1 :]
        if item is None and _STEP.fullmatch(rest) and not _nested(rest):
            return True
        if item is not None and re.fullmatch(rf"{_STEP_NAME}{re.escape(item)}(?:\(\d+\))?", rest):
            return True
    return False


def step_of(node: str) -> str:
    """The step a node is an attempt of: the node without a retry's ``(N)``."""
    number = attempt(node)
    return node if number is None else node[: -len(f"({number})")]


def attempt(node: str) -> int | None:
    """The attempt number of a retried step's node (``NAME(N)``), else None."""
    found = next(_splits(node), None)
    return None if found is None or found[2] is None else int(found[2])


# ----------------------------------------------------------------------------------------------- the steps


@dataclass(frozen=True)
class Stream:
    """Stream ``container``'s log in ``pod`` (``reattach``: the same run again, after the last line already shown)."""

    pod: str
    container: str
    header: str
    reattach: bool = False


@dataclass(frozen=True)
class ShowInit:
    """Show the end of a failed init container attempt's log: read its previous and its current run's logs (with
    timestamps, ``previous`` first when the status says it was restarted) and show :func:`failure_lines` of them."""

    pod: str
    container: str
    header: str
    previous: bool = True
    #: The failed run's start and end (seconds since the epoch, whole), from the pod's status.
    window: tuple[int, int] | None = None


@dataclass(frozen=True)
class Forget:
    """Another job (the next attempt's) replaces the one followed: the values its rank 0 reported are not this
    one's."""

    job: str


@dataclass(frozen=True)
class GiveUp:
    """The start limit has passed and ``job`` (None: no job at all) has not started: read its phase once more (the
    watch can lag behind it: a job that has started is followed, see :meth:`Follower.started`), then say why (its
    PodGroup is JOB-UID), delete it, and fail, unless Argo retries the step (``retried``): then follow the next
    attempt's job."""

    job: str | None
    uid: str
    limit: float
    retried: bool = False

    def message(self, podgroup: str | None) -> str:
        if self.job is None:
            return f"No job was created within {self.limit:g} s (start limit)"
        return (
            f"Job {self.job} did not start within {self.limit:g} s (start limit); its PodGroup:"
            f" {podgroup or 'unreadable'}"
        )


@dataclass(frozen=True)
class Stop:
    """Stop following. ``phase`` is the job's final phase when it finished (Completed: collect what rank 0
    reported); ``failed`` fails the follower whatever it has to give; ``never_started`` is a pod whose followed
    container never ran: show its containers' logs."""

    message: str
    never_started: PodState | None = None
    phase: str | None = None
    failed: bool = False


@dataclass(frozen=True)
class Wait:
    """Nothing to do until something changes."""


Step = Stream | ShowInit | Forget | GiveUp | Stop | Wait


@dataclass(frozen=True)
class Seen:
    """One look at the cluster: the Volcano Jobs the selector finds, the pods of those jobs and of the steps that
    create them (a step's pod has no Volcano task label), the objects deleted since following began (one can come and
    go between two looks), the workflow's final phase (None while it runs) and the seconds since following began."""

    jobs: Sequence[Mapping[str, object]]
    pods: Sequence[Mapping[str, object]]
    elapsed: float
    deleted_jobs: Sequence[Mapping[str, object]] = ()
    deleted_pods: Sequence[Mapping[str, object]] = ()
    workflow: str | None = None


@dataclass
class Follower:
    """The follower's settings and its memory between looks. ``selector`` is the label selector of the Volcano Jobs
    (named when none appears); ``task`` and ``container`` override the job's lead task and its container; ``node``
    is the follower's own Argo node name (empty: unknown, every step beside it and every job counts);
    ``step_retries`` is how often Argo retries the job's step; ``start_limit`` None is no limit; ``quiet`` streams
    and shows nothing (it only keeps the start limit, for a job nobody follows); ``backoff`` is
    the first wait before reattaching a stream that ended at once (0: none)."""

    selector: str
    task: str | None = None
    container: str | None = None
    node: str = ""
    grace: float = DEFAULT_GRACE
    step_grace: float = STEP_GRACE
    retry_grace: float = RETRY_GRACE
    start_limit: float | None = None
    step_retries: int = 0
    quiet: bool = False
    backoff: float = FIRST_BACKOFF
    backoff_max: float = BACKOFF_MAX
    # ---- memory
    job: str | None = None
    #: The container followed now (the lead task's, unless ``container`` names one).
    followed: str = ""
    seen_job: str | None = None
    streamed: tuple[str, str] | None = None
    streaming: bool = False
    seen_pod: PodState | None = None
    seen_step: bool = False
    step_ended: float | None = None
    start_at: float | None = None
    retry_from: float | None = None
    next_attach: float = 0.0
    #: The last stream of the run streamed: it failed (or was cut), or it relayed no line.
    stream_failed: bool = False
    stream_relayed: bool = False
    steps: dict[str, str] = field(default_factory=dict)
    given_up: set[str] = field(default_factory=set)
    ran: set[str] = field(default_factory=set)
    shown_inits: dict[tuple[str, str], int] = field(default_factory=dict)
    _current_backoff: float = 0.0

    # ---------------------------------------------------------------------------------------------- looking

    def next(self, seen: Seen) -> list[Step]:
        """The steps to take now: any :class:`Forget` and :class:`ShowInit` first, then exactly one
        :class:`Stream`, :class:`GiveUp`, :class:`Stop` or :class:`Wait`."""
        now = seen.elapsed
        if self.start_at is None:
            self.start_at = now
        self._remember_steps(seen)
        crossed = self.crossed()
        if crossed is not None:
            return [crossed]
        steps: list[Step] = []
        job = self._choose(seen.jobs)
        name = name_of(job) if job is not None else None
        if name is not None and name != self.job and self.seen_job is not None and name != self.seen_job:
            self.start_at, self.retry_from = now, None  # the next attempt's job: its own start clock, no old values
            steps.append(Forget(name))
        self.job = name
        phase = job_phase(job) if job is not None else ""
        if name is not None and phase not in ("", "Pending"):
            self.ran.add(name)  # it started (a restart's Pending since counts not)
        finished = phase in JOB_FINISHED
        task = self.task or lead_task(job)
        container = self.followed = self.container or task
        pod = None if self.quiet else self._lead_pod(seen.pods, task, name)
        if pod is not None:
            self.seen_pod = pod
            if not pod.container_id:
                steps += self._failed_inits(pod)
            stream = self._stream(pod, container, finished, now)
            if stream is not None:
                return [*steps, stream]
        if job is not None and finished and not self._retrying(job, seen, now):
            return [*steps, Stop(f"Job {name} is {phase}", self.never_started(), phase=phase)]
        if name is not None:
            self.seen_job = name
        elif self.seen_job is not None and self.seen_job not in self.given_up:
            return [*steps, Stop(f"Job {self.seen_job} is gone", self.never_started())]
        elif self.seen_job is None:
            gone = newest(j for j in seen.deleted_jobs if self._ours(j))
            if gone is not None:
                self.seen_job = name_of(gone)
                return [*steps, Stop(f"Job {self.seen_job} is gone", self.never_started())]
        stop = self._step_over(seen, job, now)
        if stop is not None:
            return [*steps, stop]
        give_up = self._start_limit(job, now)
        if give_up is not None:
            return [*steps, give_up]
        if not self.seen_step and self.seen_job is None and now >= self.grace:
            message = f"Neither the job's step nor a job labelled {self.selector} appeared within {self.grace:g} s"
            return [*steps, Stop(message, self.never_started())]
        if seen.workflow is not None:
            return [*steps, Stop(f"Workflow is {seen.workflow}", self.never_started())]
        return [*steps, Wait()]

    def stream_ended(self, elapsed: float, lasted: float, *, failed: bool, relayed: bool) -> None:
        """The loop's word that the stream it was given ended after ``lasted`` seconds (``failed``: with an error, or
        cut; ``relayed``: it showed a line): the next reattach waits out a back-off if it ended at once."""
        self.streaming = False
        self.stream_failed = failed
        self.stream_relayed = self.stream_relayed or relayed
        if lasted < QUICK_STREAM:
            self.next_attach = elapsed + self._current_backoff
            self._current_backoff = min(self._current_backoff * 2, self.backoff_max)
        else:
            self.next_attach = elapsed
            self._current_backoff = self.backoff

    def started(self, job: str) -> None:
        """The loop's word that ``job``, read once more before it was given up, has started (the watch still said
        Pending): it is followed to its end, never given up."""
        self.ran.add(job)
        self.given_up.discard(job)

    def needs_reread(self) -> bool:
        """The run streamed last may have lines its streams did not relay: the last stream failed (say, the kubelet
        still said the container was waiting to start) or was cut, or none relayed a line. Its log is read once
        more, from the last line relayed, before following ends."""
        return self.streamed is not None and (self.stream_failed or not self.stream_relayed)

    # --------------------------------------------------------------------------------------------- choosing

    def _remember_steps(self, seen: Seen) -> None:
        """The pods of our sibling steps, by name, with their node: kept once they are gone, as the jobs they
        created still name them."""
        for pod in [*seen.pods, *seen.deleted_pods]:
            if TASK_LABEL in labels_of(pod):
                continue
            node = str(annotations_of(pod).get(NODE_NAME_ANNOTATION) or "")
            if sibling(self.node, node):
                self.steps.setdefault(name_of(pod), node)

    def crossed(self) -> Stop | None:
        """More than one sibling step creates jobs of our label (the same job template called twice at one level,
        beside one follower each): no rule tells which job is ours, so fail at once, never following a guess."""
        if not self.node:
            return None
        found = {step_of(node) for node in self.steps.values()}
        if len(found) < 2:
            return None
        named = sorted(next((node[len(p) + 1 :] for p, _, _ in _splits(node)), node) for node in found)
        return Stop(
            f"Steps {', '.join(named)} beside this follower all create jobs labelled {self.selector}, so it cannot"
            " tell which job is its own: call each job with its follower through job_dag (a DAG of its own per"
            " call), or give each job step its own job_label",
            failed=True,
        )

    def _ours(self, job: Mapping[str, object]) -> bool:
        """A job our step created: with our node known, a job that names its step's pod is ours only if that pod is
        one of our sibling step's attempts."""
        step = annotations_of(job).get(STEP_POD_ANNOTATION)
        return not self.node or not step or step in self.steps

    def _choose(self, jobs: Sequence[Mapping[str, object]]) -> Mapping[str, object] | None:
        return newest(j for j in jobs if self._ours(j) and name_of(j) not in self.given_up)

    def _lead_pod(self, pods: Sequence[Mapping[str, object]], task: str, job: str | None) -> PodState | None:
        container = self.container or task
        ours = [
            p
            for p in pods
            if labels_of(p).get(TASK_LABEL) == task and labels_of(p).get(JOB_NAME_LABEL, job or "") in (job, "")
        ]
        # Rank 0 of a task of several replicas is its pod of index 0: the one whose report counts.
        pod = newest([p for p in ours if task_index(p) in ("0", None)] or ours)
        return None if pod is None else pod_state(pod, container)

    def _step_pod(self, pods: Sequence[Mapping[str, object]]) -> Mapping[str, object] | None:
        return newest(p for p in pods if TASK_LABEL not in labels_of(p) and name_of(p) in self.steps)

    def _more_attempts(self, step: str | None) -> bool:
        """Argo retries the step after the attempt whose pod is ``step``: its node is ``NAME(N)``, N below the
        step's retry limit."""
        number = attempt(self.steps.get(step or "", ""))
        return self.node != "" and number is not None and number < self.step_retries

    # ---------------------------------------------------------------------------------------------- deciding

    def _stream(self, pod: PodState, container: str, finished: bool, now: float) -> Stream | None:
        """A container run not streamed yet is streamed even when the job has finished (it ran while following
        began); a stream that ended while its container still runs is reattached (after its back-off), unless the
        job has finished: the pod's status can lag behind the job's, and the job's end is the follower's end."""
        if not pod.container_id:
            return None
        run = (pod.uid, pod.container_id)
        if run != self.streamed:  # a new run replaces the one streamed, even while that one's stream lasts
            self.streamed, self.streaming = run, True
            self.stream_failed, self.stream_relayed = False, False
            self._current_backoff, self.next_attach = self.backoff, 0.0
            return Stream(pod.name, container, f"=== logs of {pod.name} ({pod.phase})")
        if pod.running and not finished and not self.streaming and now >= self.next_attach:
            self.streaming = True
            return Stream(pod.name, container, f"=== reattaching to {pod.name}", reattach=True)
        return None

    def _retrying(self, job: Mapping[str, object], seen: Seen, now: float) -> bool:
        """The job did not complete and Argo retries its step: wait (up to ``retry_grace`` after that attempt's pod
        ended) for the next attempt, whose job then takes its place."""
        step = str(annotations_of(job).get(STEP_POD_ANNOTATION) or "")
        if job_phase(job) == "Completed" or not step or not self._more_attempts(step):
            return False
        pod = next((p for p in seen.pods if name_of(p) == step), None)
        phase = str(as_map(pod.get("status")).get("phase") or "Pending") if pod is not None else "Gone"
        if phase in (*_ENDED, "Gone") and not self._next_attempt_runs(step, seen):
            self.retry_from = now if self.retry_from is None else self.retry_from
        else:
            self.retry_from = None
        return self.retry_from is None or now - self.retry_from < self.retry_grace

    def _next_attempt_runs(self, step: str, seen: Seen) -> bool:
        """A later attempt of the step whose pod is ``step`` has a pod that has not ended: its job is yet to come,
        however long a busy node takes to start that pod (the retry grace counts from the last attempt's end)."""
        number = attempt(self.steps.get(step, ""))
        return number is not None and any(
            (later := attempt(self.steps.get(name_of(p), ""))) is not None
            and later > number
            and str(as_map(p.get("status")).get("phase") or "Pending") not in _ENDED
            for p in seen.pods
        )

    def _step_over(self, seen: Seen, job: Mapping[str, object] | None, now: float) -> Stop | None:
        """The job's step has ended (its pod finished or went) and its grace passed without the job finishing."""
        step = self._step_pod(seen.pods)
        if step is not None:
            self.seen_step = True
            ended = str(as_map(step.get("status")).get("phase") or "") in _ENDED
        else:
            ended = self.seen_step or any(name in self.steps for name in map(name_of, seen.deleted_pods))
            self.seen_step = self.seen_step or ended
        self.step_ended = (now if self.step_ended is None else self.step_ended) if ended else None
        grace = self.retry_grace if step is not None and self._more_attempts(name_of(step)) else self.step_grace
        if self.step_ended is None or now - self.step_ended < grace:
            return None
        if job is not None:
            return Stop(
                f"The job's step has ended; job {name_of(job)} is {job_phase(job) or 'Pending'}", self.never_started()
            )
        if self.seen_job is not None and self.seen_job in self.given_up:
            return Stop("No attempt of the job's step started within its start limit", failed=True)
        return Stop("The job's step has ended without creating a job", self.never_started())

    def _start_limit(self, job: Mapping[str, object] | None, now: float) -> GiveUp | None:
        """The job has not started (its phase never went past Pending) ``start_limit`` seconds after following began
        (or after the attempt before it was given up)."""
        if self.start_limit is None or self.start_at is None or now - self.start_at < self.start_limit:
            return None
        if job is None:
            return GiveUp(None, "", self.start_limit) if self.seen_job is None else None
        name = name_of(job)
        if name in self.ran:
            return None
        retried = self._more_attempts(str(annotations_of(job).get(STEP_POD_ANNOTATION) or ""))
        if retried:
            self.given_up.add(name)
            self.start_at = now
        return GiveUp(name, str(_meta(job).get("uid") or ""), self.start_limit, retried)

    def _failed_inits(self, pod: PodState) -> list[Step]:
        """Each init container that failed since last seen: show why while its log still exists (at its failure, as
        it waits to be restarted: Volcano deletes the pod once the restart that reaches maxRetry begins)."""
        steps: list[Step] = []
        for name, count in pod.init_restarts:
            if count > self.shown_inits.get((pod.uid, name), 0):
                self.shown_inits[(pod.uid, name)] = count
                header = f"=== {pod.name}: init container {name} failed (restart {count}); the end of its output:"
                window = next(((a, b) for n, a, b in pod.init_failures if n == name), None)
                steps.append(ShowInit(pod.name, name, header, name != pod.init_backoff, window))
        return steps

    def never_started(self) -> PodState | None:
        """The last pod seen, if its container was never streamed."""
        seen = self.seen_pod
        if seen is None or (self.streamed is not None and self.streamed[0] == seen.uid):
            return None
        return seen


# --------------------------------------------------------------------------------------------- log lines


def failure_lines(window: tuple[int, int] | None, *logs: Sequence[str] | None) -> list[str]:
    """The text of the failed run's log among ``logs`` (read with timestamps; None: not readable): the first whose
    lines all fall within that run's ``window``. Neither the current nor the previous log is that run's by rule: the
    kubelet may restart a container (at once after its first failure) before the API server's status says so, when
    the current log is already the new run's. A run that printed nothing shows nothing. Without a window, the first
    log that could be read."""
    for lines in logs:
        if lines is None:
            continue
        parsed = [split_timestamp(line) for line in lines]
        if window is None or (parsed and all(s is not None and window[0] <= s[0] <= window[1] for s, _ in parsed)):
            return [text for _, text in parsed]
    return []


def split_timestamp(line: str) -> tuple[tuple[int, int] | None, str]:
    """``2026-12-01T18:00:25.123456789Z text`` as ((seconds since the epoch, nanoseconds), ``text``); a line
    without a timestamp as (None, the line)."""
    found = _TIMESTAMP.match(line)
    if found is None:
        return None, line
    seconds = int(datetime.fromisoformat(found[1] + found[3].replace("Z", "+00:00")).timestamp())
    return (seconds, int((found[2] or "0").ljust(9, "0"))), line[found.end() :]


class LineCursor:
    """Where a container's log stream got to (the kubelet's timestamp of the last line), so that a stream opened
    again a little earlier repeats no line."""

    def __init__(self) -> None:
        self._last: tuple[int, int] | None = None
        self._at_last = 0
        self._replay: tuple[tuple[int, int], int] | None = None
        self._replayed = 0

    def reattach(self) -> None:
        """The next lines replay the stream from a little before where it stopped."""
        self._replay = (self._last, self._at_last) if self._last is not None else None
        self._replayed = 0

    def since(self) -> str | None:
        """The time to read again from (RFC 3339, whole seconds: the API server passes no finer), None for the
        start."""
        if self._last is None:
            return None
        return datetime.fromtimestamp(self._last[0], timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")

    def accept(self, line: str) -> str | None:
        """The line's text to show, or None for a line already shown."""
        stamp, text = split_timestamp(line)
        if stamp is None:
            return text
        if self._replay is not None:
            last, count = self._replay
            if stamp < last or (stamp == last and self._replayed < count):
                self._replayed += stamp == last
                return None
            self._replay = None
        if stamp == self._last:
            self._at_last += 1
        else:
            self._last, self._at_last = stamp, 1
        return text
