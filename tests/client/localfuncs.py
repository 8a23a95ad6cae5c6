"""Functions the local-run tests run, as users write them: at a module's top level, importing what they use. Each
value depends on the world size and the ranks, so a wrong rank or size shows in the report."""

from __future__ import annotations


def replica_sum(scale: int, marks: str) -> dict[str, int] | None:
    """Each batch replica leaves a file named after its index in ``marks``; replica 0 reports the replicas' count
    (from the files, after waiting for them) and a value of its own index and ``scale``."""
    import os
    import time
    from pathlib import Path

    index = int(os.environ["VC_TASK_INDEX"])
    Path(marks, str(index)).write_text(os.environ["VK_TASK_INDEX"])
    if index != 0:
        return None
    end = time.monotonic() + 30
    while len(os.listdir(marks)) < int(os.environ.get("EXPECTED_REPLICAS", "1")) and time.monotonic() < end:
        time.sleep(0.05)
    return {"replicas": len(os.listdir(marks)), "value": (index + 1) * scale}


def echo_text(text: str) -> dict[str, str]:
    """Reports the text it was given, as it came."""
    return {"text": text}


def torch_sum(scale: int) -> dict[str, object] | None:
    """An all_reduce with gloo over every rank: (1 + 2 + ... + world) * scale."""
    import os

    import torch
    import torch.distributed as dist

    dist.init_process_group("gloo")
    total = torch.tensor([float(dist.get_rank() + 1) * scale])
    dist.all_reduce(total)
    rank, world = dist.get_rank(), dist.get_world_size()
    dist.destroy_process_group()
    if rank != 0:
        return None
    return {"sum": int(total.item()), "world": world, "local-rank": int(os.environ["LOCAL_RANK"])}


def mpi_sum(scale: int) -> dict[str, int] | None:
    """An allreduce with mpi4py over every rank: (1 + 2 + ... + size) * scale."""
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    total = comm.allreduce((comm.Get_rank() + 1) * scale)
    return {"sum": total, "size": comm.Get_size()} if comm.Get_rank() == 0 else None


def tf_config(marks: str) -> dict[str, object]:
    """What TF_CONFIG says of this process, left in ``marks`` by every process and reported by global rank 0."""
    import json
    import os
    from pathlib import Path

    config = json.loads(os.environ["TF_CONFIG"])
    task = config["task"]
    Path(marks, f"{task['type']}-{task['index']}").write_text(json.dumps(config))
    return {"type": task["type"], "index": task["index"], "roles": {r: len(a) for r, a in config["cluster"].items()}}


def fails_on_rank_1(pids: str) -> None:
    """Rank 1 raises; the others wait, each having left its process id in ``pids``."""
    import os
    import time
    from pathlib import Path

    rank = int(os.environ.get("RANK") or os.environ.get("VC_TASK_INDEX") or os.environ["OMPI_COMM_WORLD_RANK"])
    Path(pids, str(rank)).write_text(str(os.getpid()))
    if rank == 1:
        time.sleep(0.5)
        raise ValueError("no data for rank 1")
    time.sleep(120)


def sleeps(pids: str) -> None:
    """Every rank waits long after leaving its process id in ``pids``."""
    import os
    import time
    from pathlib import Path

    Path(pids, str(os.getpid())).write_text(str(os.getpid()))
    time.sleep(120)


def trial_loss(a: int, b: int, epochs: int) -> dict[str, int]:
    """A sweep's trial whose values are known: loss (a * b - 6) ** 2 + a + epochs and size a * b; a = b = 3 raises,
    a trial failing on purpose."""
    if a == b == 3:
        raise ValueError(f"a={a}, b={b} diverges")
    return {"loss": (a * b - 6) ** 2 + a + epochs, "size": a * b}


def sleeps_for(seconds: int) -> dict[str, int]:
    """A trial that takes ``seconds`` and reports them as its loss."""
    import time

    time.sleep(seconds)
    return {"loss": seconds}


def counts_with_checkpoints(steps: int, stop_at: int) -> dict[str, int]:
    """Adds 1..steps, a checkpoint per step (``hera_volcano.runtime``); a run that found no checkpoint stops at
    ``stop_at`` on purpose. Reports the step it resumed at and the sum."""
    import json

    from hera_volcano import runtime

    latest = runtime.latest_checkpoint()
    start, total = 0, 0
    if latest is not None:
        with open(latest.path + "/state.json") as f:
            start, total = latest.step + 1, json.load(f)["total"]
    for step in range(start, steps):
        total += step + 1
        with runtime.save_checkpoint(step) as folder, open(folder + "/state.json", "w") as f:
            json.dump({"total": total}, f)
        if latest is None and step == stop_at:
            raise RuntimeError(f"stopped on purpose after step {step}")
    return {"resumed_at": start, "total": total}


def loss_as_metric(lr: float) -> None:
    """A trial that reports its loss only as a metric (``runtime.progress``), (lr - 0.3) ** 2, and returns nothing."""
    from hera_volcano.runtime import progress

    progress(1, 1, loss=round((lr - 0.3) ** 2, 6))


def forges_an_extra_line(lr: float) -> dict[str, float]:
    """A trial whose rank 0 also prints a report line the follower refuses (a tag) for a name the sweep does not
    gather, and, at lr 0.5, for its objective."""
    print("hera-volcano:output note=" + "{" * 2 + "workflow.name}}", flush=True)
    if lr == 0.5:
        print("hera-volcano:output loss=" + "{" * 2 + "x}}", flush=True)
        raise SystemExit(0)
    return {"loss": round((lr - 0.3) ** 2, 6)}
