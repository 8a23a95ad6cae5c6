"""What :meth:`Run.wait` shows while it waits: a line for the workflow and one per Volcano Job, redrawn in place on a
terminal, printed again only when it changed otherwise (a log file or CI output should not fill up with repeats)."""

from __future__ import annotations

from hera_volcano.client.result import JobStatus, Result

#: Back to the start of the line and clear it; ``_UP`` moves the cursor up N lines (ECMA-48, every terminal).
_CLEAR = "\r\x1b[2K"
_UP = "\x1b[{}A"


def workflow_line(result: Result) -> str:
    running = [s.name for s in result.steps.values() if s.phase in ("Pending", "Running")]
    doing = f" ({', '.join(running)})" if running and not result.finished else ""
    message = f": {result.message}" if result.message and result.finished else ""
    return f"{result.name}: {result.phase}{doing}{message}"


def job_line(job: JobStatus) -> str:
    label = f" ({job.label})" if job.label else ""
    counts = [f"{job.running} running", f"{job.pending} pending"]
    counts += [f"{n} {what}" for n, what in ((job.succeeded, "succeeded"), (job.failed, "failed")) if n]
    gone = " (deleted)" if job.deleted else ""
    return f"  job {job.name}{label}: {job.phase}, pods {', '.join(counts)}{gone}{reported(job)}"


def reported(job: JobStatus) -> str:
    """What rank 0 reported of the job's progress and its latest metrics: ``; progress 12/100, loss 0.25``."""
    said = ([f"progress {job.progress}"] if job.progress else []) + [f"{k} {v}" for k, v in job.metrics.items()]
    return f"; {', '.join(said)}" if said else ""


def lines(result: Result) -> list[tuple[str, str]]:
    """(key, text) of each line: the workflow's, then each job's."""
    return [("workflow", workflow_line(result)), *((f"job/{j.name}", job_line(j)) for j in result.jobs)]


class ProgressView:
    """Turns each new :class:`Result` into the text to write (nothing when nothing changed). On a terminal
    (``tty``) it redraws its lines in place, each cut to ``width`` so none wraps; elsewhere it writes the lines that
    changed."""

    def __init__(self, *, tty: bool, width: int = 120) -> None:
        self._tty = tty
        self._width = max(width - 1, 20)
        self._shown: dict[str, str] = {}
        self._drawn: list[str] = []

    def update(self, result: Result) -> str:
        current = lines(result)
        if self._tty:
            texts = [text[: self._width] for _, text in current]
            if texts == self._drawn:
                return ""
            up = _UP.format(len(self._drawn)) if self._drawn else ""
            self._drawn = texts
            return up + "".join(f"{_CLEAR}{text}\n" for text in texts)
        changed = [text for key, text in current if self._shown.get(key) != text]
        self._shown.update(current)
        return "".join(f"{text}\n" for text in changed)
