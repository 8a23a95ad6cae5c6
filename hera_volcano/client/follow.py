"""Following one task's pod logs across restarts, decided from what the API shows: the same steps as the log follower
that runs inside the workflow (``hera_volcano/argo/scripts/follow_logs.sh``), in Python; tests/follow_cases.py holds
both to the same cases.

The newest pod of the task is the one to follow. Its container is streamed when it has started and was not streamed
yet (a new pod, or a restarted container: a new container ID), or again after a dropped stream while it still runs
and the job has not finished (reattaching without repeating lines). While the container has not started, each
failed attempt of an init container (the master's wait for its workers giving up) is shown. It stops once the
Volcano Job has finished, when a job it saw is gone, when the job's step has ended and ``step_grace`` seconds passed
without the job finishing, when neither the step nor a job appeared within ``grace`` seconds, or when the workflow
has finished; if the container never started by then, the end of the pod's container logs says why.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from hera_volcano.argo.labels import LEAD_TASK_ANNOTATION
from hera_volcano.client.result import JobStatus
from hera_volcano.kube import names
from hera_volcano.shared.findings import as_list, as_map

#: Seconds to wait while neither the job's step nor a Volcano Job exists (the in-workflow follower's default).
DEFAULT_GRACE = 600.0
#: Seconds after the job's step ended (its pod finished or went) before concluding the job will not finish.
STEP_GRACE = 15.0
#: Seconds a log stream gets to end by itself once its job has finished (a fake node's never does).
DRAIN = 5.0
#: The step phase to give :meth:`Follower.next` for a step pod deleted while following (it may have come and gone
#: between two looks): a pod that is gone has ended.
GONE = "Gone"
#: Phases of a pod that has ended.
_ENDED = ("Succeeded", "Failed", GONE)
#: Lines of each container shown when the followed container never started, or an init container failed.
TAIL_LINES = 20
#: The leading task of a Volcano Job that names none: hera-volcano made only MPI jobs before jobs named theirs.
DEFAULT_LEAD_TASK = "mpimaster"
_TIMESTAMP = re.compile(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:\d\d) ?")


@dataclass(frozen=True)
class PodState:
    """What the follower needs of a pod: which container run of ``container`` it has (its ID, empty until it
    starts), whether it runs now, and how often each init container restarted."""

    uid: str
    name: str
    phase: str
    container_id: str
    running: bool
    init_restarts: tuple[tuple[str, int], ...] = ()
    containers: tuple[str, ...] = ()


def pod_state(pod: Mapping[str, Any], container: str) -> PodState:
    meta, spec, status = as_map(pod.get("metadata")), as_map(pod.get("spec")), as_map(pod.get("status"))
    own = next((as_map(c) for c in as_list(status.get("containerStatuses")) if as_map(c).get("name") == container), {})
    restarts = tuple(
        (str(c.get("name")), int(c.get("restartCount") or 0))
        for c in map(as_map, as_list(status.get("initContainerStatuses")))
    )
    names = [as_map(c).get("name") for c in as_list(spec.get("initContainers")) + as_list(spec.get("containers"))]
    return PodState(
        uid=str(meta.get("uid", "")),
        name=str(meta.get("name", "")),
        phase=str(status.get("phase") or "Pending"),
        container_id=str(own.get("containerID") or ""),
        running="running" in as_map(own.get("state")),
        init_restarts=restarts,
        containers=tuple(str(n) for n in names if n),
    )


def lead_task(job: Mapping[str, Any] | None) -> str:
    """The task whose pod leads a Volcano Job (whose output to follow), as the job's annotation names it; the MPI
    master when there is no job yet, or it names none (made by an older hera-volcano) or no task name."""
    annotations = as_map(as_map(as_map(job).get("metadata")).get("annotations"))
    named = annotations.get(LEAD_TASK_ANNOTATION)
    return named if isinstance(named, str) and names.dns1123_label(named) is None else DEFAULT_LEAD_TASK


def newest(objects: Iterable[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The most recently created object (by creation time, then name), as ``kubectl --sort-by`` then the last."""

    def key(obj: Mapping[str, Any]) -> tuple[str, str]:
        meta = as_map(obj.get("metadata"))
        return str(meta.get("creationTimestamp", "")), str(meta.get("name", ""))

    return max(objects, key=key, default=None)


@dataclass(frozen=True)
class Stream:
    """Stream the container's log (``reattach``: the same run again, after the last line already shown)."""

    pod: str
    header: str
    reattach: bool = False


@dataclass(frozen=True)
class ShowInit:
    """Show the end of a failed init container attempt's log (its previous run)."""

    pod: str
    container: str
    header: str


@dataclass(frozen=True)
class Stop:
    """Stop following; ``never_started`` is a pod whose followed container never ran: show its containers' logs."""

    message: str
    never_started: PodState | None = None


@dataclass(frozen=True)
class Wait:
    """Nothing to do until something changes."""


Step = Stream | ShowInit | Stop | Wait


@dataclass
class Follower:
    """The follower's memory between steps: what it streamed, what it saw, which init failures it showed;
    ``selector`` is the label selector of the Volcano Jobs it follows the pods of (named when none appears)."""

    selector: str
    grace: float = DEFAULT_GRACE
    step_grace: float = STEP_GRACE
    streamed: tuple[str, str] | None = None
    seen_pod: PodState | None = None
    seen_job: str | None = None
    seen_step: bool = False
    step_ended: float | None = None
    shown_inits: dict[tuple[str, str], int] = field(default_factory=dict)

    def next(
        self,
        pod: PodState | None,
        job: JobStatus | None,
        step: str | None,
        workflow: str | None,
        elapsed: float,
        gone: str | None = None,
    ) -> list[Step]:
        """The steps to take now, given the newest pod of the task, the newest Volcano Job, the phase of the newest pod
        of the job's step (None when there is none), the workflow's final phase (None while it runs), the seconds
        since following began and the name of a job deleted while following (a job can come and go between two
        looks): any :class:`ShowInit` first, then exactly one :class:`Stream`, :class:`Stop` or :class:`Wait`."""
        steps: list[Step] = []
        finished = job is not None and job.finished
        if pod is not None:
            self.seen_pod = pod
            if not pod.container_id:
                steps += self._failed_inits(pod)
            run = (pod.uid, pod.container_id)
            # A container run not streamed yet is streamed even when the job has finished (it ran while following
            # began); a stream that ended while its container still runs is reattached, unless the job has finished:
            # the pod's status can lag behind the job's, and the job's end is the follower's end.
            if pod.container_id and (run != self.streamed or (pod.running and not finished)):
                reattach = run == self.streamed
                self.streamed = run
                header = f"=== reattaching to {pod.name}" if reattach else f"=== logs of {pod.name} ({pod.phase})"
                return [*steps, Stream(pod.name, header, reattach)]
        if job is not None and finished:
            return [*steps, Stop(f"Job {job.name} is {job.phase}", self._never_started())]
        if job is not None:
            self.seen_job = job.name
        elif self.seen_job is not None or gone is not None:
            self.seen_job = self.seen_job or gone
            return [*steps, Stop(f"Job {self.seen_job} is gone", self._never_started())]
        self.seen_step = self.seen_step or step is not None
        ended = step in _ENDED if step is not None else self.seen_step
        self.step_ended = (elapsed if self.step_ended is None else self.step_ended) if ended else None
        if self.step_ended is not None and elapsed - self.step_ended >= self.step_grace:
            message = "The job's step has ended without creating a job"
            if job is not None:
                message = f"The job's step has ended; job {job.name} is {job.phase or 'Pending'}"
            return [*steps, Stop(message, self._never_started())]
        if not self.seen_step and self.seen_job is None and elapsed >= self.grace:
            message = f"Neither the job's step nor a job labelled {self.selector} appeared within {self.grace:g} s"
            return [*steps, Stop(message, self._never_started())]
        if workflow is not None:
            return [*steps, Stop(f"Workflow is {workflow}", self._never_started())]
        return [*steps, Wait()]

    def _failed_inits(self, pod: PodState) -> list[Step]:
        """Each init container that restarted since last seen has failed: show why while its log still exists."""
        steps: list[Step] = []
        for name, count in pod.init_restarts:
            if count > self.shown_inits.get((pod.uid, name), 0):
                self.shown_inits[(pod.uid, name)] = count
                header = f"=== {pod.name}: init container {name} failed (restart {count}); the end of its output:"
                steps.append(ShowInit(pod.name, name, header))
        return steps

    def _never_started(self) -> PodState | None:
        """The last pod seen, if its container was never streamed."""
        seen = self.seen_pod
        if seen is None or (self.streamed is not None and self.streamed[0] == seen.uid):
            return None
        return seen


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
