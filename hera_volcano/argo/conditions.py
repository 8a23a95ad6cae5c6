"""Success and failure conditions of a resource step, as the label selectors argoexec evaluates on the Volcano Job."""

from __future__ import annotations

from collections.abc import Sequence

from hera_volcano.shared import checks
from hera_volcano.shared.errors import ValidationError
from hera_volcano.volcano.step import DEFAULT_START_LIMIT as DEFAULT_START_LIMIT  # the follower's default

PHASE_PATH = "status.state.phase"
#: Every phase a Volcano Job reports.
PHASES = (
    "Pending",
    "Aborting",
    "Aborted",
    "Running",
    "Restarting",
    "Completing",
    "Completed",
    "Terminating",
    "Terminated",
    "Failed",
)
SUCCESS_PHASES = ("Completed",)
#: Finished unsuccessfully (Failed, Terminated) or parked until resumed (Aborted): a step must not wait on them.
FAILURE_PHASES = ("Failed", "Terminated", "Aborted")
#: The shortest ``ttlSecondsAfterFinished`` for a job a step waits on. argoexec checks the job every 5 s by default
#: (later under load) and fails the step, without retrying, when the job is gone: Volcano must not delete it first.
MIN_WATCHED_TTL = 60


def watched_ttl_problem(ttl: object) -> str | None:
    """Why a job with this ``ttlSecondsAfterFinished`` can fail the step that waits on it, or None."""
    if isinstance(ttl, int) and not isinstance(ttl, bool) and ttl < MIN_WATCHED_TTL:
        return (
            f"is {ttl}: a step waiting on the job fails (NotFound) if Volcano deletes the finished job before"
            f" argoexec's next status check; use at least {MIN_WATCHED_TTL}"
        )
    return None


def phase_condition(phases: Sequence[str], field: str) -> str:
    """One selector requirement that holds exactly when the job's phase is one of ``phases``.

    A single ``in (...)`` requirement, never a list of ``!=``: argoexec reads a missing field as matching ``!=``, so a
    negative condition would fire before Volcano writes the status.
    """
    phases = checks.strings(field, phases)  # a lone string is one phase misspelt, not its letters
    if not phases:
        raise ValidationError(field, "must name at least one Volcano job phase")
    for phase in phases:
        if phase not in PHASES:
            raise ValidationError(field, f"unknown Volcano job phase {phase!r}; expected one of {', '.join(PHASES)}")
    if len(set(phases)) != len(phases):
        raise ValidationError(field, "must not repeat a phase")
    if len(phases) == 1:
        return f"{PHASE_PATH} == {phases[0]}"
    return f"{PHASE_PATH} in ({', '.join(phases)})"


def conditions(success: Sequence[str], failure: Sequence[str]) -> tuple[str, str]:
    """Success and failure conditions; they must not overlap, or a phase would count as both."""
    success, failure = checks.strings("success_phases", success), checks.strings("failure_phases", failure)
    overlap = sorted(set(success) & set(failure))
    if overlap:
        raise ValidationError("failure_phases", f"must not overlap success_phases (both hold {', '.join(overlap)})")
    return phase_condition(success, "success_phases"), phase_condition(failure, "failure_phases")
