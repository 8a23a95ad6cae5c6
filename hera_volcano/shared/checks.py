"""Checks of the arguments users pass to the builders, so a wrong type is a ValidationError naming the argument
(never a TypeError from deep inside, nor a string silently taken as a list of characters)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from hera_volcano.shared.errors import ValidationError

#: Argo's and Kubernetes' int32 fields (deadlines, retry limits, replicas) refuse anything outside these.
INT32_MIN: Final = -(2**31)
INT32_MAX: Final = 2**31 - 1
#: Go's int64, the other integer type Argo and Kubernetes decode.
INT64_MIN: Final = -(2**63)
INT64_MAX: Final = 2**63 - 1


def integer(field: str, value: object, *, minimum: int = 0, maximum: int | None = None) -> int:
    """An ``int`` (not a bool) within bounds."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationError(field, "must be an integer")
    if value < minimum:
        raise ValidationError(field, "must be a positive integer" if minimum == 1 else f"must be at least {minimum}")
    if maximum is not None and value > maximum:
        raise ValidationError(field, f"must be at most {maximum}")
    return value


def strings(field: str, value: object, *, non_empty: bool = False) -> list[str]:
    """A list (or tuple) of strings; a lone string is refused rather than split into characters."""
    if isinstance(value, str):
        shown = repr(value) if len(value) <= 40 else repr(value[:37] + "...")
        raise ValidationError(field, f"must be a list of strings, not the string {shown} (read letter by letter)")
    if isinstance(value, bytes) or not isinstance(value, Sequence):
        raise ValidationError(field, "must be a list of strings")
    items = list(value)
    for i, item in enumerate(items):
        if not isinstance(item, str):
            raise ValidationError(f"{field}[{i}]", "must be a string")
    if non_empty and not items:
        raise ValidationError(field, "must not be empty")
    return items
