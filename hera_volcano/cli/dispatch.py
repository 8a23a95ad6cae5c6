"""``hera-volcano COMMAND``: one entry point for every command, ``--help`` listing them, ``--version``."""

from __future__ import annotations

import difflib
import importlib
import sys
from collections.abc import Callable, Sequence

from hera_volcano.cli.commands import ALL_EXIT_CODES, COMMANDS, GROUPS, PROG
from hera_volcano.cli.common import USAGE_ERROR, emit, run, say
from hera_volcano.shared.version import __version__

_USAGE = f"usage: {PROG} [--help] [--version] COMMAND [OPTIONS]   ({PROG} COMMAND --help: its options and examples)"


def command_main(name: str) -> Callable[[Sequence[str]], int]:
    """The function that runs command ``name`` (its module is imported now, not before)."""
    command = COMMANDS[name]
    main: Callable[[Sequence[str]], int] = getattr(importlib.import_module(command.module), command.function)
    return main


def help_text() -> str:
    """Every command with its one-line summary, under its group's heading."""
    width = max(len(name) for name in COMMANDS) + 2
    lines = [
        _USAGE,
        "",
        "Volcano batch jobs for Argo Workflows: print, check and render workflows; run them on a cluster.",
    ]
    for group, heading in GROUPS.items():
        lines += ["", f"{heading}:"]
        lines += [f"  {name:<{width}}{c.summary}" for name, c in COMMANDS.items() if c.group == group]
    lines += ["", "options:", f"  {'-h, --help':<{width}}this help", f"  {'--version':<{width}}print the version"]
    lines += ["", ALL_EXIT_CODES]
    return "\n".join(lines) + "\n"


def _unknown(command: str) -> str:
    close = difflib.get_close_matches(command, list(COMMANDS), n=1)
    hint = f" (did you mean {close[0]}?)" if close else f"; expected one of {', '.join(COMMANDS)}"
    return f"{PROG}: error: unknown command {command!r}{hint}"


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args:
        say(_USAGE)
        return USAGE_ERROR
    if args[0] in ("-h", "--help"):
        return run(PROG, lambda _: _print(help_text()), [])
    if args[0] == "--version":
        if len(args) > 1:
            say(f"{PROG}: error: --version takes no arguments (got {args[1]!r})")
            return USAGE_ERROR
        return run(PROG, lambda _: _print(f"{PROG} {__version__}\n"), [])
    command, rest = args[0], args[1:]
    if command not in COMMANDS:
        say(_unknown(command))
        return USAGE_ERROR
    return run(f"{PROG} {command}", command_main(command), rest)


def _print(text: str) -> int:
    """Print through ``emit``, so a closed or full stdout is one line, not a traceback."""
    emit(text, None)
    return 0
