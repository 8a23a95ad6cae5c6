"""A rule violation found in plain data, shared by the job model (which raises) and the linter (which reports)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Severity = Literal["error", "warning"]


@dataclass(frozen=True)
class Finding:
    """One broken rule: where (a dotted field path), how bad, and what the rule is."""

    path: str
    severity: Severity
    message: str
