"""A sweep (:func:`hera_volcano.sweep`) run on this machine, trial by trial: :func:`hera_volcano.run_local` given what
``hv.sweep`` returned.

Each trial is one local run of the sweep's job with the trial's parameters and the sweep's other arguments; a trial
whose run fails (:class:`~hera_volcano.shared.errors.LocalRunError`), whose values the job refuses, or whose rank 0
leaves out a value the sweep gathers is a failed trial with its reason, as its step fails on the cluster. The best
trial is then decided by the pick's own code (:func:`hera_volcano.pods.sweep.decide` and
:func:`~hera_volcano.pods.sweep.outputs_of`): the outputs are the ones the sweep's template has on the cluster, and
the sweep fails exactly when its pick would. Trials run one after another (a sweep's ``parallelism`` is the
cluster's).

Nothing is started here: :func:`run_sweep` is given how to plan and run one trial (:mod:`hera_volcano.client.local`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import IO, Any, TypeVar

from hera_volcano.argo.parameters import check_arguments
from hera_volcano.argo.sweep_spec import TRIALS_INPUT, SweepSpec
from hera_volcano.client.local_report import RankZero
from hera_volcano.client.submission import parameter_texts
from hera_volcano.pods.sweep import Trial, decide, described, expected_trials, outputs_of, shown
from hera_volcano.shared.errors import LocalRunError, ValidationError

Plan = TypeVar("Plan")


def run_sweep(
    spec: SweepSpec,
    arguments: Mapping[str, object] | None,
    *,
    plan: Callable[[Mapping[str, str]], Plan],
    run: Callable[[Plan], RankZero],
    output: IO[str],
) -> dict[str, str]:
    """Run every trial of ``spec`` (``plan`` turns a trial's arguments into what ``run`` runs, raising
    ValidationError for refused values; ``run`` returns what rank 0 reported or raises LocalRunError), decide, and
    return the sweep's outputs; LocalRunError (with :attr:`~LocalRunError.outputs`) when the sweep fails."""
    given, listed = sweep_arguments(spec, arguments)
    trials = []
    for index, parameters in enumerate(listed):
        output.write(f"hera-volcano: trial {index} {shown(parameters)}: running\n")
        output.flush()
        trials.append(_trial(spec, index, parameters, {**given, **trial_texts(parameters)}, plan, run))
    verdict = decide(trials, spec.objective, spec.direction, spec.max_failures)
    lines = described(verdict, spec.objective, spec.direction)
    output.write("".join(f"hera-volcano: {line}\n" for line in lines[:-1]))
    outputs = outputs_of(verdict, spec.outputs)
    if verdict.best is None:
        raise LocalRunError(f"the sweep {spec.name!r} failed: {verdict.failure}", outputs=outputs)
    output.write(f"hera-volcano: {lines[-1]}\n")
    output.flush()
    return outputs


def sweep_arguments(
    spec: SweepSpec, arguments: Mapping[str, object] | None
) -> tuple[dict[str, str], list[dict[str, Any]]]:
    """The arguments every trial gets (the sweep's own inputs: given, else their defaults) and the list of trials
    (a run-time list from the argument ``sweep-trials``, text or a list), checked as a call of the sweep's template
    is: an argument naming no input of the sweep, or a required one left out, is a ValidationError."""
    values = dict(arguments or {})
    if spec.trials is None and isinstance(values.get(TRIALS_INPUT), list | tuple):
        values[TRIALS_INPUT] = json.dumps(values[TRIALS_INPUT], ensure_ascii=False)
    texts = parameter_texts(values, "arguments")
    inputs = [{"name": n, "default": d} for n, d in spec.inputs.items()]
    if spec.trials is None:
        inputs.append({"name": TRIALS_INPUT, "default": None})
    check_arguments(f"the sweep {spec.name!r}", inputs, list(texts))
    try:
        listed = expected_trials(texts.pop(TRIALS_INPUT, spec.trials or ""), spec.parameters)
    except ValueError as e:
        raise ValidationError(f"arguments.{TRIALS_INPUT}", str(e)) from None
    defaults = {n: d for n, d in spec.inputs.items() if d is not None}
    return {**defaults, **texts}, listed


def trial_texts(parameters: Mapping[str, Any]) -> dict[str, str]:
    """A trial's parameters as its job's arguments: text as it is, anything else as its JSON (what Argo puts for
    ``{{item.NAME}}``)."""
    return {k: v if isinstance(v, str) else json.dumps(v, separators=(",", ":")) for k, v in parameters.items()}


def _trial(
    spec: SweepSpec,
    index: int,
    parameters: Mapping[str, Any],
    arguments: Mapping[str, str],
    plan: Callable[[Mapping[str, str]], Plan],
    run: Callable[[Plan], RankZero],
) -> Trial:
    """One trial run to its end: Succeeded with the values the sweep gathers, or Failed with why."""
    try:
        report = run(plan(arguments))
    except LocalRunError as e:
        return Trial(index, parameters, "Failed", {}, str(e))
    except ValidationError as e:
        if not e.field.startswith("arguments"):
            raise  # the job or the run's settings, not this trial's values: no trial can run
        return Trial(index, parameters, "Failed", {}, f"its arguments are refused: {e}")
    got = report.outputs(spec.outputs)
    if got.refused:
        why = next(iter(got.refused.values()))
        return Trial(index, parameters, "Failed", {}, f"the job's rank 0 reported a value that is refused, {why}")
    if got.missing:
        return Trial(
            index, parameters, "Failed", {}, f"the job's rank 0 reported no value for: {' '.join(got.missing)}"
        )
    return Trial(index, parameters, "Succeeded", {name: got.values[name] for name in spec.outputs})
