"""What a pipeline is made of: Volcano jobs (:class:`PipelineJob`: a job and where it stands), sweeps of a job
(:class:`PipelineSweep`), ordinary steps of your own, and references to what an earlier step reported; and how an
argument is written so that Argo's text substitution gives the job back the value with its type.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hera_volcano.kube import names
from hera_volcano.shared import checks
from hera_volcano.shared import outputs as reports
from hera_volcano.shared.errors import ValidationError
from hera_volcano.shared.placeholders import Placeholder, carried
from hera_volcano.volcano.job import VolcanoJob

_EMBEDDABLE = re.compile(r"[A-Za-z0-9._-]*")


@dataclass(frozen=True)
class PipelineJob:
    """One job of a pipeline: ``job`` (what any builder returns, or a :class:`VolcanoJob` of your own), the entries
    it runs after, and what its task carries.

    ``arguments`` gives the job's remaining input parameters (those its own ``arguments`` leave open, such as a
    ``Placeholder.input`` in a program's ``args``) their values: text, JSON values, or a :class:`StepOutput` of an
    earlier entry. ``outputs`` names the values its rank 0 reports (a function's returned dict, or
    ``hera-volcano:output`` lines): the job's task carries them (:func:`hera_volcano.job_dag`), for a later
    entry's :class:`StepOutput`. ``follow_logs`` adds a log follower beside a job without outputs (one with
    outputs has its own).

    Jobs that render alike (differing only in their arguments) share one template, named ``template`` or, by
    default, ``volcano-job-`` and a digest of what it renders. Each job's pods are labelled ``job_label`` (by
    default the entry's name, passed to the template as its input ``job``), which its follower finds them by.

    :param name: the entry's (and its task's) name.
    :param job: the job (what every builder returns).
    :param arguments: values of the job's remaining input parameters.
    :param after: the entries it runs after.
    :param follow_logs: add a log follower beside a job without outputs.
    :param outputs: names of the values its rank 0 reports.
    :param template: the name of the template it shares with the jobs that render alike.
    :param job_label: the ``hera-volcano/job`` label of its job and pods (default: the entry's name).
    """

    name: str
    job: VolcanoJob
    arguments: Mapping[str, object] = field(default_factory=dict)
    after: Sequence[str] = ()
    follow_logs: bool = False
    outputs: Sequence[str] = ()
    template: str | None = None
    job_label: str | Placeholder | None = None

    def __post_init__(self) -> None:
        _check_entry(self)
        if not isinstance(self.follow_logs, bool):
            raise ValidationError("follow_logs", "must be true or false")
        if self.job_label is not None and not isinstance(self.job_label, str | Placeholder):
            raise ValidationError("job_label", "must be a label value or a Placeholder")
        if isinstance(self.job_label, str):
            names.check("job_label", self.job_label, names.label_value)


def _check_entry(entry: PipelineJob | PipelineSweep) -> None:
    """What every entry holds alike: a job, a mapping of arguments, names after it and of its outputs each once, a
    template name Argo takes. ``after`` and ``outputs`` are kept as checked tuples."""
    if not isinstance(entry.job, VolcanoJob):
        raise ValidationError(
            "job", f"must be a VolcanoJob (what every builder returns), not {type(entry.job).__name__}"
        )
    if not isinstance(entry.arguments, Mapping):
        raise ValidationError("arguments", "must be a mapping of parameter names to values")
    object.__setattr__(entry, "after", _after(entry.after))
    object.__setattr__(entry, "outputs", reports.check_names("outputs", entry.outputs))
    if entry.template is not None:
        names.check("template", entry.template, names.argo_name)


def _after(value: Sequence[str]) -> tuple[str, ...]:
    """An entry's ``after``: names, each once."""
    after = tuple(checks.strings("after", value))
    twice = sorted({dep for dep in after if after.count(dep) > 1})
    if twice:
        raise ValidationError("after", f"names {', '.join(map(repr, twice))} more than once")
    return after


@dataclass(frozen=True)
class PipelineSweep:
    """A sweep of one job as an entry of a pipeline: :func:`hera_volcano.sweep` of ``job`` over ``space``, its task
    named ``name``, after the entries in ``after``; its settings are the sweep's (checked when the pipeline is
    made, each error naming the entry).

    ``arguments`` gives the sweep's own inputs (the job's inputs the space does not sweep) their values, as a
    :class:`PipelineJob`'s: text, JSON values, or a :class:`StepOutput` of an earlier entry. A
    :class:`~hera_volcano.TrialsFrom` space reads an earlier entry's output parameter
    (``{{tasks.NAME.outputs.parameters.OUTPUT}}``): the pipeline writes it for the DAG or the Steps and runs that
    entry first. A later entry reads the sweep's outputs with :class:`StepOutput`: ``best-params``, ``best-trial``,
    ``trials`` and ``best-NAME`` of the objective and of each of ``outputs``.

    Sweeps that render alike (differing only in their arguments) share one set of templates, named ``template``
    (its inner templates ``TEMPLATE-trial``, ``-trial-job``, ``-trial-logs``, ``-pick``) or, by default, ``sweep-``
    and a digest of what it renders. With the pipeline's workspace, every trial's pods mount it.

    :param name: the entry's (and its task's) name.
    :param job: the job (what every builder returns).
    :param space: a :class:`~hera_volcano.Grid`, ``RandomSearch``, ``Trials`` or ``TrialsFrom``.
    :param objective: the reported value the best trial is chosen by.
    :param direction: ``min`` or ``max``.
    :param outputs: other reported values to gather (each also ``best-NAME``).
    :param parallelism: the most trials running at once.
    :param max_failures: how many failed trials the sweep tolerates.
    :param arguments: values of the sweep's own inputs.
    :param after: the entries it runs after.
    :param template: the name of the templates it shares with the sweeps that render alike.
    """

    name: str
    job: VolcanoJob
    space: object
    objective: str
    direction: str = "min"
    outputs: Sequence[str] = ()
    parallelism: int | None = None
    max_failures: int = 0
    arguments: Mapping[str, object] = field(default_factory=dict)
    after: Sequence[str] = ()
    template: str | None = None

    def __post_init__(self) -> None:
        _check_entry(self)


def encode_argument(value: object, field: str, *, placeholder: Placeholder | None, embedded: bool) -> str:
    """The text of an Argo parameter that reads back as ``value`` with its type: the manifest reads every parameter
    through an expression that writes it as one scalar of its kind (``hera_volcano.kube.values``), so the parameter
    is the value's own text (JSON for a list). Values Argo could not carry are refused here."""
    if embedded:
        text = str(value)
        if isinstance(value, bool) or not isinstance(value, str | int) or not _EMBEDDABLE.fullmatch(text):
            raise ValidationError(field, "is used inside a name, so it may hold only letters, digits, '.', '_', '-'")
        return text
    sample = None if placeholder is None else placeholder.sample
    expected = type(sample)
    if isinstance(sample, bool) or expected not in (str, int, list):
        expected = type(value)
    if isinstance(value, bool) or not isinstance(value, expected) or expected not in (str, int, list):
        kind = {str: "a string", int: "an integer", list: "a list"}.get(expected, "a string, an integer or a list")
        raise ValidationError(field, f"must be {kind}")
    for item in value if isinstance(value, list) else [value]:
        carried(field, str(item))
    return str(value) if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


@dataclass(frozen=True)
class StepOutput:
    """The output parameter ``name`` of the pipeline's step ``step`` (a job: a value its rank 0 reported, or
    ``job-name``/``job-phase``, and for a job with outputs ``job-metrics``, its last metrics; an ordinary step: one
    of its template's outputs), as an argument of a later job or
    step. It is known only at run time, so a job takes it only where it reads the value at run time
    (``Placeholder.input`` in a program's ``args`` or ``PodSettings(env=...)``); the step that gives it runs
    first.

    :param step: the earlier entry's name.
    :param name: its output parameter.
    """

    step: str
    name: str

    def __post_init__(self) -> None:
        names.check("step", self.step, names.argo_name)
        if not isinstance(self.name, str) or not _PARAMETER.fullmatch(self.name):
            raise ValidationError("name", f"not an Argo parameter name: {self.name!r}")

    def reference(self, kind: str) -> str:
        """The Argo expression for it in a DAG (``kind`` "tasks") or in Steps ("steps").

        :param kind: ``tasks`` in a DAG, ``steps`` in Steps.
        """
        return "{{" + f"{kind}.{self.step}.outputs.parameters.{self.name}" + "}}"


_PARAMETER = re.compile(r"[-a-zA-Z0-9_]+")


@dataclass(frozen=True)
class PipelineStep:
    """An ordinary step of a pipeline: a Hera template of yours (a ``Container`` or ``Script``: preparing data,
    evaluating a model), called with ``arguments`` (values, or :class:`StepOutput` of earlier steps, for its input
    parameters) after the steps named in ``after``. With the pipeline's workspace, its pod mounts it too.

    Its code (and every dependency it imports) gets no API token unless ``api_token``: the workflow's account may
    create Volcano Jobs, which a step that only reads and writes data has no use for. Argo's own containers in the
    pod still report the step's outputs, as the workflow's account (``executor.serviceAccountName``; ``hera-volcano
    rbac`` renders the token Secret Argo mounts for them). A template that sets ``automount_service_account_token``
    itself is left as it is.

    :param name: the entry's (and its task's) name.
    :param template: a Hera template (``Container``, ``Script``...).
    :param arguments: values (or :class:`StepOutput`) for its input parameters.
    :param after: the entries it runs after.
    :param api_token: whether its code gets the account's API token.
    """

    name: str
    template: Any
    arguments: Mapping[str, object] = field(default_factory=dict)
    after: Sequence[str] = ()
    api_token: bool = False

    def __post_init__(self) -> None:
        if not callable(getattr(self.template, "_build_template", None)) or not isinstance(
            getattr(self.template, "name", None), str
        ):
            raise ValidationError("template", "must be a named Hera template (Container, Script...)")
        if not isinstance(self.arguments, Mapping):
            raise ValidationError("arguments", "must be a mapping of input names to values")
        if not isinstance(self.api_token, bool):
            raise ValidationError("api_token", "must be True or False")
        object.__setattr__(self, "after", _after(self.after))
