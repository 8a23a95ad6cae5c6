"""Pipelines of Volcano jobs: declare the jobs and their order once, render them as an Argo DAG or as Steps.

Jobs of one :class:`JobShape` share one resource template; what differs per job travels as Argo parameters
(``Placeholder.input``), encoded so that Argo's text substitution gives back the same YAML types.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hera_volcano.argo.conditions import DEFAULT_DEADLINE
from hera_volcano.argo.limits import MAX_DAG_TASKS
from hera_volcano.builders.retries import ArgoRetry
from hera_volcano.kube import names
from hera_volcano.shared import checks
from hera_volcano.shared.errors import ValidationError
from hera_volcano.shared.placeholders import Placeholder, expressions, has_expression, placeholders
from hera_volcano.volcano.job import VolcanoJob, check

if TYPE_CHECKING:
    from hera.workflows import DAG, Container, Resource, Steps, Task, Workflow

#: Workflow names are at most 63 characters, and generateName adds 6 (``-`` and 5 random ones).
MAX_WORKFLOW_PREFIX = 57
_INPUT = "inputs.parameters."
_EMBEDDABLE = re.compile(r"[A-Za-z0-9._-]*")


@dataclass(frozen=True)
class JobShape:
    """One Argo resource template for every job built from ``job``; ``Placeholder.input`` marks per-job values.

    ``job_label`` (usually a placeholder) identifies each job's pods for its log follower; ``follow_task`` and
    ``follow_container`` say whose logs the follower streams.
    """

    name: str
    job: VolcanoJob
    job_label: str | Placeholder
    follow_task: str
    follow_container: str
    deadline: int = DEFAULT_DEADLINE
    retry: ArgoRetry | None = None

    def __post_init__(self) -> None:
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
class _Prepared:
    """A shape rendered once: its template, and which inputs are used whole or inside strings."""

    data: dict[str, Any]
    whole: Mapping[str, Placeholder]  # input name -> placeholder, for those standing as whole values
    embedded: frozenset[str]


class Pipeline:
    """An ordered set of Volcano jobs with dependencies, rendered as a DAG or as Steps.

    Build it from :func:`batch_job` entries or :class:`PipelineJob`s of your own shapes; rendering checks names,
    dependencies (unknown names, cycles), each job's arguments against its shape, and each job against Volcano's
    rules with its real arguments.
    """

    def __init__(self, jobs: Sequence[PipelineJob], *, max_dag_tasks: int | None = MAX_DAG_TASKS) -> None:
        if isinstance(jobs, str | bytes) or not isinstance(jobs, Sequence):
            raise ValidationError("jobs", "must be a list of PipelineJob (see batch_job)")
        self.jobs = tuple(jobs)
        if max_dag_tasks is not None:
            checks.integer("max_dag_tasks", max_dag_tasks, minimum=1)
        self.max_dag_tasks = max_dag_tasks
        if not self.jobs:
            raise ValidationError("jobs", "a pipeline needs at least one job")
        for i, job in enumerate(self.jobs):
            if not isinstance(job, PipelineJob):
                raise ValidationError(f"jobs[{i}]", f"must be a PipelineJob (see batch_job), not {type(job).__name__}")
        self._by_name: dict[str, PipelineJob] = {}
        for i, job in enumerate(self.jobs):
            names.check(f"jobs[{i}].name", job.name, names.argo_name)
            if job.name[0].isdigit():
                raise ValidationError(
                    f"jobs[{i}].name", "must not start with a digit (Argo task names with dependencies)"
                )
            if job.name in self._by_name:
                raise ValidationError(f"jobs[{i}].name", f"duplicate job name {job.name!r}")
            self._by_name[job.name] = job
        for i, job in enumerate(self.jobs):
            if not job.follow_logs:
                continue
            follower = _follower_name(job.name)
            if len(follower) > names.ARGO_NAME_MAX:
                raise ValidationError(
                    f"jobs[{i}].name",
                    f"must be at most {names.ARGO_NAME_MAX - len(_follower_name(''))} characters with follow_logs"
                    f" (its log follower is the task {follower[:20]}...)",
                )
            if follower in self._by_name:
                raise ValidationError(f"jobs[{i}].follow_logs", f"its log follower task {follower!r} is also a job")
        self._shapes: dict[str, tuple[JobShape, _Prepared]] = {}
        for i, job in enumerate(self.jobs):
            self._check_job(i, job)
        self.levels = self._levels()

    def _prepare(self, shape: JobShape, field: str) -> _Prepared:
        known = self._shapes.get(shape.name)
        if known is not None:
            if known[0] is not shape and known[0] != shape:
                raise ValidationError(field, f"two different shapes are both named {shape.name!r}")
            return known[1]
        names.check(f"{field}.name", shape.name, names.argo_name)
        data = shape.job._data()
        whole = {e.removeprefix(_INPUT): p for e, p in placeholders(data).items() if e.startswith(_INPUT)}
        embedded: set[str] = set()
        for text in _strings(data):
            embedded.update(e.removeprefix(_INPUT) for e in expressions(text) if e.startswith(_INPUT))
        if isinstance(shape.job_label, Placeholder):
            embedded.add(shape.job_label.expression.removeprefix(_INPUT))
        prepared = _Prepared(data, whole, frozenset(embedded))
        self._shapes[shape.name] = (shape, prepared)
        return prepared

    def _check_job(self, i: int, job: PipelineJob) -> None:
        field = f"jobs[{i}]"
        prepared = self._prepare(job.shape, f"{field}.shape")
        wanted = set(prepared.whole) | prepared.embedded
        unknown = sorted(set(job.arguments) - wanted)
        if unknown:
            raise ValidationError(f"{field}.arguments", f"the shape has no parameter {', '.join(unknown)}")
        missing = sorted(wanted - set(job.arguments))
        if missing:
            raise ValidationError(f"{field}.arguments", f"missing {', '.join(missing)}")
        self._encode(job, prepared, f"{field}.arguments")
        for dep in job.after:
            if dep not in self._by_name:
                raise ValidationError(f"{field}.after", f"unknown job {dep!r}")
            if dep == job.name:
                raise ValidationError(f"{field}.after", "a job cannot run after itself")
        try:
            check(prepared.data, {_INPUT + k: v for k, v in job.arguments.items()})
        except ValidationError as e:
            raise ValidationError(f"{field} ({job.name}): {e.field}", e.rule) from None

    def _levels(self) -> list[list[PipelineJob]]:
        """Jobs grouped so each group runs after every earlier one (longest path); finds cycles.

        Iterative depth-first search: a chain of thousands of jobs must not hit Python's recursion limit.
        """
        level: dict[str, int] = {}
        on_path: dict[str, int] = {}  # job -> its position on the current path
        path: list[str] = []
        for root in self.jobs:
            if root.name in level:
                continue
            stack: list[tuple[str, int]] = [(root.name, 0)]
            while stack:
                name, next_dep = stack.pop()
                if next_dep == 0:
                    on_path[name] = len(path)
                    path.append(name)
                deps = self._by_name[name].after
                if next_dep < len(deps):
                    stack.append((name, next_dep + 1))
                    dep = deps[next_dep]
                    if dep in on_path:
                        cycle = [*path[on_path[dep] :], dep]
                        raise ValidationError("jobs", f"dependency cycle: {' -> '.join(cycle)}")
                    if dep not in level:
                        stack.append((dep, 0))
                    continue
                level[name] = 1 + max((level[d] for d in deps), default=-1)
                del on_path[name]
                path.pop()
        groups: list[list[PipelineJob]] = [[] for _ in range(max(level.values()) + 1)]
        for job in self.jobs:
            groups[level[job.name]].append(job)
        return groups

    @staticmethod
    def _encode(job: PipelineJob, prepared: _Prepared, field: str) -> dict[str, str]:
        return {
            k: encode_argument(v, f"{field}.{k}", placeholder=prepared.whole.get(k), embedded=k in prepared.embedded)
            for k, v in job.arguments.items()
        }

    def _arguments(self, job: PipelineJob) -> dict[str, str]:
        return self._encode(job, self._shapes[job.shape.name][1], job.name)

    def templates(self) -> tuple[dict[str, Resource], dict[str, Container]]:
        """The shared resource templates (by shape name) and log-follower templates (by shape name)."""
        from hera_volcano.argo.follow_logs import follow_logs_template
        from hera_volcano.argo.job_template import job_template

        resources: dict[str, Resource] = {}
        followers: dict[str, Container] = {}
        for job in self.jobs:
            shape = job.shape
            if shape.name not in resources:
                retry = _argo_retry(shape.retry)
                resources[shape.name] = job_template(
                    shape.job,
                    name=shape.name,
                    job_label=shape.job_label,
                    deadline=shape.deadline,
                    retry_strategy=retry,
                )
            if job.follow_logs and shape.name not in followers:
                followers[shape.name] = follow_logs_template(
                    name=_follower_name(shape.name),
                    job_label=shape.job_label,
                    task=shape.follow_task,
                    container=shape.follow_container,
                    timeout=shape.deadline + 60,
                )
        return resources, followers

    def add_tasks(self) -> dict[str, Task]:
        """Add the jobs (and followers) as tasks to the DAG being built (``with DAG(...)``); returns them by name.

        Chain them with your own tasks: ``prep >> tasks["train"]``.
        """
        from hera.workflows import Task

        resources, followers = self.templates()
        tasks: dict[str, Task] = {}
        for job in self.jobs:
            tasks[job.name] = Task(name=job.name, template=resources[job.shape.name], arguments=self._arguments(job))
        for job in self.jobs:
            for dep in job.after:
                tasks[dep] >> tasks[job.name]
            if job.follow_logs:
                # No continueOn: Argo refuses it beside `depends`; the follower bounds itself and exits 0.
                logs = Task(
                    name=_follower_name(job.name),
                    template=followers[job.shape.name],
                    arguments=_follower_arguments(job.shape.job_label, job.arguments),
                )
                for dep in job.after:
                    tasks[dep] >> logs
        return tasks

    def _check_template_name(self, name: str) -> None:
        """``name`` can sit beside the pipeline's own templates in one workflow (Argo refuses duplicates)."""
        names.check("name", name, names.argo_name)
        shapes = {job.shape.name for job in self.jobs}
        followers = {_follower_name(job.shape.name) for job in self.jobs if job.follow_logs}
        clash = sorted(shapes & followers)
        if clash:
            raise ValidationError("jobs", f"the shape {clash[0]!r} has the name of another shape's log follower")
        if name in shapes | followers:
            raise ValidationError("name", f"{name!r} is also a template of this pipeline; choose another name")

    def dag(self, name: str = "pipeline") -> DAG:
        """A DAG template of the pipeline, inside a ``with Workflow(...)`` block."""
        from hera.workflows import DAG

        self._check_template_name(name)
        count = len(self.jobs) + sum(j.follow_logs for j in self.jobs)
        if self.max_dag_tasks is not None and count > self.max_dag_tasks:
            raise ValidationError(
                "jobs",
                f"{count} DAG tasks; Argo 4's full CRDs allow at most {self.max_dag_tasks}: split the pipeline, render "
                "it as Steps, or pass max_dag_tasks=None for Argo 3.7",
            )
        with DAG(name=name) as dag:
            self.add_tasks()
        return dag

    def steps(self, name: str = "pipeline") -> Steps:
        """A Steps template: one parallel group per level (a job runs after every job of the groups before)."""
        from hera.workflows import Step, Steps

        from hera_volcano.argo.follow_logs import follower_continue_on

        self._check_template_name(name)
        resources, followers = self.templates()
        with Steps(name=name) as steps:
            for group in self.levels:
                with steps.parallel():
                    for job in group:
                        Step(name=job.name, template=resources[job.shape.name], arguments=self._arguments(job))
                        if job.follow_logs:
                            Step(
                                name=_follower_name(job.name),
                                template=followers[job.shape.name],
                                arguments=_follower_arguments(job.shape.job_label, job.arguments),
                                continue_on=follower_continue_on(),
                            )
        return steps

    def workflow(
        self,
        name: str,
        *,
        namespace: str = "argo",
        service_account: str = "argo",
        template: bool = False,
        as_steps: bool = False,
        cleanup: bool = True,
    ) -> Workflow:
        """A whole Workflow (``generateName: NAME-``) or WorkflowTemplate ``NAME`` running the pipeline.

        With ``cleanup`` (the default), an exit handler deletes the workflow's Volcano Jobs unless it Succeeded
        (:func:`hera_volcano.cleanup_on_failure`): a stopped or failed pipeline leaves no gang behind.
        """
        from hera_volcano.argo.workflows import workflow

        names.check("name", name, names.dns1123_label)  # it also names the entry template: no dots
        if len(name) > MAX_WORKFLOW_PREFIX:
            raise ValidationError("name", f"must be at most {MAX_WORKFLOW_PREFIX} characters (Argo adds -xxxxx)")
        names.check("namespace", namespace, names.dns1123_label)
        names.check("service_account", service_account, names.dns1123_subdomain)
        from hera_volcano.argo.cleanup import CLEANUP, DELETE_JOBS, cleanup_on_failure

        if cleanup:
            self._check_template_name(CLEANUP)
            self._check_template_name(DELETE_JOBS)
            if name in (CLEANUP, DELETE_JOBS):
                raise ValidationError("name", f"{name!r} names the exit handler's template; choose another name")
        with workflow(
            name=name, template=template, namespace=namespace, service_account=service_account, entrypoint=name
        ) as w:
            if as_steps:
                self.steps(name)
            else:
                self.dag(name)
            if cleanup:
                w.on_exit = cleanup_on_failure()
        return w


def _follower_name(job: str) -> str:
    """The log follower's task, step and template name beside a job (or shape) named ``job``."""
    return f"{job}-logs"


def _argo_retry(retry: ArgoRetry | None) -> Any:
    if retry is None:
        return None
    from hera.workflows import RetryStrategy

    return RetryStrategy(limit=retry.limit, retry_policy=retry.policy)


def _follower_arguments(label: str | Placeholder, arguments: Mapping[str, Any]) -> dict[str, str]:
    if isinstance(label, Placeholder) and label.expression.startswith(_INPUT):
        key = label.expression.removeprefix(_INPUT)
        return {key: str(arguments[key])}
    return {}


def _strings(data: Any) -> list[str]:
    """Every string in ``data`` that holds an Argo expression."""
    if isinstance(data, str):
        return [data] if "{{" in data else []
    if isinstance(data, Mapping):
        return [s for v in data.values() for s in _strings(v)]
    if isinstance(data, list | tuple):
        return [s for v in data for s in _strings(v)]
    return []
