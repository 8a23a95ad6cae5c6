"""The resource step that creates a Volcano Job and succeeds or fails with it.

This module imports ``hera.workflows`` (slow); ``import hera_volcano`` reaches it only when it is used.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace

from hera.workflows import Parameter, RetryStrategy
from hera.workflows.models import ValueFrom

from hera_volcano.argo.calls import Followed, JobStep
from hera_volcano.argo.conditions import (
    FAILURE_PHASES,
    SUCCESS_PHASES,
    conditions,
    watched_ttl_problem,
)
from hera_volcano.argo.labels import STEP_POD_ANNOTATION, THIS_WORKFLOW, JobIdentity
from hera_volcano.kube import names, values
from hera_volcano.kube.emit import dump_manifest
from hera_volcano.kube.expansion import escape_for_executor
from hera_volcano.shared import checks
from hera_volcano.shared.errors import ValidationError
from hera_volcano.shared.placeholders import Placeholder, collect, expressions
from hera_volcano.volcano.accounts import accountless_api_callers
from hera_volcano.volcano.job import VolcanoJob, check, pod_template_to_dict
from hera_volcano.volcano.rules import raise_first
from hera_volcano.volcano.step import ArgoRetry

#: An input parameter read inside an Argo expression: ``inputs.parameters.X`` (X without '-', which expr would
#: read as a minus) or ``inputs.parameters['X']``.
_EXPRESSION_INPUT = re.compile(r"\binputs\.parameters(?:\.([a-zA-Z0-9_]+)|\['([-a-zA-Z0-9_]+)'\])")


def _attach(
    job: VolcanoJob, labels: Mapping[str, str], pod_labels: Mapping[str, str], pod_deadline: int | None
) -> VolcanoJob:
    """The job tied to its step: ``labels`` on the job, ``pod_labels`` on every pod template (user labels win), and
    each pod's ``activeDeadlineSeconds`` (unless set) to the step's deadline, so pods do not outlive a step that timed
    out."""
    tasks = []
    for i, task in enumerate(job.tasks):
        template = pod_template_to_dict(task.template)
        metadata, own = template.get("metadata") or {}, None
        if isinstance(metadata, Mapping):
            own = metadata.get("labels") or {}
        if not isinstance(own, Mapping):  # also when metadata itself is not a mapping
            raise ValidationError(f"spec.tasks[{i}].template.metadata", "must be a mapping whose labels are a mapping")
        metadata = {**metadata, "labels": {**pod_labels, **own}}
        rest = {k: v for k, v in template.items() if k != "metadata"}
        spec = rest.get("spec")
        if pod_deadline is not None and isinstance(spec, Mapping) and "activeDeadlineSeconds" not in spec:
            rest["spec"] = {**spec, "activeDeadlineSeconds": pod_deadline}
        tasks.append(replace(task, template={"metadata": metadata, **rest}))
    # The pod of the step's attempt that creates the job (Argo substitutes it anew for each retry): its follower
    # finds exactly this job, in a loop or beside others that share its label.
    annotations = {STEP_POD_ANNOTATION: "{{pod.name}}", **dict(job.annotations)}
    return replace(job, tasks=tasks, labels={**labels, **dict(job.labels)}, annotations=annotations)


def _inputs(manifest: str, defaults: Mapping[str, int | str]) -> list[Parameter]:
    """Input parameters for every ``{{inputs.parameters.X}}`` the manifest uses, and every input an expression
    ``{{=...}}`` reads (``inputs.parameters.X`` or ``inputs.parameters['X']``), in order of first use."""
    wanted: dict[str, None] = {}
    for expr in expressions(manifest):
        if expr.startswith("inputs.parameters."):
            wanted[expr.removeprefix("inputs.parameters.")] = None
        elif expr.startswith("="):
            wanted.update(dict.fromkeys(a or b for a, b in _EXPRESSION_INPUT.findall(expr)))
    unknown = sorted(set(defaults) - set(wanted))
    if unknown:
        raise ValidationError("defaults", f"names parameters the job does not use: {', '.join(unknown)}")
    return [Parameter(name=n, default=str(defaults[n])) if n in defaults else Parameter(name=n) for n in wanted]


def job_template(
    job: VolcanoJob,
    *,
    name: str,
    job_label: str | Placeholder | None = None,
    success_phases: Sequence[str] = SUCCESS_PHASES,
    failure_phases: Sequence[str] = FAILURE_PHASES,
    owned: bool = True,
    service_account: str | None = None,
    defaults: Mapping[str, int | str] | None = None,
    poll_seconds: int | None = None,
    job_outputs: bool = True,
) -> JobStep:
    """A resource template that creates ``job`` and succeeds or fails with it.

    The job is owned by the Workflow (deleted with it) and carries Argo's workflow label (the exit handler and the
    client find it by that); its pods and the step's own pod carry ``hera-volcano/workflow`` and
    ``hera-volcano/job: JOB_LABEL``, for log followers. The job's pods do not carry Argo's label: ``argo logs``
    would ask them for a ``main`` container.

    The job says how its step treats it. No time limit by default (a training run is not ended for running long; a
    job's follower keeps its ``start_limit``: build it from this step, ``follow_logs_template(step)``, which also
    takes the step's retries and the job's label from it). With the job's ``deadline``
    (seconds) the step waits at most that long, and each pod runs at most as long from its own start
    (``activeDeadlineSeconds``, unless the pod template sets one): a step that times out does not leave its pods
    holding the gang's resources for long. The job's ``retry=ArgoRetry(...)`` retries the step (the job needs a
    generated name). The job's own ``arguments`` are written into its manifest. Input parameters are declared for
    every other ``{{inputs.parameters.X}}`` the job uses: calling the template without one of them, or with an
    argument that names no input, raises :class:`ValidationError`.

    :param job: the job (what every builder returns).
    :param name: the template's name.
    :param job_label: the ``hera-volcano/job`` label of the job and its pods, by which its follower finds them
        (default: ``name``; a :class:`Placeholder` for one per call).
    :param success_phases: the job's phases that succeed the step (``Completed``).
    :param failure_phases: the job's phases that fail it (``Failed``, ``Terminated``, ``Aborted``).
    :param owned: whether the Workflow owns the job (an owned job lives in the Workflow's namespace).
    :param service_account: the account of the step's pod (default: the workflow's).
    :param defaults: default values of the job's input parameters (none by default).
    :param poll_seconds: seconds between argoexec's checks of the job's phase, each one GET (Argo's default, 5 s,
        when None).
    :param job_outputs: whether the step has the outputs ``job-name`` and ``job-phase`` (the job's name and final
        phase). False leaves them out where nothing reads them: argoexec reads each with a ``kubectl get`` of its
        own, and each pays for API discovery again (it names the job ``job.batch.volcano.sh/NAME``, which kubectl
        first takes for version ``batch`` of group ``volcano.sh``), about three requests an output.
    """
    label = _check_arguments(job, name, job_label, service_account, defaults, poll_seconds, job_outputs, owned)
    success, failure = conditions(success_phases, failure_phases)
    argo_retry = job.retry if isinstance(job.retry, ArgoRetry) else None
    # A label is a string: a placeholder goes in as one quoted text (kube.values), so `y` cannot turn into a boolean.
    identity = JobIdentity(THIS_WORKFLOW.workflow, str(label))
    pod_labels = identity.pod_labels()
    data = _attach(job, identity.job_labels(), pod_labels, job.deadline).bound_data()
    values.check_keys(data)  # before any rule reads a key as a name
    samples = {**collect(data), **{f"inputs.parameters.{k}": v for k, v in (defaults or {}).items()}}
    check(data, samples)
    raise_first(accountless_api_callers(data))  # a Volcano pod does not run as the Workflow's account
    manifest = dump_manifest(values.in_manifest(data))
    step = JobStep(
        name=name,
        action="create",
        manifest=escape_for_executor(manifest),
        set_owner_reference=owned or None,
        success_condition=success,
        failure_condition=failure,
        active_deadline_seconds=job.deadline,
        service_account_name=service_account,
        retry_strategy=_retry_strategy(argo_retry),
        inputs=_inputs(manifest, defaults or {}) or None,
        outputs=_outputs() if job_outputs else None,
        labels=pod_labels,
        pod_spec_patch=None if poll_seconds is None else _poll_patch(poll_seconds),
    )
    step._followed = Followed(label, job.start_limit, 0 if argo_retry is None else argo_retry.limit)
    return step


def _check_arguments(
    job: VolcanoJob,
    name: str,
    job_label: str | Placeholder | None,
    service_account: str | None,
    defaults: Mapping[str, int | str] | None,
    poll_seconds: int | None,
    job_outputs: bool,
    owned: bool,
) -> str | Placeholder:
    """:func:`job_template`'s arguments checked, and the job's against the step's rules; the job's label."""
    if not isinstance(job, VolcanoJob):
        raise ValidationError("job", f"must be a VolcanoJob (what every builder returns), not {type(job).__name__}")
    if defaults is not None and not isinstance(defaults, Mapping):
        raise ValidationError("defaults", "must be a mapping of input names to default values")
    names.check("name", name, names.argo_name)
    label = name if job_label is None else job_label
    if isinstance(label, str):
        names.check("job_label", label, names.label_value)
    if service_account is not None:
        names.check("service_account", service_account, names.dns1123_subdomain)
    if poll_seconds is not None:
        checks.integer("poll_seconds", poll_seconds, minimum=1, maximum=3600)
    if not isinstance(job_outputs, bool):
        raise ValidationError("job_outputs", "must be True or False (whether the step saves job-name and job-phase)")
    if isinstance(job.retry, ArgoRetry) and _fixed_name(job):
        raise ValidationError(
            "retry",
            "an Argo retry creates the job again, so the job needs generate_name (a fixed name collides); "
            "or retry inside the job with VolcanoRetry(...)",
        )
    ttl_problem = watched_ttl_problem(job.ttl_seconds_after_finished)
    if ttl_problem is not None:
        raise ValidationError("ttl_seconds_after_finished", ttl_problem)
    if owned and job.namespace is not None:
        raise ValidationError(
            "namespace", "an owned job lives in the Workflow's namespace; leave it unset or pass owned=False"
        )
    return label


def _retry_strategy(retry: ArgoRetry | None) -> RetryStrategy | None:
    return None if retry is None else RetryStrategy(limit=retry.limit, retry_policy=retry.policy)


def _outputs() -> list[Parameter]:
    """The step's outputs: the job's name and its final phase, read from the job once it ended (new objects each
    time: a template's parameters are its own)."""
    return [
        Parameter(name="job-name", value_from=ValueFrom(json_path="{.metadata.name}")),
        Parameter(name="job-phase", value_from=ValueFrom(json_path="{.status.state.phase}")),
    ]


def _poll_patch(seconds: int) -> str:
    """A pod spec patch setting argoexec's interval between checks of the job (``RESOURCE_STATE_CHECK_INTERVAL``,
    read from the step's main container, whose environment reaches ``argoexec resource``)."""
    env = [{"name": "RESOURCE_STATE_CHECK_INTERVAL", "value": f"{seconds}s"}]
    return json.dumps({"containers": [{"name": "main", "env": env}]}, separators=(",", ":"))


def _fixed_name(job: VolcanoJob) -> bool:
    """Whether creating the job twice collides: a literal name, or a parametrised one without generateName."""
    if job.generate_name is not None:
        return isinstance(job.name, str) and job.name != "" and "{{" not in job.name
    return True
