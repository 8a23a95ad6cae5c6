"""The resource step's conditions, parsed and evaluated as argoexec does, phase by phase."""

from __future__ import annotations

import pytest

from hera_volcano import ValidationError
from hera_volcano.argo.conditions import FAILURE_PHASES, PHASES, conditions, phase_condition
from hera_volcano.argo.selectors import parse_selector, selector_matches


def job(phase: str | None) -> dict[str, object]:
    return {"status": {"state": {"phase": phase}}} if phase else {"metadata": {"name": "j"}}


def test_default_success_holds_exactly_for_completed() -> None:
    success, _ = conditions(("Completed",), FAILURE_PHASES)
    parse_selector(success)
    assert [p for p in PHASES if selector_matches(success, job(p), require_all=True)] == ["Completed"]


def test_default_failure_covers_failed_terminated_and_aborted_only() -> None:
    _, failure = conditions(("Completed",), FAILURE_PHASES)
    parse_selector(failure)
    matched = {p for p in PHASES if selector_matches(failure, job(p), require_all=False)}
    assert matched == {"Failed", "Terminated", "Aborted"}


def test_neither_condition_fires_before_volcano_writes_a_status() -> None:
    success, failure = conditions(("Completed",), FAILURE_PHASES)
    assert not selector_matches(success, job(None), require_all=True)
    assert not selector_matches(failure, job(None), require_all=False)


def test_configurable_phases() -> None:
    success, failure = conditions(("Completed", "Terminated"), ("Failed",))
    assert selector_matches(success, job("Terminated"), require_all=True)
    assert not selector_matches(failure, job("Terminated"), require_all=False)


@pytest.mark.parametrize(
    ("success", "failure", "field"),
    [
        (("Completed",), ("Completed",), "failure_phases"),
        (("Done",), FAILURE_PHASES, "success_phases"),
        ((), FAILURE_PHASES, "success_phases"),
        (("Completed",), ("Failed", "Failed"), "failure_phases"),
    ],
)
def test_bad_phase_sets_are_rejected(success: tuple[str, ...], failure: tuple[str, ...], field: str) -> None:
    with pytest.raises(ValidationError) as e:
        conditions(success, failure)
    assert e.value.field == field


def test_single_phase_is_an_equality() -> None:
    assert phase_condition(["Failed"], "f") == "status.state.phase == Failed"


@pytest.mark.parametrize("field", ["success_phases", "failure_phases"])
def test_a_lone_string_is_refused_not_read_letter_by_letter(field: str) -> None:
    import hera_volcano as hv

    job = hv.mpi_job(image="x:1", program=hv.Program.command(["a"]), workers=1)
    with pytest.raises(ValidationError) as e:
        hv.job_template(job, name="t", **{field: "Completed" if field == "success_phases" else "Failed"})
    assert e.value.field == field and "not the string" in e.value.rule
