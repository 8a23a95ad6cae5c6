"""``python -m hera_volcano``: the same as the ``hera-volcano`` command."""

import sys

from hera_volcano.cli import main

if __name__ == "__main__":
    sys.exit(main())
