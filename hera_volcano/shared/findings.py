"""A rule violation found in plain data, shared by the job model (which raises) and the linter (which reports),
and the small helpers both use to walk untrusted data and name the field they are at."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

Severity = Literal["error", "warning"]


@dataclass(frozen=True)
class Finding:
    """One broken rule: where (a dotted field path), how bad, and what the rule is."""

    path: str
    severity: Severity
    message: str


def error(path: str, message: str) -> Finding:
    return Finding(path, "error", message)


def warning(path: str, message: str) -> Finding:
    return Finding(path, "warning", message)


def join(prefix: str, path: str) -> str:
    """``prefix`` then ``path``: ``[0]`` + ``spec.x`` is ``[0].spec.x``; an empty side leaves the other."""
    if not path:
        return prefix
    if not prefix:
        return path
    return prefix + path if path.startswith("[") else f"{prefix}.{path}"


_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
#: What would break a line of output or cannot be written as UTF-8: control characters (C0, DEL, C1, which hold
#: every character ``str.splitlines`` splits on but two), the line and paragraph separators, lone surrogates (a
#: YAML escape such as ``"\ud800"``, or a file name that is not UTF-8).
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")


def printable(text: str) -> str:
    """``text`` with what would break its line or its encoding written as a Python escape (``\\n``, ``\\x1b``,
    ``\\udcff``), so that a key, a value or a file name read from untrusted input cannot forge a second line."""
    return _UNPRINTABLE.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


def entry(path: str, key: object) -> str:
    """Path of a map entry: ``requests.cpu`` but ``requests[nvidia.com/gpu]`` when the key is not a plain word."""
    text = str(key)
    return join(path, text) if _PLAIN_KEY.fullmatch(text) else f"{path}[{text}]"


def as_map(value: object) -> Mapping[str, Any]:
    """``value`` if it is a mapping, else an empty one: rules read malformed input without crashing."""
    return value if isinstance(value, Mapping) else {}


def as_list(value: object) -> list[object]:
    """``value`` if it is a list, else an empty one."""
    return value if isinstance(value, list) else []
