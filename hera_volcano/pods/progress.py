"""The progress and metric lines of a job's rank 0, written and read by the same rules: ``hera-volcano:progress
DONE/TOTAL`` (how far the job has got, as Argo counts a step's progress) and ``hera-volcano:metric NAME=VALUE`` (a
number: a loss, an accuracy). Any program prints them on its standard output, as report lines
(:mod:`hera_volcano.pods.reports`); a function calls :func:`progress`, which prints them on global rank 0 only.

The log follower reads them from the job's leading task (:mod:`hera_volcano.pods.run`): it writes the progress
where Argo's executor reads a step's own progress, puts the latest progress and metrics on the Volcano Job
(:data:`PROGRESS_ANNOTATION`, read by ``hera-volcano status``), and gives the last metrics as the output
``job-metrics``. A line that starts with either prefix and breaks its rule is refused whole (:class:`ProgressError`):
no part of it is read, so a line the job forged (a tag for Argo, a quote, a word) never reaches Argo or the Job.
"""

from __future__ import annotations

import json
import math
import numbers
import re
from collections.abc import Mapping
from dataclasses import dataclass

from hera_volcano.pods.ranks import RankError, own_rank
from hera_volcano.pods.reports import NAME, RESERVED, write_lines

#: What starts a progress line and a metric line (at the very start of the line).
PROGRESS_PREFIX = "hera-volcano:progress "
METRIC_PREFIX = "hera-volcano:metric "
#: A count as Argo reads one (a 64-bit integer): decimal digits, no sign, no leading zero, at most 18 of them.
_COUNT = r"0|[1-9][0-9]{0,17}"
PROGRESS_TEXT = re.compile(rf"({_COUNT})/({_COUNT})")
#: A metric's value: a JSON number, at most NUMBER_MAX characters.
METRIC_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
NUMBER_MAX = 32
#: The Volcano Job's annotation that holds the latest progress and metrics its follower read, as JSON:
#: ``{"progress": "DONE/TOTAL", "metrics": {"NAME": NUMBER, ...}}``.
PROGRESS_ANNOTATION = "hera-volcano/progress"
#: A metric's value.
Number = int | float


class ProgressError(ValueError):
    """A progress or metric that cannot be printed, or a line that breaks the rules: one line for the log."""


@dataclass(frozen=True)
class Progress:
    """How far a job has got: ``done`` of ``total`` (Argo's rule: 0 <= done <= total, total > 0)."""

    done: int
    total: int

    def __str__(self) -> str:
        return str(self.done) + "/" + str(self.total)


def _whole(what: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ProgressError("progress: " + what + " must be a whole number, not " + repr(value))
    return int(value)


def checked_progress(done: object, total: object) -> Progress:
    """``done`` of ``total`` by Argo's rule (ProgressError says which part breaks it)."""
    found = Progress(_whole("done", done), _whole("total", total))
    if found.total <= 0:
        raise ProgressError("progress: total must be at least 1, not " + str(found.total))
    if not 0 <= found.done <= found.total:
        raise ProgressError(
            "progress: done must be between 0 and the total " + str(found.total) + ", not " + str(found.done)
        )
    if len(str(found.total)) > 18:
        raise ProgressError("progress: total must have at most 18 digits (Argo reads a 64-bit integer)")
    return found


def format_progress(done: object, total: object) -> str:
    """The progress line of ``done`` of ``total``, which :func:`parse_progress` reads back."""
    return PROGRESS_PREFIX + str(checked_progress(done, total))


def parse_progress(line: str) -> Progress | None:
    """The progress of a progress line (a trailing carriage return is not part of it); None for a line that is none
    (another prefix). A progress line :func:`format_progress` would not have written raises ProgressError."""
    if not line.startswith(PROGRESS_PREFIX):
        return None
    text = line[len(PROGRESS_PREFIX) :].removesuffix("\r")
    found = PROGRESS_TEXT.fullmatch(text)
    if found is None:
        raise ProgressError("progress line refused: " + repr(text[:80]) + " is not DONE/TOTAL (two whole numbers)")
    try:
        return checked_progress(int(found[1]), int(found[2]))
    except ProgressError as e:
        raise ProgressError("progress line refused: " + str(e).removeprefix("progress: ")) from None


def metric_number(name: str, value: object) -> Number:
    """A metric's value as it is written: a whole number as an int, any other real number as a finite float."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ProgressError("metric " + repr(name) + " must be a number, not " + type(value).__name__)
    number: Number = int(value) if isinstance(value, numbers.Integral) else float(value)
    if isinstance(number, float) and not math.isfinite(number):
        raise ProgressError("metric " + repr(name) + " must be a finite number, not " + str(number))
    return number


def _metric_name(name: object) -> str:
    if not isinstance(name, str) or NAME.fullmatch(name) is None:
        raise ProgressError("metric name " + repr(name) + ": letters, digits, _ and - only, 1 to 63 of them")
    if name in RESERVED:
        raise ProgressError("metric name " + repr(name) + " is reserved (an output every job's task has)")
    return name


def format_metric(name: object, value: object) -> str:
    """The metric line of ``name`` and its number, which :func:`parse_metric` reads back."""
    checked = _metric_name(name)
    text = metric_output(metric_number(checked, value))
    if len(text) > NUMBER_MAX:
        raise ProgressError("metric " + repr(checked) + ": " + text + " is over " + str(NUMBER_MAX) + " characters")
    return METRIC_PREFIX + checked + "=" + text


def metric_output(number: Number) -> str:
    """The output's text of a value rank 0 reported only as a metric: its last number, as JSON (as the line had it)."""
    return json.dumps(number)


def read_number(name: str, text: str) -> Number:
    """The number ``text`` holds by the metric rule: a JSON number, finite, at most NUMBER_MAX characters."""
    if len(text) > NUMBER_MAX or METRIC_NUMBER.fullmatch(text) is None:
        raise ProgressError("metric " + repr(name) + " refused: " + repr(text[:80]) + " is not a JSON number")
    number: Number = json.loads(text)
    if isinstance(number, float) and not math.isfinite(number):
        raise ProgressError("metric " + repr(name) + " refused: " + text + " is not a finite number")
    return number


def parse_metric(line: str) -> tuple[str, Number] | None:
    """``(name, number)`` of a metric line; None for a line that is none (another prefix). A metric line
    :func:`format_metric` would not have written raises ProgressError: the name, the number, all of it."""
    if not line.startswith(METRIC_PREFIX):
        return None
    name, sep, text = line[len(METRIC_PREFIX) :].removesuffix("\r").partition("=")
    if not sep:
        raise ProgressError("metric line refused: " + repr(name[:80]) + " is not NAME=NUMBER")
    try:
        checked = _metric_name(name)
    except ProgressError as e:
        raise ProgressError("metric line refused: " + str(e)) from None
    return checked, read_number(checked, text)


def progress(done: int, total: int, /, **metrics: float) -> None:
    """Say how far the job has got (``done`` of ``total`` steps, epochs, files...) and its latest metrics
    (``loss=0.25``): on global rank 0 only, one line each, which the job's follower reads; other ranks print
    nothing. ``argo get`` shows the progress on the step, ``hera-volcano status`` the progress and metrics, and the
    job's task has the last metrics as its output ``job-metrics``. A value that breaks the rules raises
    ProgressError (a ValueError) on every rank."""
    # The metrics first: the progress line closes the step, so the follower never shows one step's progress with
    # another's metrics.
    lines = [*(format_metric(name, value) for name, value in metrics.items()), format_progress(done, total)]
    try:
        rank = own_rank()
    except RankError as e:
        raise ProgressError(str(e)) from None
    if rank == 0:
        write_lines(lines)


def annotation_text(done: Progress | None, metrics: Mapping[str, Number]) -> str:
    """The value of :data:`PROGRESS_ANNOTATION`: compact JSON, the metrics in the order rank 0 first reported them."""
    data: dict[str, object] = {}
    if done is not None:
        data["progress"] = str(done)
    data["metrics"] = dict(metrics)
    return json.dumps(data, separators=(",", ":"), allow_nan=False)


def read_annotation(text: object) -> tuple[Progress | None, dict[str, Number]]:
    """What :func:`annotation_text` wrote, read back by the same rules; ``(None, {})`` for a value it would not have
    written (anyone who may patch the Job may write the annotation: nothing else of it is shown)."""
    try:
        data = json.loads(text) if isinstance(text, str) else None
        if not isinstance(data, dict) or set(data) - {"progress", "metrics"}:
            raise ProgressError("not a progress annotation")
        raw, metrics = data.get("progress"), data.get("metrics", {})
        done = None if raw is None else parse_progress(PROGRESS_PREFIX + str(raw)) if isinstance(raw, str) else None
        if (raw is not None and done is None) or not isinstance(metrics, dict):
            raise ProgressError("not a progress annotation")
        return done, {_metric_name(name): read_number(name, json.dumps(value)) for name, value in metrics.items()}
    except (ValueError, TypeError):
        return None, {}


@dataclass(frozen=True)
class Gathered:
    """What a job's task gives once its job ended: ``values`` (every value rank 0 reported, and each listed output
    it reported only as a metric, with its last number), the listed outputs whose value was ``refused`` (name: why),
    and those ``missing``. The step fails when either of the last two holds one."""

    values: dict[str, str]
    refused: dict[str, str]
    missing: tuple[str, ...]


def gather(
    values: Mapping[str, str], refused: Mapping[str, str], metrics: Mapping[str, Number], outputs: tuple[str, ...]
) -> Gathered:
    """The one rule the follower and a local run give a job's outputs by: a listed output rank 0 reported takes its
    last value; one it reported only as a metric, the metric's last number; one whose line was refused fails, even
    when a metric of its name was fine (a refused value is never replaced by another)."""
    given = dict(values)
    for name in outputs:
        if name not in given and name not in refused and name in metrics:
            given[name] = metric_output(metrics[name])
    absent = [name for name in outputs if name not in given]
    return Gathered(
        given, {name: refused[name] for name in absent if name in refused}, tuple(n for n in absent if n not in refused)
    )
