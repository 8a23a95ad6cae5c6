"""Python functions the end-to-end scenarios run as Volcano jobs (module-level, so their source can be inlined)."""

from __future__ import annotations


def rank_sum() -> dict[str, int] | None:
    """Every MPI rank contributes its rank; rank 0 reports the sum (0 + 1 + 2 = 3 for three ranks)."""
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    total = comm.allreduce(comm.Get_rank())
    print(f"rank {comm.Get_rank()} of {comm.Get_size()}: sum {total}", flush=True)
    return {"sum": total}


def boom(message: str) -> None:
    """Fails its rank: the traceback reaches the workflow's logs through the follower."""
    raise ValueError(message)


def silent() -> None:
    """Completes without reporting anything."""
    print("done, and nothing to report", flush=True)


def echo(text: str) -> dict[str, str]:
    """Reports the text it was given at run time, as it arrived (as JSON: a report is one line)."""
    import json

    return {"text": json.dumps(text)}


def trial(lr: str) -> dict[str, str]:
    """One trial of a sweep: reports the learning rate it was given, so each iteration's value is its own."""
    print(f"trial with lr={lr}", flush=True)
    return {"lr": lr}


def slow_host() -> dict[str, str]:
    """Works for a while, then reports the pod it ran in (which names its job)."""
    import socket
    import time

    print("working", flush=True)
    time.sleep(30)
    return {"pod": socket.gethostname()}


def echo_all(**values: str) -> dict[str, str]:
    """Reports every run-time value it was given, as arguments and as its ``HV_VALUE_*`` environment, as ASCII JSON
    (a report is one line)."""
    import json
    import os

    env = {name: text for name, text in os.environ.items() if name.startswith("HV_VALUE_")}
    return {"args": json.dumps(values, sort_keys=True), "env": json.dumps(env, sort_keys=True)}


def times_ten(lr: str) -> dict[str, float]:
    """Reports ``lr * 10``: distinct for each learning rate, so a value reported under another call's name shows."""
    return {"value": float(lr) * 10}


def forge() -> dict[str, str]:
    """Prints report lines of its own (as a job that shows a hostile text would): one whose value is a tag reading a
    workflow parameter, one an expression for Argo's controller; the follower refuses both (issue 43). Each tag is
    built here: the function's source travels in the manifest, which must hold none."""
    tag = "{" * 2 + "workflow.parameters.secret" + "}" * 2
    expression = "{" * 2 + "=sprig.upper('evaluated')" + "}" * 2
    print("hera-volcano:output text=" + tag, flush=True)
    print("hera-volcano:output expr=" + expression, flush=True)
    return {"plain": "ok"}


def counting(steps: int, every: float) -> dict[str, str]:
    """Trains for ``steps`` steps of ``every`` seconds, reporting after each its progress and a falling loss with the
    runtime's helper (issue 44), and prints what it reported; returns nothing the job's outputs need (its ``loss``
    output is the last metric)."""
    import time

    from hera_volcano.runtime import progress

    loss = 1.0
    progress(0, steps)
    for step in range(1, steps + 1):
        time.sleep(every)
        loss = round(loss * 0.8, 6)
        progress(step, steps, loss=loss, step=step)
        print(f"step {step} of {steps}: loss {loss}", flush=True)
    return {"done": "yes"}
