"""The PyTorch hello world (``python -m hera_volcano.pytorch_hello | argo submit -``), as a Workflow built from
options.

A DAG whose ``submit-job`` step creates a gang-scheduled Volcano PyTorch job (1 master + N workers, wired by
Volcano's pytorch plugin) and waits for it, while ``follow-logs`` streams the master's output. Each pod runs one
rank, which adds ``rank + 1`` in a CPU all-reduce (gloo), so each gets ``N(N+1)/2`` for ``N`` ranks; the master
prints every rank's line, gathered from the ranks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from hera_volcano.argo.defaults import NAMESPACE, SERVICE_ACCOUNT
from hera_volcano.kube import names
from hera_volcano.kube.images import PYTHON_IMAGE

if TYPE_CHECKING:
    from hera.workflows import Workflow

    from hera_volcano.volcano.job import VolcanoJob

NAME: Final = "volcano-pytorch-hello"
JOB_PREFIX: Final = "pytorch-hello-"
JOB_LABEL: Final = "pytorch-hello"
#: A public image with torch (the program runs on CPUs, with torch 1.13 and later).
PYTORCH_IMAGE: Final = "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime"

#: The program every rank runs: a sum all-reduce over gloo, then every rank's line gathered on rank 0, which prints
#: them all (so the log follower, which streams the master, shows every rank). A wrong sum fails the rank.
PROGRAM: Final = """\
import torch
import torch.distributed as dist

dist.init_process_group("gloo")  # RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT from Volcano's pytorch plugin
rank, size = dist.get_rank(), dist.get_world_size()
value = torch.tensor([rank + 1])
dist.all_reduce(value)  # the sum over every rank
total = int(value.item())
line = f"rank {rank} of {size}: all-reduce sum {total}"
lines = [None] * size
dist.all_gather_object(lines, line)
print("\\n".join(lines) if rank == 0 else line, flush=True)
dist.destroy_process_group()
if total != size * (size + 1) // 2:
    raise SystemExit(f"rank {rank}: expected {size * (size + 1) // 2}")
"""


@dataclass(frozen=True)
class Options:
    """What a user may change."""

    namespace: str = NAMESPACE
    service_account: str = SERVICE_ACCOUNT
    workers: int = 2
    image: str = PYTORCH_IMAGE
    follower_image: str = PYTHON_IMAGE
    template: bool = False


def job(options: Options = Options(), *, program: str = PROGRAM) -> VolcanoJob:
    """The example's Volcano Job: ``python3 -c PROGRAM`` on the master and every worker, one rank per pod, so the
    plugin's variables are the rank's own (with more processes per pod, use :func:`torchrun`)."""
    from hera_volcano.builders.program import Program
    from hera_volcano.builders.pytorch import pytorch_job

    return pytorch_job(
        generate_name=JOB_PREFIX,
        image=options.image,
        program=Program.command(["python3", "-c", program]),
        workers=options.workers,
    )


def build(options: Options = Options()) -> Workflow:
    """The PyTorch hello world Workflow (or WorkflowTemplate): pure, no I/O."""
    from hera_volcano.argo.workflows import workflow
    from hera_volcano.builders.pytorch import MASTER
    from hera_volcano.examples.hello_dag import submit_and_follow

    names.check("namespace", options.namespace, names.dns1123_label)
    names.check("service_account", options.service_account, names.dns1123_subdomain)
    with workflow(
        name=NAME,
        template=options.template,
        namespace=options.namespace,
        service_account=options.service_account,
        entrypoint="main",
    ) as w:
        submit_and_follow(w, job(options), job_label=JOB_LABEL, master=MASTER, follower_image=options.follower_image)
    return w


def render(options: Options = Options()) -> str:
    """The YAML document ``build`` describes."""
    from hera_volcano.kube.emit import to_yaml

    return to_yaml(build(options))
