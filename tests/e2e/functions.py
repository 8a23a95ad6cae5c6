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


def resumable_sum(steps: int, fail_first_attempt: bool = False) -> dict[str, object] | None:
    """A training run on a PyTorch gang (gloo, CPU): at each step the ranks all-reduce ``(step + 1) * (rank + 1)``
    and add it to a running value, rank 0 checkpoints it (``hera_volcano.runtime``), each step about a second. It
    resumes from the latest checkpoint and reports the step it resumed at; uninterrupted, the value is
    ``world_size * (world_size + 1) / 2 * steps * (steps + 1) / 2``. With ``fail_first_attempt``, a run that found
    no checkpoint fails on purpose after step 4 (the Argo retry's first attempt)."""
    import json
    import time

    import torch
    import torch.distributed as dist

    from hera_volcano import runtime

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    latest = runtime.latest_checkpoint()
    start, value = 0, 0.0
    if latest is not None:
        with open(latest.path + "/state.json") as f:
            start, value = latest.step + 1, float(json.load(f)["value"])
    print(f"rank {rank}: resuming at step {start} from {runtime.checkpoint_dir()}", flush=True)
    for step in range(start, steps):
        contribution = torch.tensor([float((step + 1) * (rank + 1))])
        dist.all_reduce(contribution)
        value += float(contribution.item())
        if rank == 0:
            with runtime.save_checkpoint(step) as folder, open(folder + "/state.json", "w") as f:
                json.dump({"value": value}, f)
        print(f"rank {rank}: step {step} value {value}", flush=True)
        dist.barrier()
        if fail_first_attempt and latest is None and step == 4:
            raise RuntimeError("the first attempt fails on purpose after step 4")
        time.sleep(1)
    dist.destroy_process_group()
    return {"resumed_at": start, "value": value} if rank == 0 else None


def torch_world_sum(scale: int, tag: str) -> dict[str, object] | None:
    """An all_reduce with gloo: (1 + ... + world) * scale, the world's size and the tag, from global rank 0 (issue
    44: the same values on the cluster and in a local run)."""
    import torch
    import torch.distributed as dist

    dist.init_process_group("gloo")
    total = torch.tensor([float(dist.get_rank() + 1) * scale])
    dist.all_reduce(total)
    rank, world = dist.get_rank(), dist.get_world_size()
    dist.destroy_process_group()
    return {"sum": int(total.item()), "world": world, "tag": tag} if rank == 0 else None


def mpi_world_sum(scale: int, tag: str) -> dict[str, object] | None:
    """An allreduce with mpi4py: (1 + ... + size) * scale, the size and the tag, from rank 0 (issue 44)."""
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    total = comm.allreduce((comm.Get_rank() + 1) * scale)
    return {"sum": total, "size": comm.Get_size(), "tag": tag} if comm.Get_rank() == 0 else None


def replica_value(scale: int, tag: str) -> dict[str, object] | None:
    """A batch replica's value of its own index, (index + 1) * scale, and the tag, from replica 0 (issue 44)."""
    import os

    index = int(os.environ["VC_TASK_INDEX"])
    return {"index": index, "value": (index + 1) * scale, "tag": tag} if index == 0 else None


def sweep_trial(lr: float) -> dict[str, float]:
    """One trial of a sweep whose loss is known from its parameter, ``(lr - 0.3) ** 2`` (best at lr 0.3); lr 0.5
    raises on purpose, so that one trial fails."""
    if lr == 0.5:
        raise ValueError("lr 0.5 diverges (on purpose)")
    print(f"sweep trial lr={lr}", flush=True)
    return {"loss": round((lr - 0.3) ** 2, 6), "lr": lr}


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
