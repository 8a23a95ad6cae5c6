"""The log follower as it runs in a pod, beside the step that creates a Volcano Job: it streams the output of the job's
lead task into the workflow's logs, keeps the values rank 0 reports (``hera-volcano:output NAME=VALUE``), and ends
within ``DRAIN`` seconds of the job's end (:mod:`hera_volcano.pods.follow` decides; this runs the decisions).

It waits on two watches (the jobs, and the pods of the jobs and of their steps), never by polling, so a gang that
waits hours to be scheduled costs no requests. Without ``OUTPUTS`` it exits 0 (a log follower must not fail a
workflow) unless the start limit ended the job; with ``OUTPUTS`` it exits 1 unless the job Completed and rank 0
reported every one of them, writing each to ``OUTPUT_DIR``. :mod:`hera_volcano.pods.entry` starts it.

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
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TextIO

from hera_volcano.pods.follow import (
    DEFAULT_GRACE,
    DRAIN,
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
    Stop,
    Stream,
    failure_lines,
    job_phase,
    name_of,
    podgroup_said,
    split_timestamp,
)
from hera_volcano.pods.kubeapi import JOBS, PODGROUPS, PODS, Api, ApiError, Reporter, Watcher
from hera_volcano.pods.reports import PREFIX, parse_line

#: The API calls the follower makes, as RBAC names them: (group, resource, verbs). ``hera_volcano.tools.rbac``
#: grants exactly these to the service account a follower runs as.
CALLS = (
    ("", "pods", ("get", "list", "watch")),
    ("", "pods/log", ("get",)),
    ("batch.volcano.sh", "jobs", ("get", "list", "watch", "delete")),
    ("scheduling.volcano.sh", "podgroups", ("get",)),
)
#: Where the values rank 0 reports go by default, one file per name (the template's outputs read them there).
OUTPUT_DIR = "/tmp/hera-volcano/outputs"
TERMINATION_LOG = "/dev/termination-log"
#: How often the loop looks without a change (seconds): for the clocks (graces, limits, back-offs).
TICK = 1.0


@dataclass(frozen=True)
class Settings:
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
    output_dir: str = OUTPUT_DIR
    termination_log: str = TERMINATION_LOG
    drain: float = DRAIN
    step_grace: float = STEP_GRACE
    retry_grace: float = RETRY_GRACE
    backoff_max: float = 30.0
    tick: float = TICK

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Settings:
        def seconds(key: str, default: float | None) -> float | None:
            value = float(env.get(key) or 0)
            return value if value > 0 else default

        return cls(
            jobs=env["JOB_SELECTOR"],
            pods=env["POD_SELECTOR"],
            task=env.get("TASK") or None,
            container=env.get("CONTAINER") or None,
            node=env.get("NODE_NAME") or "",
            limit=seconds("FOLLOW_SECONDS", None),
            grace=seconds("GRACE_SECONDS", DEFAULT_GRACE) or DEFAULT_GRACE,
            start_limit=seconds("START_SECONDS", None),
            step_retries=int(env.get("STEP_RETRIES") or 0),
            outputs=tuple((env.get("OUTPUTS") or "").split()),
            output_dir=env.get("OUTPUT_DIR") or OUTPUT_DIR,
            termination_log=env.get("TERMINATION_LOG") or TERMINATION_LOG,
            drain=seconds("DRAIN_SECONDS", DRAIN) or DRAIN,
            step_grace=seconds("STEP_GRACE_SECONDS", STEP_GRACE) or STEP_GRACE,
            retry_grace=seconds("RETRY_GRACE_SECONDS", RETRY_GRACE) or RETRY_GRACE,
            backoff_max=seconds("BACKOFF_MAX_SECONDS", 30.0) or 30.0,
            tick=seconds("TICK_SECONDS", TICK) or TICK,
        )


class Store:
    """The objects of each watched collection by name, and those deleted since following began, as the watchers
    hand them over; :attr:`changed` is set at each change."""

    def __init__(self, keys: Iterable[str]) -> None:
        self._objects: dict[str, dict[str, dict[str, Any]]] = {key: {} for key in keys}
        self._deleted: dict[str, dict[str, dict[str, Any]]] = {key: {} for key in self._objects}
        self._listed: set[str] = set()
        self._lock = threading.Lock()
        self.changed = threading.Event()

    def sink(self, key: str) -> Callable[[str, Any], None]:
        def change(kind: str, obj: Any) -> None:
            with self._lock:
                current, deleted = self._objects[key], self._deleted[key]
                if kind == "REFUSED":
                    pass  # the watcher keeps it; run() ends on it
                elif kind == "LIST":
                    fresh = {name_of(o): o for o in obj}
                    deleted.update({n: o for n, o in current.items() if n not in fresh})
                    self._objects[key] = fresh
                    self._listed.add(key)
                elif kind == "DELETED":
                    current.pop(name_of(obj), None)
                    deleted[name_of(obj)] = obj
                else:
                    current[name_of(obj)] = obj
                    deleted.pop(name_of(obj), None)
            self.changed.set()

        return change

    @property
    def ready(self) -> bool:
        with self._lock:
            return self._listed == set(self._objects)

    def objects(self, key: str) -> list[dict[str, Any]]:
        with self._lock:
            return list(self._objects[key].values())

    def deleted(self, key: str) -> list[dict[str, Any]]:
        with self._lock:
            return list(self._deleted[key].values())


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
        self._stream: Any = None
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="log", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        since = None
        if self._step.reattach:
            self._cursor.reattach()
            since = self._cursor.since()
        try:
            stream = self._follow.api.log(
                self._step.pod, self._step.container, follow=True, timestamps=True, since_time=since
            )
            with self._lock:
                self._stream = stream
                if self.superseded:
                    stream.close()
            for line in stream:
                if self._follow.relay(self._cursor, line):
                    self.relayed = True
        except ApiError as e:
            self.failed = True
            self._follow.report(f"logs of {self._step.pod}: {e}")
        finally:
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


class FollowLogs:
    """The follower's run: watches, the state machine, and what it decides, printed to ``out``."""

    def __init__(
        self,
        api: Api,
        settings: Settings,
        out: TextIO = sys.stdout,
        *,
        clock: Callable[[], float] = time.monotonic,
        report: Callable[[str], None] | None = None,
    ) -> None:
        self.api = api
        self.settings = settings
        self.clock = clock
        self.report = report or Reporter()
        self._out = out
        self._print_lock = threading.Lock()
        self._store = Store(("jobs", "pods"))
        self._values: dict[str, str] = {}
        self._cursors: dict[tuple[str, str], LineCursor] = {}
        self._streaming: _Streaming | None = None
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
            backoff_max=settings.backoff_max,
        )
        self._watchers = [
            Watcher(api, JOBS, settings.jobs, self._store.sink("jobs"), report=self.report),
            Watcher(api, PODS, settings.pods, self._store.sink("pods"), report=self.report),
        ]

    # ------------------------------------------------------------------------------------------------ output

    def say(self, line: str) -> None:
        with self._print_lock:
            self._out.write(line + "\n")
            self._out.flush()

    def relay(self, cursor: LineCursor, line: str) -> bool:
        """Show a log line unless an earlier stream of the same run showed it; keep a report line's value."""
        text = cursor.accept(line)
        if text is None:
            return False
        self.say(text)
        if text.startswith(PREFIX):
            parsed = parse_line(text)
            if parsed is not None:
                self._values[parsed[0]] = parsed[1]
        return True

    def changed(self) -> None:
        self._store.changed.set()

    # -------------------------------------------------------------------------------------------------- run

    def run(self) -> int:
        """Follow until a :class:`Stop`; the exit status."""
        self.say(f"Following {self.settings.task or 'the leading task'} of the job labelled {self.settings.jobs}")
        started = self.clock()
        for watcher in self._watchers:
            watcher.start()
        try:
            while True:
                self._store.changed.wait(self.settings.tick)
                self._store.changed.clear()
                refused = next((w.refused for w in self._watchers if w.refused is not None), None)
                if refused is not None:
                    return self._finish(Stop(f"Stopped following: the API server refused the watch ({refused})"))
                elapsed = self.clock() - started
                limit = self.settings.limit
                if limit is not None and elapsed >= limit:
                    return self._finish(Stop(f"Stopped following after {limit:g} s", self.follower.never_started()))
                if not self._store.ready and elapsed < self.settings.grace:
                    continue  # what is absent now may only not be listed yet
                self._reap(elapsed)
                seen = Seen(
                    self._store.objects("jobs"),
                    self._store.objects("pods"),
                    elapsed,
                    self._store.deleted("jobs"),
                    self._store.deleted("pods"),
                )
                for step in self.follower.next(seen):
                    if isinstance(step, Forget):
                        self._values.clear()
                    elif isinstance(step, ShowInit):
                        self._show_init(step)
                    elif isinstance(step, Stream):
                        self._stream(step)
                    elif isinstance(step, GiveUp):
                        code = self._give_up(step)
                        if code is not None:
                            return code
                    elif isinstance(step, Stop):
                        return self._finish(step)
        finally:
            self.close()

    def close(self) -> None:
        if self._streaming is not None:
            self._streaming.cut(0.5)
        for watcher in self._watchers:
            watcher.stop(0.5)

    def _reap(self, elapsed: float) -> None:
        """Tell the state machine about a stream that has ended."""
        streaming = self._streaming
        if streaming is not None and not streaming.running:
            self._streaming = None
            lasted = self.clock() - streaming.started
            self.follower.stream_ended(elapsed, lasted, failed=streaming.failed, relayed=streaming.relayed)

    def _stream(self, step: Stream) -> None:
        if self._streaming is not None:  # a new run replaces the one streamed
            self._streaming.cut()
            self._streaming = None
        self.say(step.header)
        run = self.follower.streamed or (step.pod, "")
        self._streaming = _Streaming(self, step, self._cursors.setdefault(run, LineCursor()))

    def _lines(self, pod: str, container: str, quiet: bool = False, **options: Any) -> list[str] | None:
        """A container's log read at once (not followed), or None when it cannot be read (said unless ``quiet``)."""
        try:
            with self.api.log(pod, container, **options) as stream:
                return list(stream)
        except ApiError as e:
            if not quiet:
                self.report(f"logs of {pod}/{container}: {e}")
            return None

    def _show_init(self, step: ShowInit) -> None:
        """An init container that failed (say, the master's wait for its workers gave up) is restarted by the
        kubelet: show why, once per failure, while the pod and the log of that attempt still exist."""
        self.say(step.header)
        # The kubelet may have no previous run yet (400): said only when neither log can be read.
        first = self._lines(step.pod, step.container, True, previous=step.previous, timestamps=True, tail=TAIL_LINES)
        other = self._lines(
            step.pod, step.container, first is not None, previous=not step.previous, timestamps=True, tail=TAIL_LINES
        )
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
            for line in self._lines(pod.name, self.follower.followed, timestamps=True, since_time=cursor.since()) or []:
                self.relay(cursor, line)
        self.say(stop.message)
        if stop.never_started is not None:
            self._never_started(stop.never_started)
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
        for container in pod.containers:
            for line in self._lines(pod.name, container, tail=TAIL_LINES) or []:
                self.say(f"[pod/{pod.name}/{container}] {line}")

    def _collect(self, pod: PodState | None) -> int:
        """The values rank 0 reported, if ``OUTPUTS`` names any: those the streams missed are looked for once more
        in the whole log of the last pod seen."""
        missing = [name for name in self.settings.outputs if name not in self._values]
        if missing and pod is not None:
            for line in self._lines(pod.name, self.follower.followed, timestamps=True) or []:
                parsed = parse_line(split_timestamp(line)[1])
                if parsed is not None:
                    self._values[parsed[0]] = parsed[1]
            missing = [name for name in self.settings.outputs if name not in self._values]
        if self._values:
            os.makedirs(self.settings.output_dir, exist_ok=True)
            for name, value in self._values.items():
                with open(os.path.join(self.settings.output_dir, name), "w", encoding="utf-8") as f:
                    f.write(value)
        if missing:
            self.say(
                f"The job's rank 0 reported no value for: {' '.join(missing)} (a line '{PREFIX}NAME=VALUE' on its"
                " output, which a function's returned dict prints)"
            )
            return 1
        return 0
