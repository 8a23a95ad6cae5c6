"""Functions that jobs run in the tests, as users write them: at a module's top level, importing what they use."""

from __future__ import annotations


def echo(**kwargs: object) -> dict[str, object]:
    """Reports its arguments, and the environment variables named in ``env`` (what the process saw)."""
    import os

    names = kwargs.pop("env", [])
    assert isinstance(names, list)
    return {"args": kwargs, "env": {name: os.environ.get(name) for name in names}}


def whoami() -> dict[str, object]:
    """Reports the ranks torchrun or Open MPI gave this process (only global rank 0's report is printed)."""
    import os

    keys = ("RANK", "LOCAL_RANK", "WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "VC_TASK_INDEX")
    return {"seen": {k: os.environ[k] for k in keys if k in os.environ}}


def braces_and_dollars() -> dict[str, list[str]]:
    """Source text Argo and Kubernetes would change if it were not escaped (reported as JSON, whose '{{' the
    launcher escapes: a text report holding it is refused)."""
    return {"text": [f"{{{{inputs.parameters.x}}}} $(HOME) $$ {'{'}{'{'}"]}


def fails(message: str) -> None:
    raise RuntimeError(message)


def typed(lr: float, epochs: int = 1, tag: str = "") -> dict[str, float | str]:
    return {"loss": lr / epochs, "tag": tag}


def counts_squares(steps: int, crash_after: int = -1) -> dict[str, object]:
    """Sums the squares of 0..steps-1, one step at a time, checkpointing the sum after each step on rank 0 and
    resuming from the latest checkpoint; a first run (no checkpoint yet) dies after step ``crash_after``, as a rank
    that loses its node would."""
    import os

    from hera_volcano import runtime

    rank = int(os.environ.get("VC_TASK_INDEX") or os.environ.get("OMPI_COMM_WORLD_RANK") or os.environ.get("RANK") or 0)
    latest = runtime.latest_checkpoint()
    start, total = 0, 0
    if latest is not None:
        with open(latest.path + "/total") as f:
            start, total = latest.step + 1, int(f.read())
    for step in range(start, steps):
        total += step * step
        if rank == 0:
            with runtime.save_checkpoint(step) as folder, open(folder + "/total", "w") as f:
                f.write(str(total))
        if latest is None and step == crash_after:
            os._exit(137)
    return {"resumed_at": start, "total": total, "dir": runtime.checkpoint_dir(), "runtime": runtime.__file__}
