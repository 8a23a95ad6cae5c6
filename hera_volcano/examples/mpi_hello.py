"""The MPI hello world (``python -m hera_volcano.mpi_hello | argo submit -``), as a Workflow built from options.

A DAG whose ``submit-job`` step creates a gang-scheduled Volcano MPI job and waits for it, while ``follow-logs``
streams the master's output into the workflow's logs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from hera_volcano.argo.defaults import NAMESPACE, SERVICE_ACCOUNT
from hera_volcano.kube import names
from hera_volcano.kube.images import PYTHON_IMAGE
from hera_volcano.shared import checks
from hera_volcano.shared.errors import ValidationError

if TYPE_CHECKING:
    from hera.workflows import Workflow

NAME = "volcano-mpi-hello"
JOB_PREFIX = "mpi-hello-"
JOB_LABEL = "mpi-hello"
#: Volcano's MPI example image, with sshd, Open MPI and ``mpi_hello_world``.
MPI_EXAMPLE_IMAGE = "volcanosh/example-mpi:0.0.3"


@dataclass(frozen=True)
class Options:
    """What a user may change; the defaults keep the upstream example's semantics."""

    namespace: str = NAMESPACE
    service_account: str = SERVICE_ACCOUNT
    job_name: str = ""
    workers: int = 2
    slots_per_worker: int = 1
    gpus_per_worker: int = 0
    rdma_per_worker: int = 0
    image: str = MPI_EXAMPLE_IMAGE
    mpi_plugin: bool = False
    follower_image: str = PYTHON_IMAGE
    #: argoexec's interval between checks of the job (seconds; None: the job_template default).
    poll_seconds: int | None = None
    template: bool = False


def build(options: Options = Options()) -> Workflow:
    """The hello world Workflow (or WorkflowTemplate): pure, no I/O."""
    from hera.workflows import Parameter

    from hera_volcano.argo.workflows import workflow
    from hera_volcano.builders.mpi import MASTER, RDMA, WORKER, mpi_job
    from hera_volcano.builders.pod import MAX_DEVICES, PodSettings
    from hera_volcano.builders.program import Program
    from hera_volcano.examples.hello_dag import submit_and_follow
    from hera_volcano.shared.placeholders import Placeholder

    names.check("namespace", options.namespace, names.dns1123_label)
    names.check("service_account", options.service_account, names.dns1123_subdomain)
    if options.job_name:
        names.check("job_name", options.job_name, names.dns1035_label)
        longest = f"{options.job_name}-{WORKER}-{max(options.workers - 1, 0)}"
        if len(longest) > 63:
            raise ValidationError(
                "job_name", f"too long: pod {longest!r} would have {len(longest)} characters, at most 63"
            )
    # The ranks run on the workers: their devices are the workers' pod settings.
    checks.integer("gpus_per_worker", options.gpus_per_worker, maximum=MAX_DEVICES)
    checks.integer("rdma_per_worker", options.rdma_per_worker, maximum=MAX_DEVICES)
    devices = {RDMA: options.rdma_per_worker} if options.rdma_per_worker else {}
    worker_pod = (
        PodSettings(gpus=options.gpus_per_worker, extended_resources=devices)
        if options.gpus_per_worker or devices
        else None
    )
    # The job-name parameter, when set (by --job-name or `argo submit -p job-name=...`), fixes the job's name;
    # when empty, Kubernetes generates one from generateName, so two runs never collide.
    job = mpi_job(
        name=Placeholder.workflow_parameter("job-name", options.job_name),
        generate_name=JOB_PREFIX,
        image=options.image,
        program=Program.command(["mpi_hello_world"]),
        workers=options.workers,
        slots_per_worker=options.slots_per_worker,
        worker_pod=worker_pod,
        mpi_plugin=options.mpi_plugin,
        service_account=options.service_account,
        follower_image=options.follower_image,  # one Python image for the follower and the master's wait
    )
    with workflow(
        name=NAME,
        template=options.template,
        namespace=options.namespace,
        service_account=options.service_account,
        entrypoint="main",
        arguments=[Parameter(name="job-name", value=options.job_name)],
    ) as w:
        submit_and_follow(
            w,
            job,
            job_label=JOB_LABEL,
            master=MASTER,
            follower_image=options.follower_image,
            poll_seconds=options.poll_seconds,
        )
    return w


def render(options: Options = Options()) -> str:
    """The YAML document ``build`` describes."""
    from hera_volcano.kube.emit import to_yaml

    return to_yaml(build(options))
