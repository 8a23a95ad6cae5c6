"""A sweep: one job run once per parameter set of a search space, at most N at once, and the best trial picked.

:func:`sweep` returns a DAG template ``NAME`` of two tasks: ``trials``, a loop over the space calling the job's
:func:`~hera_volcano.job_dag` (template ``NAME-trial``: each trial its own Volcano Job in the job's queue, and its own
follower), and ``pick``, the pods' program (:mod:`hera_volcano.pods.sweep`, template ``NAME-pick``), which runs once
every trial has ended, reads each trial's parameters, values, phase and reason from the Workflow, and picks the best
by the objective. The DAG's outputs are the pick's: ``trials`` (JSON), ``best-params`` (JSON), ``best-trial`` and
``best-NAME`` of each reported value. Call it as any template, inside your own DAG or Steps.

This module imports ``hera.workflows`` (slow); ``import hera_volcano`` reaches it only when it is used.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Final

from hera.workflows import ConfigMapVolume, Container, Env, FieldEnv, Parameter, Step, Task
from hera.workflows.models import ValueFrom
from pydantic import PrivateAttr

from hera_volcano.argo.calls import JobDAG
from hera_volcano.argo.job_dag import job_dag, lifted
from hera_volcano.argo.labels import NODE_NAME_ANNOTATION
from hera_volcano.argo.space import Grid, RandomSearch, Space, Trials, TrialsFrom
from hera_volcano.argo.sweep_spec import TRIALS_INPUT, SweepSpec
from hera_volcano.kube import names
from hera_volcano.kube.images import PYTHON_IMAGE, check_image
from hera_volcano.pods import program
from hera_volcano.pods.reports import NAME, is_name
from hera_volcano.pods.sweep import (
    BEST_PREFIX,
    DIRECTIONS,
    PICK_COMMAND,
    PICK_TASK,
    RESERVED_REPORTS,
    TRIALS_TASK,
    PickSettings,
    sweep_outputs,
)
from hera_volcano.shared import checks
from hera_volcano.shared import outputs as report_names
from hera_volcano.shared.errors import ValidationError
from hera_volcano.shared.suggestions import did_you_mean
from hera_volcano.volcano.job import VolcanoJob

#: The pick runs once the loop has ended, however it ended (an empty list leaves the loop Skipped).
PICK_DEPENDS = " || ".join(f"{TRIALS_TASK}.{p}" for p in ("Succeeded", "Failed", "Errored", "Skipped"))


class SweepDAG(JobDAG):
    """The DAG template of :func:`sweep`; calling it checks the arguments, and passes a run-time list's expression
    (:class:`TrialsFrom`) unless the call gives the list itself. Its :attr:`sweep_spec` is what it was made from,
    which :func:`hera_volcano.run_local` runs here, trial by trial."""

    _trials_expression: str | None = PrivateAttr(default=None)
    _spec: SweepSpec | None = PrivateAttr(default=None)

    @property
    def sweep_spec(self) -> SweepSpec | None:
        """The sweep's settings, as :func:`sweep` checked them (None: not made by :func:`sweep`)."""
        return self._spec

    def __call__(self, *args: object, **kwargs: object) -> Step | Task | None:
        given, expression = kwargs.get("arguments"), self._trials_expression
        passes = given is None or (isinstance(given, Mapping) and TRIALS_INPUT not in given)
        if isinstance(expression, str) and passes:
            kwargs["arguments"] = {**(given if isinstance(given, Mapping) else {}), TRIALS_INPUT: expression}
        return super().__call__(*args, **kwargs)


#: The most bytes of JSON a static list of trials may take (see _compact); a run-time list is only documented to it.
MAX_TRIALS_TEXT: Final = 48 * 1024


def sweep(
    job: VolcanoJob,
    space: Space,
    *,
    name: str,
    objective: str,
    direction: str = "min",
    outputs: Sequence[str] = (),
    parallelism: int | None = None,
    max_failures: int = 0,
    follower_image: str = PYTHON_IMAGE,
    service_account: str | None = None,
    defaults: Mapping[str, int | str] | None = None,
) -> SweepDAG:
    """A DAG template ``name`` (call it inside ``with Workflow(...)``) that runs ``job`` once per trial of ``space``
    and picks the best trial by ``objective``.

    The job's inputs (``Placeholder.input``) are the trial's parameters: every name the space gives must be one of
    them (a typo is refused here, naming it); the inputs it does not sweep are the sweep's own inputs, given to every
    trial. At most ``parallelism`` trials run at once (None: all), each its own Volcano Job in the job's queue. A trial
    that fails, or Succeeds without a finite number for ``objective``, is a failed trial, listed in ``trials`` with
    its reason; the sweep fails (its ``pick`` task, saying how many failed and why) when more than ``max_failures``
    failed or none succeeded. The pick reads the Workflow, so its account needs ``get`` on workflows: ``rbac_for``
    derives it from the pick's template. ``hv.run_local(tune)`` runs the same sweep here, trial by trial, to the
    same outputs (its settings are :attr:`SweepDAG.sweep_spec`).

    :param job: the job (what every builder returns); its rank 0 reports ``objective`` and ``outputs``.
    :param space: a :class:`Grid`, :class:`RandomSearch`, :class:`Trials` or :class:`TrialsFrom`.
    :param name: the DAG template's name (inner templates ``NAME-trial``, ``-trial-job``, ``-trial-logs``,
        ``-pick``).
    :param objective: the reported value the best trial is chosen by (a number).
    :param direction: ``min`` or ``max``; a tie goes to the first trial of the list.
    :param outputs: other reported values to gather (each also ``best-NAME``).
    :param parallelism: the most trials running at once.
    :param max_failures: how many failed trials the sweep tolerates.
    :param follower_image: the image (with ``python3``) the followers and the pick run in.
    :param service_account: the account of the followers', job steps' and pick's pods (default: the workflow's).
    :param defaults: default values of the job's inputs the space does not sweep.
    """
    names.check("name", name, names.argo_name)
    reported = _reported(objective, outputs)
    if direction not in DIRECTIONS:
        raise ValidationError("direction", f"must be 'min' or 'max', not {direction!r}")
    checks.integer("max_failures", max_failures, maximum=checks.INT64_MAX)
    if parallelism is not None:
        checks.integer("parallelism", parallelism, minimum=1, maximum=checks.INT64_MAX)
    check_image(follower_image, "follower_image")
    trial = job_dag(
        job,
        name=f"{name}-trial",
        outputs=reported,
        follower_image=follower_image,
        service_account=service_account,
        defaults=defaults,
    )
    declared = [p for p in trial.inputs or [] if isinstance(p, Parameter)] if isinstance(trial.inputs, list) else []
    swept, items = _space(space, [str(p.name) for p in declared])
    overridden = sorted(set(swept) & set(defaults or {}))
    if overridden:
        raise ValidationError(
            f"defaults.{overridden[0]}", "is swept: each trial gives its own value (defaults are for the other inputs)"
        )
    kept = [p for p in declared if str(p.name) not in swept]
    spec = SweepSpec(
        name=name,
        job=job,
        objective=objective,
        direction=direction,
        outputs=reported,
        max_failures=max_failures,
        parallelism=parallelism,
        parameters=tuple(swept),
        trials=None if items is None else _compact(items),
        inputs={str(p.name): None if p.default is None else str(p.default) for p in kept},
    )
    settings = PickSettings(
        workflow="{{workflow.name}}",
        objective=spec.objective,
        direction=spec.direction,
        max_failures=spec.max_failures,
        outputs=spec.outputs,
        parameters=spec.parameters,
        trials=f"{{{{inputs.parameters.{TRIALS_INPUT}}}}}" if spec.trials is None else spec.trials,
    )
    pick = _pick_template(f"{name}-pick", settings, items is None, follower_image, service_account)
    dag = _dag(spec, trial, pick, kept, items, settings)
    dag._spec = spec
    if isinstance(space, TrialsFrom):
        dag._trials_expression = space.expression
    return dag


def _dag(
    spec: SweepSpec,
    trial: JobDAG,
    pick: Container,
    kept: list[Parameter],
    items: list[dict[str, Any]] | None,
    settings: PickSettings,
) -> SweepDAG:
    """The sweep's DAG: the loop of trials (each swept name from the item, the other inputs passed on), then the
    pick, whose outputs are the DAG's."""
    results = sweep_outputs(settings.outputs)
    own_inputs = [*kept, *([Parameter(name=TRIALS_INPUT)] if items is None else [])]
    with SweepDAG(
        name=spec.name,
        inputs=own_inputs or None,
        outputs=[lifted(PICK_TASK, r) for r in results],
        parallelism=spec.parallelism,
    ) as dag:
        arguments = {s: f"{{{{item.{s}}}}}" for s in settings.parameters}
        arguments.update({str(p.name): f"{{{{inputs.parameters.{p.name}}}}}" for p in kept})
        loop: dict[str, Any] = {"with_items": items} if items is not None else {"with_param": settings.trials}
        trial(name=TRIALS_TASK, arguments=arguments, **loop)
        given = {TRIALS_INPUT: settings.trials} if items is None else {}
        pick(name=PICK_TASK, arguments=given, depends=PICK_DEPENDS)
    return dag


def _reported(objective: object, outputs: Sequence[str]) -> tuple[str, ...]:
    """The values each trial reports: the objective first, then the other outputs; each ``best-NAME`` a name too."""
    others = report_names.check_names("outputs", outputs)
    if not is_name(objective):
        raise ValidationError(
            "objective", f"{objective!r} is not a report name (letters, digits, '_', '-'; not job-name or job-phase)"
        )
    assert isinstance(objective, str)
    reported = (objective, *(o for o in others if o != objective))
    for name in reported:
        field = "objective" if name == objective else "outputs"
        if name in RESERVED_REPORTS:
            raise ValidationError(
                field,
                f"{name!r} would be the sweep's output {BEST_PREFIX}{name}, which the sweep gives itself (the best"
                " trial's): report the value under another name",
            )
        if not NAME.fullmatch(BEST_PREFIX + name):
            raise ValidationError(field, f"{name!r} is too long for its output {BEST_PREFIX}{name} (at most 63)")
    return reported


def _space(space: object, inputs: list[str]) -> tuple[list[str], list[dict[str, Any]] | None]:
    """The swept names (each an input of the job) and the static list of trials (None for a run-time list)."""
    if isinstance(space, TrialsFrom):
        swept, items = space.names(), None
    elif isinstance(space, Grid | RandomSearch | Trials):
        items = space.trials_list()
        swept = list(items[0])
    else:
        raise ValidationError(
            "space", f"must be hv.Grid, hv.RandomSearch, hv.Trials or hv.TrialsFrom, not {type(space).__name__}"
        )
    for name in swept:
        if name == TRIALS_INPUT or name not in inputs:
            choices = f"; its inputs are {', '.join(inputs)}" if inputs else "; it has no inputs"
            raise ValidationError(
                f"space.parameters.{name}",
                f"is no input of the job (Placeholder.input){did_you_mean(name, inputs)}{choices}",
            )
    if TRIALS_INPUT in inputs:
        raise ValidationError("job", f"has an input {TRIALS_INPUT!r}, which the sweep uses itself: name it otherwise")
    return swept, items


def _compact(items: list[dict[str, Any]]) -> str:
    """The trials as the pick is given them, in an environment variable of its pod: Linux holds one to 128 KiB
    (MAX_ARG_STRLEN), and Argo's copy of the pick's template (``ARGO_TEMPLATE``) holds it again with its quotes
    escaped, so a longer list would keep the pick from starting after every trial has run."""
    text = json.dumps(items, separators=(",", ":"), ensure_ascii=False)
    size = len(text.encode("utf-8"))
    if size > MAX_TRIALS_TEXT:
        raise ValidationError(
            "space",
            f"its {len(items)} trials are {size} bytes as JSON, more than the {MAX_TRIALS_TEXT} a pick can be given"
            " (an environment variable of its pod): split the sweep",
        )
    return text


def _pick_template(
    name: str, settings: PickSettings, runtime: bool, image: str, service_account: str | None
) -> Container:
    """The pick: the pods' program with ``pick-best``, its outputs the files it writes."""
    if service_account is not None:
        names.check("service_account", service_account, names.dns1123_subdomain)
    env: list[Env | FieldEnv] = [Env(name=k, value=v) for k, v in settings.to_env().items()]
    env.append(FieldEnv(name=PickSettings.NODE, field_path=f"metadata.annotations['{NODE_NAME_ANNOTATION}']"))
    results = sweep_outputs(settings.outputs)
    return Container(
        name=name,
        image=image,
        command=["python3", "-c"],
        args=[program.bootstrap(), PICK_COMMAND],
        annotations=program.pod_annotations(program.PICK),  # rbac_for grants the calls the pick declares
        env=env,
        volumes=[ConfigMapVolume(name=program.config_map_name(), mount_path=program.MOUNT_DIR, optional=True)],
        service_account_name=service_account,
        inputs=[Parameter(name=TRIALS_INPUT)] if runtime else None,
        outputs=[
            Parameter(name=r, value_from=ValueFrom(path=f"{settings.output_dir}/{r}", default="")) for r in results
        ],
    )
