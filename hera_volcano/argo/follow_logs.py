"""The log follower: a container that streams one task's pod logs into the workflow's, beside the job's step.

This module imports ``hera.workflows`` (slow); ``import hera_volcano`` reaches it only when it is used.
"""

from __future__ import annotations

from collections.abc import Sequence

from hera.workflows import Container, Env, Parameter
from hera.workflows.models import ContinueOn, ValueFrom

from hera_volcano.argo.conditions import DEFAULT_DEADLINE
from hera_volcano.argo.labels import JOB_LABEL, POD_WORKFLOW_LABEL, WORKFLOW_LABEL
from hera_volcano.kube import names, pod_scripts
from hera_volcano.kube.images import KUBECTL_IMAGE, check_image
from hera_volcano.shared import checks
from hera_volcano.shared import outputs as report_names
from hera_volcano.shared.errors import ValidationError
from hera_volcano.shared.placeholders import Placeholder, expressions

#: How long a follower waits while neither the job's step nor the job exists (the controller has not started the
#: step: a busy cluster), before it concludes that neither will.
DEFAULT_GRACE = 600
#: Where the follower writes the values rank 0 reports, one file per name (its outputs' ``valueFrom.path``).
OUTPUT_DIR = "/tmp/hera-volcano/outputs"


def follow_logs_template(
    *,
    name: str = "follow-master-logs",
    job_label: str | Placeholder,
    task: str | None = None,
    container: str | None = None,
    image: str = KUBECTL_IMAGE,
    timeout: int = DEFAULT_DEADLINE + 60,
    grace: int = DEFAULT_GRACE,
    service_account_name: str | None = None,
    outputs: Sequence[str] = (),
) -> Container:
    """A container that streams the output of a Volcano Job's leading task (``kubectl logs -f``), following it across
    restarts, and collects the values its rank 0 reports (``outputs``).

    It finds the job, its pods and the pod of the step that creates it by labels (the job's name may be generated;
    see :func:`job_template`), waiting on watches. ``task`` (default: the task the job's ``hera-volcano/lead-task``
    annotation names, the MPI master, PyTorch master or TensorFlow chief of our builders) and ``container``
    (default: the task's name) say whose output to stream. It stops when the job is Completed, Failed, Terminated or
    Aborted, when a job it saw is gone, when the job's step has ended and the job did not finish, when neither the
    step nor the job appeared within ``grace`` seconds, or after ``timeout`` seconds.

    ``outputs`` names values rank 0 reports with a line ``hera-volcano:output NAME=VALUE``
    (:mod:`hera_volcano.shared.outputs`): each becomes an output parameter of this template, and the follower fails,
    naming them, when the job Completed but one was not reported. Without ``outputs`` it always exits 0: run it beside
    the job step, without a dependency, and where the DAG allows it (no ``depends``) also give the task
    :func:`follower_continue_on`.
    """
    names.check("name", name, names.argo_name)
    if task is not None:
        names.check("task", task, names.dns1123_label)
    if container is not None:
        names.check("container", container, names.dns1123_label)
    if not isinstance(job_label, str | Placeholder):
        raise ValidationError("job_label", "must be a label value or a Placeholder")
    if isinstance(job_label, str):
        names.check("job_label", job_label, names.label_value)
    check_image(image, "image")
    checks.integer("timeout", timeout, minimum=1)
    checks.integer("grace", grace, minimum=1)
    if service_account_name is not None:
        names.check("service_account_name", service_account_name, names.dns1123_subdomain)
    wanted = checks.strings("outputs", outputs)
    for i, output in enumerate(wanted):
        if not report_names.NAME.fullmatch(output) or output in report_names.RESERVED:
            raise ValidationError(
                f"outputs[{i}]",
                f"{output!r} is not a report name (letters, digits, '_', '-', at most 63; not job-name or job-phase)",
            )
    if len(set(wanted)) != len(wanted):
        raise ValidationError("outputs", "names a value twice")
    job_selector = f"{WORKFLOW_LABEL}={{{{workflow.name}}}},{JOB_LABEL}={job_label}"
    pod_selector = f"{POD_WORKFLOW_LABEL}={{{{workflow.name}}}},{JOB_LABEL}={job_label}"
    prefix = "inputs.parameters."
    inputs = [Parameter(name=e.removeprefix(prefix)) for e in expressions(job_selector) if e.startswith(prefix)]
    env = [
        Env(name="JOB_SELECTOR", value=job_selector),
        Env(name="POD_SELECTOR", value=pod_selector),
        Env(name="TASK", value=task or ""),
        Env(name="CONTAINER", value=container or ""),
        Env(name="FOLLOW_SECONDS", value=str(timeout)),
        Env(name="GRACE_SECONDS", value=str(grace)),
    ]
    if wanted:
        env += [Env(name="OUTPUTS", value=" ".join(wanted)), Env(name="OUTPUT_DIR", value=OUTPUT_DIR)]
    return Container(
        name=name,
        image=image,
        command=["bash", "-c"],
        args=[pod_scripts.with_kubectl("hera_volcano.argo", "follow_logs.sh")],
        env=env,
        service_account_name=service_account_name,
        inputs=inputs or None,
        outputs=[
            # An empty default: when the job fails there is nothing to collect, and the job's step says why.
            Parameter(name=output, value_from=ValueFrom(path=f"{OUTPUT_DIR}/{output}", default=""))
            for output in wanted
        ]
        or None,
    )


def follower_continue_on() -> ContinueOn:
    """For the follower's step or task: even a follower whose pod is killed must not fail the workflow.

    Argo accepts ``continueOn`` in Steps and in DAGs that use ``dependencies``, not in DAGs that use ``depends``."""
    return ContinueOn(failed=True, error=True)
