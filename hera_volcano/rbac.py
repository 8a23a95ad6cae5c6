"""``python -m hera_volcano.rbac [FILE...]``: least-privilege RBAC for the bundled workflows, or for workflow files
(the same as ``hera-volcano rbac``)."""

import sys

from hera_volcano.cli import main

if __name__ == "__main__":
    sys.exit(main(["rbac", *sys.argv[1:]]))
