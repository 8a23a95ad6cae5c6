"""How a report line of a job's rank 0 is read (``hera-volcano:output NAME=VALUE``): the follower in the pod keeps
the values, and :mod:`hera_volcano.shared.outputs` writes and checks them by the same rules."""

from __future__ import annotations

import re

#: What starts a report line (at the very start of the line).
PREFIX = "hera-volcano:output "
#: Argo's parameter names, and short enough for a file name and a message.
NAME = re.compile(r"[a-zA-Z0-9_-]{1,63}")
#: The longest report line, in bytes (UTF-8) without its line break: well under the 16 KiB at which the container
#: runtime splits a log line. Larger data belongs on a volume; report its path.
MAX_LINE = 4096
#: Outputs every job-carrying task has already (from the Volcano Job itself): not available as report names.
RESERVED = frozenset({"job-name", "job-phase"})


def parse_line(line: str) -> tuple[str, str] | None:
    """``(name, value)`` of a report line (a trailing carriage return is not part of the value), else None."""
    if not line.startswith(PREFIX):
        return None
    name, sep, value = line[len(PREFIX) :].removesuffix("\r").partition("=")
    if not sep or not NAME.fullmatch(name) or name in RESERVED or len(line.encode("utf-8")) > MAX_LINE:
        return None
    return name, value
