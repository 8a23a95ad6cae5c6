"""``python -m hera_volcano.pytorch_hello``: the PyTorch hello world as an Argo Workflow (the same as
``hera-volcano pytorch-hello``)."""

import sys

from hera_volcano.cli import main

if __name__ == "__main__":
    sys.exit(main(["pytorch-hello", *sys.argv[1:]]))
