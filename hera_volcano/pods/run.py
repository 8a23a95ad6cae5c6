"""The log follower as it runs in a pod, beside the step that creates a Volcano Job: it streams the output of the job's
lead task into the workflow's logs, keeps the values rank 0 reports (``hera-volcano:output NAME=VALUE``), and ends
within ``DRAIN`` seconds of the job's end (:mod:`hera_volcano.pods.follow` decides; this runs the decisions).

It waits on two watches (the jobs, and the pods of the jobs and of their steps), never by polling, so a gang that
waits hours to be scheduled costs no requests. Without ``OUTPUTS`` it exits 0 (a log follower must not fail a
workflow) unless the start limit ended the job; with ``OUTPUTS`` it exits 1 unless the job Completed and rank 0
reported every one of them by the rules of :mod:`hera_volcano.pods.reports` (a line they refuse fails it, naming the
output and the rule), writing each to ``OUTPUT_DIR``. :mod:`hera_volcano.pods.entry` starts it.

Everything variable arrives in environment variables: ``JOB_SELECTOR`` and ``POD_SELECTOR`` (label selectors),
``TASK`` and ``CONTAINER`` (empty: the job's lead task, and the container of its name), ``NODE_NAME`` (the
follower's own Argo node, from its pod's annotation), ``FOLLOW_SECONDS`` (0: no limit), ``GRACE_SECONDS``,
``START_SECONDS`` (0: no limit), ``STEP_RETRIES``, ``OUTPUTS`` (names, space-separated), ``OUTPUT_DIR``.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import ClassVar, NoReturn, TextIO

from hera_volcano.pods.follow import (
    BACKOFF_MAX,
    DEFAULT_GRACE,
    DRAIN,
    FIRST_BACKOFF,
    RETRY_GRACE,
    STEP_GRACE,
    TAIL_LINES,
    Follower,
    Forget,
    GiveUp,
    LineCursor,
    PodState,
    Seen,
    ShowInit,
    Step,
    Stop,
    Stream,
    Wait,
    as_map,
    failure_lines,
    job_phase,
    name_of,
    podgroup_said,
    split_timestamp,
    workflow_final,
)
from hera_volcano.pods.kubeapi import (
    JOBS,
    PODGROUPS,
    PODS,
    REFUSED,
    WATCH_BACKOFF_MAX,
    WORKFLOWS,
    ApiError,
    Kind,
    LineStream,
    LogQuery,
    Obj,
    Reporter,
    Store,
    Transport,
    Watcher,
    transient,
)
from hera_volcano.pods.progress import (
    METRIC_PREFIX,
    PROGRESS_PREFIX,
    gather,
)
from hera_volcano.pods.published import PUBLISH_EVERY, Published
from hera_volcano.pods.reports import PREFIX, keep_line

#: The API calls the follower makes, as RBAC names them: (group, resource, verbs). ``hera_volcano.tools.rbac``
#: grants exactly these to the service account a follower runs as.
CALLS = (
    ("", "pods", ("get", "list", "watch")),
    ("", "pods/log", ("get",)),
    ("batch.volcano.sh", "jobs", ("get", "list", "watch", "patch", "delete")),
    ("scheduling.volcano.sh", "podgroups", ("get",)),
)
#: Where the values rank 0 reports go by default, one file per name (the template's outputs read them there).
OUTPUT_DIR = "/tmp/hera-volcano/outputs"
TERMINATION_LOG = "/dev/termination-log"
#: How often the loop looks without a change (seconds): for the clocks (graces, limits, back-offs).
TICK = 1.0


class Printer:
    """Lines to ``out`` (the pod's standard output), each whole and at once, from any thread."""

    def __init__(self, out: TextIO) -> None:
        self._out = out
        self._lock = threading.Lock()

    def __call__(self, line: str) -> None:
        with self._lock:
            self._out.write(line + "\n")
            self._out.flush()


def _named(name: str | None) -> str | None:
    """The field selector of one object by name."""
    return None if name is None else f"metadata.name={name}"


def _why(error: ApiError) -> str:
    return f"the API server refused the watch ({error})" if error.status in REFUSED else str(error)


@dataclass(frozen=True)
class Settings:
    """What the follower is told, and the environment variable of each: the one contract between the template that
    starts it (:func:`hera_volcano.argo.follow_logs.follow_logs_template` writes :meth:`to_env`), this program
    (:meth:`from_env`) and lint, which read the variables by these names and no other spelling."""

    jobs: str
    pods: str
    task: str | None = None
    container: str | None = None
    node: str = ""
    limit: float | None = None
    grace: float = DEFAULT_GRACE
    start_limit: float | None = None
    step_retries: int = 0
    outputs: tuple[str, ...] = ()
    #: Stream nothing: only keep the job's start limit (and its retries), for a job nobody follows.
    quiet: bool = False
    output_dir: str = OUTPUT_DIR
    termination_log: str = TERMINATION_LOG
    drain: float = DRAIN
    step_grace: float = STEP_GRACE
    retry_grace: float = RETRY_GRACE
    backoff_max: float = BACKOFF_MAX
    tick: float = TICK
    #: Where Argo's executor reads the step's own progress (Argo sets ``ARGO_PROGRESS_FILE`` in the pod; empty: none).
    progress_file: str = ""
    publish_every: float = PUBLISH_EVERY

    # The environment variables (after the fields: two of them share a name with a default above).
    JOB_SELECTOR: ClassVar[str] = "JOB_SELECTOR"
    POD_SELECTOR: ClassVar[str] = "POD_SELECTOR"
    TASK: ClassVar[str] = "TASK"
    CONTAINER: ClassVar[str] = "CONTAINER"
    #: The follower's own Argo node: the template sets it from its pod's annotation (a ``fieldRef``).
    NODE_NAME: ClassVar[str] = "NODE_NAME"
    FOLLOW_SECONDS: ClassVar[str] = "FOLLOW_SECONDS"
    GRACE_SECONDS: ClassVar[str] = "GRACE_SECONDS"
    START_SECONDS: ClassVar[str] = "START_SECONDS"
    STEP_RETRIES: ClassVar[str] = "STEP_RETRIES"
    OUTPUTS: ClassVar[str] = "OUTPUTS"
    QUIET: ClassVar[str] = "QUIET"
    OUTPUT_DIR: ClassVar[str] = "OUTPUT_DIR"
    TERMINATION_LOG: ClassVar[str] = "TERMINATION_LOG"
    DRAIN_SECONDS: ClassVar[str] = "DRAIN_SECONDS"
    STEP_GRACE_SECONDS: ClassVar[str] = "STEP_GRACE_SECONDS"
    RETRY_GRACE_SECONDS: ClassVar[str] = "RETRY_GRACE_SECONDS"
    BACKOFF_MAX_SECONDS: ClassVar[str] = "BACKOFF_MAX_SECONDS"
    TICK_SECONDS: ClassVar[str] = "TICK_SECONDS"
    #: Argo's own name: its controller sets it in every container of the pod.
    ARGO_PROGRESS_FILE: ClassVar[str] = "ARGO_PROGRESS_FILE"
    PUBLISH_SECONDS: ClassVar[str] = "PUBLISH_SECONDS"

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Settings:
        def seconds(key: str, default: float) -> float:
            value = float(env.get(key) or 0)
            return value if value > 0 else default

        return cls(
            jobs=env[cls.JOB_SELECTOR],
            pods=env[cls.POD_SELECTOR],
            task=env.get(cls.TASK) or None,
            container=env.get(cls.CONTAINER) or None,
            node=env.get(cls.NODE_NAME) or "",
            limit=seconds(cls.FOLLOW_SECONDS, 0) or None,
            grace=seconds(cls.GRACE_SECONDS, DEFAULT_GRACE),
            start_limit=seconds(cls.START_SECONDS, 0) or None,
            step_retries=int(env.get(cls.STEP_RETRIES) or 0),
            outputs=tuple((env.get(cls.OUTPUTS) or "").split()),
            quiet=env.get(cls.QUIET) == "true",
            output_dir=env.get(cls.OUTPUT_DIR) or OUTPUT_DIR,
            termination_log=env.get(cls.TERMINATION_LOG) or TERMINATION_LOG,
            drain=seconds(cls.DRAIN_SECONDS, DRAIN),
            step_grace=seconds(cls.STEP_GRACE_SECONDS, STEP_GRACE),
            retry_grace=seconds(cls.RETRY_GRACE_SECONDS, RETRY_GRACE),
            backoff_max=seconds(cls.BACKOFF_MAX_SECONDS, BACKOFF_MAX),
            tick=seconds(cls.TICK_SECONDS, TICK),
            progress_file=env.get(cls.ARGO_PROGRESS_FILE) or "",
            publish_every=seconds(cls.PUBLISH_SECONDS, PUBLISH_EVERY),
        )

    def to_env(self) -> dict[str, str]:
        """The environment :meth:`from_env` reads these settings back from (a value may be an Argo expression, as
        ``{{workflow.name}}`` in a selector): the selectors, task, container, limits and retries always (0: none),
        ``OUTPUT_DIR`` with ``OUTPUTS``, the rest where they are not the default; in the order the template lists
        them."""
        env, defaults = self._env(), Settings(self.jobs, self.pods)._env()
        kept = {*_ALWAYS, self.OUTPUT_DIR} if self.outputs else _ALWAYS
        return {name: value for name, value in env.items() if name in kept or value != defaults[name]}

    def _env(self) -> dict[str, str]:
        return {
            self.JOB_SELECTOR: self.jobs,
            self.POD_SELECTOR: self.pods,
            self.TASK: self.task or "",
            self.CONTAINER: self.container or "",
            self.FOLLOW_SECONDS: _seconds(self.limit),
            self.GRACE_SECONDS: _seconds(self.grace),
            self.START_SECONDS: _seconds(self.start_limit),
            self.STEP_RETRIES: str(self.step_retries),
            self.NODE_NAME: self.node,
            self.OUTPUTS: " ".join(self.outputs),
            self.QUIET: "true" if self.quiet else "",
            self.OUTPUT_DIR: self.output_dir,
            self.TERMINATION_LOG: self.termination_log,
            self.DRAIN_SECONDS: _seconds(self.drain),
            self.STEP_GRACE_SECONDS: _seconds(self.step_grace),
            self.RETRY_GRACE_SECONDS: _seconds(self.retry_grace),
            self.BACKOFF_MAX_SECONDS: _seconds(self.backoff_max),
            self.TICK_SECONDS: _seconds(self.tick),
            self.ARGO_PROGRESS_FILE: self.progress_file,
            self.PUBLISH_SECONDS: _seconds(self.publish_every),
        }


#: The variables :meth:`Settings.to_env` always writes.
_ALWAYS = frozenset(
    (
        Settings.JOB_SELECTOR,
        Settings.POD_SELECTOR,
        Settings.TASK,
        Settings.CONTAINER,
        Settings.FOLLOW_SECONDS,
        Settings.GRACE_SECONDS,
        Settings.START_SECONDS,
        Settings.STEP_RETRIES,
    )
)


def _seconds(value: float | None) -> str:
    """Seconds as the environment holds them: whole ones without a point, none as 0."""
    if value is None:
        return "0"
    return str(int(value)) if float(value).is_integer() else str(value)


class _Streaming:
    """One log stream in a thread of its own, relayed line by line."""

    def __init__(self, follow: FollowLogs, step: Stream, cursor: LineCursor) -> None:
        self.started = follow.clock()
        self.failed = False
        self.relayed = False
        self.superseded = False
        self._follow = follow
        self._step = step
        self._cursor = cursor
        self._stream: LineStream | None = None
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="hera-volcano-log", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        since = None
        if self._step.reattach:
            self._cursor.reattach()
            since = self._cursor.since()
        what = f"logs of {self._step.pod}"
        try:
            query = LogQuery(follow=True, timestamps=True, since_time=since)
            stream = self._follow.api.log(self._step.pod, self._step.container, query)
        except ApiError as e:
            self.failed = True
            self._follow.failed(what, e)
            self._follow.changed()
            return
        self._follow.passed()
        try:
            with self._lock:
                self._stream = stream
                if self.superseded:
                    stream.close()
            for line in stream:  # a stream that breaks once the server answered is reattached, never given up
                if self._follow.relay(self._cursor, line):
                    self.relayed = True
        except ApiError as e:
            self.failed = True
            self._follow.report(f"{what}: {e}")
        finally:
            stream.close()
            self._follow.changed()

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def cut(self, timeout: float = 2.0) -> None:
        """End the stream now (a read in progress too)."""
        with self._lock:
            self.superseded = True
            stream = self._stream
        if stream is not None:
            stream.close()
        self._thread.join(timeout)

    def wait(self, timeout: float) -> bool:
        self._thread.join(timeout)
        return not self._thread.is_alive()


def assert_never(step: NoReturn) -> NoReturn:
    """A step :meth:`FollowLogs.take` does not handle: mypy names it (``typing.assert_never`` is 3.11's)."""
    raise AssertionError(f"unhandled step: {step!r}")


class FollowLogs:
    """The follower's loop: watches, the state machine, and what it decides, each line to ``sink``. The pod runs
    it on :class:`~hera_volcano.pods.kubeapi.Api` with ``publish`` (what rank 0 reports of its progress and metrics
    goes to Argo's progress file, the job's :data:`~hera_volcano.pods.progress.PROGRESS_ANNOTATION` and the output
    ``job-metrics``); ``Run.logs`` on the ``kubernetes`` package through ``hera_volcano.client.transport``, with
    ``workflow`` (also stop once that Workflow has finished), ``job_name`` (only the Volcano Job of that name) and
    ``patience`` (seconds that failures which may pass are tried again before following ends on them; None: for
    ever). :attr:`error` is what ended it, if the API server did."""

    def __init__(
        self,
        api: Transport,
        settings: Settings,
        sink: Callable[[str], None] | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        report: Callable[[str], None] | None = None,
        announce: bool = True,
        workflow: str | None = None,
        job_name: str | None = None,
        patience: float | None = None,
        backoff: float = FIRST_BACKOFF,
        retry: tuple[float, float] = (1.0, WATCH_BACKOFF_MAX),
        publish: bool = False,
    ) -> None:
        self.api = api
        self.settings = settings
        self.clock = clock
        self.report = report or Reporter()
        self.error: ApiError | None = None
        self._sink = sink or Printer(sys.stdout)
        self._announce = announce
        self._workflow = workflow
        self._patience = patience
        self._failing: float | None = None
        self._closed = threading.Event()
        self._store = Store(("jobs", "pods", "workflow") if workflow else ("jobs", "pods"))
        self._values: dict[str, str] = {}
        #: Names whose report line the rules refused, each with the rule: no later line of the job undoes it.
        self._refused: dict[str, str] = {}
        self._cursors: dict[tuple[str, str], LineCursor] = {}
        self._published = Published(self, publish)
        self._streaming: _Streaming | None = None
        self._refresh: str | None = None
        self._fresh: tuple[Obj, Obj] | None = None
        self.follower = Follower(
            settings.jobs,
            task=settings.task,
            container=settings.container,
            node=settings.node,
            grace=settings.grace,
            step_grace=settings.step_grace,
            retry_grace=settings.retry_grace,
            start_limit=settings.start_limit,
            step_retries=settings.step_retries,
            quiet=settings.quiet,
            backoff=backoff,
            backoff_max=settings.backoff_max,
        )

        def watcher(kind: Kind, selector: str, key: str, name: str | None = None) -> Watcher:
            store = self._store.sink(key)
            return Watcher(
                api, kind, selector, store, fields=_named(name), report=self.report, patience=patience,
                backoff=retry[0], backoff_max=retry[1],
            )  # fmt: skip

        self._watchers = [watcher(JOBS, settings.jobs, "jobs", job_name), watcher(PODS, settings.pods, "pods")]
        if workflow:
            self._watchers.append(watcher(WORKFLOWS, "", "workflow", workflow))

    # ------------------------------------------------------------------------------------------------ output

    def say(self, line: str) -> None:
        self._sink(line)

    def relay(self, cursor: LineCursor, line: str) -> bool:
        """Show a log line unless an earlier stream of the same run showed it; keep a report line's value."""
        text = cursor.accept(line)
        if text is None:
            return False
        self.say(text)
        self.read(text)
        return True

    def read(self, text: str, again: bool = False) -> None:
        """Keep what a marker line of rank 0 says: a report's value, the progress, a metric (``again``: a line read
        once more, whose refusal was said already)."""
        if text.startswith(PREFIX):
            self.keep(text)
        elif text.startswith(PROGRESS_PREFIX) or text.startswith(METRIC_PREFIX):
            self._published.read(text, quiet=again)

    def keep(self, text: str) -> None:
        """Keep a report line's value by the one rule (:func:`hera_volcano.pods.reports.keep_line`)."""
        keep_line(text, self._values, self._refused)

    def changed(self) -> None:
        self._store.changed.set()

    def failed(self, what: str, error: ApiError) -> None:
        """A log could not be read. Gone (404) or not readable yet (400): the next look decides. Refused, or failing
        in a way that may pass for longer than the patience: following ends on it."""
        self.report(f"{what}: {error}")
        if error.status in (400, 404):
            return
        now = self.clock()
        self._failing = now if self._failing is None else self._failing
        outlasted = self._patience is not None and now - self._failing > self._patience
        if not transient(error) or outlasted:
            self.error = self.error or error
            self.changed()

    def passed(self) -> None:
        """A log request got through: the next failure starts a new run of them."""
        self._failing = None

    # -------------------------------------------------------------------------------------------------- run

    def run(self) -> int:
        """Follow until a :class:`Stop` (or :meth:`close`); the exit status."""
        if self._announce:
            self.say(f"Following {self.settings.task or 'the leading task'} of the job labelled {self.settings.jobs}")
        started = self.clock()
        for watcher in self._watchers:
            watcher.start()
        try:
            while not self._closed.is_set():
                self._store.changed.wait(self.settings.tick)
                self._store.changed.clear()
                if self._closed.is_set():
                    break
                code = self._look(self.clock() - started)
                if code is not None:
                    return code
                self._published.publish(self.clock())
            return 0
        finally:
            self.close()

    def _look(self, elapsed: float) -> int | None:
        """One look at what the watches hold, and the steps it gives taken; an exit status once following ends."""
        error = self.error or next((w.refused for w in self._watchers if w.refused is not None), None)
        if error is not None:
            self.error = error
            return self._finish(Stop(f"Stopped following: {_why(error)}"))
        limit = self.settings.limit
        if limit is not None and elapsed >= limit:
            return self._finish(Stop(f"Stopped following after {limit:g} s", self.follower.never_started()))
        if not self._store.ready and (elapsed < self.settings.grace or self._workflow):
            return None  # what is absent now may only not be listed yet
        self._reap(elapsed)
        seen = Seen(
            self._store.objects("jobs"),
            self._pods(),
            elapsed,
            self._store.deleted("jobs"),
            self._store.deleted("pods"),
            self._workflow_phase(),
        )
        if self.error is not None:
            return self._look(elapsed)
        for step in self.follower.next(seen):
            code = self.take(step)
            if code is not None:
                return code
        return None

    def take(self, step: Step) -> int | None:
        """Carry out one step; an exit status when it ends following."""
        match step:
            case Forget():
                self._values.clear()
                self._refused.clear()
                self._published.forget()
            case ShowInit():
                self._show_init(step)
            case Stream():
                self._stream(step)
            case GiveUp():
                return self._give_up(step)
            case Stop():
                return self._finish(step)
            case Wait():
                pass
            case _:
                assert_never(step)
        return None

    def _workflow_phase(self) -> str | None:
        """The Workflow's final phase once it has finished (None while it runs, or when none is followed)."""
        if not self._workflow:
            return None
        found = self._store.objects("workflow")
        if not found:
            self.error = ApiError(404, "NotFound", f"workflows.argoproj.io {self._workflow} (deleted?) not found")
            return None
        return workflow_final(found[0])

    def _pods(self) -> list[Obj]:
        """The pods watched, the one whose stream has just ended as the API server has it now, until the watch brings
        a change of it: the watch may not have brought its restart yet, and reattaching to the run that ended would
        show the new run's lines twice."""
        pods = self._store.objects("pods")
        name, self._refresh = self._refresh, None
        old = next((p for p in pods if name_of(p) == name), None)
        if old is not None:
            try:
                fresh = self.api.get(PODS, name_of(old))
            except ApiError:
                fresh = None  # gone, or the server busy: the watch will tell
            if fresh is not None and as_map(fresh.get("metadata")).get("uid") == as_map(old.get("metadata")).get("uid"):
                self._fresh = (old, fresh)
        if self._fresh is not None and not any(p is self._fresh[0] for p in pods):
            self._fresh = None  # the watch brought a change of it
        if self._fresh is None:
            return pods
        stale, fresh = self._fresh
        return [fresh if p is stale else p for p in pods]

    def close(self) -> None:
        """Stop following (from any thread): the stream in progress is cut, the watches end."""
        self._closed.set()
        self.changed()
        if self._streaming is not None:
            self._streaming.cut(0.5)
        for watcher in self._watchers:
            watcher.stop(0.5)

    def _reap(self, elapsed: float) -> None:
        """Tell the state machine about a stream that has ended."""
        streaming = self._streaming
        if streaming is not None and not streaming.running:
            self._streaming = None
            self._refresh = self.follower.seen_pod.name if self.follower.seen_pod is not None else None
            lasted = self.clock() - streaming.started
            self.follower.stream_ended(elapsed, lasted, failed=streaming.failed, relayed=streaming.relayed)

    def _stream(self, step: Stream) -> None:
        if self._streaming is not None:  # a new run replaces the one streamed
            self._streaming.cut()
            self._streaming = None
        self.say(step.header)
        run = self.follower.streamed or (step.pod, "")
        self._streaming = _Streaming(self, step, self._cursors.setdefault(run, LineCursor()))

    def _lines(self, pod: str, container: str, query: LogQuery, quiet: bool = False) -> list[str] | None:
        """A container's log read at once (not followed), or None when it cannot be read (said unless ``quiet``)."""
        return read_log(self.api, pod, container, query, None if quiet else self.report)

    def _show_init(self, step: ShowInit) -> None:
        """An init container that failed (say, the master's wait for its workers gave up) is restarted by the
        kubelet: show why, once per failure, while the pod and the log of that attempt still exist."""
        self.say(step.header)
        # The kubelet may have no previous run yet (400): said only when neither log can be read.
        first = self._lines(step.pod, step.container, LogQuery(False, step.previous, True, tail=TAIL_LINES), True)
        again = LogQuery(previous=not step.previous, timestamps=True, tail=TAIL_LINES)
        other = self._lines(step.pod, step.container, again, first is not None)
        for line in failure_lines(step.window, first, other):
            self.say(line)

    def _give_up(self, step: GiveUp) -> int | None:
        """The start limit passed: unless the job, read once more, has started, say why, delete it (its step fails,
        its gang frees what it holds); fail, unless Argo retries the step. None: go on following."""
        said = None
        if step.job is not None:
            if self._has_started(step.job):
                self.follower.started(step.job)
                return None
            try:
                said = podgroup_said(self.api.get(PODGROUPS, f"{step.job}-{step.uid}"))
            except ApiError as e:
                self.report(f"podgroup of {step.job}: {e}")
            try:
                self.api.delete(JOBS, step.job)
            except ApiError as e:
                self.report(f"delete job {step.job}: {e}")
        message = step.message(said)
        if step.retried:
            self.say(f"{message}; the step's next attempt creates another")
            return None
        try:
            with open(self.settings.termination_log, "w", encoding="utf-8") as f:
                f.write(message + "\n")  # Argo shows it as the task's message
        except OSError:
            pass
        return self._finish(Stop(message, self.follower.never_started(), failed=True))

    def _has_started(self, job: str) -> bool:
        """The job's phase read once more before it is deleted: the watch can lag behind it, still saying Pending
        for a job that has just started, and a job that has started is never deleted (unreadable: not started)."""
        try:
            phase = job_phase(self.api.get(JOBS, job))
        except ApiError as e:
            self.report(f"job {job}: {e}")
            return False
        return phase not in ("", "Pending")

    def _finish(self, stop: Stop) -> int:
        """Stop (a stream gets the drain to end by itself), read again what a failed stream may have missed, say
        why, show the logs of a container that never started, and give the values rank 0 reported."""
        streaming = self._streaming
        if streaming is not None:
            ended = streaming.wait(self.settings.drain)
            if not ended:
                streaming.cut()
            self._streaming = None
            lasted = self.clock() - streaming.started
            failed = streaming.failed or not ended
            self.follower.stream_ended(0.0, lasted, failed=failed, relayed=streaming.relayed)
        pod = self.follower.seen_pod
        if self.follower.needs_reread() and pod is not None and self.follower.streamed is not None:
            cursor = self._cursors.setdefault(self.follower.streamed, LineCursor())
            cursor.reattach()
            for line in (
                self._lines(pod.name, self.follower.followed, LogQuery(timestamps=True, since_time=cursor.since()))
                or []
            ):
                self.relay(cursor, line)
        self.say(stop.message)
        if stop.never_started is not None:
            self._never_started(stop.never_started)
        code = self._verdict(stop, pod)
        self._published.publish(self.clock(), final=True)  # after the whole log's read again, if it was
        return code

    def _verdict(self, stop: Stop, pod: PodState | None) -> int:
        """The exit status: the values rank 0 reported once the job Completed; 1 when the step failed or has values
        to give and the job did not complete."""
        if stop.phase == "Completed":
            return self._collect(pod)
        if stop.failed:
            return 1
        if self.settings.outputs:
            self.say(f"No values for: {' '.join(self.settings.outputs)} (the job did not complete)")
            return 1
        return 0

    def _never_started(self, pod: PodState) -> None:
        self.say(f"=== {self.follower.followed} never started in {pod.name}")
        for line in tails(self.api, pod):
            self.say(line)

    def _collect(self, pod: PodState | None) -> int:
        """The values rank 0 reported, if ``OUTPUTS`` names any: those the streams missed are looked for once more
        in the whole log of the last pod seen."""
        if not self.settings.outputs:
            return 0
        missing = [name for name in self.settings.outputs if name not in self._values]
        if any(name not in self._published.metrics for name in missing) and pod is not None:
            for line in self._lines(pod.name, self.follower.followed, LogQuery(timestamps=True)) or []:
                self.read(split_timestamp(line)[1], again=True)
        got = gather(self._values, self._refused, self._published.metrics, self.settings.outputs)
        if got.values:
            os.makedirs(self.settings.output_dir, exist_ok=True)
            for name, value in got.values.items():
                with open(os.path.join(self.settings.output_dir, name), "w", encoding="utf-8") as f:
                    f.write(value)
        for why in got.refused.values():
            self.say(f"The job's rank 0 reported a value that is refused, {why}")
        if got.missing:
            self.say(
                f"The job's rank 0 reported no value for: {' '.join(got.missing)} (a line '{PREFIX}NAME=VALUE' on its"
                f" output, which a function's returned dict prints, or a metric '{METRIC_PREFIX}NAME=NUMBER')"
            )
        return 1 if got.missing or got.refused else 0


def read_log(
    api: Transport, pod: str, container: str, query: LogQuery, report: Callable[[str], None] | None
) -> list[str] | None:
    """A container's log read at once (not followed), or None when it cannot be read (said to ``report``)."""
    try:
        with api.log(pod, container, query) as stream:
            return list(stream)
    except ApiError as e:
        if report is not None:
            report(f"logs of {pod}/{container}: {e}")
        return None


def tails(api: Transport, pod: PodState) -> list[str]:
    """The last lines of each of a pod's containers, each line after the container it is from."""
    return [
        f"[pod/{pod.name}/{container}] {line}"
        for container in pod.containers
        for line in read_log(api, pod.name, container, LogQuery(tail=TAIL_LINES), None) or []
    ]
