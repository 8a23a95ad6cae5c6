"""How a pipeline's job uses its inputs (``Placeholder.input``): standing whole, inside strings, or read at run time
through an expression. That decides how an entry's arguments are encoded (:mod:`hera_volcano.builders.pipeline`)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from hera_volcano.builders.pipeline_entries import StepOutput
from hera_volcano.shared.placeholders import Placeholder, carried, expressions, placeholders
from hera_volcano.volcano.job import VolcanoJob

INPUT: Final = "inputs.parameters."
#: An input read inside an expression (``{{=replace(sprig.quote(inputs.parameters['lr']), ...)}}``): at run time.
_RUNTIME_INPUT: Final = re.compile(r"inputs\.parameters\['([-a-zA-Z0-9_]+)'\]")


@dataclass(frozen=True)
class Prepared:
    """A shape rendered once: its job (the workspace mounted), its data, and how each input is used: standing whole
    (by placeholder), inside strings (``embedded``), or read at run time through an expression (``runtime``)."""

    job: VolcanoJob
    data: dict[str, object]
    whole: Mapping[str, Placeholder]
    embedded: frozenset[str]
    runtime: frozenset[str]


def placeholder_key(value: object) -> str:
    """A placeholder in a key of what a job renders (``json.dumps``'s default): its text and its quoting."""
    if isinstance(value, Placeholder):
        return f"{value}|{value.in_quotes}"
    raise TypeError(f"{type(value).__name__} in a job's data")


def strings(data: object) -> list[str]:
    """Every string in ``data`` that holds an Argo expression."""
    if isinstance(data, str):
        return [data] if "{{" in data else []
    if isinstance(data, Mapping):
        return [s for v in data.values() for s in strings(v)]
    if isinstance(data, list | tuple):
        return [s for v in data for s in strings(v)]
    return []


def uses(job: VolcanoJob, job_label: str | Placeholder | None) -> Prepared:
    """How ``job``'s inputs are used: standing whole, inside strings, or read at run time (a label input is used
    inside a name)."""
    data = job._data()
    found = placeholders(data)
    whole = {e.removeprefix(INPUT): p for e, p in found.items() if e.startswith(INPUT)}
    runtime = {name for e in found if e.startswith("=") for name in _RUNTIME_INPUT.findall(e)}
    embedded: set[str] = set()
    for text in strings(data):
        for e in expressions(text):
            if e.startswith(INPUT):
                embedded.add(e.removeprefix(INPUT))
            elif e.startswith("="):
                runtime.update(_RUNTIME_INPUT.findall(e))
    if isinstance(job_label, Placeholder):
        embedded.add(job_label.expression.removeprefix(INPUT))
    return Prepared(job, data, whole, frozenset(embedded), frozenset(runtime))


def runtime_argument(value: object, field: str, kind: str) -> str:
    """A parameter the job reads at run time (through an expression that escapes it whatever it holds): its text,
    a step's output, or JSON for a non-text value (the launcher parses it back)."""
    if isinstance(value, StepOutput):
        return value.reference(kind)
    text = value if isinstance(value, str) else json.dumps(value)
    return carried(field, text)
