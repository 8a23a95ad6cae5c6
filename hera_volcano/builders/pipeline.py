"""Pipelines of Volcano jobs: declare the jobs and their order once, render them as an Argo DAG or as Steps.

Jobs that render alike share one resource template; what differs per job (its ``arguments``, the values of its
``Placeholder.input`` parameters) travels as Argo parameters, encoded so that Argo's text substitution gives back
the same YAML types.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from hera_volcano.argo.defaults import EXECUTOR_ACCOUNT, NAMESPACE, SERVICE_ACCOUNT
from hera_volcano.argo.job_dag import JOB_OUTPUTS
from hera_volcano.argo.labels import LEAD_TASK_ANNOTATION
from hera_volcano.argo.limits import MAX_DAG_TASKS
from hera_volcano.argo.parameters import workflow_parameters
from hera_volcano.argo.sweep_spec import TRIALS_INPUT
from hera_volcano.builders.pipeline_entries import (
    PipelineJob,
    PipelineStep,
    PipelineSweep,
    StepOutput,
    encode_argument,
)
from hera_volcano.builders.pipeline_inputs import INPUT, Prepared, placeholder_key, runtime_argument, strings, uses
from hera_volcano.builders.pipeline_sweeps import SweepShape, make_sweep, sweep_call, sweep_shape
from hera_volcano.builders.pod import apply_settings
from hera_volcano.builders.workspace import Workspace
from hera_volcano.kube import names
from hera_volcano.kube.images import PYTHON_IMAGE, check_image
from hera_volcano.pods.reports import METRICS_OUTPUT
from hera_volcano.pods.sweep import sweep_outputs
from hera_volcano.shared import checks
from hera_volcano.shared.errors import ValidationError
from hera_volcano.shared.findings import as_list, as_map
from hera_volcano.shared.placeholders import Placeholder, carried, expressions, placeholders
from hera_volcano.shared.suggestions import did_you_mean
from hera_volcano.volcano.job import VolcanoJob, check, pod_template_to_dict

if TYPE_CHECKING:
    from hera.workflows import DAG, Container, Resource, Steps, Task, Workflow

    from hera_volcano.argo.sweep import SweepDAG

#: Workflow names are at most 63 characters, and generateName adds 6 (``-`` and 5 random ones).
MAX_WORKFLOW_PREFIX = 57
_PARAMETER_NAME = re.compile(r"[-a-zA-Z0-9_]+")
#: The input that gives each job's pods their label (the entry's name) unless the entry names its own label.
LABEL_INPUT = "job"
#: The template of jobs that render alike, unless the entry names it: this and a digest of what it renders.
TEMPLATE_PREFIX = "volcano-job-"


@dataclass(frozen=True)
class _Shape:
    """What the jobs that share one template share, derived from a :class:`PipelineJob`: the template's name, the
    job without its own arguments, its pods' label, whose output its follower streams, what its task carries, and
    ``key``: all of it as text (equal exactly when two jobs can share the template)."""

    name: str
    key: str
    job: VolcanoJob
    job_label: str | Placeholder
    follow_task: str
    follow_container: str
    outputs: tuple[str, ...]


def _shape(entry: PipelineJob, field: str) -> _Shape:
    job = replace(entry.job, arguments={})
    data = job._data()
    label: str | Placeholder
    if entry.job_label is None:
        names.check(f"{field}.name", entry.name, names.label_value)  # its pods' label
        label = Placeholder.input(LABEL_INPUT, entry.name)
        wanted = {e for e in placeholders(data)} | {e for t in strings(data) for e in expressions(t)}
        if INPUT + LABEL_INPUT in wanted:
            raise ValidationError(
                f"{field}.job",
                f"has an input {LABEL_INPUT!r}, which the pipeline sets to the entry's name (its pods' label): "
                "name that input otherwise, or give the entry a job_label",
            )
    else:
        label = entry.job_label
    tasks = {t.name: t for t in job.tasks}
    lead = str(job.annotations.get(LEAD_TASK_ANNOTATION) or job.tasks[0].name)
    if lead not in tasks:
        raise ValidationError(f"{field}.job.annotations", f"its lead task {lead!r} is no task of the job")
    containers = as_list(as_map(pod_template_to_dict(tasks[lead].template).get("spec")).get("containers"))
    container = str(as_map(containers[0]).get("name", "")) if containers else ""
    retry = entry.job.retry
    key = json.dumps(
        [data, str(label), lead, container, job.deadline, job.start_limit, repr(retry), list(entry.outputs)],
        sort_keys=True,
        default=placeholder_key,
    )
    name = entry.template or TEMPLATE_PREFIX + hashlib.sha256(key.encode()).hexdigest()[:8]
    return _Shape(name, key, job, label, lead, container, tuple(entry.outputs))


Entry = PipelineJob | PipelineStep | PipelineSweep


class Pipeline:
    """An ordered set of Volcano jobs, and ordinary steps of your own, with dependencies, rendered as a DAG or as
    Steps.

    Build it from :class:`PipelineJob` entries (a job from any builder and where it stands), :class:`PipelineSweep`s
    (a sweep of a job, :func:`hera_volcano.sweep`) and :class:`PipelineStep`s; rendering checks names, dependencies
    (unknown names, cycles), each job's and sweep's arguments against its inputs, each :class:`StepOutput` against
    what its step gives, and each job against Volcano's rules with its real arguments. A job with ``outputs`` is a
    task that carries them (:func:`hera_volcano.job_dag`). With ``workspace``, its claim is mounted in every job's
    pods (every trial's, for a sweep) and in every ordinary step.

    :param jobs: the entries, :class:`PipelineJob`, :class:`PipelineSweep` and :class:`PipelineStep`, in order.
    :param max_dag_tasks: the most tasks one DAG may hold (None: no limit).
    :param workspace: a :class:`Workspace` every job's pods and every ordinary step mount.
    :param follower_image: the image (with ``python3``) the log followers run in.
    """

    def __init__(
        self,
        jobs: Sequence[Entry],
        *,
        max_dag_tasks: int | None = MAX_DAG_TASKS,
        workspace: Workspace | None = None,
        follower_image: str = PYTHON_IMAGE,
    ) -> None:
        if isinstance(jobs, str | bytes) or not isinstance(jobs, Sequence):
            raise ValidationError("jobs", "must be a list of PipelineJob, PipelineSweep and PipelineStep")
        self.entries: tuple[Entry, ...] = tuple(jobs)
        if max_dag_tasks is not None:
            checks.integer("max_dag_tasks", max_dag_tasks, minimum=1)
        self.max_dag_tasks = max_dag_tasks
        if workspace is not None and not isinstance(workspace, Workspace):
            raise ValidationError("workspace", f"must be a Workspace(...), not {type(workspace).__name__}")
        self.workspace = workspace
        check_image(follower_image, "follower_image")
        self.follower_image = follower_image
        if not self.entries:
            raise ValidationError("jobs", "a pipeline needs at least one job")
        for i, entry in enumerate(self.entries):
            if not isinstance(entry, PipelineJob | PipelineStep | PipelineSweep):
                hint = ": wrap it, PipelineJob(name, job)" if isinstance(entry, VolcanoJob) else ""
                raise ValidationError(
                    f"jobs[{i}]",
                    f"must be a PipelineJob, a PipelineSweep or a PipelineStep, not {type(entry).__name__}{hint}",
                )
        self.jobs: tuple[PipelineJob, ...] = tuple(e for e in self.entries if isinstance(e, PipelineJob))
        self._by_name: dict[str, Entry] = {}
        for i, entry in enumerate(self.entries):
            names.check(f"jobs[{i}].name", entry.name, names.argo_name)
            if entry.name[0].isdigit():
                raise ValidationError(
                    f"jobs[{i}].name", "must not start with a digit (Argo task names with dependencies)"
                )
            if entry.name in self._by_name:
                raise ValidationError(f"jobs[{i}].name", f"duplicate job name {entry.name!r}")
            self._by_name[entry.name] = entry
        for i, entry in enumerate(self.entries):
            if not isinstance(entry, PipelineJob) or not self._follows_alone(entry):
                continue
            quiet = not entry.follow_logs
            follower = _follower_name(entry.name, quiet)
            if len(follower) > names.ARGO_NAME_MAX:
                raise ValidationError(
                    f"jobs[{i}].name",
                    f"must be at most {names.ARGO_NAME_MAX - len(_follower_name('', quiet))} characters"
                    f" (its follower, which keeps its start limit, is the task {follower[:20]}...)",
                )
            if follower in self._by_name:
                raise ValidationError(f"jobs[{i}].follow_logs", f"its follower task {follower!r} is also a job")
        self._shapes: dict[str, tuple[_Shape, Prepared]] = {}
        self._shape_of: dict[str, _Shape] = {}
        self._arguments_of: dict[str, dict[str, object]] = {}
        self._deps: dict[str, tuple[str, ...]] = {}
        self._sweeps: dict[str, SweepShape] = {}
        self._sweep_of: dict[str, SweepShape] = {}
        for i, entry in enumerate(self.entries):
            if isinstance(entry, PipelineJob):
                self._check_job(i, entry)
            elif isinstance(entry, PipelineSweep):
                self._check_sweep(i, entry)
            else:
                self._check_step(i, entry)
        self.levels = self._levels()

    @staticmethod
    def _follows_alone(job: PipelineJob) -> bool:
        """A job that reports nothing gets a follower task of its own beside it (a job with outputs has its follower
        inside its task): with ``follow_logs`` one that streams its log, else a quiet one that only keeps its start
        limit (none when the job has no start limit), so no gang waits for ever."""
        return not job.outputs and (job.follow_logs or job.job.start_limit is not None)

    def _follower_template(self, job: PipelineJob) -> str:
        """The template of the follower task beside ``job`` (one per shape, streaming or quiet)."""
        return _follower_name(self._shape_of[job.name].name, not job.follow_logs)

    def _job(self, job: VolcanoJob) -> VolcanoJob:
        """The job, with the workspace (if any) mounted in every task's pods."""
        if self.workspace is None:
            return job
        settings = self.workspace.add_to()
        volume = self.workspace.pod_volume().volume()
        mount = self.workspace.pod_volume().mount()
        tasks = []
        for task in job.tasks:
            template = pod_template_to_dict(task.template)
            containers = as_list(as_map(template.get("spec")).get("containers"))
            main = str(as_map(containers[0]).get("name", "")) if containers else ""
            if volume in as_list(as_map(template.get("spec")).get("volumes")):  # its checkpoints mounted it already
                mounts = [as_map(m) for c in containers for m in as_list(as_map(c).get("volumeMounts"))]
                if not any(m.get("name") == mount["name"] and m.get("mountPath") == mount["mountPath"] for m in mounts):
                    raise ValidationError(
                        f"tasks[{task.name}].volumes.{mount['name']}",
                        f"mounts the workspace's claim away from the workspace's path {mount['mountPath']}: give the"
                        " job checkpoints=workspace.checkpoints(), or name its volume otherwise",
                    )
                tasks.append(task)
                continue
            tasks.append(replace(task, template=apply_settings(template, main, settings)))
        return replace(job, tasks=tasks)

    def _prepare(self, shape: _Shape, field: str) -> Prepared:
        known = self._shapes.get(shape.name)
        if known is not None:
            if known[0].key != shape.key:
                raise ValidationError(field, f"two jobs that render differently both name the template {shape.name!r}")
            return known[1]
        prepared = uses(self._job(shape.job), shape.job_label)
        self._shapes[shape.name] = (shape, prepared)
        return prepared

    def _check_job(self, i: int, job: PipelineJob) -> None:
        field = f"jobs[{i}]"
        shape = _shape(job, field)
        prepared = self._prepare(shape, f"{field}.template")
        self._shape_of[job.name] = shape
        twice = sorted(set(job.arguments) & set(job.job.arguments))
        if twice:
            raise ValidationError(f"{field}.arguments.{twice[0]}", "is the job's own argument, set when it was built")
        arguments = {**job.job.arguments, **job.arguments}
        if isinstance(shape.job_label, Placeholder) and job.job_label is None:
            if LABEL_INPUT in arguments:
                raise ValidationError(
                    f"{field}.arguments.{LABEL_INPUT}", "is the pipeline's: the entry's name, its pods' label"
                )
            arguments[LABEL_INPUT] = job.name
        self._arguments_of[job.name] = arguments
        wanted = set(prepared.whole) | prepared.embedded | prepared.runtime
        unknown = sorted(set(arguments) - wanted)
        if unknown:
            raise ValidationError(f"{field}.arguments", f"the job has no input parameter {', '.join(unknown)}")
        missing = sorted(wanted - set(arguments))
        if missing:
            raise ValidationError(f"{field}.arguments", f"missing {', '.join(missing)}")
        self._encode(arguments, prepared, f"{field}.arguments", "tasks")
        self._deps[job.name] = self._dependencies(field, job)
        samples = {INPUT + k: v for k, v in arguments.items() if not isinstance(v, StepOutput)}
        try:
            check(prepared.data, samples)
        except ValidationError as e:
            raise ValidationError(f"{field} ({job.name}): {e.field}", e.rule) from None

    def _check_step(self, i: int, step: PipelineStep) -> None:
        field = f"jobs[{i}]"
        declared = _parameters(step.template, "inputs")
        unknown = sorted(set(step.arguments) - set(declared))
        if unknown:
            raise ValidationError(f"{field}.arguments", f"its template has no input {', '.join(unknown)}")
        missing = sorted(n for n, given in declared.items() if not given and n not in step.arguments)
        if missing:
            raise ValidationError(f"{field}.arguments", f"missing {', '.join(missing)}")
        _step_arguments(step, f"{field}.arguments", "tasks")
        self._deps[step.name] = self._dependencies(field, step)

    def _check_sweep(self, i: int, entry: PipelineSweep) -> None:
        """The sweep's own checks (:func:`~hera_volcano.builders.pipeline_sweeps.sweep_shape`), then its arguments
        as a job's, and the list of a run-time space as an earlier entry's output."""
        field = f"jobs[{i}]"
        shape = sweep_shape(entry, self._job(entry.job), field, self.follower_image)
        known = self._sweeps.get(shape.name)
        if known is not None and known.key != shape.key:
            raise ValidationError(f"{field}.template", f"two sweeps that render differently both name {shape.name!r}")
        self._sweeps[shape.name] = self._sweep_of[entry.name] = known or shape
        arguments = sweep_call(entry, shape.spec, field)
        self._arguments_of[entry.name] = arguments
        self._sweep_arguments(entry, "tasks", field)
        self._deps[entry.name] = self._dependencies(field, entry, arguments)

    def _sweep_arguments(self, entry: PipelineSweep, kind: str, field: str | None = None) -> dict[str, str]:
        """The sweep's call: its own inputs encoded as a job's (by how its job uses them), and its run-time list."""
        given = dict(self._arguments_of[entry.name])
        trials = given.pop(TRIALS_INPUT, None)
        at = f"{field or entry.name}.arguments"
        encoded = self._encode(given, self._sweep_of[entry.name].prepared, at, kind)
        if trials is not None:
            encoded[TRIALS_INPUT] = runtime_argument(trials, f"{at}.{TRIALS_INPUT}", kind)
        return encoded

    def _dependencies(self, field: str, entry: Entry, arguments: Mapping[str, object] | None = None) -> tuple[str, ...]:
        """What ``entry`` runs after: its ``after``, then each step whose output it takes (once each)."""
        arguments = entry.arguments if arguments is None else arguments
        taken = [v.step for v in arguments.values() if isinstance(v, StepOutput)]
        deps = tuple(dict.fromkeys([*entry.after, *taken]))
        for dep in deps:
            if dep not in self._by_name:
                raise ValidationError(f"{field}.after", f"unknown job {dep!r}")
            if dep == entry.name:
                raise ValidationError(f"{field}.after", "a job cannot run after itself")
        for key, value in arguments.items():
            gives = self._gives(self._by_name[value.step]) if isinstance(value, StepOutput) else set()
            if isinstance(value, StepOutput) and value.name not in gives:
                hint = did_you_mean(value.name, sorted(gives))
                given = ", ".join(sorted(gives)) or "none"
                raise ValidationError(
                    f"{field}.arguments.{key}",
                    f"step {value.step!r} has no output {value.name!r}{hint} (it gives: {given})",
                )
        return deps

    @staticmethod
    def _gives(entry: Entry) -> set[str]:
        """The output parameters an entry's task has."""
        if isinstance(entry, PipelineJob):  # a job with outputs runs as job_dag, which has the last metrics too
            return {*entry.outputs, *JOB_OUTPUTS, *((METRICS_OUTPUT,) if entry.outputs else ())}
        if isinstance(entry, PipelineSweep):
            return set(sweep_outputs((entry.objective, *entry.outputs)))
        return set(_parameters(entry.template, "outputs"))

    def _levels(self) -> list[list[Entry]]:
        """Entries grouped so each group runs after every earlier one (longest path); finds cycles.

        Iterative depth-first search: a chain of thousands of jobs must not hit Python's recursion limit.
        """
        level: dict[str, int] = {}
        on_path: dict[str, int] = {}  # entry -> its position on the current path
        path: list[str] = []
        for root in self.entries:
            if root.name in level:
                continue
            stack: list[tuple[str, int]] = [(root.name, 0)]
            while stack:
                name, next_dep = stack.pop()
                if next_dep == 0:
                    on_path[name] = len(path)
                    path.append(name)
                deps = self._deps[name]
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
        groups: list[list[Entry]] = [[] for _ in range(max(level.values()) + 1)]
        for entry in self.entries:
            groups[level[entry.name]].append(entry)
        return groups

    @staticmethod
    def _encode(arguments: Mapping[str, object], prepared: Prepared, field: str, kind: str) -> dict[str, str]:
        encoded = {}
        for k, v in arguments.items():
            at = f"{field}.{k}"
            if k in prepared.runtime:
                encoded[k] = runtime_argument(v, at, kind)
            elif isinstance(v, StepOutput):
                raise ValidationError(
                    at,
                    "is known only at run time, and the job reads this parameter when the workflow is rendered (in"
                    " its manifest): take it with Placeholder.input in a program's args or PodSettings(env=...)",
                )
            else:
                # The manifest reads it through an expression that writes it as one scalar, $ escaped for each
                # expansion (hera_volcano.kube.values): the parameter is the value's own text.
                encoded[k] = encode_argument(v, at, placeholder=prepared.whole.get(k), embedded=k in prepared.embedded)
        return encoded

    def _arguments(self, job: PipelineJob, kind: str) -> dict[str, str]:
        prepared = self._shapes[self._shape_of[job.name].name][1]
        return self._encode(self._arguments_of[job.name], prepared, job.name, kind)

    def templates(self) -> tuple[dict[str, Resource | DAG], dict[str, Container]]:
        """The shared templates of the jobs (by template name: a resource template, or for jobs with outputs the DAG
        that carries them) and the log-follower templates beside them (by the jobs' template name)."""
        from hera_volcano.argo.calls import JobStep
        from hera_volcano.argo.follow_logs import follow_logs_template
        from hera_volcano.argo.job_dag import job_dag
        from hera_volcano.argo.job_template import job_template

        runs: dict[str, Resource | DAG] = {}
        followers: dict[str, Container] = {}
        for job in self.jobs:
            shape = self._shape_of[job.name]
            prepared = self._shapes[shape.name][1]
            if shape.name not in runs and shape.outputs:
                runs[shape.name] = job_dag(
                    prepared.job,
                    name=shape.name,
                    outputs=shape.outputs,
                    job_label=shape.job_label,
                    task=shape.follow_task,
                    container=shape.follow_container,
                    follower_image=self.follower_image,
                )
            elif shape.name not in runs:
                runs[shape.name] = job_template(prepared.job, name=shape.name, job_label=shape.job_label)
            run = runs[shape.name]
            follower = self._follower_template(job)
            if self._follows_alone(job) and follower not in followers and isinstance(run, JobStep):
                followers[follower] = follow_logs_template(
                    run,
                    name=follower,
                    task=shape.follow_task,
                    container=shape.follow_container,
                    follower_image=self.follower_image,
                    quiet=not job.follow_logs,
                )
        return runs, followers

    def sweeps(self) -> dict[str, SweepDAG]:
        """The sweeps' templates (what :func:`hera_volcano.sweep` returns), once per set the sweeps share, by name."""
        made: dict[str, SweepDAG] = {}
        for entry in self.entries:
            shape = self._sweep_of.get(entry.name)
            if isinstance(entry, PipelineSweep) and shape is not None and shape.name not in made:
                made[shape.name] = make_sweep(entry, shape.job, shape.name, self.follower_image)
        return made

    def _step_template(self, step: PipelineStep) -> Any:
        """The step's template with the workspace mounted and, unless ``api_token``, no API token for its code (a
        copy: the user's own stays as it was)."""
        mount = self.workspace is not None and hasattr(step.template, "volumes")
        untoken = not step.api_token and getattr(step.template, "automount_service_account_token", True) is None
        if not mount and not untoken:
            return step.template
        template = copy.deepcopy(step.template)
        if mount and self.workspace is not None:
            template.volumes = [*(template.volumes or []), self.workspace.hera_volume()]
        if untoken:
            from hera.workflows.models import ExecutorConfig

            template.automount_service_account_token = False
            if template.executor is None:
                template.executor = ExecutorConfig(service_account_name=EXECUTOR_ACCOUNT)
        return template

    def add_tasks(self) -> dict[str, Task]:
        """Add the jobs (and followers) and ordinary steps as tasks to the DAG being built (``with DAG(...)``);
        returns them by name.

        Chain them with your own tasks: ``prep >> tasks["train"]``.
        """
        from hera.workflows import Task

        runs, followers = self.templates()
        sweeps = self.sweeps()
        tasks: dict[str, Task] = {}
        for entry in self.entries:
            if isinstance(entry, PipelineJob):
                template, arguments = runs[self._shape_of[entry.name].name], self._arguments(entry, "tasks")
            elif isinstance(entry, PipelineSweep):
                template = sweeps[self._sweep_of[entry.name].name]
                arguments = self._sweep_arguments(entry, "tasks")
            else:
                template, arguments = self._step_template(entry), _step_arguments(entry, entry.name, "tasks")
            tasks[entry.name] = Task(name=entry.name, template=template, arguments=arguments)
        for entry in self.entries:
            for dep in self._deps[entry.name]:
                tasks[dep] >> tasks[entry.name]
            if isinstance(entry, PipelineJob) and self._follows_alone(entry):
                # No continueOn: Argo refuses it beside `depends`; the follower bounds itself and exits 0.
                logs = Task(
                    name=_follower_name(entry.name, not entry.follow_logs),
                    template=followers[self._follower_template(entry)],
                    arguments=self._follower_arguments(entry),
                )
                for dep in self._deps[entry.name]:
                    tasks[dep] >> logs
        return tasks

    def _follower_arguments(self, job: PipelineJob) -> dict[str, str]:
        """The follower's argument: the job's label, when it is an input."""
        label = self._shape_of[job.name].job_label
        if isinstance(label, Placeholder) and label.expression.startswith(INPUT):
            key = label.expression.removeprefix(INPUT)
            return {key: str(self._arguments_of[job.name][key])}
        return {}

    def _template_names(self) -> list[str]:
        """Every template the pipeline adds to a workflow (a name twice is a clash: Hera keeps the first)."""
        found: list[str] = []
        shapes = {self._shape_of[job.name].name: self._shape_of[job.name] for job in self.jobs}
        for name, shape in shapes.items():
            found += [name, f"{name}-job", f"{name}-logs"] if shape.outputs else [name]
        found += list(dict.fromkeys(self._follower_template(j) for j in self.jobs if self._follows_alone(j)))
        for sweep in self._sweeps:
            found += [sweep, f"{sweep}-trial", f"{sweep}-trial-job", f"{sweep}-trial-logs", f"{sweep}-pick"]
        found += list(dict.fromkeys(str(s.template.name) for s in self.entries if isinstance(s, PipelineStep)))
        return found

    def _check_template_name(self, name: str) -> None:
        """``name`` can sit beside the pipeline's own templates in one workflow (Argo refuses duplicates)."""
        names.check("name", name, names.argo_name)
        ours = self._template_names()
        clash = sorted({n for n in ours if ours.count(n) > 1})
        if clash:
            raise ValidationError("jobs", f"two of the pipeline's templates would be named {clash[0]!r}")
        if name in ours:
            raise ValidationError("name", f"{name!r} is also a template of this pipeline; choose another name")

    def dag(self, name: str = "pipeline") -> DAG:
        """A DAG template of the pipeline, inside a ``with Workflow(...)`` block.

        :param name: the template's name.
        """
        from hera.workflows import DAG

        self._check_template_name(name)
        count = len(self.entries) + sum(self._follows_alone(j) for j in self.jobs)
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
        """A Steps template: one parallel group per level (an entry runs after every one of the groups before).

        :param name: the template's name.
        """
        from hera.workflows import Step, Steps

        from hera_volcano.argo.follow_logs import follower_continue_on

        self._check_template_name(name)
        runs, followers = self.templates()
        sweeps = self.sweeps()
        with Steps(name=name) as steps:
            for group in self.levels:
                with steps.parallel():
                    for entry in group:
                        if isinstance(entry, PipelineStep):
                            arguments = _step_arguments(entry, entry.name, "steps")
                            Step(name=entry.name, template=self._step_template(entry), arguments=arguments)
                            continue
                        if isinstance(entry, PipelineSweep):
                            arguments = self._sweep_arguments(entry, "steps")
                            Step(name=entry.name, template=sweeps[self._sweep_of[entry.name].name], arguments=arguments)
                            continue
                        Step(
                            name=entry.name,
                            template=runs[self._shape_of[entry.name].name],
                            arguments=self._arguments(entry, "steps"),
                        )
                        if self._follows_alone(entry):
                            Step(
                                name=_follower_name(entry.name, not entry.follow_logs),
                                template=followers[self._follower_template(entry)],
                                arguments=self._follower_arguments(entry),
                                continue_on=follower_continue_on(),
                            )
        return steps

    def workflow(
        self,
        name: str,
        *,
        namespace: str = NAMESPACE,
        service_account: str = SERVICE_ACCOUNT,
        template: bool = False,
        as_steps: bool = False,
        cleanup: bool = True,
        arguments: Mapping[str, str] | None = None,
    ) -> Workflow:
        """A whole Workflow (``generateName: NAME-``) or WorkflowTemplate ``NAME`` running the pipeline, in
        ``namespace`` as ``service_account`` (by default the dedicated account ``hera-volcano rbac`` creates).

        With ``cleanup`` (the default), an exit handler deletes the workflow's Volcano Jobs unless it Succeeded
        (:func:`hera_volcano.cleanup_on_failure`): a stopped or failed pipeline leaves no gang behind.

        :param name: the workflow's name (its ``generateName`` prefix) and its entry template's.
        :param namespace: the namespace it runs in.
        :param service_account: the account its pods run as.
        :param template: a WorkflowTemplate instead of a Workflow.
        :param as_steps: Steps instead of a DAG.
        :param cleanup: add the exit handler that deletes the jobs of a workflow that did not Succeed.
        :param arguments: the workflow's parameters and their values (``argo submit -p NAME=VALUE`` overrides one):
            each ``Placeholder.workflow_parameter`` the jobs read must be one of them (Argo fails to resolve any
            other when the workflow runs).
        """
        from hera.workflows import Parameter

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
        given = _workflow_arguments(arguments)
        with workflow(
            name=name,
            template=template,
            namespace=namespace,
            service_account=service_account,
            entrypoint=name,
            arguments=[Parameter(name=k, value=v) for k, v in given.items()],
        ) as w:
            if as_steps:
                self.steps(name)
            else:
                self.dag(name)
            if cleanup:
                w.on_exit = cleanup_on_failure()
        undeclared = sorted({p for s in strings(w.to_dict()) for p in workflow_parameters(s)} - {*given, "json"})
        if undeclared:
            raise ValidationError(
                "arguments",
                f"the jobs read {{{{workflow.parameters.{undeclared[0]}}}}}, which the workflow does not declare"
                f" (Argo fails to resolve it when it runs): pass arguments={{{undeclared[0]!r}: VALUE}}",
            )
        return w


def _workflow_arguments(arguments: object) -> dict[str, str]:
    """A workflow's parameters: Argo's names, values Argo carries as they are."""
    if arguments is None:
        return {}
    if not isinstance(arguments, Mapping):
        raise ValidationError("arguments", "must be a mapping of parameter names to values")
    for key, value in arguments.items():
        if not isinstance(key, str) or not _PARAMETER_NAME.fullmatch(key):
            raise ValidationError("arguments", f"{key!r} is not an Argo parameter name (letters, digits, '_', '-')")
        if not isinstance(value, str):
            raise ValidationError(f"arguments.{key}", "must be a string")
        carried(f"arguments.{key}", value)
    return {str.__str__(k): str.__str__(v) for k, v in arguments.items()}


def _follower_name(job: str, quiet: bool = False) -> str:
    """The follower's task, step and template name beside a job (or shape) named ``job``: ``-logs`` for the log
    follower, ``-start`` for the quiet one that keeps its start limit."""
    return f"{job}-start" if quiet else f"{job}-logs"


def _step_arguments(step: PipelineStep, field: str, kind: str) -> dict[str, str]:
    """An ordinary step's arguments as Argo parameter values."""
    found = {}
    for key, value in step.arguments.items():
        if isinstance(value, StepOutput):
            found[key] = value.reference(kind)
        elif isinstance(value, str | int | float | bool):
            found[key] = runtime_argument(value, f"{field}.{key}", kind)
        else:
            raise ValidationError(f"{field}.{key}", "must be text, a number, true/false or a StepOutput")
    return found


def _parameters(template: Any, where: str) -> dict[str, bool]:
    """The parameters a Hera template declares as its ``inputs`` or ``outputs``: name -> whether it has a value
    (a default or a value)."""
    from hera.workflows import Parameter

    declared = getattr(template, where, None)
    found = {}
    for item in declared if isinstance(declared, list) else []:
        if isinstance(item, Parameter) and item.name:
            found[str(item.name)] = item.default is not None or item.value is not None or item.value_from is not None
    return found
