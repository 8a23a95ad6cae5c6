"""A resource step's success and failure conditions, and whether they end the step when its Volcano Job ends.

argoexec polls the live job until one condition holds. A Volcano Job reports its phase at ``status.state.phase``
(not ``status.phase`` like a pod, and ``status.state`` is an object): a condition that tests anything else never sees
the job finish, so the step polls until its deadline, or it fires at the wrong time (pod counts change while the
job still runs). A missing field makes ``!=``, ``notin`` and ``!key`` true, so a negative condition holds before
Volcano writes any status.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from hera_volcano.argo import samples, selectors
from hera_volcano.argo.conditions import (
    FAILURE_PHASES,
    PHASE_PATH,
    PHASES,
    SUCCESS_PHASES,
    conditions,
    watched_ttl_problem,
)
from hera_volcano.shared.findings import Finding, as_map, error, warning
from hera_volcano.shared.placeholders import DEFAULT_SAMPLE, substitute_text
from hera_volcano.tools.lint.context import MANIFEST_SEPARATOR, Workflow

#: Volcano phases a step's failure condition must catch, or the step polls until its deadline.
UNFINISHED_FAILURES: Final = tuple(p for p in FAILURE_PHASES if p != "Failed")
SUGGESTED_SUCCESS, SUGGESTED_FAILURE = conditions(SUCCESS_PHASES, FAILURE_PHASES)
#: Phases of a job that has not finished yet (a success condition holding there ends the step early).
_UNFINISHED: Final = ("Pending", "Running", "Restarting", "Completing", "Aborting", "Terminating")
#: Keys people write for a phase that a Volcano Job does not have, and what they hold instead.
_WRONG_PHASE_KEYS: Final[Mapping[str, str]] = {
    "status.phase": "a Volcano Job has no status.phase (that is a pod's); its phase is status.state.phase",
    "status.state": "status.state is an object (phase, reason, message), never equal to a word;"
    " the phase is status.state.phase",
    "status.state.status": "a Volcano Job has no status.state.status; its phase is status.state.phase",
    "status.status": "a Volcano Job has no status.status; its phase is status.state.phase",
    "status.conditions": "status.conditions is a list; the phase is status.state.phase",
}
#: Phase names from other kinds that people expect a Volcano Job to report.
_OTHER_PHASES: Final[Mapping[str, str]] = {
    "Succeeded": "Completed",
    "Complete": "Completed",
    "Success": "Completed",
    "Done": "Completed",
    "Finished": "Completed",
    "Error": "Failed",
    "Errored": "Failed",
}


@dataclass(frozen=True)
class Conditions:
    """A resource step's parsed conditions (None when absent or unparsable), with sample values substituted;
    ``templated`` when a condition holds a placeholder, so its values are only known at run time."""

    success: Sequence[selectors.Requirement] | None
    failure: Sequence[selectors.Requirement] | None
    templated: bool = False


def parse_conditions(
    resource: Mapping[str, object], path: str, template: Mapping[str, object], wf: Workflow
) -> tuple[Conditions, list[Finding]]:
    """Parse both conditions as argoexec will (a parse error fails the step at run time)."""
    parsed: dict[str, Sequence[selectors.Requirement] | None] = {}
    findings: list[Finding] = []
    templated = False
    for key in ("successCondition", "failureCondition"):
        text = resource.get(key)
        parsed[key] = None
        if text is None:
            continue
        if not isinstance(text, str):
            findings.append(error(f"{path}.{key}", "must be a string: a label selector"))
            continue
        if "{{" in text:
            templated = True
            values = samples.template_values({"metadata": wf.metadata, "spec": wf.spec})
            known = values.get(str(template.get("name", "")), {})
            # A value only known at run time stands in as 0: a valid label value and a valid integer for > and <.
            known = {k: "0" if v == DEFAULT_SAMPLE else v for k, v in known.items()}
            text = substitute_text(text, known, default="0")
        try:
            parsed[key] = _parse_condition(text)
        except ValueError as e:
            findings.append(error(f"{path}.{key}", f"{e} (the step fails when it runs)"))
    return Conditions(parsed["successCondition"], parsed["failureCondition"], templated), findings


@functools.lru_cache(maxsize=256)
def _parse_condition(text: str) -> tuple[selectors.Requirement, ...]:
    """Conditions repeat across steps and files; their requirements are immutable, so a parse is reused."""
    return tuple(selectors.parse_selector(text))


def _phase(phase: str) -> Mapping[str, object]:
    return {"status": {"state": {"phase": phase}}}


def _off_phase(requirements: Sequence[selectors.Requirement], outcome: str) -> str:
    """Why a condition without a requirement on the job's phase fails to end the step (``outcome``: what then)."""
    for r in requirements:
        reason = _WRONG_PHASE_KEYS.get(r.key)
        if reason is not None:
            return f"tests {r.key}: {reason}, so {outcome}"
    keys = ", ".join(dict.fromkeys(r.key for r in requirements))
    return (
        f"tests {keys}, not the job's phase {PHASE_PATH}: no other field says the job has finished (pod counts change"
        f" as pods run and restart, and Volcano zeroes them when the job finishes), so {outcome}"
    )


def _phase_problem(requirements: Sequence[selectors.Requirement], templated: bool) -> str | None:
    """Why the requirements on the phase can never be right: a value that is not a phase, an integer comparison."""
    for r in requirements:
        if r.key != PHASE_PATH:
            continue
        if r.operator in (">", "<"):
            return f"compares {PHASE_PATH} with {r.operator}, which compares integers: a phase is a word, never matched"
        if templated:
            continue  # a value may be a sample standing in for a parameter
        for value in r.values:
            if value not in PHASES:
                hint = f" (a Volcano Job that ends so is {_OTHER_PHASES[value]})" if value in _OTHER_PHASES else ""
                return f"{value!r} is not a Volcano Job phase{hint}: the phases are {', '.join(PHASES)}"
    return None


def check_job_conditions(
    job: Mapping[str, object], resource: Mapping[str, object], path: str, conditions: Conditions
) -> Iterator[Finding]:
    """Errors for conditions that let a step on a Volcano Job hang or end at the wrong time, warnings for the risky
    ones. ``path`` is the resource's."""
    created = {k: v for k, v in job.items() if k != "status"}
    if resource.get("successCondition") is not None or resource.get("failureCondition") is not None:
        ttl_problem = watched_ttl_problem(as_map(job.get("spec")).get("ttlSecondsAfterFinished"))
        if ttl_problem is not None:
            yield warning(f"{path}.manifest{MANIFEST_SEPARATOR}spec.ttlSecondsAfterFinished", ttl_problem)
    if resource.get("successCondition") is None:
        yield warning(
            path,
            "has no successCondition: the step finishes before the job has run;"
            f" set successCondition: {SUGGESTED_SUCCESS}",
        )
    elif conditions.success is not None:
        yield from _check_success(conditions.success, f"{path}.successCondition", created, conditions.templated)
    if resource.get("failureCondition") is None:
        yield warning(
            path,
            "has no failureCondition: when the job fails the step polls until its deadline;"
            f" set failureCondition: {SUGGESTED_FAILURE}",
        )
    elif conditions.failure is not None:
        yield from _check_failure(conditions.failure, f"{path}.failureCondition", created, conditions.templated)


def _check_success(
    success: Sequence[selectors.Requirement], at: str, created: Mapping[str, object], templated: bool
) -> Iterator[Finding]:
    """argoexec ends the step successfully once every requirement holds."""
    if not success:
        return
    if not any(r.key == PHASE_PATH for r in success):
        outcome = "the step never sees the job complete and polls until its deadline (or succeeds at a wrong time)"
        yield error(at, f"{_off_phase(success, outcome)}; use {SUGGESTED_SUCCESS}")
        return
    problem = _phase_problem(success, templated)
    if problem is not None:
        yield error(at, f"{problem}; the step never succeeds and polls until its deadline; use {SUGGESTED_SUCCESS}")
        return
    if all(r.matches(created) for r in success):
        yield error(
            at,
            "holds as soon as the job is created, before Volcano writes its status (a missing field makes !=, notin"
            f" and !key true): the step succeeds before the job has run; use {SUGGESTED_SUCCESS}",
        )
        return
    early = [p for p in _UNFINISHED if all(r.matches(_phase(p)) for r in success)]
    if early:
        yield warning(at, f"holds while the job is {' or '.join(early)}: the step succeeds before the job has finished")
    if not all(r.matches(_phase("Completed")) for r in success):
        yield warning(at, "does not hold for a Completed job: the step never succeeds")


def _check_failure(
    failure: Sequence[selectors.Requirement], at: str, created: Mapping[str, object], templated: bool
) -> Iterator[Finding]:
    """argoexec fails the step as soon as any one requirement holds (contrary to its documentation)."""
    if not failure:
        return
    if not any(r.key == PHASE_PATH for r in failure):
        outcome = "a failed job does not match it and the step polls until its deadline (or fails at a wrong time)"
        yield error(at, f"{_off_phase(failure, outcome)}; use {SUGGESTED_FAILURE}")
        return
    problem = _phase_problem(failure, templated)
    if problem is not None:
        yield error(at, f"{problem}; a job that ends so leaves the step polling until its deadline")
        return
    if any(r.matches(created) for r in failure):
        yield error(
            at,
            "holds before Volcano writes the job's status (a missing field makes !=, notin and !key true):"
            f" the step fails at once; use {SUGGESTED_FAILURE}",
        )
        return
    wrong = [p for p in ("Running", "Completed") if any(r.matches(_phase(p)) for r in failure)]
    if wrong:
        yield error(at, f"holds for a {' or '.join(wrong)} job: the step fails although the job did not fail")
    others = [str(r) for r in failure if r.key != PHASE_PATH]
    if others:
        yield warning(
            at,
            f"argoexec fails the step as soon as any one requirement holds, so {', '.join(others)} fails it on its"
            " own, whatever the job's phase",
        )
    missed = [p for p in UNFINISHED_FAILURES if not any(r.matches(_phase(p)) for r in failure)]
    if missed:
        yield warning(
            at,
            f"does not hold for a job that ends {' or '.join(missed)}: the step then polls until its deadline;"
            f" use {SUGGESTED_FAILURE}",
        )
