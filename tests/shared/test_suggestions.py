"""Suggestions for misspelt names: case, '_' and '-' first, then the nearest name, and nothing when none is close."""

from __future__ import annotations

from hera_volcano.shared.suggestions import closest, did_you_mean

FIELDS = ["entrypoint", "serviceAccountName", "templates", "onExit"]


def test_case_and_separators_are_ignored_first() -> None:
    assert closest("EntryPoint", FIELDS) == "entrypoint"
    assert closest("service_account_name", FIELDS) == "serviceAccountName"
    assert closest("on-exit", FIELDS) == "onExit"


def test_typos_find_the_nearest_name() -> None:
    assert closest("entrypiont", FIELDS) == "entrypoint"
    assert closest("templtes", FIELDS) == "templates"


def test_nothing_close_is_no_suggestion() -> None:
    assert closest("zzzz", FIELDS) is None
    assert did_you_mean("zzzz", FIELDS) == ""
    assert did_you_mean("templtes", FIELDS) == " (did you mean 'templates'?)"
