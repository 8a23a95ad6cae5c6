"""The CLI edge shared by every command: one-line errors with the exit code they mean, safe standard streams and
output files, the output formats, and each command's help (from :mod:`hera_volcano.cli.commands`)."""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import sys
import textwrap
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Final, NoReturn

from hera_volcano.argo.defaults import NAMESPACE, SERVICE_ACCOUNT
from hera_volcano.cli.commands import COMMANDS, PROG
from hera_volcano.cli.files import WriteError, write_atomic
from hera_volcano.kube import names
from hera_volcano.shared.errors import ClusterError, ValidationError
from hera_volcano.shared.findings import printable

#: Exit codes: the workflow Failed or Errored (or lint found errors); bad input; the cluster could not be used;
#: a --timeout ran out.
WORKFLOW_FAILED: Final = 1
USAGE_ERROR: Final = 2
CLUSTER_ERROR: Final = 3
TIMED_OUT: Final = 4
#: Interrupted (Ctrl-C, SIGINT): 128 + the signal's number, as shells report it.
INTERRUPTED: Final = 130
#: What the API server refuses about the request itself: bad input (2), not a cluster that cannot be used (3).
REQUEST_ERRORS: Final = frozenset({"NotFound", "AlreadyExists", "Invalid", "BadRequest", "Conflict"})


#: Where a command's description is wrapped in its help (its examples keep their own lines).
HELP_WIDTH: Final = 100


class UsageError(Exception):
    """Bad command-line input; reported as one line on stderr with exit code 2."""


class TimedOut(Exception):
    """A --timeout ran out; reported as one line on stderr with exit code 4."""


class _Describe(str):
    """An argument no command line can hold: asks a command for its parser instead of running it."""


class Described(Exception):
    """A command's parser, raised instead of parsing when it is asked to describe itself (:func:`parser_of`)."""

    def __init__(self, parser: argparse.ArgumentParser) -> None:
        super().__init__(parser.prog)
        self.parser = parser


class Parser(argparse.ArgumentParser):
    """argparse with errors as a single line (no usage dump) so scripts and people see just the rule broken."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(message)

    def parse_args(self, args: Sequence[str] | None = None, namespace: None = None) -> argparse.Namespace:  # type: ignore[override]
        if args and isinstance(args[0], _Describe):
            raise Described(self)
        return super().parse_args(args, namespace)


def parser(prog: str, description: str) -> Parser:
    """A command's parser; its help ends with the command's examples and exit codes."""
    command = COMMANDS.get(prog.removeprefix(f"{PROG} "))
    return Parser(
        prog=prog,
        description=textwrap.fill(
            description, HELP_WIDTH, break_on_hyphens=False
        ),  # filled here: the examples below must keep their lines
        epilog=command.epilog() if command else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        allow_abbrev=False,
    )


def parser_of(main: Callable[[Sequence[str]], int]) -> argparse.ArgumentParser:
    """The parser a command's ``main`` builds, without running the command (for shell completion)."""
    try:
        main([_Describe()])
    except Described as d:
        return d.parser
    raise RuntimeError(f"{main.__qualname__} did not parse its arguments")


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


def duration(text: str) -> float:
    """argparse type: a positive duration in seconds, as ``90``, ``90s``, ``15m``, ``2h`` or ``1h30m``."""
    match = re.fullmatch(r"(?:([0-9]{1,5})h)?(?:([0-9]{1,6})m)?(?:([0-9]{1,7}(?:\.[0-9]+)?)s?)?", text)
    if not text or match is None:
        raise argparse.ArgumentTypeError(f"must be a duration such as 90s, 15m, 2h or 1h30m, got {text!r}")
    hours, minutes, seconds = (float(g) if g else 0.0 for g in match.groups())
    total = hours * 3600 + minutes * 60 + seconds
    if total <= 0:
        raise argparse.ArgumentTypeError(f"must be longer than 0 s, got {text!r}")
    return total


def key_value(text: str) -> tuple[str, str]:
    """argparse type for ``KEY=VALUE`` (``submit -p``, ``run-local -a``): the value may hold ``=``; it is taken as
    text, as argo takes it."""
    key, eq, value = text.partition("=")
    if not eq or not key:
        raise argparse.ArgumentTypeError(f"must be KEY=VALUE, got {text!r}")
    return key, value


def key_values(pairs: Sequence[tuple[str, str]], option: str) -> dict[str, str]:
    """The ``KEY=VALUE`` pairs of a repeated ``option``, each key once."""
    found: dict[str, str] = {}
    for key, value in pairs:
        if key in found:
            raise UsageError(f"argument {option}: {key} is given twice")
        found[key] = value
    return found


class OutputFormat:
    """argparse type for ``-o/--output``: one of ``formats`` (which shell completion offers); with ``files``, what
    looks like a file name (``-o`` once named the file) gets a pointer to ``--output-file``."""

    def __init__(self, *formats: str, files: bool = False) -> None:
        self.formats = formats
        self.files = files

    def __call__(self, text: str) -> str:
        if text in self.formats:
            return text
        hint = f" (to write a file: --output-file {text})" if self.files and ("." in text or "/" in text) else ""
        raise argparse.ArgumentTypeError(f"must be one of {', '.join(self.formats)}, got {text!r}{hint}")


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
        "-n", "--namespace", type=namespace_name, default=NAMESPACE, help=f"namespace of the workflow ({NAMESPACE})"
    )
    p.add_argument(
        "--service-account",
        type=service_account_name,
        default=SERVICE_ACCOUNT,
        metavar="NAME",
        help=f"service account of its pods ({SERVICE_ACCOUNT}, which hera-volcano rbac creates)",
    )
    p.add_argument("--template", action="store_true", help="print the WorkflowTemplate instead of a Workflow")
    add_document_output(p)


def add_follower_image(p: argparse.ArgumentParser) -> None:
    """``--follower-image``: the image of our programs in pods, the log follower and the MPI master's wait for its
    workers (python3, its standard library only)."""
    from hera_volcano.kube.images import PYTHON_IMAGE

    p.add_argument(
        "--follower-image",
        default=PYTHON_IMAGE,
        metavar="IMAGE",
        help=f"image with python3 (3.10 or later) for the log follower and the MPI master's wait ({PYTHON_IMAGE})",
    )


def add_document_output(p: argparse.ArgumentParser) -> None:
    """``-o yaml|json`` (the format, as in kubectl and argo) and ``--output-file FILE`` (where)."""
    p.add_argument(
        "-o",
        "--output",
        type=OutputFormat("yaml", "json", files=True),
        default="yaml",
        metavar="FORMAT",
        help="yaml (default) or json",
    )
    p.add_argument("--output-file", metavar="FILE", help="write to FILE (atomically) instead of stdout")


def documents(fmt: str, *objects: object) -> str:
    """Objects (Hera workflows or dicts) as deterministic YAML (one document each) or JSON (several: a ``List``)."""
    from hera_volcano.kube.emit import to_json, to_yaml

    return to_json(*objects) if fmt == "json" else to_yaml(*objects)


def read_stdin() -> bytes:
    """All of standard input (``-`` on a command line); closed or unreadable is one line, never a traceback."""
    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:
        raise UsageError("standard input is closed")
    try:
        data: bytes = stream.read()
    except OSError as e:
        raise UsageError(f"cannot read standard input: {e.strerror or e}") from None
    except MemoryError:
        raise UsageError("cannot read standard input: it is larger than the memory available") from None
    return data


def read_text(path: str) -> str:
    """A UTF-8 file's text (``-`` is stdin); unreadable is one line, never a traceback."""
    try:
        return (read_stdin() if path == "-" else Path(path).read_bytes()).decode("utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise UsageError(f"cannot read {path}: {getattr(e, 'strerror', None) or e}") from None
    except MemoryError:
        raise UsageError(f"cannot read {path}: it is larger than the memory available") from None


#: The options of :func:`add_common` and :func:`add_follower_image` by the field they set.
COMMON_OPTIONS: Final = {
    "namespace": "--namespace",
    "service_account": "--service-account",
    "follower_image": "--follower-image",
}


def print_workflow(args: argparse.Namespace, build: Callable[[], object], options: Mapping[str, str]) -> int:
    """Build a bundled workflow and print (or write) it as ``-o`` says; a model error names the option behind it
    (``options``: field to option, beside :data:`COMMON_OPTIONS`)."""
    try:
        text = documents(args.output, build())
    except ValidationError as e:
        raise as_option(e, {**COMMON_OPTIONS, **options}) from None
    emit(text, args.output_file)
    return 0


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
        raise UsageError("argument --output-file: must name a file")
    write_atomic(Path(output), text)


def say(line: str) -> None:
    """One line on stderr, whatever it quotes (a file name with a newline or not in UTF-8 is escaped); a closed
    stderr is no reason for a traceback (the exit code still tells)."""
    with contextlib.suppress(AttributeError, OSError):
        sys.stderr.write(printable(line) + "\n")


def cluster_exit(e: ClusterError) -> int:
    """2 when the API server refused the request itself (bad input, a workflow that is not there), 3 when the cluster
    could not be used: unreachable, no configuration or client, credentials refused, forbidden, failing, or not
    serving the kind (a NotFound with no namespace: the CRDs are not installed)."""
    if e.reason == "NotFound" and e.namespace is None:
        return CLUSTER_ERROR
    return USAGE_ERROR if e.reason in REQUEST_ERRORS else CLUSTER_ERROR


def run(prog: str, main: Callable[[Sequence[str]], int], argv: Sequence[str] | None = None) -> int:
    """Run a command, turning bad input, a cluster error, a timeout or Ctrl-C into one line on stderr and its exit
    code (never a traceback)."""
    try:
        return main(sys.argv[1:] if argv is None else list(argv))
    except (UsageError, ValidationError, WriteError) as e:
        say(f"{prog}: error: {e}")
        return USAGE_ERROR
    except ClusterError as e:
        say(f"{prog}: error: {e}")
        return cluster_exit(e)
    except TimedOut as e:
        say(f"{prog}: error: {e}")
        return TIMED_OUT
    except BrokenPipeError:
        # The reader went away (``| head``); nothing more to say.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    except KeyboardInterrupt:
        say(f"{prog}: interrupted")
        return INTERRUPTED
