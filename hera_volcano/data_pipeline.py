"""``python -m hera_volcano.data_pipeline``: the data pipeline as an Argo Workflow (the same as
``hera-volcano data-pipeline``)."""

import sys

from hera_volcano.cli import main

if __name__ == "__main__":
    sys.exit(main(["data-pipeline", *sys.argv[1:]]))
