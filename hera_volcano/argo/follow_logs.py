"""The log follower: a container that streams one task's pod logs into the workflow's, beside the job's step.

It runs ``python3`` in its ``follower_image`` (Python's standard library is all it needs): the program of
:mod:`hera_volcano.pods`, from the ConfigMap ``hera-volcano-follower-DIGEST`` that ``hera-volcano rbac`` renders for
the namespace (:func:`hera_volcano.pods.program.config_map`), which talks to the API server as the pod's service
account (no kubectl). Without the ConfigMap the follower fails at once, naming it. It finds the job, its pods and the
pod of the step that creates it by labels (the job's name may be generated; see :func:`job_template`), waiting on
watches; with its own Argo node name it follows exactly the job its sibling step created (in a loop, after an Argo
retry, beside jobs that share its label).

This module imports ``hera.workflows`` (slow); ``import hera_volcano`` reaches it only when it is used.
"""

from __future__ import annotations

from collections.abc import Sequence

from hera.workflows import ConfigMapVolume, Container, Env, FieldEnv, Parameter
from hera.workflows.models import ContinueOn, ValueFrom

from hera_volcano.argo.calls import Followed, JobStep
from hera_volcano.argo.labels import NODE_NAME_ANNOTATION, THIS_WORKFLOW, JobIdentity
from hera_volcano.kube import names
from hera_volcano.kube.images import PYTHON_IMAGE, check_image
from hera_volcano.pods import program
from hera_volcano.pods.follow import DEFAULT_GRACE
from hera_volcano.pods.reports import METRICS_OUTPUT
from hera_volcano.pods.run import Settings
from hera_volcano.shared import checks
from hera_volcano.shared import outputs as report_names
from hera_volcano.shared.errors import ValidationError
from hera_volcano.shared.placeholders import expressions


def follow_logs_template(
    job_step: JobStep,
    *,
    name: str | None = None,
    task: str | None = None,
    container: str | None = None,
    follower_image: str = PYTHON_IMAGE,
    timeout: int | None = None,
    grace: int = DEFAULT_GRACE,
    service_account: str | None = None,
    outputs: Sequence[str] = (),
    quiet: bool = False,
) -> Container:
    """A container that streams the output of a Volcano Job's leading task, following it across restarts, and
    collects the values its rank 0 reports (``outputs``).

    It stops when the job is Completed, Failed, Terminated or Aborted, when a job it saw is gone, when the job's
    step has ended and the job did not finish, when neither appeared within ``grace`` seconds, or after ``timeout``.
    Without ``outputs`` it exits 0 (unless the start limit ended the job): run it beside the job step, without a
    dependency (and with :func:`follower_continue_on` where the DAG has no ``depends``).

    Built from the job's step (what :func:`job_template` returned), it takes the job's label, its
    ``start_limit`` and the step's ``ArgoRetry`` limit from it: nothing typed twice, no setting dropped. A job still
    Pending at its start limit is deleted (its gang frees what it holds) and the follower fails with the job's
    PodGroup's conditions; after a retry it follows the next attempt's job. Call the pair once per DAG or Steps
    level: a follower beside two sibling steps creating jobs of its label fails at once, naming them; to call a job
    more than once use :func:`job_dag`, which nests each pair in a DAG of its own.

    :param job_step: the job's step (:func:`job_template`'s).
    :param name: the template's name (default: the job step's name and ``-logs``).
    :param task: the task whose output to stream (default: the task the job's ``hera-volcano/lead-task``
        annotation names, the MPI master, PyTorch master or TensorFlow chief of our builders).
    :param container: the container whose output to stream (default: the task's name).
    :param follower_image: the image (with ``python3``) the follower runs in.
    :param timeout: seconds after which the follower stops (no limit by default: it lasts as long as the job's
        step, and a limit shorter than the job's would end it first).
    :param grace: seconds within which the step or the job must appear.
    :param service_account: the account of the follower's pod (default: the workflow's).
    :param outputs: names of values rank 0 reports with a line ``hera-volcano:output NAME=VALUE``
        (:mod:`hera_volcano.shared.outputs`), or as a metric ``hera-volcano:metric NAME=NUMBER`` (its last value):
        each becomes an output parameter of this template, and the follower fails whenever it ends without all of
        them: the job did not Complete (it failed, was stopped, or the follower's own ``timeout`` came first) or
        Completed without reporting one (naming it). A follower that is not ``quiet`` also has the output
        ``job-metrics``: the last value of each metric rank 0 reported (:mod:`hera_volcano.pods.progress`), a JSON
        object, ``{}`` when none.
    :param quiet: stream and collect nothing, only keep the start limit of a job nobody follows (as beside a
        :class:`~hera_volcano.PipelineJob` without ``follow_logs``), so that its gang never waits for ever.
    """
    followed = _followed(job_step, quiet, outputs)
    name = f"{job_step.name}-logs" if name is None else name
    names.check("name", name, names.argo_name)
    _check(task, container, follower_image, timeout, grace, service_account)
    identity = JobIdentity(THIS_WORKFLOW.workflow, str(followed.label))
    settings = Settings(
        jobs=identity.jobs_selector(),
        pods=identity.pods_selector(),
        task=task,
        container=container,
        limit=timeout,
        grace=grace,
        start_limit=followed.start_limit,
        step_retries=followed.step_retries,
        outputs=tuple(report_names.check_names("outputs", outputs)),
        quiet=quiet,
    )
    return Container(
        name=name,
        image=follower_image,
        command=["python3", "-c"],
        args=[program.bootstrap()],
        annotations=program.pod_annotations(program.FOLLOWER),  # rbac_for grants the calls the follower declares
        env=_env(settings),
        volumes=[ConfigMapVolume(name=program.config_map_name(), mount_path=program.MOUNT_DIR, optional=True)],
        service_account_name=service_account,
        inputs=_inputs(settings.jobs) or None,
        outputs=_outputs(settings) or None,
    )


def _outputs(settings: Settings) -> list[Parameter]:
    """Each value rank 0 is to report, then (unless quiet) the last metrics it reported, as a JSON object."""
    # An empty default: when the job fails there is nothing to collect, and the job's step says why.
    reported = [
        Parameter(name=output, value_from=ValueFrom(path=f"{settings.output_dir}/{output}", default=""))
        for output in settings.outputs
    ]
    if settings.quiet:
        return reported
    path = f"{settings.output_dir}/{METRICS_OUTPUT}"
    return [*reported, Parameter(name=METRICS_OUTPUT, value_from=ValueFrom(path=path, default="{}"))]


def _inputs(selector: str) -> list[Parameter]:
    """The inputs a parametrised job label reads (the job step's own, passed on by the caller)."""
    prefix = "inputs.parameters."
    return [Parameter(name=e.removeprefix(prefix)) for e in expressions(selector) if e.startswith(prefix)]


def _followed(job_step: object, quiet: object, outputs: Sequence[str]) -> Followed:
    """What the step says of its job, once the step is a job step and ``quiet`` a bool that leaves no outputs."""
    if not isinstance(job_step, JobStep):
        raise ValidationError(
            "job_step", f"must be the job's step (what job_template returned), not {type(job_step).__name__}"
        )
    if not isinstance(quiet, bool):
        raise ValidationError("quiet", "must be True or False")
    if quiet and outputs:
        raise ValidationError("outputs", "a quiet follower collects nothing: give outputs to a follower that streams")
    return job_step.followed


def _check(
    task: str | None,
    container: str | None,
    follower_image: str,
    timeout: int | None,
    grace: int,
    service_account: str | None,
) -> None:
    """The follower's arguments, each against its rule (ValidationError naming the first one that breaks it)."""
    if task is not None:
        names.check("task", task, names.dns1123_label)
    if container is not None:
        names.check("container", container, names.dns1123_label)
    check_image(follower_image, "follower_image")
    if timeout is not None:
        checks.integer("timeout", timeout, minimum=1)
    checks.integer("grace", grace, minimum=1)
    if service_account is not None:
        names.check("service_account", service_account, names.dns1123_subdomain)


def _env(settings: Settings) -> list[Env | FieldEnv]:
    """The follower's environment (:meth:`Settings.to_env`), and after its step retries its own Argo node, from its
    pod's annotation: the step beside it (same parent, same loop item) is the one whose job it follows."""
    env: list[Env | FieldEnv] = [Env(name=key, value=value) for key, value in settings.to_env().items()]
    node = FieldEnv(name=Settings.NODE_NAME, field_path=f"metadata.annotations['{NODE_NAME_ANNOTATION}']")
    env.insert([e.name for e in env].index(Settings.STEP_RETRIES) + 1, node)
    return env


def follower_continue_on() -> ContinueOn:
    """For the follower's step or task: even a follower whose pod is killed must not fail the workflow.

    Argo accepts ``continueOn`` in Steps and in DAGs that use ``dependencies``, not in DAGs that use ``depends``."""
    return ContinueOn(failed=True, error=True)
