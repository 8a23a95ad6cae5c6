"""What rank 0 reports of its progress and metrics, put where Argo and ``hera-volcano status`` read them: Argo's
progress file on the follower's node, the Volcano Job's annotation, and the output ``job-metrics`` at the end. The
log follower (:mod:`hera_volcano.pods.run`) feeds it the lines it reads and asks it to publish on its loop."""

from __future__ import annotations

import json
import os
import threading
from typing import Protocol

from hera_volcano.pods.follow import Follower
from hera_volcano.pods.kubeapi import JOBS, REFUSED, ApiError, Transport
from hera_volcano.pods.progress import (
    PROGRESS_ANNOTATION,
    Number,
    Progress,
    ProgressError,
    annotation_text,
    parse_metric,
    parse_progress,
)
from hera_volcano.pods.reports import METRICS_OUTPUT

#: The fewest seconds between two patches of the job's progress annotation (and one more at the end).
PUBLISH_EVERY = 5.0
#: Refused progress and metric lines said, at most (then no more: the job's own output shows the rest).
REFUSALS_SAID = 10


class Where(Protocol):
    """Where the follower's settings say progress goes."""

    @property
    def progress_file(self) -> str: ...

    @property
    def publish_every(self) -> float: ...

    @property
    def output_dir(self) -> str: ...


class Host(Protocol):
    """What of the log follower publishing needs: its settings, the job it follows, the API, and its voice."""

    @property
    def settings(self) -> Where: ...

    @property
    def follower(self) -> Follower: ...

    @property
    def api(self) -> Transport: ...

    def say(self, line: str) -> None: ...

    def report(self, line: str) -> None: ...

    def changed(self) -> None: ...


class Published:
    """What rank 0 reported of its progress and metrics (read from the stream's thread), and where the follower in
    the pod puts it (from the loop's thread, when ``enabled``): Argo's progress file at once, so that Argo shows it
    on the follower's node (its executor sends it on its own tick); the job's annotation at most every
    ``publish_every`` seconds, and once more at the end, for ``hera-volcano status``; the last metrics as the output
    ``job-metrics``. Once rank 0 has printed a progress line, the job shows the metrics as the last progress line
    found them (the helper prints a step's metrics before its progress line), never one step's progress with some
    of the next step's metrics; the output has the last of each. A refused line is said (up to
    :data:`REFUSALS_SAID` of them) and changes nothing."""

    def __init__(self, follow: Host, enabled: bool) -> None:
        self._follow = follow
        self._enabled = enabled
        self._lock = threading.Lock()
        self.progress: Progress | None = None
        self.metrics: dict[str, Number] = {}
        self._at_progress: dict[str, Number] = {}  # the metrics as the last progress line found them
        self._refusals = 0
        self._filed: Progress | None = None
        self._patched: tuple[str, str] | None = None  # (job, annotation) last put on a job
        self._patched_at: float | None = None
        self._file_failed = False
        self._patch_refused = False

    def read(self, text: str, quiet: bool = False) -> None:
        try:
            done = parse_progress(text)
            metric = None if done is not None else parse_metric(text)
        except ProgressError as e:
            with self._lock:
                self._refusals += not quiet
                said = not quiet and self._refusals <= REFUSALS_SAID
            if said:
                self._follow.say(f"hera-volcano: {e} (the line is ignored)")
            return
        with self._lock:
            if done is not None:
                self.progress, self._at_progress = done, dict(self.metrics)
            if metric is not None:
                self.metrics[metric[0]] = metric[1]
        if self._enabled:
            self._follow.changed()  # the loop puts it where Argo reads it now, not at its next tick

    def forget(self) -> None:
        """The next attempt's job replaces the one followed: its progress and metrics start afresh."""
        with self._lock:
            self.progress, self.metrics, self._at_progress = None, {}, {}
            self._patched_at = None

    def publish(self, now: float, final: bool = False) -> None:
        """Put the latest progress where Argo reads it and, when due (or ``final``), on the job; at the end, the
        metrics as the output ``job-metrics``."""
        if not self._enabled:
            return
        with self._lock:
            # Until the end, what the last progress line closed (once there was one): never a step's progress with
            # some of the next step's metrics.
            shown = self.metrics if final or self.progress is None else self._at_progress
            done, metrics = self.progress, dict(shown)
        settings = self._follow.settings
        if done is not None and done != self._filed and settings.progress_file and not self._file_failed:
            self._write_progress(settings.progress_file, done)
        job = self._follow.follower.job or self._follow.follower.seen_job
        due = final or self._patched_at is None or now - self._patched_at >= settings.publish_every
        if job is not None and (done is not None or metrics) and due and not self._patch_refused:
            self._patch(job, annotation_text(done, metrics), now)
        if final:
            self._write(os.path.join(settings.output_dir, METRICS_OUTPUT), json.dumps(metrics, separators=(",", ":")))

    def _write_progress(self, path: str, done: Progress) -> None:
        """Argo's executor reads the file's last line, on a poll (3.7) or on inotify's create and write (4.1): the
        file is replaced whole, never seen half written."""
        if self._write(path, f"{done}\n"):
            self._filed = done
        else:
            self._file_failed = True

    def _write(self, path: str, text: str) -> bool:
        try:
            os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
            with open(path + ".part", "w", encoding="utf-8") as f:
                f.write(text)
            os.replace(path + ".part", path)
            return True
        except OSError as e:
            self._follow.say(f"hera-volcano: cannot write {path}: {e}")
            return False

    def _patch(self, job: str, text: str, now: float) -> None:
        if self._patched == (job, text):
            return
        try:
            self._follow.api.patch(JOBS, job, {"metadata": {"annotations": {PROGRESS_ANNOTATION: text}}})
        except ApiError as e:
            if e.status in REFUSED:
                self._patch_refused = True
                self._follow.say(f"hera-volcano: the progress is not put on job {job}: {e}")
            elif e.status != 404:
                self._follow.report(f"progress of job {job}: {e}")
            return
        self._patched, self._patched_at = (job, text), now
