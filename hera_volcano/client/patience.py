"""How long the client keeps trying when the API server fails in a way that may pass (unreachable, overloaded,
restarting), and how often a waiting log follower looks again: one place, so a caller (or a test) can shorten them.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from hera_volcano.client import failures
from hera_volcano.shared.errors import ClusterError, ValidationError

T = TypeVar("T")


@dataclass(frozen=True)
class Patience:
    """``grace``: seconds that failures which may pass are tried again before they are reported; ``retry``: the
    pause between two tries; ``wake``: how often a log follower looks again although nothing changed (its own grace
    for a Volcano Job to appear needs a clock)."""

    grace: float = 60.0
    retry: float = 2.0
    wake: float = 2.0

    def __post_init__(self) -> None:
        for name in ("grace", "retry", "wake"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
                raise ValidationError(f"patience.{name}", "must be a number of seconds, at least 0")


class Failing:
    """A run of failures that may pass: whether to try again depends on how long it has lasted."""

    def __init__(self, grace: float) -> None:
        self._grace = grace
        self._since: float | None = None

    def again(self, error: ClusterError) -> bool:
        """Whether to try again after ``error``: it may pass, and the failures began at most ``grace`` ago."""
        if not failures.transient(error):
            return False
        now = time.monotonic()
        if self._since is None:
            self._since = now
        return now - self._since <= self._grace

    def passed(self) -> None:
        """A call got through: the next failure starts a new run."""
        self._since = None


def retrying(call: Callable[[], T], patience: Patience) -> T:
    """``call()`` (a read, safe to repeat), tried again while its failures may pass, for ``patience.grace``."""
    failing = Failing(patience.grace)
    while True:
        try:
            return call()
        except ClusterError as e:
            if not failing.again(e):
                raise
        time.sleep(patience.retry)
