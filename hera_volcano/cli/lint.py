"""``hera-volcano lint PATH...``: check Argo workflows and their Volcano Jobs in files, as a pre-commit hook would.

Prints one finding a line, ``FILE: PATH: SEVERITY: MESSAGE`` (or a JSON list with ``--format json``). Exits 0 when
there is no error (warnings allowed), 1 when there is one, 2 on a usage error such as a missing file.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator, Sequence

from hera_volcano.cli import common as c
from hera_volcano.tools.lint import LintFinding, has_errors, lint_bytes, lint_file

STDIN = "-"
STDIN_NAME = "<stdin>"
YAML_SUFFIXES = (".yaml", ".yml")


def _directory_files(root: str) -> Iterator[str | LintFinding]:
    """Regular YAML files under ``root`` in a stable order, skipping hidden directories such as ``.git`` and FIFOs
    or devices (reading one could block forever); a directory that cannot be listed is an error finding."""
    unreadable: list[OSError] = []
    for directory, subdirectories, files in os.walk(root, onerror=unreadable.append):
        yield from _unlisted(unreadable)
        subdirectories[:] = sorted(d for d in subdirectories if not d.startswith("."))
        for name in sorted(files):
            path = os.path.join(directory, name)
            if name.endswith(YAML_SUFFIXES) and _regular_or_unreadable(path):
                yield path
    yield from _unlisted(unreadable)


def _unlisted(errors: list[OSError]) -> Iterator[LintFinding]:
    """Findings for the directories ``os.walk`` could not list (it would skip them silently), emptying ``errors``."""
    for e in errors:
        yield LintFinding(str(e.filename), "[0]", "error", f"cannot read directory: {e.strerror or e}")
    errors.clear()


def _regular_or_unreadable(path: str) -> bool:
    """Whether ``path`` is a regular file, or cannot be examined (so reading it reports why, as a finding)."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return True


def sources(paths: Sequence[str]) -> list[str | LintFinding]:
    """The files to lint, in order, each once; ``-`` stands for stdin. A missing path is a usage error, an unreadable
    directory a finding. A FIFO named here is read like ``cat`` reads it (``lint <(cmd)``); in a directory it is
    skipped, as nobody asked for it."""
    found: list[str | LintFinding] = []
    for path in paths:
        if path == STDIN:
            found.append(STDIN)
        elif os.path.isdir(path):
            found.extend(_directory_files(path))
        elif os.path.exists(path) or os.path.islink(path):
            found.append(path)  # a dangling link or unreadable file is an error finding, not a usage error
        else:
            raise c.UsageError(f"{path}: no such file or directory")
    return list(dict.fromkeys(found))


def _lint(source: str | LintFinding) -> list[LintFinding]:
    if isinstance(source, LintFinding):
        return [source]
    if source == STDIN:
        return lint_bytes(c.read_stdin(), STDIN_NAME)
    return lint_file(source)


def main(argv: Sequence[str]) -> int:
    p = c.parser(
        "hera-volcano lint",
        "Check Argo Workflows, WorkflowTemplates and CronWorkflows, and the Volcano Jobs their resource steps"
        " create, against Argo's validation and Volcano's admission rules. Exit 0 without errors, 1 with errors.",
    )
    p.add_argument(
        "paths",
        nargs="+",
        metavar="PATH",
        help="YAML file, directory (searched for *.yaml and *.yml) or - for stdin",
    )
    p.add_argument("--format", choices=("text", "json"), default="text", help="output format (text)")
    args = p.parse_args(argv)
    findings: list[LintFinding] = []
    for source in sources(args.paths):
        findings.extend(_lint(source))
    if args.format == "json":
        c.emit(json.dumps([f.to_dict() for f in findings], indent=2) + "\n", None)
    else:
        c.emit("".join(f"{f}\n" for f in findings), None)
    return 1 if has_errors(findings) else 0
