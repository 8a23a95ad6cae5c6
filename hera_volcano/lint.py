"""``python -m hera_volcano.lint PATH...``: check Argo workflows and their Volcano Jobs in files (the same as
``hera-volcano lint``)."""

import sys

from hera_volcano.cli import main

if __name__ == "__main__":
    sys.exit(main(["lint", *sys.argv[1:]]))
