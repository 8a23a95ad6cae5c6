"""What a pipeline is made of: Volcano jobs (a :class:`JobShape` and its arguments), ordinary steps of your own, and
references to what an earlier step reported; and how an argument is written so that Argo's text substitution gives
the job back the value with its type.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hera_volcano.argo.conditions import DEFAULT_DEADLINE
from hera_volcano.builders.retries import ArgoRetry
from hera_volcano.kube import names
from hera_volcano.shared import checks
from hera_volcano.shared import outputs as reports
from hera_volcano.shared.errors import ValidationError
from hera_volcano.shared.placeholders import Placeholder, has_expression
from hera_volcano.volcano.job import VolcanoJob

_EMBEDDABLE = re.compile(r"[A-Za-z0-9._-]*")


@dataclass(frozen=True)
class JobShape:
    """One Argo resource template for every job built from ``job``; ``Placeholder.input`` marks per-job values.

    ``job_label`` (usually a placeholder) identifies each job's pods for its log follower; ``follow_task`` and
    ``follow_container`` say whose logs the follower streams. ``outputs`` names the values the jobs' rank 0 reports
    (``hera-volcano:output NAME=VALUE``): a job of such a shape is a task that carries them (:func:`job_dag`), so
    a later step of the pipeline takes them with :class:`StepOutput`.
    """

    name: str
    job: VolcanoJob
    job_label: str | Placeholder
    follow_task: str
    follow_container: str
    deadline: int = DEFAULT_DEADLINE
    retry: ArgoRetry | None = None
    outputs: Sequence[str] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "outputs", reports.check_names("shape.outputs", self.outputs))
        if not isinstance(self.job, VolcanoJob):
            raise ValidationError("shape.job", "must be a VolcanoJob")
        if self.follow_task not in {t.name for t in self.job.tasks}:
            raise ValidationError("shape.follow_task", f"names no task of the job: {self.follow_task!r}")
        checks.integer("shape.deadline", self.deadline, minimum=1, maximum=checks.INT32_MAX)
        if self.retry is not None and not isinstance(self.retry, ArgoRetry):
            raise ValidationError("shape.retry", "must be ArgoRetry(...) (Volcano's retries go into the job)")


@dataclass(frozen=True)
class PipelineJob:
    """One job of a pipeline: a shape, its arguments, and the jobs it runs after."""

    name: str
    shape: JobShape
    arguments: Mapping[str, Any] = field(default_factory=dict)
    after: Sequence[str] = ()
    follow_logs: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.shape, JobShape):
            raise ValidationError("shape", "must be a JobShape")
        if not isinstance(self.arguments, Mapping):
            raise ValidationError("arguments", "must be a mapping of parameter names to values")
        object.__setattr__(self, "after", tuple(checks.strings("after", self.after)))
        twice = sorted({dep for dep in self.after if self.after.count(dep) > 1})
        if twice:
            raise ValidationError("after", f"names {', '.join(map(repr, twice))} more than once")
        if not isinstance(self.follow_logs, bool):
            raise ValidationError("follow_logs", "must be true or false")


def encode_argument(value: Any, field: str, *, placeholder: Placeholder | None, embedded: bool) -> str:
    """The text of an Argo parameter that, substituted into a manifest, reads back as ``value`` with its type.

    Argo substitutes text, so the encoding follows where the placeholder stands: inside a larger string only
    name-like text is safe; a placeholder in double quotes takes JSON-escaped text; a bare one (integers, lists)
    takes JSON, which YAML reads back unchanged.
    """
    if has_expression(value if isinstance(value, str) else json.dumps(value, default=str)):
        raise ValidationError(field, "must not contain '{{' (Argo would substitute it)")
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
    text = _yaml_safe_json(value, field)
    return text[1:-1] if placeholder is not None and placeholder.in_quotes else text


def _yaml_safe_json(value: Any, field: str) -> str:
    """JSON that YAML (go-yaml, behind Argo and kubectl) reads back as ``value``: printable text as is, everything
    else (DEL, C1 controls, line and paragraph separators, which YAML would fold) as escapes; lone surrogates are
    refused. JSON itself already escapes the ASCII controls."""
    text = json.dumps(value, ensure_ascii=False)
    if any(0xD800 <= ord(c) <= 0xDFFF for c in text):
        raise ValidationError(field, "must be valid Unicode text (it holds a lone surrogate)")
    return _NON_ASCII.sub(_escape, text)


_NON_ASCII = re.compile("[^\x20-\x7e]")


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    if char.isprintable():
        return char
    code = ord(char)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


@dataclass(frozen=True)
class StepOutput:
    """The output parameter ``name`` of the pipeline's step ``step`` (a job: a value its rank 0 reported, or
    ``job-name``/``job-phase``; an ordinary step: one of its template's outputs), as an argument of a later job or
    step. It is known only at run time, so a job takes it only where it reads the value at run time
    (``Placeholder.input`` in ``func_args`` or ``PodSettings(env=...)``); the step that gives it runs first."""

    step: str
    name: str

    def __post_init__(self) -> None:
        names.check("step", self.step, names.argo_name)
        if not isinstance(self.name, str) or not _PARAMETER.fullmatch(self.name):
            raise ValidationError("name", f"not an Argo parameter name: {self.name!r}")

    def reference(self, kind: str) -> str:
        """The Argo expression for it in a DAG (``kind`` "tasks") or in Steps ("steps")."""
        return "{{" + f"{kind}.{self.step}.outputs.parameters.{self.name}" + "}}"


_PARAMETER = re.compile(r"[-a-zA-Z0-9_]+")


@dataclass(frozen=True)
class PipelineStep:
    """An ordinary step of a pipeline: a Hera template of yours (a ``Container`` or ``Script``: preparing data,
    evaluating a model), called with ``arguments`` (values, or :class:`StepOutput` of earlier steps, for its input
    parameters) after the steps named in ``after``. With the pipeline's workspace, its pod mounts it too."""

    name: str
    template: Any
    arguments: Mapping[str, Any] = field(default_factory=dict)
    after: Sequence[str] = ()

    def __post_init__(self) -> None:
        if not callable(getattr(self.template, "_build_template", None)) or not isinstance(
            getattr(self.template, "name", None), str
        ):
            raise ValidationError("template", "must be a named Hera template (Container, Script...)")
        if not isinstance(self.arguments, Mapping):
            raise ValidationError("arguments", "must be a mapping of input names to values")
        object.__setattr__(self, "after", tuple(checks.strings("after", self.after)))
        twice = sorted({dep for dep in self.after if self.after.count(dep) > 1})
        if twice:
            raise ValidationError("after", f"names {', '.join(map(repr, twice))} more than once")
