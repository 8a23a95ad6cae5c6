"""Suggestions for a misspelt name (did you mean ...?): the closest of the names that would have been right."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

#: How alike two names must be (difflib's ratio) to suggest one for the other.
_CUTOFF = 0.7


def _squashed(name: str) -> str:
    return name.lower().replace("_", "").replace("-", "")


def closest(name: str, choices: Iterable[str]) -> str | None:
    """The choice ``name`` most likely misspells: the same but for case, ``_`` or ``-``, else the nearest by
    difflib; None when nothing is close."""
    options = list(choices)
    same = [c for c in options if _squashed(c) == _squashed(name)]
    if same:
        return same[0]
    found = difflib.get_close_matches(name, options, n=1, cutoff=_CUTOFF)
    return found[0] if found else None


def did_you_mean(name: str, choices: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest choice, or nothing."""
    found = closest(name, choices)
    return "" if found is None else f" (did you mean {found!r}?)"
