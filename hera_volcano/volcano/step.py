"""How the step that runs a job treats it, set on the job itself: its time limits and its retries (explicit and
exclusive: Argo creates the job again, or Volcano restarts it)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from hera_volcano.shared import checks
from hera_volcano.shared.errors import ValidationError

#: How long a job's follower lets it wait to start by default (seconds): a day. Waiting in a Volcano queue for hours
#: is normal on a shared GPU rack, so the limit is long; a gang that has not started within a day is stuck, not
#: queued, and a nightly run must not still be waiting when the next one is submitted. No default ends a job that
#: runs.
DEFAULT_START_LIMIT = 86400


@dataclass(frozen=True)
class ArgoRetry:
    """Retry the whole step in Argo: the job is created again (its name is generated, so nothing collides).

    :param limit: how many times the step is tried again after its first attempt (Argo's ``retryStrategy.limit``).
    :param policy: which failures are retried (Argo's ``retryPolicy``): ``Always``, ``OnFailure`` (the job failed),
        ``OnError`` (the step errored) or ``OnTransientError``.
    """

    limit: int
    policy: str = "Always"

    def __post_init__(self) -> None:
        checks.integer("retry.limit", self.limit, minimum=1, maximum=checks.INT32_MAX)
        if self.policy not in ("Always", "OnFailure", "OnError", "OnTransientError"):
            raise ValidationError("retry.policy", "must be Always, OnFailure, OnError or OnTransientError")


@dataclass(frozen=True)
class VolcanoRetry:
    """Retry inside Volcano: the job restarts on ``restart_on`` events, at most ``max_retry`` times in all.

    Volcano cannot express zero retries (its webhook turns ``maxRetry: 0`` into 3), hence ``max_retry`` ≥ 1.

    :param max_retry: how many times Volcano restarts the job at most (the job's ``maxRetry``).
    :param restart_on: the events on which it restarts the job (``RestartJob`` policies).
    """

    max_retry: int
    restart_on: Sequence[str] = ("PodEvicted", "PodFailed")

    def __post_init__(self) -> None:
        # a tuple: hashable, as jobs that render alike share a template
        object.__setattr__(
            self, "restart_on", tuple(checks.strings("retry.restart_on", self.restart_on, non_empty=True))
        )
        if checks.integer("retry.max_retry", self.max_retry) < 1:
            raise ValidationError("retry.max_retry", "must be a positive integer (Volcano turns 0 into 3)")
