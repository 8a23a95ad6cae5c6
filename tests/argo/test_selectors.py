"""Resource-step conditions as argoexec parses and evaluates them on a live Volcano Job."""

from __future__ import annotations

from typing import Any

import pytest

from hera_volcano.argo.conditions import PHASES
from hera_volcano.argo.selectors import Requirement, gjson_string, lookup, parse_selector, selector_matches

SUCCESS = "status.state.phase == Completed"
FAILURE = "status.state.phase in (Failed, Terminated, Aborted)"


def job_in(phase: str) -> dict[str, Any]:
    return {"kind": "Job", "status": {"state": {"phase": phase}, "succeeded": 2, "retryCount": 0}}


@pytest.mark.parametrize("phase", PHASES)
def test_success_condition_matches_only_completed(phase: str) -> None:
    assert selector_matches(SUCCESS, job_in(phase), require_all=True) is (phase == "Completed")


@pytest.mark.parametrize("phase", PHASES)
def test_failure_condition_matches_failed_terminated_aborted(phase: str) -> None:
    expected = phase in ("Failed", "Terminated", "Aborted")
    assert selector_matches(FAILURE, job_in(phase), require_all=False) is expected


def test_no_phase_yet_matches_neither() -> None:
    fresh: dict[str, Any] = {"kind": "Job", "metadata": {"name": "j"}}
    assert not selector_matches(SUCCESS, fresh, require_all=True)
    assert not selector_matches(FAILURE, fresh, require_all=False)


@pytest.mark.parametrize(
    ("condition", "expected"),
    [
        ("status.state.phase != Failed", True),
        ("status.state.phase notin (Failed, Aborted)", True),
        ("!status.state.phase", True),
        ("status.state.phase", False),
        ("status.state.phase = Failed", False),
        ("status.state.phase == Failed", False),
        ("status.state.phase in (Failed)", False),
        ("status.succeeded > 0", False),
        ("status.succeeded < 9", False),
    ],
)
def test_missing_field_semantics(condition: str, expected: bool) -> None:
    assert selector_matches(condition, {"status": {}}, require_all=True) is expected


@pytest.mark.parametrize(
    ("condition", "value", "expected"),
    [
        ("status.succeeded > 1", 2, True),
        ("status.succeeded > 2", 2, False),
        ("status.succeeded < 3", 2, True),
        ("status.succeeded < 2", 2, False),
        ("status.succeeded > 1", "2", True),  # gjson gives the string; ParseInt reads it
        ("status.succeeded > 1", 2.0, True),  # Go formats 2.0 as "2"
        ("status.succeeded > 1", 2.5, False),  # not an integer: never matches
        ("status.succeeded > 1", "two", False),
        ("status.succeeded > 1", True, False),
        ("status.succeeded = 2", 2, True),
        ("status.succeeded = 2", 2.0, True),
    ],
)
def test_integer_comparison(condition: str, value: object, expected: bool) -> None:
    assert selector_matches(condition, {"status": {"succeeded": value}}, require_all=True) is expected


def test_success_needs_all_failure_fires_on_any() -> None:
    condition = "status.state.phase == Failed, status.retryCount > 5"
    obj = job_in("Failed")
    assert selector_matches(condition, obj, require_all=True) is False
    assert selector_matches(condition, obj, require_all=False) is True


def test_empty_condition() -> None:
    assert parse_selector("") == []
    assert parse_selector("  ") == []
    assert selector_matches("", job_in("Running"), require_all=True) is True
    assert selector_matches("", job_in("Running"), require_all=False) is False


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a=b", [Requirement("a", "=", ("b",))]),
        ("a == b", [Requirement("a", "==", ("b",))]),
        ("a != b", [Requirement("a", "!=", ("b",))]),
        ("a in (c, b, b)", [Requirement("a", "in", ("b", "c"))]),
        ("a notin (b)", [Requirement("a", "notin", ("b",))]),
        ("a", [Requirement("a", "exists")]),
        ("!a", [Requirement("a", "!")]),
        ("a > 3", [Requirement("a", ">", ("3",))]),
        ("a < 3", [Requirement("a", "<", ("3",))]),
        ("a =", [Requirement("a", "=", ("",))]),
        ("a in ()", [Requirement("a", "in", ("",))]),
        ("a in (b,)", [Requirement("a", "in", ("", "b"))]),
        ("in in (in, notin)", [Requirement("in", "in", ("in", "notin"))]),
        ("a,!b", [Requirement("a", "exists"), Requirement("b", "!")]),
        ("example.com/a = b", [Requirement("example.com/a", "=", ("b",))]),
    ],
)
def test_parse(text: str, expected: list[Requirement]) -> None:
    assert parse_selector(text) == expected


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ('status.conditions.#(type=="Ready").status == True', "valid label key"),
        ("status.state.phase == 'Completed'", "label value"),
        ('status.state.phase == "Completed"', "label value"),
        ("status.state.phase == Not Ready", "expected ',' or the end of the string"),
        ("a >= 3", "found '=', expected a value"),
        ("a > three", "needs an integer value"),
        ("a > -1", "label value"),
        ("a in (b", "expected ',' or ')'"),
        ("a in b", "expected '('"),
        ("a in (b c)", "expected ',' or ')'"),
        ("a b", "expected an operator"),
        ("a,", "after ','"),
        (",a", "a key or the end of the string"),
        ("!", "expected a key"),
        ("!a = b", "expected ',' or the end of the string"),
        ("a = b = c", "expected ',' or the end of the string"),
        ("x" * 64 + " = b", "valid label key"),
        ("a = " + "x" * 64, "label value"),
    ],
)
def test_parse_errors(text: str, fragment: str) -> None:
    with pytest.raises(ValueError, match="invalid selector") as caught:
        parse_selector(text)
    assert fragment in str(caught.value)


def test_selector_matches_reports_parse_errors() -> None:
    with pytest.raises(ValueError, match="invalid selector"):
        selector_matches("a in (", {}, require_all=True)


def test_lookup_follows_lists_by_index() -> None:
    obj = {"status": {"conditions": [{"type": "Ready"}, {"type": "Scheduled"}]}}
    assert lookup(obj, "status.conditions.1.type") == (True, "Scheduled")
    assert lookup(obj, "status.conditions.2.type") == (False, None)
    assert lookup(obj, "status.conditions.x") == (False, None)
    assert selector_matches("status.conditions.0.type = Ready", obj, require_all=True)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("Completed", "Completed"),
        (True, "true"),
        (False, "false"),
        (None, ""),
        (3, "3"),
        (3.0, "3"),
        (0.5, "0.5"),
        (1e21, "1000000000000000000000"),
        ({"a": [1, 2]}, '{"a":[1,2]}'),
    ],
)
def test_gjson_string(value: object, text: str) -> None:
    assert gjson_string(value) == text


def test_null_counts_as_present() -> None:
    obj = {"status": {"state": None}}
    assert selector_matches("status.state", obj, require_all=True)
    assert not selector_matches("!status.state", obj, require_all=True)
    assert selector_matches("status.state = ", obj, require_all=True)


def test_requirement_str_round_trips() -> None:
    for text in (SUCCESS, FAILURE, "!a", "a", "a > 3"):
        requirements = parse_selector(text)
        assert parse_selector(", ".join(map(str, requirements))) == requirements
