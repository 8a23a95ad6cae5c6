"""``hera-volcano run-local MODULE:NAME``: run a job of a user's module on processes of this machine
(:func:`hera_volcano.run_local`), its ranks' output on stderr, rank 0's report as JSON on stdout; or a sweep of one,
trial by trial, its outputs as JSON on stdout."""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Sequence

from hera_volcano.cli import common as c
from hera_volcano.cli.user_module import module_job


def main(argv: Sequence[str]) -> int:
    p = c.parser(
        "hera-volcano run-local",
        "Run a job's program on processes of this machine with the variables the cluster gives each rank (PyTorch:"
        " torchrun's, on CPU with gloo; MPI: under Open MPI's mpiexec; batch: one process per replica; TensorFlow:"
        " TF_CONFIG), each line of its ranks on stderr prefixed by its rank, and print rank 0's report as JSON. A"
        " sweep (hv.sweep) runs trial by trial and prints its outputs (trials, best-params, best-trial, best-NAME) as"
        " JSON; it fails (exit 1) when its pick on the cluster would.",
    )
    p.add_argument(
        "job",
        metavar="MODULE:NAME",
        help="a Python file or a module, and the name of a VolcanoJob or of a sweep (what hv.sweep returns) in it",
    )
    p.add_argument(
        "-a",
        "--argument",
        type=c.key_value,
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a value of one of the job's inputs, Placeholder.input(NAME, ...); a sweep's: those it does not sweep,"
        " and sweep-trials=JSON for hv.TrialsFrom (repeatable)",
    )
    p.add_argument(
        "--processes",
        type=c.positive_int,
        metavar="N",
        help="how many processes (default: the job's size on the cluster: its ranks, or its pods)",
    )
    p.add_argument(
        "--python",
        metavar="PATH",
        help="the interpreter of a Python program, one with torch or mpi4py, say (default: the one running this)",
    )
    p.add_argument(
        "--timeout",
        type=c.duration,
        metavar="DURATION",
        help="stop every process after 90s, 15m, 2h... (a sweep: each trial's, a failed trial when it runs out)",
    )
    p.add_argument(
        "--checkpoints",
        metavar="DIR",
        help="a job's checkpoint folder here (default: a fresh one, removed after the run); the same again resumes",
    )
    args = p.parse_args(argv)
    arguments = c.key_values(args.argument, "-a/--argument")
    with contextlib.redirect_stdout(sys.stderr):  # what the module prints as it loads: stdout is the report's
        job = module_job(args.job)
    from hera_volcano.client.local import run_local
    from hera_volcano.shared.errors import LocalRunError

    try:
        report = run_local(
            job,
            arguments,
            processes=args.processes,
            python=args.python,
            timeout=args.timeout,
            checkpoints=args.checkpoints,
        )
    except LocalRunError as e:
        if e.timed_out:
            raise c.TimedOut(str(e)) from None
        c.say(f"hera-volcano run-local: error: {e}")
        return c.WORKFLOW_FAILED
    c.emit(json.dumps(report, ensure_ascii=False) + "\n", None)
    return 0
