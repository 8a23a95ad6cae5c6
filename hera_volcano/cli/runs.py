"""``hera-volcano submit|list|status|wait|explain|logs|stop|delete``: run workflows on a cluster through its API
server.

Exit codes: 0 when the workflow Succeeded or the command did its job; 1 when the workflow Failed or Errored
(``submit --wait``, ``status``, ``wait``); 2 for bad input (a workflow that is not there included); 3 when the cluster
cannot be used (unreachable, no configuration, credentials refused, forbidden); 4 when ``--timeout`` ran out. Each
failure is one line on stderr with nothing on stdout.

The namespace is ``-n``, else ``$ARGO_NAMESPACE``, else the kubeconfig context's, else (submit) the workflow's own,
else ``default``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from hera_volcano.cli import common as c
from hera_volcano.kube import names
from hera_volcano.shared.errors import ClusterError

if TYPE_CHECKING:
    from hera_volcano.client.result import Result
    from hera_volcano.client.runs import Client, Cron, Run

#: ``--from KIND/NAME``: the kinds the client can run, by every name argo takes for them (kind, singular, plural,
#: short name; compared in lowercase).
SOURCE_KINDS = {
    "workflowtemplate": "workflowtemplate",
    "workflowtemplates": "workflowtemplate",
    "wftmpl": "workflowtemplate",
    "cronworkflow": "cronworkflow",
    "cronworkflows": "cronworkflow",
    "cronwf": "cronworkflow",
}
ENV_NAMESPACE = "ARGO_NAMESPACE"


def connection_options(p: argparse.ArgumentParser) -> None:
    """-n, --kubeconfig and --context: which cluster and namespace a command talks to."""
    p.add_argument(
        "-n", "--namespace", type=c.namespace_name, help=f"namespace (default: ${ENV_NAMESPACE}, the context's)"
    )
    p.add_argument("--kubeconfig", metavar="FILE", help="kubeconfig (default: $KUBECONFIG, ~/.kube/config)")
    p.add_argument("--context", metavar="NAME", help="kubeconfig context (default: the current one)")


def _parser(prog: str, description: str, *, workflow: bool = True) -> c.Parser:
    p = c.parser(prog, description)
    if workflow:
        p.add_argument(
            "workflow", type=c.named(names.dns1123_subdomain), metavar="WORKFLOW", help="the Workflow's name"
        )
    connection_options(p)
    return p


def _output(p: argparse.ArgumentParser, default: str = "a report for people") -> None:
    p.add_argument(
        "-o",
        "--output",
        type=c.OutputFormat("name", "yaml", "json"),
        metavar="FORMAT",
        help=f"name (the name alone), yaml or json (as data); default: {default}",
    )


def chosen_namespace(args: argparse.Namespace) -> str | None:
    """The namespace the user chose: ``-n``, else ``$ARGO_NAMESPACE`` (checked like ``-n``); None if neither."""
    if args.namespace:
        return str(args.namespace)
    value = os.environ.get(ENV_NAMESPACE)
    if not value:
        return None
    problem = names.dns1123_label(value)
    if problem:
        raise c.UsageError(f"${ENV_NAMESPACE}: {problem}, got {value!r}")
    return value


def _client(args: argparse.Namespace) -> Client:
    from hera_volcano.client.runs import Client

    return Client(chosen_namespace(args), kubeconfig=args.kubeconfig, context=args.context)


def _run(args: argparse.Namespace) -> Run:
    return _client(args).get(args.workflow)


def _outcome(result: Result) -> int:
    return c.WORKFLOW_FAILED if result.phase in ("Failed", "Error") else 0


def result_data(result: Result) -> dict[str, Any]:
    """A run's result as plain data (``-o yaml|json``): its steps in the order they started, its jobs oldest first."""
    return {
        "name": result.name,
        "namespace": result.namespace,
        "phase": result.phase,
        "message": result.message,
        "steps": [asdict(step) for step in result.steps.values()],
        "jobs": [asdict(job) for job in result.jobs],
    }


def _print_result(result: Result, fmt: str | None) -> None:
    from hera_volcano.client.report import format_result

    if fmt == "name":
        c.emit(result.name + "\n", None)
    elif fmt is not None:
        c.emit(c.documents(fmt, result_data(result)), None)
    else:
        c.emit(format_result(result), None)


def _print_logs(run: Run, args: argparse.Namespace, follow: bool) -> None:
    for line in run.logs(follow=follow, task=args.task, job=args.job, job_name=args.job_name, container=args.container):
        c.emit(line + "\n", None)


def _log_options(p: argparse.ArgumentParser) -> None:
    label = c.named(names.dns1123_label)
    p.add_argument(
        "--task",
        type=label,
        metavar="NAME",
        help="the Volcano task whose pod to follow (default: the lead task its job names)",
    )
    p.add_argument(
        "--job", type=c.named(names.label_value), metavar="LABEL", help="only the job labelled hera-volcano/job=LABEL"
    )
    p.add_argument(
        "--job-name",
        type=c.named(names.dns1123_subdomain),
        metavar="NAME",
        help="only the Volcano Job NAME, as status lists it (one iteration of a loop, one attempt of a retry)",
    )
    p.add_argument("--container", type=label, metavar="NAME", help="the container (default: the task's name)")


def _wait_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--timeout",
        type=c.duration,
        metavar="DURATION",
        help="give up waiting after DURATION (90s, 15m, 2h, 1h30m): exit 4, the workflow keeps running",
    )
    p.add_argument("-q", "--quiet", action="store_true", help="no progress lines on stderr while waiting")


def _source(text: str) -> tuple[str, str]:
    """What ``--from KIND/NAME`` names: ``("workflowtemplate" or "cronworkflow", NAME)``."""
    kind, slash, name = text.partition("/")
    if not slash or kind.lower() not in SOURCE_KINDS:
        raise c.UsageError(f"argument --from: must be workflowtemplate/NAME or cronworkflow/NAME, got {text!r}")
    problem = names.dns1123_subdomain(name)
    if problem:
        raise c.UsageError(f"argument --from: {problem}, got {name!r}")
    return SOURCE_KINDS[kind.lower()], name


def _configured_namespace(args: argparse.Namespace) -> str | None:
    """For ``--dry-run``: the namespace the kubeconfig context names, read without sending anything. No kubeconfig
    (or no ``kubernetes`` package) is no reason to fail a dry run, unless one was named with --kubeconfig/--context."""
    from hera_volcano.client.runs import Client

    try:
        client = Client(None, kubeconfig=args.kubeconfig, context=args.context)
    except ClusterError:
        if args.kubeconfig or args.context:
            raise
        return None
    client.close()
    return client.configured_namespace


def _submit_parser() -> c.Parser:
    p = _parser(
        "hera-volcano submit",
        "Submit one Workflow or create one CronWorkflow (YAML or JSON, from FILE or stdin), or run a WorkflowTemplate"
        " of the namespace, or a CronWorkflow once now (--from), and print the new object's name.",
        workflow=False,
    )
    p.add_argument("file", nargs="?", metavar="FILE", help="the Workflow or CronWorkflow (- for stdin)")
    p.add_argument(
        "--from",
        dest="source",
        metavar="KIND/NAME",
        help="run the namespace's workflowtemplate/NAME (wftmpl/NAME), or cronworkflow/NAME (cronwf/NAME) once now",
    )
    p.add_argument(
        "-p",
        "--parameter",
        type=c.key_value,
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a workflow argument (repeatable); the workflow or template must declare it",
    )
    p.add_argument(
        "--dry-run", action="store_true", help="print the Workflow that would be created; create nothing, send nothing"
    )
    p.add_argument(
        "--server-dry-run",
        action="store_true",
        help="--dry-run, judged first by the API server (server-side dry runs of the Workflow and of the object each"
        " of its resource steps creates, the check lint makes with its server option): each refusal one line, exit 2",
    )
    p.add_argument("--wait", action="store_true", help="wait until it finishes, then print its result")
    p.add_argument("--follow", action="store_true", help="print the master's output as it runs, then wait")
    _wait_options(p)
    _output(p)
    _log_options(p)
    return p


def submit(argv: Sequence[str]) -> int:
    from hera_volcano.client import submission

    args = _submit_parser().parse_args(argv)
    server = args.server_dry_run
    args.dry_run = args.dry_run or server
    if (args.file is None) == (args.source is None):
        raise c.UsageError("give a FILE (- for stdin) or --from KIND/NAME, not both")
    if args.dry_run and (args.wait or args.follow):
        raise c.UsageError("argument --dry-run: nothing is created, so there is nothing to --wait or --follow for")
    if args.timeout is not None and not (args.wait or args.follow):
        raise c.UsageError("argument --timeout: bounds --wait or --follow; give one of them")
    started = time.monotonic()
    parameters = c.key_values(args.parameter, "-p/--parameter")
    chosen = chosen_namespace(args)
    if args.source is not None:
        kind, name = _source(args.source)
        if kind == "cronworkflow":
            client = _client(args)
            if args.dry_run:  # the CronWorkflow is read, nothing is created
                return _dry_run(client.preview_from_cron(name, parameters), args, client if server else None)
            run = client.submit_from_cron(name, parameters)
        elif args.dry_run:
            namespace = chosen or _configured_namespace(args) or "default"
            return _dry_run(
                submission.from_template(name, parameters, namespace), args, _client(args) if server else None
            )
        else:
            run = _client(args).submit_from(name, parameters)
    else:
        body = submission.workflow_body(c.read_text(args.file), ("Workflow", "CronWorkflow"))
        if body["kind"] == "CronWorkflow" and (args.wait or args.follow):
            raise c.UsageError(
                "a CronWorkflow runs on its schedule, so there is no run to --wait or --follow for; create it, then"
                " run it once with --from cronworkflow/NAME --wait"
            )
        if parameters:
            body = submission.with_parameters(body, parameters)
        own = body["metadata"].get("namespace")
        if args.dry_run:
            body["metadata"]["namespace"] = chosen or _configured_namespace(args) or own or "default"
            return _dry_run(body, args, _client(args) if server else None)
        client = _client(args)
        body["metadata"]["namespace"] = chosen or client.configured_namespace or own or "default"
        if body["kind"] == "CronWorkflow":
            return _created_cron(client.create_cron(body), args.output)
        run = client.submit(body)
    if not (args.wait or args.follow):
        if args.output in (None, "name"):
            c.emit(run.name + "\n", None)
        else:
            _print_result(run.status(), args.output)
        return 0
    if args.output is None:
        c.emit(run.name + "\n", None)
    if args.follow:
        _print_logs(run, args, follow=True)
    deadline = None if args.timeout is None else started + args.timeout
    result = _wait(run, deadline, args.timeout, quiet=args.quiet or args.follow)
    _print_result(result, args.output)
    return _outcome(result)


def _created_cron(created: Cron, fmt: str | None) -> int:
    """A created CronWorkflow: its name, or with ``-o yaml|json`` as the API server stored it."""
    if fmt in (None, "name"):
        c.emit(created.name + "\n", None)
    else:
        c.emit(c.documents(fmt, dict(created.manifest)), None)
    return 0


def _dry_run(body: Mapping[str, Any], args: argparse.Namespace, server: Client | None) -> int:
    """What ``submit`` would create: the Workflow (YAML unless ``-o json``), or with ``-o name`` its name (the
    ``generateName`` prefix when the API server would complete it). With ``server`` (``--server-dry-run``) its API
    server judges it first (:meth:`Client.dry_run`): each finding is a line on stderr, and a refusal exit code 2."""
    if server is not None:
        findings = server.dry_run(body)
        for f in findings:
            c.say(f"hera-volcano submit: {f.severity}: {f.path + ': ' if f.path else ''}{f.message}")
        if any(f.severity == "error" for f in findings):
            return c.USAGE_ERROR
    fmt = args.output
    if fmt == "name":
        meta = body["metadata"]
        c.emit(str(meta.get("name") or meta.get("generateName")) + "\n", None)
    else:
        c.emit(c.documents(fmt or "yaml", body), None)
    return 0


def _wait(run: Run, deadline: float | None, timeout: float | None, *, quiet: bool) -> Result:
    """``run.wait`` until ``deadline`` (``time.monotonic``); a timeout is one line and exit code 4."""
    left = None if deadline is None else deadline - time.monotonic()
    try:
        if left is not None and left <= 0:  # the logs took all the time: finished is still finished
            result = run.status()
            if result.finished:
                return result
            raise TimeoutError
        return run.wait(timeout=left, progress=None if quiet else sys.stderr)
    except TimeoutError:
        raise c.TimedOut(
            f"workflow {run.name} has not finished within --timeout {_seconds(timeout)}; it keeps running"
            f" (hera-volcano wait {run.name} -n {run.namespace} waits again)"
        ) from None


def _seconds(value: float | None) -> str:
    """A duration as --timeout takes it: 90s, 15m, 1h30m."""
    if value is None:
        return "?"
    hours, rest = divmod(value, 3600)
    minutes, seconds = divmod(rest, 60)
    text = (
        (f"{hours:g}h" if hours else "") + (f"{minutes:g}m" if minutes else "") + (f"{seconds:g}s" if seconds else "")
    )
    return text or "0s"


def wait(argv: Sequence[str]) -> int:
    p = _parser(
        "hera-volcano wait", "Wait until a workflow has finished (its exit handler too), then print its result."
    )
    _wait_options(p)
    _output(p)
    args = p.parse_args(argv)
    started = time.monotonic()
    run = _run(args)
    deadline = None if args.timeout is None else started + args.timeout
    result = _wait(run, deadline, args.timeout, quiet=args.quiet)
    _print_result(result, args.output)
    return _outcome(result)


def list_workflows(argv: Sequence[str]) -> int:
    p = _parser("hera-volcano list", "List the namespace's Workflows, newest first: name, phase, age.", workflow=False)
    _output(p, "a table")
    args = p.parse_args(argv)
    client = _client(args)
    rows = [asdict(w) for w in client.workflows()]
    if args.output == "name":
        c.emit("".join(row["name"] + "\n" for row in rows), None)
    elif args.output is not None:
        c.emit(c.documents(args.output, {"namespace": client.namespace, "workflows": rows}), None)
    elif not rows:
        c.say(f"no workflows in namespace {client.namespace}")
    else:
        now = datetime.now(timezone.utc)
        table = [("NAME", "PHASE", "AGE")] + [(r["name"], r["phase"], _age(r["created"], now)) for r in rows]
        widths = [max(len(row[i]) for row in table) for i in range(2)]
        c.emit("".join(f"{n:<{widths[0]}}  {p:<{widths[1]}}  {a}\n" for n, p, a in table), None)
    return 0


def _age(created: str, now: datetime) -> str:
    """How long ago ``created`` (RFC 3339, as the API writes it) was, as kubectl shows ages: 42s, 5m, 3h, 2d."""
    try:
        seconds = int((now - datetime.fromisoformat(created.replace("Z", "+00:00"))).total_seconds())
    except ValueError:
        return "?"
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{max(seconds, 0)}s"


def status(argv: Sequence[str]) -> int:
    p = _parser(
        "hera-volcano status",
        "Print a workflow's phase and message, each step's, and each of its Volcano Jobs (every iteration of a loop,"
        " every attempt of a retried step) with its pods, once: a workflow still running exits 0 (wait waits).",
    )
    _output(p)
    args = p.parse_args(argv)
    result = _run(args).status()
    _print_result(result, args.output)
    return _outcome(result)


def explain(argv: Sequence[str]) -> int:
    args = _parser("hera-volcano explain", "Explain why a workflow's Volcano gangs do not start.").parse_args(argv)
    c.emit(_run(args).explain(), None)
    return 0


def logs(argv: Sequence[str]) -> int:
    p = _parser(
        "hera-volcano logs",
        "Print the output of the lead task of the workflow's newest Volcano Job (the MPI master, the PyTorch master,"
        " the TensorFlow chief; or --task's), as the workflow's own log follower does, with its loop: across restarts"
        " and dropped streams, until the job or the workflow has finished, or no job appears within two minutes."
        " Lines that start with === are the follower's.",
    )
    _log_options(p)
    p.add_argument(
        "--no-follow", action="store_true", help="print what the newest pod's container has written so far and stop"
    )
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
