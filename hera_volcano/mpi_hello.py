"""The MPI hello world: ``python -m hera_volcano.mpi_hello | argo submit -``.

A DAG whose ``submit-job`` step creates a gang-scheduled Volcano MPI job and waits for it, while ``follow-logs``
streams the master's output into the workflow's logs.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from hera_volcano import names
from hera_volcano.errors import ValidationError
from hera_volcano.images import MPI_EXAMPLE_IMAGE

if TYPE_CHECKING:
    from hera.workflows import Workflow

NAME = "volcano-mpi-hello"
JOB_PREFIX = "mpi-hello-"
JOB_LABEL = "mpi-hello"


@dataclass(frozen=True)
class Options:
    """What a user may change; the defaults keep the upstream example's semantics."""

    namespace: str = "argo"
    service_account: str = "argo"
    job_name: str = ""
    workers: int = 2
    slots_per_worker: int = 1
    gpus_per_worker: int = 0
    rdma_per_worker: int = 0
    image: str = MPI_EXAMPLE_IMAGE
    mpi_plugin: bool = False
    template: bool = False


def build(options: Options = Options()) -> Workflow:
    """The hello world Workflow (or WorkflowTemplate): pure, no I/O."""
    from hera.workflows import DAG, Parameter

    from hera_volcano.argo import cleanup_on_failure, follow_logs_template, follower_continue_on, job_template
    from hera_volcano.mpi import MASTER, WORKER, mpi_job
    from hera_volcano.placeholders import Placeholder
    from hera_volcano.workflows import workflow

    names.check("namespace", options.namespace, names.dns1123_label)
    names.check("service_account", options.service_account, names.dns1123_subdomain)
    if options.job_name:
        names.check("job_name", options.job_name, names.dns1035_label)
        longest = f"{options.job_name}-{WORKER}-{max(options.workers - 1, 0)}"
        if len(longest) > 63:
            raise ValidationError(
                "job_name", f"too long: pod {longest!r} would have {len(longest)} characters, at most 63"
            )
    # The job-name parameter, when set (by --job-name or `argo submit -p job-name=...`), fixes the job's name;
    # when empty, Kubernetes generates one from generateName, so two runs never collide.
    job = mpi_job(
        Placeholder.workflow_parameter_json("job-name", options.job_name),
        generate_name=JOB_PREFIX,
        image=options.image,
        command=["mpi_hello_world"],
        workers=options.workers,
        slots_per_worker=options.slots_per_worker,
        gpus_per_worker=options.gpus_per_worker,
        rdma_per_worker=options.rdma_per_worker,
        mpi_plugin=options.mpi_plugin,
        service_account=options.service_account,
    )
    with workflow(
        name=NAME,
        template=options.template,
        namespace=options.namespace,
        service_account=options.service_account,
        entrypoint="main",
        arguments=[Parameter(name="job-name", value=options.job_name)],
    ) as w:
        submit = job_template(job, name="submit-volcano-job", job_label=JOB_LABEL)
        follow = follow_logs_template(name="follow-master-logs", job_label=JOB_LABEL, task=MASTER)
        with DAG(name="main"):
            submit(name="submit-job")
            follow(name="follow-logs", continue_on=follower_continue_on())
        w.on_exit = cleanup_on_failure()
    return w


def render(options: Options = Options()) -> str:
    """The YAML document ``build`` describes."""
    from hera_volcano.emit import to_yaml

    return to_yaml(build(options))


def _parser() -> argparse.ArgumentParser:
    from hera_volcano import cli_common as c

    p = c.parser("hera-volcano mpi-hello", "Print the Volcano MPI hello world as an Argo Workflow.")
    c.add_common(p)
    p.add_argument("--job-name", default="", help="fixed Volcano job name (default: generated per run)")
    p.add_argument("--workers", type=c.positive_int, default=2, help="MPI workers (2)")
    p.add_argument("--slots-per-worker", type=c.positive_int, default=1, help="MPI ranks per worker (1)")
    p.add_argument("--gpus-per-worker", type=c.non_negative_int, default=0, help="nvidia.com/gpu per worker (0)")
    p.add_argument("--rdma-per-worker", type=c.non_negative_int, default=0, help="rdma/ib per worker (0)")
    p.add_argument("--image", default=MPI_EXAMPLE_IMAGE, help=f"MPI image ({MPI_EXAMPLE_IMAGE})")
    p.add_argument("--mpi-plugin", action="store_true", help="use Volcano's mpi plugin (Volcano >= 1.6)")
    return p


_OPTION = {
    "job_name": "--job-name",
    "metadata": "--job-name",
    "image": "--image",
    "workers": "--workers",
    "slots_per_worker": "--slots-per-worker",
    "gpus_per_worker": "--gpus-per-worker",
    "rdma_per_worker": "--rdma-per-worker",
    "namespace": "--namespace",
    "service_account": "--service-account",
}


def main(argv: Sequence[str]) -> int:
    from hera_volcano import cli_common as c

    args = _parser().parse_args(argv)
    options = Options(
        namespace=args.namespace,
        service_account=args.service_account,
        job_name=args.job_name,
        workers=args.workers,
        slots_per_worker=args.slots_per_worker,
        gpus_per_worker=args.gpus_per_worker,
        rdma_per_worker=args.rdma_per_worker,
        image=args.image,
        mpi_plugin=args.mpi_plugin,
        template=args.template,
    )
    try:
        text = render(options)
    except ValidationError as e:
        raise c.UsageError(_as_option(e)) from None
    c.emit(text, args.output)
    return 0


def _as_option(e: ValidationError) -> str:
    """Name the command-line option behind a model error, so the user knows what to change."""
    option = _OPTION.get(e.field.split(".")[0].split("[")[0])
    return f"argument {option}: {e.rule}" if option else str(e)


if __name__ == "__main__":
    import sys

    from hera_volcano.cli_common import run

    sys.exit(run("hera-volcano mpi-hello", main))
