"""``python -m hera_volcano.mpi_hello``: the MPI hello world as an Argo Workflow (the same as
``hera-volcano mpi-hello``)."""

import sys

from hera_volcano.cli import main

if __name__ == "__main__":
    sys.exit(main(["mpi-hello", *sys.argv[1:]]))
