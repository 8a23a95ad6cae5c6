"""``python -m hera_volcano.steps``: step ``hello-1``, then ``hello-2a`` and ``hello-2b`` in parallel (the same as
``hera-volcano steps``)."""

import sys

from hera_volcano.cli import main

if __name__ == "__main__":
    sys.exit(main(["steps", *sys.argv[1:]]))
