"""``python -m hera_volcano.steps``: step ``hello-1``, then ``hello-2a`` and ``hello-2b`` in parallel."""

import sys

from hera_volcano.cli_common import run
from hera_volcano.hello_jobs import STEPS

main = STEPS.main

if __name__ == "__main__":
    sys.exit(run("hera-volcano steps", main))
