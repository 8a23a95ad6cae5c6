"""The report line of a job's rank 0 (``hera-volcano:output NAME=VALUE``), written and read by the same rules: the
launcher writes it (:func:`format_line`), the follower in the pod reads it (:func:`parse_line`), and the builders
check output names by them (:mod:`hera_volcano.shared.outputs`). The value is the rest of the line, verbatim.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Iterable

#: What starts a report line (at the very start of the line).
PREFIX = "hera-volcano:output "
#: Argo's parameter names, and short enough for a file name and a message.
NAME = re.compile(r"[a-zA-Z0-9_-]{1,63}")
#: The longest report line, in bytes (UTF-8) without its line break: well under the 16 KiB at which the container
#: runtime splits a log line. Larger data belongs on a volume; report its path.
MAX_LINE = 4096
#: The output of a job's follower (and of ``job_dag``) that holds the last metrics rank 0 reported, as a JSON object
#: (:mod:`hera_volcano.pods.progress`).
METRICS_OUTPUT = "job-metrics"
#: Outputs every job-carrying task has already (the Volcano Job's name and phase, the last metrics): not available as
#: report names.
RESERVED = frozenset({"job-name", "job-phase", METRICS_OUTPUT})
#: What starts an Argo tag (written so that this text holds none: it runs in pods as it is).
TAG_START = "{" * 2
#: Characters that some readers take for line breaks, which JSON would leave as they are (NEL is a C1 control:
#: :func:`unsayable`).
SEPARATORS = ("\u2028", "\u2029")


class ReportError(ValueError):
    """A name or value that cannot be reported, and why: one line for the log. ``output`` is the output's name when
    that name is one a report may carry (the follower fails the step naming it), else empty."""

    def __init__(self, message: str, output: str = "") -> None:
        super().__init__(message)
        self.output = output


def is_name(name: object) -> bool:
    """A name a report may carry: Argo's parameter names, not one the job's task has already."""
    return isinstance(name, str) and NAME.fullmatch(name) is not None and name not in RESERVED


def parse_line(line: str) -> tuple[str, str] | None:
    """``(name, value)`` of a report line (a trailing carriage return is not part of the value); None for a line that
    is no report (another prefix, no ``=``, a name no report may carry). A report line that :func:`format_line` would
    not have written raises ReportError: the reader keeps exactly what the writer may write, so that a line printed by
    the job itself cannot pass the next template a tag to substitute."""
    if not line.startswith(PREFIX):
        return None
    name, sep, value = line[len(PREFIX) :].removesuffix("\r").partition("=")
    if not sep or not is_name(name):
        return None
    line_of(name, value)
    return name, value


def unsayable(char: str) -> bool:
    """What the quoting of Argo, when it passes a value on, writes as an escape JSON lacks (the node fails), and the
    C1 controls, which a job's manifest cannot hold (the step errors, or NEL arrives dropped)."""
    code = ord(char)
    return (
        (code < 0x20 and char not in "\t\n\r\b\f" and code != 0)
        or 0x7F <= code <= 0x9F
        or (code > 0xFFFF and not char.isprintable())
    )


def value_text(name: str, value: object) -> str:
    """How ``value`` is written: a string as it is, anything else as compact JSON, escaped where a reader or Argo
    would change it (the same value when parsed)."""
    if isinstance(value, str):
        return value
    try:
        text = json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as e:
        raise ReportError("output " + repr(name) + " is not a JSON value: " + str(e), name) from None
    for char in SEPARATORS:  # inside JSON strings only: escaped, no reader splits the line there
        text = text.replace(char, "\\u" + format(ord(char), "04x"))
    # Only ever inside a JSON string: the same value, written so that Argo passes it on unchanged.
    text = text.replace(TAG_START, "{\\u007b")
    return "".join(json.dumps(char)[1:-1] if unsayable(char) else char for char in text)


def line_of(name: str, text: str) -> str:
    """The report line of ``name`` with the value's ``text``; ReportError names the rule the text breaks. The one
    rule of writer and reader: no two opening braces (an Argo tag or expression), no NUL or control character Argo
    cannot pass on, one line of valid Unicode, at most MAX_LINE bytes."""
    if TAG_START in text or "\x00" in text or any(unsayable(char) for char in text):
        raise ReportError(
            "output " + repr(name) + ": the value holds two opening braces (an Argo tag or expression), NUL or a"
            " control character, which Argo cannot pass on unchanged (the next template would substitute the tag or"
            " fail)",
            name,
        )
    if "\n" in text or "\r" in text:
        raise ReportError("output " + repr(name) + ": the value must be one line (report a path for larger data)", name)
    line = PREFIX + name + "=" + text
    try:
        size = len(line.encode("utf-8"))
    except UnicodeEncodeError:
        raise ReportError("output " + repr(name) + ": the value is not valid Unicode text", name) from None
    if size > MAX_LINE:
        raise ReportError("output " + repr(name) + ": the report line is over " + str(MAX_LINE) + " bytes", name)
    return line


def format_line(name: object, value: object) -> str:
    """The report line of ``name`` (without its line break), which :func:`parse_line` reads back as ``(name, the
    value's text)``; ReportError says why it cannot be written."""
    if not isinstance(name, str) or not NAME.fullmatch(name):
        raise ReportError("output name " + repr(name) + ": letters, digits, _ and - only, 1 to 63 of them")
    if name in RESERVED:
        raise ReportError("output name " + repr(name) + " is reserved (the name and phase of the job)")
    return line_of(name, value_text(name, value))


def keep_line(line: str, values: dict[str, str], refused: dict[str, str]) -> None:
    """Keep what a report line says in ``values`` (the last value of a name wins). A line the launcher would not
    have written (a tag for the next template to substitute, a control character, ...) keeps nothing: its name goes
    to ``refused`` for the rest of the job (with why), so the step fails naming it rather than pass on an earlier
    value or none. The follower and a local run read rank 0 by this rule."""
    try:
        parsed = parse_line(line)
    except ReportError as e:
        refused.setdefault(e.output, str(e))
        values.pop(e.output, None)
        return
    if parsed is not None and parsed[0] not in refused:
        values[parsed[0]] = parsed[1]


def write_lines(lines: Iterable[str]) -> None:
    """Print marker lines on standard output after what the program printed before them, each in one write so that
    no line is split among other output (a rank's threads, or its other processes on the same pipe); a stdout with no
    file (redirected to a StringIO, as a test does) gets them written to it."""
    sys.stdout.flush()
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation: a StringIO, a test's capture
        for text in lines:
            sys.stdout.write(text + "\n")
        sys.stdout.flush()
        return
    for line in [(text + "\n").encode("utf-8") for text in lines]:
        while line:
            line = line[os.write(fd, line) :]
