"""``hera-volcano mpi-hello``: the MPI hello world as an Argo Workflow, its options as command-line flags."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from hera_volcano.cli import common as c
from hera_volcano.examples.mpi_hello import MPI_EXAMPLE_IMAGE, Options, build


def _parser() -> argparse.ArgumentParser:
    p = c.parser("hera-volcano mpi-hello", "Print the Volcano MPI hello world as an Argo Workflow.")
    c.add_common(p)
    c.add_follower_image(p)
    p.add_argument(
        "--poll-seconds",
        type=c.positive_int,
        metavar="N",
        help="seconds between the job step's checks of the job (one GET each; default: Argo's, 5)",
    )
    p.add_argument("--job-name", default="", metavar="NAME", help="fixed Volcano job name (default: generated per run)")
    p.add_argument("--workers", type=c.positive_int, default=2, metavar="N", help="MPI workers (2)")
    p.add_argument("--slots-per-worker", type=c.positive_int, default=1, metavar="N", help="MPI ranks per worker (1)")
    p.add_argument(
        "--gpus-per-worker", type=c.non_negative_int, default=0, metavar="N", help="nvidia.com/gpu per worker (0)"
    )
    p.add_argument("--rdma-per-worker", type=c.non_negative_int, default=0, metavar="N", help="rdma/ib per worker (0)")
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
    "poll_seconds": "--poll-seconds",
}


def main(argv: Sequence[str]) -> int:
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
        follower_image=args.follower_image,
        poll_seconds=args.poll_seconds,
        template=args.template,
    )
    return c.print_workflow(args, lambda: build(options), _OPTION)
