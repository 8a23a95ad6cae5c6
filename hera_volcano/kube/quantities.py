"""Kubernetes quantities and Go durations, parsed exactly as the API server and Volcano do."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from decimal import Decimal
from fractions import Fraction
from typing import Final

QUANTITY_MESSAGE: Final = "must be a Kubernetes quantity such as 500m, 2, 1.5Gi or 1e3"
DURATION_MESSAGE: Final = "must be a Go duration such as 30s, 10m or 1h30m"

_QUANTITY: Final = re.compile(
    r"(?P<sign>[+-]?)(?P<number>[0-9]+(?:\.[0-9]*)?|\.[0-9]+)"
    r"(?:(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])|[eE](?P<exponent>[+-]?[0-9]+))?"
)
_SUFFIXES: Final[Mapping[str, Fraction]] = {
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 10**3),
    "": Fraction(1),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
    "Ki": Fraction(2**10),
    "Mi": Fraction(2**20),
    "Gi": Fraction(2**30),
    "Ti": Fraction(2**40),
    "Pi": Fraction(2**50),
    "Ei": Fraction(2**60),
}
_QUANTITY_MAX: Final = Fraction(2**63 - 1)
_NANO: Final = 10**9


def parse_quantity(value: object) -> Fraction:
    """The exact value of a Kubernetes quantity (``"500m"``, ``"1.5Gi"``, ``"1e3"``, or a YAML number).

    Exact (a Fraction, never a float) so requests and limits compare as the API server compares them. Like the API
    server, magnitudes are capped at 2^63-1 and precision is rounded up to 1n. Raises ``ValueError``.
    """
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise ValueError(QUANTITY_MESSAGE)
    text = value if isinstance(value, str) else repr(value)
    match = _QUANTITY.fullmatch(text)
    if match is None:
        raise ValueError(QUANTITY_MESSAGE)
    amount = Fraction(Decimal(match["number"]))
    if match["exponent"] is not None:
        # Anything beyond 10^±40 is capped or rounded below anyway; clamping keeps "1e999999999" cheap.
        amount *= Fraction(10) ** max(-40, min(40, int(match["exponent"])))
    else:
        amount *= _SUFFIXES[match["suffix"] or ""]
    amount = min(amount, _QUANTITY_MAX)
    amount = Fraction(math.ceil(amount * _NANO), _NANO)
    return -amount if match["sign"] == "-" else amount


def quantity(value: object) -> Fraction | None:
    """The quantity, or None when ``value`` is not one."""
    try:
        return parse_quantity(value)
    except ValueError:
        return None


def json_quantity(value: object) -> bool:
    """Whether Kubernetes decodes ``value`` (a YAML scalar, as JSON) into a quantity: a string (surrounding white
    space trimmed) or a number it parses; never true/false. Argo decodes a workflow's quantities this way."""
    if isinstance(value, bool):
        return False
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, str):
        value = value.strip()
    return quantity(value) is not None


_GO_DURATION: Final = re.compile(r"[-+]?(?:0|(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:ns|us|µs|μs|ms|s|m|h))+)")


def is_go_duration(text: object) -> bool:
    """Whether Go's ``time.ParseDuration`` accepts ``text``: Volcano decodes policy timeouts with it."""
    return isinstance(text, str) and _GO_DURATION.fullmatch(text) is not None
