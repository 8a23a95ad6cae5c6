"""``hera-volcano COMMAND``: one entry point for every bundled command."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence

from hera_volcano.cli.common import USAGE_ERROR, emit, run, say

#: command -> (module, its function ``(argv) -> exit code``), imported only when the command runs
COMMANDS = {
    "mpi-hello": ("hera_volcano.cli.mpi_hello", "main"),
    "pytorch-hello": ("hera_volcano.cli.pytorch_hello", "main"),
    "steps": ("hera_volcano.cli.hello_jobs", "steps"),
    "dag": ("hera_volcano.cli.hello_jobs", "dag"),
    "rbac": ("hera_volcano.cli.rbac", "main"),
    "render": ("hera_volcano.cli.render", "main"),
    "lint": ("hera_volcano.cli.lint", "main"),
    "submit": ("hera_volcano.cli.runs", "submit"),
    "status": ("hera_volcano.cli.runs", "status"),
    "explain": ("hera_volcano.cli.runs", "explain"),
    "logs": ("hera_volcano.cli.runs", "logs"),
    "stop": ("hera_volcano.cli.runs", "stop"),
    "delete": ("hera_volcano.cli.runs", "delete"),
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
    target = COMMANDS.get(command)
    if target is None:
        say(f"hera-volcano: error: unknown command {command!r}; expected one of {', '.join(COMMANDS)}")
        return USAGE_ERROR
    module, function = target
    return run(f"hera-volcano {command}", getattr(importlib.import_module(module), function), rest)
