"""The search spaces of a sweep (:func:`hera_volcano.sweep`): a grid, random samples with a seed, an explicit list of
parameter sets, each known when the workflow renders; or a list an earlier step makes at run time.

Each static space gives the same list of trials every time it renders (random samples are drawn here, with their
seed, not in the cluster): the list is the loop's ``withItems``, one map of parameter values per trial. A value is
text, a number or true/false that Argo carries unchanged (no ``{{``, no NaN).
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from hera_volcano.shared import checks
from hera_volcano.shared.errors import ValidationError
from hera_volcano.shared.placeholders import carried, expressions

Value = str | int | float | bool
#: The most trials a static space may give: each trial is some nodes of one Workflow object (kept in etcd), and a
#: list past this is more likely a mistake (a grid's product, a count's extra digit) than a plan.
MAX_TRIALS = 10_000


def _at_most(field: str, count: int) -> None:
    if count > MAX_TRIALS:
        raise ValidationError(
            field, f"gives {count} trials, more than {MAX_TRIALS}: each is nodes of one Workflow; split the sweep"
        )


def _value(field: str, value: object) -> Value:
    """A parameter's value Argo carries as it is: text (no tag), an integer, a finite number, true/false."""
    if isinstance(value, str):
        return carried(field, value)
    if isinstance(value, float) and not math.isfinite(value):
        raise ValidationError(field, "must be a finite number (JSON has no NaN or infinity)")
    if not isinstance(value, str | int | float | bool):
        raise ValidationError(field, f"must be text, a number or true/false, not {type(value).__name__}")
    if isinstance(value, int) and not isinstance(value, bool):
        _int64(field, value)
    return value


def _int64(field: str, value: int) -> None:
    """A whole number Argo and the API server keep exact (a larger one becomes a rounded float in JSON)."""
    if not checks.INT64_MIN <= value <= checks.INT64_MAX:
        raise ValidationError(field, "must fit in 64 bits (a larger number would reach the job rounded)")


def _names(field: str, mapping: object) -> list[str]:
    if not isinstance(mapping, Mapping) or not mapping:
        raise ValidationError(field, "must map at least one parameter name to its values")
    for name in mapping:
        if not isinstance(name, str) or not name:
            raise ValidationError(field, f"a parameter's name must be text, not {name!r}")
    return list(mapping)


@dataclass(frozen=True)
class Grid:
    """Every combination of the values given for each parameter (``Grid({"lr": [0.1, 0.3], "batch": [32, 64]})``:
    four trials, the last name varying fastest).

    :param parameters: each parameter's name and its values."""

    parameters: Mapping[str, Sequence[Value]]

    def trials_list(self) -> list[dict[str, Value]]:
        """The trials, in order."""
        columns = []
        for name in _names("space.parameters", self.parameters):
            values = self.parameters[name]
            if isinstance(values, str | bytes) or not isinstance(values, Sequence) or not values:
                raise ValidationError(f"space.parameters.{name}", "must be a non-empty list of values")
            columns.append([_value(f"space.parameters.{name}[{i}]", v) for i, v in enumerate(values)])
        _at_most("space.parameters", math.prod(len(c) for c in columns))
        return [dict(zip(self.parameters, combo, strict=True)) for combo in itertools.product(*columns)]


@dataclass(frozen=True)
class Uniform:
    """A number drawn uniformly between ``low`` and ``high`` (``log``: uniformly in their logarithms, both > 0).

    :param low: the lowest value.
    :param high: the highest value (above ``low``).
    :param log: draw on a log scale.
    """

    low: float
    high: float
    log: bool = False

    def _draw(self, rng: random.Random, field: str) -> float:
        for bound in ("low", "high"):
            value = getattr(self, bound)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ValidationError(f"{field}.{bound}", "must be a finite number")
            if isinstance(value, int):
                _int64(f"{field}.{bound}", value)
            elif not math.isfinite(value):
                raise ValidationError(f"{field}.{bound}", "must be a finite number")
        if not self.low < self.high:
            raise ValidationError(field, "low must be below high")
        if not math.isfinite(self.high - self.low):
            raise ValidationError(field, "low and high are too far apart for a finite draw")
        if self.log:
            if self.low <= 0:
                raise ValidationError(f"{field}.low", "must be above 0 on a log scale")
            return math.exp(rng.uniform(math.log(self.low), math.log(self.high)))
        return rng.uniform(self.low, self.high)


@dataclass(frozen=True)
class IntRange:
    """A whole number drawn uniformly from ``low`` to ``high``, both included.

    :param low: the lowest value.
    :param high: the highest value.
    """

    low: int
    high: int

    def _draw(self, rng: random.Random, field: str) -> int:
        checks.integer(f"{field}.low", self.low, minimum=checks.INT64_MIN)
        checks.integer(f"{field}.high", self.high, minimum=self.low, maximum=checks.INT64_MAX)
        return rng.randint(self.low, self.high)


@dataclass(frozen=True)
class RandomSearch:
    """``samples`` trials, each parameter drawn from its distribution (:class:`Uniform`, :class:`IntRange`) or
    chosen from a list, with ``seed``: drawn when the workflow renders, the same trials every time.

    :param parameters: each parameter's name and its distribution or list of choices.
    :param samples: how many trials.
    :param seed: the seed of the draw."""

    parameters: Mapping[str, Uniform | IntRange | Sequence[Value]]
    samples: int
    seed: int

    def trials_list(self) -> list[dict[str, Value]]:
        """The trials, in the order they were drawn."""
        names = _names("space.parameters", self.parameters)
        checks.integer("space.samples", self.samples, minimum=1, maximum=MAX_TRIALS)
        checks.integer("space.seed", self.seed, minimum=checks.INT64_MIN)
        rng = random.Random(self.seed)
        found = []
        for _ in range(self.samples):
            trial: dict[str, Value] = {}
            for name in names:
                field, spec = f"space.parameters.{name}", self.parameters[name]
                if isinstance(spec, Uniform | IntRange):
                    trial[name] = spec._draw(rng, field)
                elif isinstance(spec, str | bytes) or not isinstance(spec, Sequence) or not spec:
                    raise ValidationError(field, "must be Uniform(...), IntRange(...) or a non-empty list of choices")
                else:
                    trial[name] = _value(field, spec[rng.randrange(len(spec))])
            found.append(trial)
        return found


@dataclass(frozen=True)
class Trials:
    """An explicit list of parameter sets, one trial each, every set giving the same names.

    :param trials: the parameter sets."""

    trials: Sequence[Mapping[str, Value]]

    def trials_list(self) -> list[dict[str, Value]]:
        """The trials, in order."""
        if isinstance(self.trials, str | bytes) or not isinstance(self.trials, Sequence) or not self.trials:
            raise ValidationError("space.trials", "must be a non-empty list of parameter maps")
        _at_most("space.trials", len(self.trials))
        first = _names("space.trials[0]", self.trials[0])
        found = []
        for i, given in enumerate(self.trials):
            names = _names(f"space.trials[{i}]", given)
            if set(names) != set(first):
                odd = sorted(set(names) ^ set(first))
                raise ValidationError(f"space.trials[{i}]", f"must give the same names as trial 0 (differs in {odd})")
            found.append({n: _value(f"space.trials[{i}].{n}", given[n]) for n in first})
        return found


@dataclass(frozen=True)
class TrialsFrom:
    """A list an earlier step makes at run time: ``expression`` is the Argo expression of a JSON list of maps
    (``{{tasks.grid.outputs.result}}``, ``{{steps.grid.outputs.parameters.list}}``), each map giving every name of
    ``parameters``. The sweep's call passes it on; the step that makes it runs first (``grid >> sweep``).

    :param expression: the Argo expression of the list.
    :param parameters: the names each map gives (the job's inputs it sweeps)."""

    expression: str
    parameters: Sequence[str]

    def names(self) -> list[str]:
        """The swept names, after checking the expression is one Argo expression."""
        if not isinstance(self.expression, str) or len(expressions(self.expression)) != 1:
            raise ValidationError("space.expression", "must be one Argo expression, {{tasks.NAME.outputs.result}}")
        if not (self.expression.startswith("{{") and self.expression.endswith("}}")):
            raise ValidationError("space.expression", "must be the expression alone, {{...}}, nothing around it")
        return checks.strings("space.parameters", self.parameters, non_empty=True)


Space = Grid | RandomSearch | Trials | TrialsFrom
