"""How a job's rank 0 reports named values (a loss, a model's path) to the workflow: one line on its output.

A resource step cannot collect files from the pods of the job it created (argoproj/argo-workflows#6862), but the
log follower reads the leading task's output anyway: a line ``hera-volcano:output NAME=VALUE`` there becomes the
output parameter NAME of the task that carries the job. Language-neutral (``echo`` does it), no new privileges, no
artifact repository. The value is the rest of the line, verbatim; the last report of a name wins.

The in-pod function launcher (``hera_volcano/pods/launcher.py``) writes report lines by these rules and the follower
reads them (:func:`hera_volcano.pods.reports.parse_line`); tests hold both to the same cases.
"""

from __future__ import annotations

from collections.abc import Sequence

from hera_volcano.pods.reports import MAX_LINE, NAME, PREFIX, RESERVED
from hera_volcano.shared import checks
from hera_volcano.shared.errors import ValidationError
from hera_volcano.shared.placeholders import refusal


def format_line(name: str, value: str) -> str:
    """The report line for ``name`` (without its line break); ValueError names what is wrong."""
    if not NAME.fullmatch(name):
        raise ValueError(f"output name {name!r}: letters, digits, '_' and '-' only, 1 to 63 of them")
    if name in RESERVED:
        raise ValueError(f"output name {name!r} is reserved (the job's own name and phase)")
    if "\n" in value or "\r" in value:
        raise ValueError(f"output {name!r}: the value must be one line (report a path for larger data)")
    if refusal(value) is not None:
        raise ValueError(f"output {name!r}: the value {refusal(value)}")
    line = f"{PREFIX}{name}={value}"
    if len(line.encode("utf-8")) > MAX_LINE:
        raise ValueError(f"output {name!r}: the report line is over {MAX_LINE} bytes (report a path instead)")
    return line


def check_names(field: str, value: Sequence[str]) -> tuple[str, ...]:
    """Names of values a job's rank 0 is to report: report names, each once (a ValidationError names the field)."""
    found = tuple(checks.strings(field, value))
    for i, name in enumerate(found):
        if not NAME.fullmatch(name) or name in RESERVED:
            raise ValidationError(
                f"{field}[{i}]",
                f"{name!r} is not a report name (letters, digits, '_', '-', at most 63; not job-name or job-phase)",
            )
    if len(set(found)) != len(found):
        raise ValidationError(field, "names a value twice")
    return found
