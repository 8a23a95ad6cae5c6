"""One task that runs a Volcano Job and carries what it reports: a DAG template of the job's step and its follower.

A resource template cannot collect files from the pods of the job it created (argoproj/argo-workflows#6862), but
the follower reads the job's leading task's output anyway: the values rank 0 reports there (``hera-volcano:output
NAME=VALUE``, :mod:`hera_volcano.shared.outputs`) become the follower's output parameters, and this DAG lifts them,
with the job step's ``job-name`` and ``job-phase``, to outputs of its own. So a workflow uses
``{{tasks.train.outputs.parameters.loss}}`` (or ``{{steps.train...}}``) for a task ``train`` that calls it, wherever
it is called, as for any other template.

This module imports ``hera.workflows`` (slow); ``import hera_volcano`` reaches it only when it is used.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from hera.workflows import Container, Parameter, Resource
from hera.workflows.models import ValueFrom

from hera_volcano.argo.calls import JobDAG
from hera_volcano.argo.follow_logs import follow_logs_template, follower_continue_on
from hera_volcano.argo.job_template import job_template
from hera_volcano.kube import names
from hera_volcano.kube.images import PYTHON_IMAGE
from hera_volcano.pods.reports import METRICS_OUTPUT
from hera_volcano.shared.errors import ValidationError
from hera_volcano.shared.placeholders import Placeholder
from hera_volcano.volcano.job import VolcanoJob

#: The tasks inside the DAG.
JOB_TASK = "job"
LOGS_TASK = "logs"
#: What the job step itself gives (its job's name and final phase), beside the reported values.
JOB_OUTPUTS = ("job-name", "job-phase")


def job_dag(
    job: VolcanoJob,
    *,
    name: str,
    outputs: Sequence[str] = (),
    job_label: str | Placeholder | None = None,
    task: str | None = None,
    container: str | None = None,
    poll_seconds: int | None = None,
    defaults: Mapping[str, int | str] | None = None,
    follower_image: str = PYTHON_IMAGE,
    service_account: str | None = None,
) -> JobDAG:
    """A DAG template ``name`` (call it inside ``with Workflow(...)``) whose task runs ``job`` to its end and has as
    outputs each of ``outputs`` that the job's rank 0 reported, ``job-metrics`` (the last value of each metric it
    reported, a JSON object: :mod:`hera_volcano.pods.progress`), and ``job-name`` and ``job-phase``.

    Inside, the task ``job`` creates the job and waits for it (:func:`job_template`, template ``NAME-job``) while
    the task ``logs`` streams its leading task's output into the workflow's logs and collects the reported values
    (:func:`follow_logs_template`, template ``NAME-logs``). The job's ``retry=ArgoRetry(...)`` retries the job's
    step, and its follower follows each attempt's job. The job's inputs (``Placeholder.input``) are the DAG's
    inputs, passed on: a call that leaves one out is refused (here, and by Argo at submission), and so is an
    argument that names no input. When the job did not Complete, or Completed but rank 0 did not report one of
    ``outputs``, the ``logs`` task fails saying so, and so does the DAG: a downstream step never runs with an empty
    value. The job's ``start_limit`` (a day by default) bounds the wait for the job to start; its ``deadline``
    (none by default) bounds the whole step and each of its pods.

    :param job: the job (what every builder returns).
    :param name: the DAG template's name (its inner templates are ``NAME-job`` and ``NAME-logs``).
    :param outputs: names of the values rank 0 reports, each an output of the DAG (a name it reported only as a
        metric has that metric's last value).
    :param job_label: the ``hera-volcano/job`` label of the job and its pods (default: ``name``).
    :param task: the task whose output the follower streams (default: the job's lead task).
    :param container: the container whose output it streams (default: the task's name).
    :param poll_seconds: seconds between argoexec's checks of the job (:func:`job_template`).
    :param defaults: default values of the job's input parameters.
    :param follower_image: the image (with ``python3``) the follower runs in.
    :param service_account: the account of the DAG's two pods (default: the workflow's).
    """
    names.check("name", name, names.argo_name)
    if len(name) + len("-logs") > names.ARGO_NAME_MAX:
        raise ValidationError("name", f"must be at most {names.ARGO_NAME_MAX - len('-logs')} characters (NAME-logs)")
    label = name if job_label is None else job_label
    if not isinstance(job, VolcanoJob):
        raise ValidationError("job", f"must be a VolcanoJob (what every builder returns), not {type(job).__name__}")
    run = job_template(
        job,
        name=f"{name}-job",
        job_label=label,
        defaults=defaults,
        poll_seconds=poll_seconds,
        service_account=service_account,
    )
    follow = follow_logs_template(
        run,
        name=f"{name}-logs",
        task=task,
        container=container,
        follower_image=follower_image,
        outputs=outputs,
        service_account=service_account,
    )
    reported = [str(o) for o in outputs]
    inputs = _inputs(run, follow)
    with JobDAG(
        name=name,
        inputs=inputs or None,
        outputs=[
            *(lifted(LOGS_TASK, o) for o in reported),
            # A follower that fails without values to give (its pod evicted, say) does not fail the run: {} then.
            lifted(LOGS_TASK, METRICS_OUTPUT, default="{}"),
            *(lifted(JOB_TASK, o) for o in JOB_OUTPUTS),
        ],
    ) as dag:
        run(name=JOB_TASK, arguments=_passed(run))
        # Without values to collect, a follower that fails (say, its pod was evicted) must not fail the run; with
        # them, its failure is the message that a value is missing.
        follow(
            name=LOGS_TASK,
            arguments=_passed(follow),
            continue_on=None if reported else follower_continue_on(),
        )
    return dag


def lifted(task: str, name: str, default: str | None = None) -> Parameter:
    """The DAG's output ``name``: the output of the same name of its task ``task`` (``default`` when it has none)."""
    source = ValueFrom(parameter=f"{{{{tasks.{task}.outputs.parameters.{name}}}}}", default=default)
    return Parameter(name=name, value_from=source)


def _parameters(template: Resource | Container) -> list[Parameter]:
    """The input parameters a template of ours declares (a list of Parameters, or none)."""
    declared = template.inputs if isinstance(template.inputs, list) else []
    return [p for p in declared if isinstance(p, Parameter) and p.name]


def _inputs(*templates: Resource | Container) -> list[Parameter]:
    """The templates' input parameters, once each (in order of first use), with their defaults: the DAG's own."""
    found: dict[str, Parameter] = {}
    for template in templates:
        for parameter in _parameters(template):
            # No default unless the template has one: Hera writes an explicit None as the text 'null'.
            given = {} if parameter.default is None else {"default": parameter.default}
            found.setdefault(str(parameter.name), Parameter(name=parameter.name, **given))
    return list(found.values())


def _passed(template: Resource | Container) -> dict[str, str]:
    """Each input of ``template``, given the DAG's input of the same name."""
    return {str(p.name): f"{{{{inputs.parameters.{p.name}}}}}" for p in _parameters(template)}
