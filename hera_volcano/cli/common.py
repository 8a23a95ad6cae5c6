"""The CLI edge shared by every command: one-line errors with exit code 2, safe standard streams and output files."""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import NoReturn

from hera_volcano.cli.files import WriteError, write_atomic
from hera_volcano.examples.defaults import NAMESPACE, SERVICE_ACCOUNT
from hera_volcano.kube import names
from hera_volcano.shared.errors import ClusterError, ValidationError

USAGE_ERROR = 2


class UsageError(Exception):
    """Bad command-line input; reported as one line on stderr with exit code 2."""


class Parser(argparse.ArgumentParser):
    """argparse with errors as a single line (no usage dump) so scripts and people see just the rule broken."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def parser(prog: str, description: str) -> Parser:
    return Parser(prog=prog, description=description, allow_abbrev=False)


def positive_int(text: str) -> int:
    """argparse type: an integer ≥ 1."""
    return _int(text, 1, "a positive integer")


def non_negative_int(text: str) -> int:
    """argparse type: an integer ≥ 0."""
    return _int(text, 0, "a non-negative integer")


def _int(text: str, minimum: int, rule: str) -> int:
    if not re.fullmatch(r"-?[0-9]{1,9}", text):
        raise argparse.ArgumentTypeError(f"must be {rule}, got {text!r}")
    value = int(text)
    if value < minimum:
        raise argparse.ArgumentTypeError(f"must be {rule}, got {text!r}")
    return value


def named(rule: Callable[[str], str | None]) -> Callable[[str], str]:
    """An argparse type that accepts a name ``rule`` (from :mod:`hera_volcano.kube.names`) finds nothing wrong with."""

    def check(text: str) -> str:
        message = rule(text)
        if message:
            raise argparse.ArgumentTypeError(f"{message}, got {text!r}")
        return text

    return check


namespace_name = named(names.dns1123_label)
service_account_name = named(names.dns1123_subdomain)


def add_common(p: argparse.ArgumentParser) -> None:
    """The options every bundled workflow command takes."""
    p.add_argument(
        "--namespace", type=namespace_name, default=NAMESPACE, help=f"namespace of the workflow ({NAMESPACE})"
    )
    p.add_argument(
        "--service-account",
        type=service_account_name,
        default=SERVICE_ACCOUNT,
        help=f"service account of its pods ({SERVICE_ACCOUNT}, which hera-volcano rbac creates)",
    )
    p.add_argument("--template", action="store_true", help="print the WorkflowTemplate instead of a Workflow")
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE (atomically) instead of stdout")


def read_stdin() -> bytes:
    """All of standard input (``-`` on a command line); closed or unreadable is one line, never a traceback."""
    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:
        raise UsageError("standard input is closed")
    try:
        data: bytes = stream.read()
    except OSError as e:
        raise UsageError(f"cannot read standard input: {e.strerror or e}") from None
    return data


def read_text(path: str) -> str:
    """A UTF-8 file's text (``-`` is stdin); unreadable is one line, never a traceback."""
    try:
        return (read_stdin() if path == "-" else Path(path).read_bytes()).decode("utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise UsageError(f"cannot read {path}: {getattr(e, 'strerror', None) or e}") from None


def as_option(e: ValidationError, options: Mapping[str, str]) -> UsageError:
    """A model error as a usage error naming the command-line option behind its field (``options``: field to
    option), so the user knows what to change; a field no option sets keeps its own name."""
    option = options.get(e.field.split(".")[0].split("[")[0])
    return UsageError(f"argument {option}: {e.rule}" if option else str(e))


def emit(text: str, output: str | None) -> None:
    """Print ``text`` or write it to ``output``; a closed or full stdout is one line, never a traceback."""
    if output is None:
        if not text:
            return  # nothing to print: a closed stdout loses nothing
        if sys.stdout is None:
            raise UsageError("standard output is closed")
        try:
            sys.stdout.write(text)
            sys.stdout.flush()
        except BrokenPipeError:
            raise
        except OSError as e:
            raise UsageError(f"cannot write to standard output: {e.strerror or e}") from None
        return
    if not output:
        raise UsageError("argument -o/--output: must name a file")
    write_atomic(Path(output), text)


def say(line: str) -> None:
    """One line on stderr; a closed stderr is no reason for a traceback (the exit code still tells)."""
    with contextlib.suppress(AttributeError, OSError):
        sys.stderr.write(line + "\n")


def run(prog: str, main: Callable[[Sequence[str]], int], argv: Sequence[str] | None = None) -> int:
    """Run a command, turning bad input or a cluster error into one line on stderr and exit code 2 (never a
    traceback)."""
    try:
        return main(sys.argv[1:] if argv is None else list(argv))
    except (UsageError, ValidationError, WriteError, ClusterError) as e:
        say(f"{prog}: error: {e}")
        return USAGE_ERROR
    except BrokenPipeError:
        # The reader went away (``| head``); nothing more to say.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    except KeyboardInterrupt:
        return 130
