"""``python -m hera_volcano.dag``: ``A``, then ``B`` and ``C``, then ``D``."""

import sys

from hera_volcano.cli_common import run
from hera_volcano.hello_jobs import DAG

main = DAG.main

if __name__ == "__main__":
    sys.exit(run("hera-volcano dag", main))
