"""``hera-volcano lint PATH...``: check Argo workflows and their Volcano Jobs in files, as a pre-commit hook would.

Prints one finding a line on stdout, ``FILE:LINE: PATH: SEVERITY: MESSAGE``, then a summary line on stderr
(``2 errors, 1 warning in 1 of 3 files``), so that stdout holds findings only. With ``--format json`` stdout is one
JSON document, ``{"findings": [...], "summary": {...}}``, and stderr stays empty. Exits 0 when there is no error
(warnings allowed), 1 when there is one, 2 on a usage error such as a missing file, or with ``--server`` when no API
server answers (one line on stderr).

``--server`` asks the API server of the kubeconfig, after the offline rules, what it says of creating each document
(:meth:`hera_volcano.Client.dry_run`, a server-side dry run): its refusals are findings like the others.
"""

from __future__ import annotations

import argparse
import json
import os
import stat
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from hera_volcano.cli import common as c
from hera_volcano.cli.runs import chosen_namespace, connection_options
from hera_volcano.shared.errors import ClusterError
from hera_volcano.tools.lint import LintFinding, Summary, has_errors, lint_bytes, lint_file

if TYPE_CHECKING:
    from hera_volcano.client.runs import Client

STDIN = "-"
STDIN_NAME = "<stdin>"
YAML_SUFFIXES = (".yaml", ".yml")


def directory_files(root: str) -> Iterator[str | LintFinding]:
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
    """The files to lint, in order, each once; ``-`` stands for stdin. A missing path, or a folder with no YAML file,
    is a usage error, an unreadable directory a finding. A FIFO named here is read like ``cat`` reads it
    (``lint <(cmd)``); in a directory it is skipped, as nobody asked for it."""
    found: list[str | LintFinding] = []
    for path in paths:
        if path == STDIN:
            found.append(STDIN)
        elif os.path.isdir(path):
            files = list(directory_files(path))
            if not files:  # a typo in a CI job's folder must not pass as "no problems"
                raise c.UsageError(f"{path}: no YAML files (*.yaml, *.yml) in this folder")
            found.extend(files)
        elif os.path.exists(path) or os.path.islink(path):
            found.append(path)  # a dangling link or unreadable file is an error finding, not a usage error
        else:
            raise c.UsageError(f"{path}: no such file or directory")
    return list(dict.fromkeys(found))


def _lint(source: str, allow_unknown: bool, client: Client | None) -> list[LintFinding]:
    """The findings of one file; whatever goes wrong inside lint is one error finding for it, so one file never
    stops a run over many (nor prints a traceback). The API server's failures (``--server``) end the run."""
    server = None if client is None else client.dry_run
    name = STDIN_NAME if source == STDIN else source
    try:
        if source == STDIN:
            return lint_bytes(c.read_stdin(), STDIN_NAME, allow_unknown=allow_unknown, server=server)
        return lint_file(source, allow_unknown=allow_unknown, server=server)
    except (c.UsageError, ClusterError):
        raise
    except Exception as e:  # MemoryError, RecursionError, a bug: reported, the other files still linted
        return [LintFinding(name, "[0]", "error", f"lint failed on this file: {type(e).__name__}: {e}")]


def _client(args: argparse.Namespace) -> Client | None:
    """The API server ``--server`` asks (None without it); its options without ``--server`` are a usage error."""
    if not args.server:
        options = (("-n", args.namespace), ("--kubeconfig", args.kubeconfig), ("--context", args.context))
        given = [flag for flag, value in options if value]
        if given:
            raise c.UsageError(f"argument {given[0]}: says which API server --server asks; give --server too")
        return None
    from hera_volcano.client.runs import Client

    return Client(chosen_namespace(args), kubeconfig=args.kubeconfig, context=args.context)


def main(argv: Sequence[str]) -> int:
    p = c.parser(
        "hera-volcano lint",
        "Check Argo Workflows, WorkflowTemplates, ClusterWorkflowTemplates and CronWorkflows (Argo's fields, as"
        " strictly as argo lint decodes them, and its validation rules), the Volcano Jobs their resource steps create"
        " (Volcano's admission rules, and conditions that end the step), bare Volcano Jobs and Volcano Queues (the"
        " Queue CRD and Volcano's queue rules). RBAC objects, ServiceAccounts and kustomizations are known; any other"
        " kind is an error unless --allow-unknown. Findings go to stdout as FILE:LINE: PATH: SEVERITY: MESSAGE, a"
        " summary line to stderr.",
    )
    p.add_argument(
        "paths",
        nargs="+",
        metavar="PATH",
        help="YAML file, directory (searched for *.yaml and *.yml) or - for stdin",
    )
    p.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="text (default), or json: one document with the findings and the summary",
    )
    p.add_argument(
        "--allow-unknown",
        action="store_true",
        help="kinds lint does not know (and non-Kubernetes YAML, empty files) are warnings, not errors",
    )
    p.add_argument(
        "--server",
        action="store_true",
        help="also ask the kubeconfig's API server, by a server-side dry run of each document (and of the object each"
        " resource step of a workflow creates, with sample values), what it refuses; nothing is created",
    )
    connection_options(p)
    args = p.parse_args(argv)
    findings: list[LintFinding] = []
    found = sources(args.paths)
    client = None
    try:
        client = _client(args)
        for source in found:
            findings.extend([source] if isinstance(source, LintFinding) else _lint(source, args.allow_unknown, client))
    except ClusterError as e:  # no verdict to give: a usage error, as a missing file is
        raise c.UsageError(f"--server: {e}") from None
    finally:
        if client is not None:
            client.close()
    summary = Summary.of(findings, len(found))  # a folder it could not list counts as one file it looked at
    if args.format == "json":
        document = {"findings": [f.to_dict() for f in findings], "summary": summary.to_dict()}
        c.emit(json.dumps(document, indent=2) + "\n", None)
    else:
        c.emit("".join(f"{f}\n" for f in findings), None)
        c.say(str(summary))
    return 1 if has_errors(findings) else 0
