"""``hera-volcano pytorch-hello``: the PyTorch hello world as an Argo Workflow, its options as command-line flags."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from hera_volcano.cli import common as c
from hera_volcano.examples.pytorch_hello import PYTORCH_IMAGE, Options, build


def _parser() -> argparse.ArgumentParser:
    p = c.parser("hera-volcano pytorch-hello", "Print the Volcano PyTorch hello world as an Argo Workflow.")
    c.add_common(p)
    c.add_follower_image(p)
    p.add_argument(
        "--workers", type=c.positive_int, default=2, metavar="N", help="PyTorch workers beside the master (2)"
    )
    p.add_argument("--image", default=PYTORCH_IMAGE, help=f"image with torch and torchrun ({PYTORCH_IMAGE})")
    return p


_OPTION = {
    "image": "--image",
    "workers": "--workers",
}


def main(argv: Sequence[str]) -> int:
    args = _parser().parse_args(argv)
    options = Options(
        namespace=args.namespace,
        service_account=args.service_account,
        workers=args.workers,
        image=args.image,
        follower_image=args.follower_image,
        template=args.template,
    )
    return c.print_workflow(args, lambda: build(options), _OPTION)
