"""``hera-volcano submit|status|explain|logs|stop|delete``: run workflows on a cluster through its API server.

Exit codes: 0 when the workflow Succeeded or the command did its job, 1 when the workflow Failed or Errored
(``submit --wait``, ``status``), 2 for bad input or a cluster error (one line on stderr, nothing on stdout).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from hera_volcano.cli import common as c
from hera_volcano.kube import names

if TYPE_CHECKING:
    from hera_volcano.client.result import Result
    from hera_volcano.client.runs import Client, Run

WORKFLOW_FAILED = 1


def _connection(p: argparse.ArgumentParser) -> None:
    p.add_argument("-n", "--namespace", type=c.namespace_name, help="namespace (default: the context's)")
    p.add_argument("--kubeconfig", metavar="FILE", help="kubeconfig (default: $KUBECONFIG, ~/.kube/config)")
    p.add_argument("--context", help="kubeconfig context (default: the current one)")


def _parser(prog: str, description: str, *, workflow: bool = True) -> c.Parser:
    p = c.parser(prog, description)
    if workflow:
        p.add_argument(
            "workflow", type=c.named(names.dns1123_subdomain), metavar="WORKFLOW", help="the Workflow's name"
        )
    _connection(p)
    return p


def _client(args: argparse.Namespace) -> Client:
    from hera_volcano.client.runs import Client

    return Client(args.namespace, kubeconfig=args.kubeconfig, context=args.context)


def _run(args: argparse.Namespace) -> Run:
    return _client(args).get(args.workflow)


def _outcome(result: Result) -> int:
    return WORKFLOW_FAILED if result.phase in ("Failed", "Error") else 0


def _print_logs(run: Run, args: argparse.Namespace, follow: bool) -> None:
    for line in run.logs(follow=follow, task=args.task, job=args.job, container=args.container):
        c.emit(line + "\n", None)


def _log_options(p: argparse.ArgumentParser) -> None:
    label = c.named(names.dns1123_label)
    p.add_argument("--task", type=label, default="mpimaster", help="the Volcano task whose pod to follow (mpimaster)")
    p.add_argument(
        "--job", type=c.named(names.label_value), metavar="LABEL", help="only the job labelled hera-volcano/job=LABEL"
    )
    p.add_argument("--container", type=label, help="the container (default: the task's name)")


def submit(argv: Sequence[str]) -> int:
    from hera_volcano.client.report import format_result

    p = _parser("hera-volcano submit", "Submit one Workflow (YAML or JSON) and print its name.", workflow=False)
    p.add_argument("file", metavar="FILE", help="the Workflow (- for stdin)")
    p.add_argument("--wait", action="store_true", help="wait until it finishes, then print its result")
    p.add_argument("--follow", action="store_true", help="print the master's output as it runs, then wait")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress lines on stderr while waiting")
    _log_options(p)
    args = p.parse_args(argv)
    text = c.read_text(args.file)
    run = _client(args).submit(text)
    c.emit(run.name + "\n", None)
    if not (args.wait or args.follow):
        return 0
    if args.follow:
        _print_logs(run, args, follow=True)
    result = run.wait(progress=None if args.quiet or args.follow else sys.stderr)
    c.emit(format_result(result), None)
    return _outcome(result)


def status(argv: Sequence[str]) -> int:
    from hera_volcano.client.report import format_result

    args = _parser("hera-volcano status", "Print a workflow's phase, its steps' and its Volcano Jobs'.").parse_args(
        argv
    )
    result = _run(args).status()
    c.emit(format_result(result), None)
    return _outcome(result)


def explain(argv: Sequence[str]) -> int:
    args = _parser("hera-volcano explain", "Explain why a workflow's Volcano gangs do not start.").parse_args(argv)
    c.emit(_run(args).explain(), None)
    return 0


def logs(argv: Sequence[str]) -> int:
    p = _parser("hera-volcano logs", "Print the MPI master's (or a task's) output, following it across restarts.")
    _log_options(p)
    p.add_argument("--no-follow", action="store_true", help="print what is there now and stop")
    args = p.parse_args(argv)
    _print_logs(_run(args), args, follow=not args.no_follow)
    return 0


def stop(argv: Sequence[str]) -> int:
    args = _parser("hera-volcano stop", "Stop a workflow as argo stop does (its exit handler still runs).").parse_args(
        argv
    )
    _run(args).stop()
    c.emit(f"workflow {args.workflow} stopped\n", None)
    return 0


def delete(argv: Sequence[str]) -> int:
    args = _parser("hera-volcano delete", "Delete a workflow (its Volcano Jobs go with it).").parse_args(argv)
    _run(args).delete()
    c.emit(f"workflow {args.workflow} deleted\n", None)
    return 0
