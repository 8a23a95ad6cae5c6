"""Label selectors as argoexec reads a resource step's ``successCondition`` and ``failureCondition``.

argoexec parses the condition with the Kubernetes label-selector grammar and looks each key up as a gjson path in
the live object's JSON. Nothing checks the condition before the step runs, so a condition that fails to parse or
never matches is only found out on the cluster; this module lets us find it out here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Final, Literal

from hera_volcano.kube import names
from hera_volcano.shared import checks

Operator = Literal["=", "==", "!=", "in", "notin", "exists", "!", ">", "<"]

#: Go's ``strconv.ParseInt(s, 10, 64)`` syntax (range checked separately).
_GO_INT: Final = re.compile(r"[+-]?[0-9]+")
_WHITESPACE: Final = " \t\r\n"
_SPECIAL: Final = "=!(),><"
_SYMBOLS: Final = ("!=", "==", "!", "(", ")", ",", "=", ">", "<")
_BINARY_OPERATORS: Final[Mapping[str, Operator]] = {
    "=": "=",
    "==": "==",
    "!=": "!=",
    "in": "in",
    "notin": "notin",
    ">": ">",
    "<": "<",
}


@dataclass(frozen=True)
class Requirement:
    """One comma-separated part of a selector: a key (a dotted JSON path), an operator and its values."""

    key: str
    operator: Operator
    values: tuple[str, ...] = ()

    def matches(self, obj: Mapping[str, Any]) -> bool:
        """Whether the live object satisfies this requirement, with argoexec's semantics.

        A missing field makes ``!=``, ``notin`` and ``!key`` true, and ``>``/``<`` false; ``>``/``<`` compare the
        field as a 64-bit integer and are false when it is not one.
        """
        found, value = lookup(obj, self.key)
        if self.operator == "exists":
            return found
        if self.operator == "!":
            return not found
        if self.operator in ("!=", "notin"):
            return not found or gjson_string(value) not in self.values
        if not found:
            return False
        text = gjson_string(value)
        if self.operator in ("=", "==", "in"):
            return text in self.values
        number = _go_int(text)
        if number is None:
            return False
        limit = int(self.values[0])
        return number > limit if self.operator == ">" else number < limit

    def __str__(self) -> str:
        if self.operator == "exists":
            return self.key
        if self.operator == "!":
            return f"!{self.key}"
        if self.operator in ("in", "notin"):
            return f"{self.key} {self.operator} ({', '.join(self.values)})"
        return f"{self.key} {self.operator} {self.values[0]}"


def lookup(obj: object, path: str) -> tuple[bool, object]:
    """Follow a dotted gjson path; ``(False, None)`` when any part is missing. Digits index into lists."""
    current = obj
    for part in path.split("."):
        if isinstance(current, Mapping):
            if part not in current:
                return False, None
            current = current[part]
        elif isinstance(current, list) and part.isascii() and part.isdigit() and int(part) < len(current):
            current = current[int(part)]
        else:
            return False, None
    return True, current


def gjson_string(value: object) -> str:
    """The string gjson's ``Result.String()`` gives for a JSON value: what selector values are compared with."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        # Go's FormatFloat(f, 'f', -1, 64): shortest round-trip digits, never an exponent.
        return format(Decimal(repr(value)).normalize(), "f")
    return json.dumps(value, separators=(",", ":"), default=str, skipkeys=True)


def _go_int(text: str) -> int | None:
    if _GO_INT.fullmatch(text) is None:
        return None
    number = int(text)
    return number if checks.INT64_MIN <= number <= checks.INT64_MAX else None


# ---- parsing -------------------------------------------------------------------------------------------------------

_Token = tuple[str, str]  # (kind, literal); kind is "id", "in", "notin", "end" or the symbol itself


def _tokens(text: str) -> Iterator[_Token]:
    """The Kubernetes selector lexer: symbols, the keywords ``in``/``notin``, and words up to a symbol or blank."""
    i, n = 0, len(text)
    while True:
        while i < n and text[i] in _WHITESPACE:
            i += 1
        if i >= n:
            yield ("end", "")
            return
        if text[i] in _SPECIAL:
            symbol = next(s for s in _SYMBOLS if text.startswith(s, i))
            i += len(symbol)
            yield (symbol, symbol)
            continue
        start = i
        while i < n and text[i] not in _WHITESPACE and text[i] not in _SPECIAL:
            i += 1
        word = text[start:i]
        yield (word if word in ("in", "notin") else "id", word)


class _Parser:
    """Recursive descent over the token list, mirroring the Kubernetes parser (and its error messages)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = list(_tokens(text))
        self.position = 0

    def _error(self, found: _Token, expected: str) -> ValueError:
        shown = "end of string" if found[0] == "end" else found[1]
        return ValueError(f"invalid selector {self.text!r}: found {shown!r}, expected {expected}")

    def _peek(self, *, values: bool = True) -> _Token:
        kind, literal = self.tokens[self.position]
        # In a value position the keywords are plain words ("in" may be a key or a value).
        return ("id", literal) if values and kind in ("in", "notin") else (kind, literal)

    def _next(self, *, values: bool = True) -> _Token:
        token = self._peek(values=values)
        self.position += 1
        return token

    def parse(self) -> list[Requirement]:
        requirements: list[Requirement] = []
        while True:
            token = self._peek()
            if token[0] == "end":
                return requirements
            if token[0] not in ("id", "!"):
                raise self._error(token, "'!', a key or the end of the string")
            requirements.append(self._requirement())
            token = self._next()
            if token[0] == "end":
                return requirements
            if token[0] != ",":
                raise self._error(token, "',' or the end of the string")
            if self._peek()[0] not in ("id", "!"):
                raise self._error(self._peek(), "'!' or a key after ','")

    def _requirement(self) -> Requirement:
        negated = self._peek()[0] == "!"
        if negated:
            self._next()
        token = self._next()
        if token[0] != "id":
            raise self._error(token, "a key")
        key = _valid_key(self.text, token[1])
        if negated:
            return Requirement(key, "!")
        if self._peek()[0] in ("end", ","):
            return Requirement(key, "exists")
        operator = self._operator()
        values = self._value_list() if operator in ("in", "notin") else (self._exact_value(),)
        return _requirement(self.text, key, operator, values)

    def _operator(self) -> Operator:
        token = self._next(values=False)
        operator = _BINARY_OPERATORS.get(token[0])
        if operator is None:
            raise self._error(token, f"an operator ({', '.join(_BINARY_OPERATORS)})")
        return operator

    def _exact_value(self) -> str:
        if self._peek()[0] in ("end", ","):
            return ""
        token = self._next()
        if token[0] != "id":
            raise self._error(token, "a value")
        return token[1]

    def _value_list(self) -> tuple[str, ...]:
        token = self._next()
        if token[0] != "(":
            raise self._error(token, "'('")
        values: list[str] = []
        expect_value = True
        while True:
            token = self._next()
            if token[0] == ")":
                if expect_value:
                    values.append("")  # "()", "(a,)" and "(,)" hold the empty value, as in Kubernetes
                return tuple(values)
            if token[0] == "," and expect_value:
                values.append("")
            elif token[0] == "," or (token[0] == "id" and expect_value):
                if token[0] == "id":
                    values.append(token[1])
                expect_value = token[0] == ","
            else:
                raise self._error(token, "',', ')' or a value" if expect_value else "',' or ')'")


def _valid_key(text: str, key: str) -> str:
    message = names.qualified_name(key)
    if message is not None:
        raise ValueError(
            f"invalid selector {text!r}: key {key!r} {message.replace('qualified name', 'valid label key', 1)};"
            " argoexec reads keys as plain dotted paths such as status.state.phase, not gjson queries"
        )
    return key


def _requirement(text: str, key: str, operator: Operator, values: Sequence[str]) -> Requirement:
    if operator in (">", "<") and _go_int(values[0]) is None:
        raise ValueError(f"invalid selector {text!r}: {operator!r} needs an integer value, got {values[0]!r}")
    for value in values:
        message = names.label_value(value)
        if message is not None:
            raise ValueError(f"invalid selector {text!r}: value {value!r} {message}; a value holds no spaces or quotes")
    return Requirement(key, operator, tuple(sorted(set(values))))


def parse_selector(text: str) -> list[Requirement]:
    """Parse a condition as argoexec does; ``ValueError`` says what is wrong, as the step would fail at run time."""
    return _Parser(text).parse()


def selector_matches(text: str, obj: Mapping[str, Any], *, require_all: bool) -> bool:
    """Evaluate a condition on a live object.

    ``require_all=True`` for a success condition (every requirement must hold); ``False`` for a failure condition,
    which argoexec fires on the first requirement that holds, contrary to its documentation.
    """
    requirements = parse_selector(text)
    if require_all:
        return all(r.matches(obj) for r in requirements)
    return any(r.matches(obj) for r in requirements)
