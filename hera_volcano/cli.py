"""``hera-volcano COMMAND``: one entry point for every bundled command."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence

from hera_volcano.cli_common import USAGE_ERROR, emit, run, say

#: command -> module with ``main(argv) -> int``
COMMANDS = {
    "mpi-hello": "hera_volcano.mpi_hello",
    "steps": "hera_volcano.steps",
    "dag": "hera_volcano.dag",
    "rbac": "hera_volcano.rbac_cli",
    "render": "hera_volcano.render",
    "lint": "hera_volcano.lint_cli",
}

_USAGE = "usage: hera-volcano {" + ",".join(COMMANDS) + "} [options]   (hera-volcano COMMAND --help for details)"


def _help(argv: Sequence[str]) -> int:
    """Print the usage through ``emit``, so a closed or full stdout is one line, not a traceback."""
    emit(_USAGE + "\n", None)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args:
        say(_USAGE)
        return USAGE_ERROR
    if args[0] in ("-h", "--help"):
        return run("hera-volcano", _help, [])
    command, rest = args[0], args[1:]
    module = COMMANDS.get(command)
    if module is None:
        say(f"hera-volcano: error: unknown command {command!r}; expected one of {', '.join(COMMANDS)}")
        return USAGE_ERROR
    return run(f"hera-volcano {command}", importlib.import_module(module).main, rest)


if __name__ == "__main__":
    sys.exit(main())
