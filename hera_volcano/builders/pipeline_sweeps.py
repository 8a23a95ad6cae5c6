"""A sweep as a pipeline entry (:class:`~hera_volcano.PipelineSweep`): checked by making it with
:func:`hera_volcano.sweep` (the one implementation) in a context of its own, keyed by all it renders (sweeps that
render alike share one set of templates), and its call's own arguments checked as a call of its template."""

from __future__ import annotations

import contextvars
import hashlib
import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from hera_volcano.argo.sweep_spec import TRIALS_INPUT, SweepSpec
from hera_volcano.builders.pipeline_entries import PipelineSweep, StepOutput
from hera_volcano.builders.pipeline_inputs import Prepared, placeholder_key, uses
from hera_volcano.shared.errors import ValidationError
from hera_volcano.shared.suggestions import did_you_mean
from hera_volcano.volcano.job import VolcanoJob

if TYPE_CHECKING:
    from hera_volcano.argo.sweep import SweepDAG

#: The templates of sweeps that render alike, unless the entry names them: this and a digest of what they render.
SWEEP_PREFIX: Final = "sweep-"
#: A run-time list of trials in a pipeline: an earlier entry's output parameter, written for a DAG or Steps.
_ENTRY_OUTPUT: Final = re.compile(r"\{\{(?:tasks|steps)\.([-a-zA-Z0-9_]+)\.outputs\.parameters\.([-a-zA-Z0-9_]+)\}\}")


@dataclass(frozen=True)
class SweepShape:
    """What the sweeps that share one set of templates share: the templates' name, ``key`` (all they render, as
    text), the job with the workspace mounted, its inputs' use, and the sweep's settings as :func:`sweep` checked
    them."""

    name: str
    key: str
    job: VolcanoJob
    prepared: Prepared
    spec: SweepSpec


def make_sweep(entry: PipelineSweep, job: VolcanoJob, name: str, follower_image: str) -> SweepDAG:
    """The entry's sweep (:func:`hera_volcano.sweep`) of ``job``, its templates ``name``."""
    from hera_volcano.argo.sweep import sweep

    return sweep(
        job,
        entry.space,  # type: ignore[arg-type]  # sweep checks it
        name=name,
        objective=entry.objective,
        direction=entry.direction,
        outputs=entry.outputs,
        parallelism=entry.parallelism,
        max_failures=entry.max_failures,
        follower_image=follower_image,
    )


def sweep_shape(entry: PipelineSweep, job: VolcanoJob, field: str, follower_image: str) -> SweepShape:
    """The entry's sweep checked by :func:`sweep` itself, made in a scratch workflow in a context of its own (Hera
    keeps the workflow being built in a context variable: nothing reaches the workflow you may be building), and
    named by what it renders unless the entry names it. An error names the entry."""
    from hera.workflows import Workflow

    def made_alone() -> SweepDAG:
        with Workflow(name="check"):
            return make_sweep(entry, job, entry.template or SWEEP_PREFIX + "0" * 8, follower_image)

    try:
        made = contextvars.Context().run(made_alone)
    except ValidationError as e:
        raise ValidationError(f"{field} ({entry.name}): {e.field}", e.rule) from None
    spec = made.sweep_spec
    assert spec is not None
    key = json.dumps(
        [job._data(), job.deadline, job.start_limit, repr(job.retry), *_settings(spec)],
        sort_keys=True,
        default=placeholder_key,
    )
    name = entry.template or SWEEP_PREFIX + hashlib.sha256(key.encode()).hexdigest()[:8]
    return SweepShape(name, key, job, uses(job, None), spec)


def sweep_call(entry: PipelineSweep, spec: SweepSpec, field: str) -> dict[str, object]:
    """The sweep's call: the entry's arguments for the sweep's own inputs (the job's inputs it does not sweep), and
    for a run-time space the earlier entry's output its list is, checked as a call of the sweep's template is."""
    arguments = dict(entry.arguments)
    own = dict(spec.inputs)
    if spec.trials is None:
        own[TRIALS_INPUT] = None
        if TRIALS_INPUT in arguments:
            raise ValidationError(
                f"{field}.arguments.{TRIALS_INPUT}", "is the sweep's own: its space (hv.TrialsFrom) names the list"
            )
        arguments[TRIALS_INPUT] = _trials_output(entry.space, f"{field}.space.expression")
    for given in arguments:
        if given not in own:
            swept = given in spec.parameters
            rule = "is swept by the space" if swept else f"the sweep has no input {given!r}"
            hint = "" if swept else did_you_mean(given, list(own))
            ours = ", ".join(own) or "none"
            raise ValidationError(f"{field}.arguments.{given}", f"{rule}{hint} (its own inputs: {ours})")
    missing = sorted(k for k, default in own.items() if default is None and k not in arguments)
    if missing:
        raise ValidationError(f"{field}.arguments", f"missing {', '.join(missing)}")
    return arguments


def _settings(spec: SweepSpec) -> list[object]:
    """What a sweep renders besides its job and its name."""
    settings = [spec.objective, spec.direction, list(spec.outputs), spec.max_failures, spec.parallelism]
    return [*settings, list(spec.parameters), spec.trials, dict(spec.inputs)]


def _trials_output(space: object, field: str) -> StepOutput:
    """The earlier entry's output a run-time space (``TrialsFrom``) names, for a DAG or Steps alike."""
    expression = getattr(space, "expression", "")
    found = _ENTRY_OUTPUT.fullmatch(expression) if isinstance(expression, str) else None
    if found is None:
        raise ValidationError(
            field,
            f"in a pipeline, must be an earlier entry's output parameter, {{{{tasks.NAME.outputs.parameters.OUTPUT}}}},"
            f" not {expression!r}",
        )
    return StepOutput(found[1], found[2])
