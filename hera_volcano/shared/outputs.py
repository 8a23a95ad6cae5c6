"""How a job's rank 0 reports named values (a loss, a model's path) to the workflow: one line on its output.

A resource step cannot collect files from the pods of the job it created (argoproj/argo-workflows#6862), but the
log follower reads the leading task's output anyway: a line ``hera-volcano:output NAME=VALUE`` there becomes the
output parameter NAME of the task that carries the job. Language-neutral (``echo`` does it), no new privileges, no
artifact repository. The value is the rest of the line, verbatim; the last report of a name wins.

The line's rules are :mod:`hera_volcano.pods.reports`, by which the launcher writes and the follower reads; here the
builders check the names a job is to report by them.
"""

from __future__ import annotations

from collections.abc import Sequence

from hera_volcano.pods.reports import RESERVED, is_name
from hera_volcano.shared import checks
from hera_volcano.shared.errors import ValidationError


def check_names(field: str, value: Sequence[str]) -> tuple[str, ...]:
    """Names of values a job's rank 0 is to report: report names, each once (a ValidationError names the field)."""
    found = tuple(checks.strings(field, value))
    for i, name in enumerate(found):
        if not is_name(name):
            raise ValidationError(
                f"{field}[{i}]",
                f"{name!r} is not a report name (letters, digits, '_', '-', at most 63; not"
                f" {', '.join(sorted(RESERVED))})",
            )
    if len(set(found)) != len(found):
        raise ValidationError(field, "names a value twice")
    return found
