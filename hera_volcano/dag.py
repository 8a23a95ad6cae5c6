"""``python -m hera_volcano.dag``: ``A``, then ``B`` and ``C``, then ``D`` (the same as ``hera-volcano dag``)."""

import sys

from hera_volcano.cli import main

if __name__ == "__main__":
    sys.exit(main(["dag", *sys.argv[1:]]))
