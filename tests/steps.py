"""A step budget for "no hang" tests: counts the calls a function makes (Python and C functions alike, through
``sys.setprofile``) and stops it, with :class:`OverBudget`, once they pass the budget, so that a test of work that
must be linear fails quickly instead of hanging, and never depends on how fast the machine is."""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import FrameType
from typing import Any, TypeVar

T = TypeVar("T")


class OverBudget(BaseException):
    """The function made more calls than its budget allowed (a BaseException: code that reports every Exception
    of untrusted input as a finding must not swallow it)."""


def within(budget: int, fn: Callable[[], T]) -> tuple[T, int]:
    """``fn()`` and how many calls it made; raises :class:`OverBudget` as soon as it makes more than ``budget``."""
    count = 0

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        nonlocal count
        if event in ("call", "c_call"):
            count += 1
            if count > budget:
                sys.setprofile(None)
                raise OverBudget(f"more than {budget:,} calls")

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        result = fn()
    finally:
        sys.setprofile(previous)
    return result, count
