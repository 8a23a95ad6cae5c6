"""``hera-volcano data-pipeline``: the bundled data pipeline (prep, train a Python function on a Volcano PyTorch
job, evaluate) as an Argo Workflow, its options as command-line flags."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from hera_volcano.cli import common as c
from hera_volcano.examples.data_pipeline import CLAIM, Options, build
from hera_volcano.examples.pytorch_hello import PYTORCH_IMAGE
from hera_volcano.kube import names


def _parser() -> argparse.ArgumentParser:
    p = c.parser(
        "hera-volcano data-pipeline",
        "Print the data pipeline as an Argo Workflow: prep writes a data set to the workspace, train fits a model"
        " with a Python function on a gang-scheduled Volcano PyTorch job and reports its loss and the model's path,"
        " evaluate loads the model and prints both.",
    )
    c.add_common(p)
    c.add_follower_image(p)
    p.add_argument(
        "--claim",
        type=c.named(names.dns1123_subdomain),
        default=CLAIM,
        help=f"the PersistentVolumeClaim every step mounts at /workspace; it must exist ({CLAIM})",
    )
    p.add_argument(
        "--workers", type=c.positive_int, default=2, metavar="N", help="PyTorch workers beside the master (2)"
    )
    p.add_argument("--image", default=PYTORCH_IMAGE, help=f"image with python3 and torch ({PYTORCH_IMAGE})")
    return p


_OPTION = {
    "image": "--image",
    "workers": "--workers",
    "claim": "--claim",
}


def main(argv: Sequence[str]) -> int:
    args = _parser().parse_args(argv)
    options = Options(
        namespace=args.namespace,
        service_account=args.service_account,
        claim=args.claim,
        workers=args.workers,
        image=args.image,
        follower_image=args.follower_image,
        template=args.template,
    )
    return c.print_workflow(args, lambda: build(options), _OPTION)
