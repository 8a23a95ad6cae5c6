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
