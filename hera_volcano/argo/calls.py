"""Calls of this library's templates, checked when they are made: a misspelt or forgotten argument is an error here,
not a job that runs on an empty value.

Argo accepts a task argument that names no input of its template (it is dropped), so a misspelt argument leaves the
input to its default, or unset. The templates :func:`~hera_volcano.job_template` and :func:`~hera_volcano.job_dag`
return are :class:`JobStep` and :class:`JobDAG`: Hera's own classes, whose call (``template(name=..., arguments=...)``
inside a DAG or Steps) first checks the arguments against the template's inputs.

This module imports ``hera.workflows`` (slow); ``import hera_volcano`` reaches it only when it is used.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from hera.workflows import DAG, Artifact, Parameter, Resource, Step, Task
from hera.workflows.models import Arguments
from pydantic import PrivateAttr

from hera_volcano.argo.parameters import check_arguments
from hera_volcano.shared.errors import ValidationError
from hera_volcano.shared.placeholders import Placeholder


def argument_names(arguments: object) -> list[str]:
    """The parameter names a call passes, however Hera lets it be written (a mapping of names to values, one
    Parameter, a list of Parameters and Artifacts, or Argo's Arguments model); artifacts are not parameters."""
    if arguments is None:
        return []
    if isinstance(arguments, Mapping):
        return [str(k) for k in arguments]
    if isinstance(arguments, Arguments):
        return [str(p.name) for p in arguments.parameters or []]
    items = arguments if isinstance(arguments, list | tuple) else [arguments]
    found = []
    for item in items:
        if isinstance(item, Mapping):
            found += [str(k) for k in item]
        elif isinstance(item, Parameter):
            found.append(str(item.name))
        elif not isinstance(item, Artifact):
            raise ValidationError("arguments", f"must map input names to values, or be Parameters; got {item!r}")
    return found


def _as_argo(parameter: Parameter) -> dict[str, object]:
    """An input as Argo reads it (the fields the call rule looks at)."""
    source = parameter.value_from
    return {
        "name": parameter.name,
        "value": parameter.value,
        "default": parameter.default,
        "valueFrom": None if source is None else source.model_dump(by_alias=True, exclude_none=True),
    }


def check_call(template: str, inputs: object, arguments: object) -> None:
    """Each argument names an input of ``template``, and every input without a value of its own is given
    (:class:`~hera_volcano.argo.parameters.CallArguments`, the rule lint judges calls by too)."""
    declared = [p for p in inputs if isinstance(p, Parameter) and p.name] if isinstance(inputs, list) else []
    check_arguments(f"template {template!r}", [_as_argo(p) for p in declared], argument_names(arguments))


@dataclass(frozen=True)
class Followed:
    """What a follower must know of the job it follows, taken from the job step itself so that no setting is typed
    twice or dropped: the job's ``hera-volcano/job`` label, its start limit (seconds, None: none) and how often
    Argo retries its step."""

    label: str | Placeholder
    start_limit: int | None
    step_retries: int


class JobStep(Resource):
    """The resource template of :func:`~hera_volcano.job_template`; calling it checks the arguments. It knows what
    its follower needs (:attr:`followed`): build the follower from it, ``follow_logs_template(step)``."""

    _followed: Followed | None = PrivateAttr(default=None)

    @property
    def followed(self) -> Followed:
        """The job's label, start limit and step retries (set by :func:`~hera_volcano.job_template`)."""
        if self._followed is None:
            raise ValidationError("job_step", "must be what job_template returned (it knows its job's label)")
        return self._followed

    def __call__(self, *args: object, **kwargs: object) -> Step | Task | None:
        check_call(str(self.name), self.inputs, kwargs.get("arguments"))
        return super().__call__(*args, **kwargs)


class JobDAG(DAG):
    """The DAG template of :func:`~hera_volcano.job_dag`; calling it checks the arguments."""

    def __call__(self, *args: object, **kwargs: object) -> Step | Task | None:
        check_call(str(self.name), self.inputs, kwargs.get("arguments"))
        return super().__call__(*args, **kwargs)
