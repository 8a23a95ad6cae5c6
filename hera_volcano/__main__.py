"""``python -m hera_volcano``: the same as the ``hera-volcano`` command."""

import sys

from hera_volcano.cli import main

sys.exit(main())
