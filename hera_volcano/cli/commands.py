"""Every ``hera-volcano`` command in one table: where it lives, what it does in one line, and the examples and exit
codes its ``--help`` ends with. ``hera-volcano --help`` and the shell completions are made from it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

PROG: Final = "hera-volcano"

#: What each kind of command's exit code means (the end of its ``--help``).
EXIT_CODES: Final[Mapping[str, str]] = {
    "print": "exit codes: 0 printed (or written); 2 bad input: one line on stderr, nothing on stdout, no file touched",
    "render": "exit codes: 0 written (or, with --check, in sync); 1 out of sync (--check); 2 bad input",
    "lint": (
        "exit codes: 0 no error (warnings allowed); 1 errors found; 2 bad input, such as a missing file, or\n"
        "(--server) no API server to ask"
    ),
    "cluster": (
        "exit codes: 0 done; 2 bad input, or a workflow that is not there; 3 the cluster is unreachable, has no\n"
        "usable configuration, refuses the credentials or forbids the request (or does not serve Argo's kinds)"
    ),
    "outcome": (
        "exit codes: 0 the workflow Succeeded; 1 it Failed or Errored; 2 bad input; 3 the cluster is unreachable or\n"
        "forbids the request; 4 --timeout ran out (the workflow keeps running)"
    ),
    "status": (
        "exit codes: 0 the workflow Succeeded or is still running; 1 it Failed or Errored; 2 bad input, or a workflow\n"
        "that is not there; 3 the cluster is unreachable or forbids the request"
    ),
    "local": (
        "exit codes: 0 every rank succeeded (rank 0's report on stdout); 1 a rank failed (its rank and last lines on\n"
        "stderr); 2 bad input (a misspelt argument included); 4 --timeout ran out (every process stopped)"
    ),
    "submit": (
        "exit codes: 0 submitted (with --wait: Succeeded); 1 it Failed or Errored (--wait); 2 bad input; 3 the\n"
        "cluster is unreachable or forbids the request; 4 --timeout ran out (the workflow keeps running)"
    ),
}

#: The exit codes of all commands together (the end of ``hera-volcano --help``).
ALL_EXIT_CODES: Final = (
    "exit codes (each command's --help has its own):\n"
    "  0  done; the workflow Succeeded\n"
    "  1  the workflow Failed or Errored; a local run's rank failed; lint found errors; render --check found drift\n"
    "  2  bad input (one line on stderr, nothing on stdout, no file touched)\n"
    "  3  the cluster is unreachable, has no usable configuration, refuses the credentials or forbids the request\n"
    "  4  a --timeout ran out (the workflow keeps running; run-local stops its processes)\n"
    "  130  interrupted (Ctrl-C): one line on stderr"
)

#: Where a cluster command finds its namespace (the end of its ``--help``).
NAMESPACES: Final = (
    "namespace: -n/--namespace, else $ARGO_NAMESPACE, else the kubeconfig context's, else (submit) the workflow's\n"
    "own metadata.namespace, else default"
)


@dataclass(frozen=True)
class Command:
    """One command: ``function(argv) -> exit code`` in ``module`` (imported only when it runs)."""

    module: str
    function: str
    group: str
    summary: str
    examples: tuple[str, ...] = ()
    exits: str = "print"

    def epilog(self) -> str:
        """The end of the command's ``--help``: examples, where the namespace comes from, exit codes."""
        parts = []
        if self.examples:
            parts.append("examples:\n" + "\n".join(f"  {line}" for line in self.examples))
        if self.exits in ("cluster", "outcome", "status", "submit"):
            parts.append(NAMESPACES)
        parts.append(EXIT_CODES[self.exits])
        return "\n\n".join(parts)


_RUNS = "hera_volcano.cli.runs"
COMMANDS: Final[Mapping[str, Command]] = {
    "mpi-hello": Command(
        "hera_volcano.cli.mpi_hello",
        "main",
        "workflows",
        "Print the Volcano MPI hello world as an Argo Workflow",
        (
            f"{PROG} mpi-hello | argo submit -",
            f"{PROG} mpi-hello --workers 4 -n ml --output-file mpi.yaml",
            f"{PROG} mpi-hello --template | kubectl apply -f -",
            f"{PROG} mpi-hello -o json",
        ),
    ),
    "pytorch-hello": Command(
        "hera_volcano.cli.pytorch_hello",
        "main",
        "workflows",
        "Print the Volcano PyTorch hello world (an all-reduce over the ranks) as an Argo Workflow",
        (f"{PROG} pytorch-hello | {PROG} submit - --wait", f"{PROG} pytorch-hello --workers 4 --template"),
    ),
    "data-pipeline": Command(
        "hera_volcano.cli.data_pipeline",
        "main",
        "workflows",
        "Print the data pipeline (prep, train a function on a PyTorch job, evaluate; values and files flow) as an"
        " Argo Workflow",
        (
            f"{PROG} data-pipeline | argo submit -",
            f"{PROG} data-pipeline --claim my-data --workers 4 --template",
        ),
    ),
    "steps": Command(
        "hera_volcano.cli.hello_jobs",
        "steps",
        "workflows",
        "Print a Steps pipeline of Volcano jobs (hello-1, then hello-2a and hello-2b) as an Argo Workflow",
        (f"{PROG} steps | argo submit -", f"{PROG} steps --template -n ml --output-file steps.yaml"),
    ),
    "dag": Command(
        "hera_volcano.cli.hello_jobs",
        "dag",
        "workflows",
        "Print a DAG of Volcano jobs (A, then B and C, then D) as an Argo Workflow",
        (f"{PROG} dag | argo submit -", f"{PROG} dag -o json"),
    ),
    "rbac": Command(
        "hera_volcano.cli.rbac",
        "main",
        "tools",
        "Print least-privilege RBAC for workflows (the bundled ones create their service account too)",
        (
            f"{PROG} rbac | kubectl apply -f -",
            f"{PROG} rbac my-workflow.yaml --service-account runner -n ml",
            f"{PROG} rbac workflows/ --submitter user:alice@example.com",
        ),
    ),
    "render": Command(
        "hera_volcano.cli.render",
        "main",
        "tools",
        "Write (or --check) the GitOps files of your module's workflows (or the bundled ones)",
        (
            f"{PROG} render --module myproject.workflows --out deploy/",
            f"{PROG} render --module myproject.workflows:build --check --out deploy/",
            f"{PROG} render --bundled    # this project's own workflows/ and rbac/",
        ),
        "render",
    ),
    "lint": Command(
        "hera_volcano.cli.lint",
        "main",
        "tools",
        "Check workflows and the Volcano Jobs they create against Argo's and Volcano's rules",
        (
            f"{PROG} lint workflows rbac",
            f"{PROG} mpi-hello | {PROG} lint -",
            f"{PROG} lint --allow-unknown deploy/",
            f"{PROG} lint --format json . > lint.json",
            f"{PROG} lint --server -n ml workflows    # also ask the cluster's API server (dry runs)",
        ),
        "lint",
    ),
    "submit": Command(
        _RUNS,
        "submit",
        "cluster",
        "Submit a Workflow or create a CronWorkflow (a file), or run a WorkflowTemplate or a CronWorkflow (--from)",
        (
            f"{PROG} mpi-hello | {PROG} submit - --wait",
            f"{PROG} submit --from workflowtemplate/volcano-mpi-hello -p job-name=my-job -n argo",
            f"{PROG} submit my.yaml -p size=3 --dry-run -o json",
            f"{PROG} submit my.yaml --follow --timeout 30m",
            f"{PROG} submit --from cronwf/nightly -n argo --wait",
        ),
        "submit",
    ),
    "list": Command(
        _RUNS,
        "list_workflows",
        "cluster",
        "List the namespace's Workflows: name, phase, age",
        (f"{PROG} list -n argo", f"{PROG} list -o name"),
        "cluster",
    ),
    "status": Command(
        _RUNS,
        "status",
        "cluster",
        "Print a workflow's phase, each step's and each Volcano Job's (every iteration and attempt)",
        (f"{PROG} status my-run-x7k2p", f"{PROG} status my-run-x7k2p -o json"),
        "status",
    ),
    "wait": Command(
        _RUNS,
        "wait",
        "cluster",
        "Wait until a workflow has finished, then print its result",
        (f"{PROG} wait my-run-x7k2p --timeout 1h", f"{PROG} wait my-run-x7k2p -q -o name"),
        "outcome",
    ),
    "logs": Command(
        _RUNS,
        "logs",
        "cluster",
        "Print the output of the lead task of a workflow's newest Volcano Job, as its own log follower does",
        (
            f"{PROG} logs my-run-x7k2p",
            f"{PROG} logs my-run-x7k2p --job train --no-follow",
            f"{PROG} logs my-run-x7k2p --job-name train-x7k2p-2 --task worker",
        ),
        "cluster",
    ),
    "explain": Command(
        _RUNS,
        "explain",
        "cluster",
        "Explain why a workflow's Volcano gangs do not start",
        (f"{PROG} explain my-run-x7k2p",),
        "cluster",
    ),
    "stop": Command(
        _RUNS,
        "stop",
        "cluster",
        "Stop a workflow as argo stop does (its exit handler still runs)",
        (f"{PROG} stop my-run-x7k2p",),
        "cluster",
    ),
    "delete": Command(
        _RUNS,
        "delete",
        "cluster",
        "Delete a workflow (its Volcano Jobs go with it)",
        (f"{PROG} delete my-run-x7k2p",),
        "cluster",
    ),
    "run-local": Command(
        "hera_volcano.cli.run_local",
        "main",
        "local",
        "Run a job's program on processes of this machine as its pods would, and print rank 0's report",
        (
            f"{PROG} run-local train.py:job -a epochs=3",
            f"{PROG} run-local myproject.jobs:mpi_sum --processes 4 --python /usr/bin/python3",
            f"{PROG} run-local train.py:job --timeout 10m > report.json",
        ),
        "local",
    ),
    "completion": Command(
        "hera_volcano.cli.completion",
        "main",
        "shell",
        "Print a bash or zsh completion script for hera-volcano",
        (
            f"source <({PROG} completion bash)             # in ~/.bashrc",
            f"{PROG} completion zsh > ~/.zfunc/_{PROG}    # with ~/.zfunc in $fpath, before compinit",
        ),
    ),
}

#: The headings of ``hera-volcano --help``, in order.
GROUPS: Final[Mapping[str, str]] = {
    "workflows": "print a bundled workflow",
    "tools": "derive, render and check",
    "local": "run here",
    "cluster": "run on a cluster (pip install 'hera-volcano[cluster]')",
    "shell": "shell",
}
