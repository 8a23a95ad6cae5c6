"""The PyTorch job builder: a master and N workers, gang-scheduled, wired by Volcano's ``pytorch`` plugin alone (no
Kubeflow Training Operator).

The plugin (Volcano ≥ 1.7) gives every container ``MASTER_ADDR`` (the master pod's DNS name through the svc
plugin, ``JOB-master-0.JOB``), ``MASTER_PORT`` (the port), ``WORLD_SIZE`` (the number of pods, master and workers)
and ``RANK`` (the pod's place: the master 0, worker ``i`` ``i + 1``). Those are node-level values, exactly what
``torchrun --nnodes=$WORLD_SIZE --node_rank=$RANK --nproc_per_node=1 --master_addr=$MASTER_ADDR
--master_port=$MASTER_PORT script.py`` takes (:func:`torchrun` writes that line); with one process per pod they
are also what ``torch.distributed.init_process_group`` reads from the environment.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from hera_volcano.builders import gang
from hera_volcano.builders.pod import PodSettings
from hera_volcano.builders.program import Program
from hera_volcano.builders.program import check as check_program
from hera_volcano.builders.settings import JobSettings, checked, job
from hera_volcano.kube.images import check_image
from hera_volcano.shared import checks
from hera_volcano.shared.errors import ValidationError
from hera_volcano.shared.placeholders import Placeholder
from hera_volcano.volcano.job import Plugin, Policy, VolcanoJob, VolcanoTask

if TYPE_CHECKING:
    from typing_extensions import Unpack

MASTER: Final = "master"
WORKER: Final = "worker"
#: The pytorch plugin's default port, and the name it gives the port it opens.
PORT: Final = 23456
PORT_NAME: Final = "pytorchjob-port"
#: What the plugin sets in every container.
PLUGIN_ENV: Final = ("MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "RANK")
#: Processes per pod: more than any node has GPUs or cores to give them.
MAX_PROCESSES: Final = 4096
#: torchrun options for a function, script or module: stderr tee'd to the log (and a file), stdout untouched (rank
#: 0's report lines). Debian 12's torch 1.13 on Python 3.11 fails on the default ``0`` of these flags.
TORCHRUN_OPTIONS: Final = ("--redirects=2", "--tee=2")


def torchrun(*args: str | Placeholder, nproc_per_node: int = 1) -> list[str | Placeholder]:
    """A ``torchrun`` command taking what the pytorch plugin sets, then ``args`` (your script and its arguments):
    one node per pod, ``nproc_per_node`` processes in each, the master's pod the rendezvous point.

    No shell needed: Kubernetes expands ``$(VAR)`` in a container's command from its environment, which holds the
    plugin's variables when the pod is created.

    :param args: the script (or ``-m module``) and its arguments (strings, or run-time values: ``Placeholder``).
    :param nproc_per_node: processes in each pod.
    """
    checks.integer("nproc_per_node", nproc_per_node, minimum=1, maximum=MAX_PROCESSES)
    return [
        "torchrun",
        "--nnodes=$(WORLD_SIZE)",
        "--node_rank=$(RANK)",
        f"--nproc_per_node={nproc_per_node}",
        "--master_addr=$(MASTER_ADDR)",
        "--master_port=$(MASTER_PORT)",
        *_strings_or_values(args),
    ]


def _strings_or_values(args: Sequence[object]) -> list[str | Placeholder]:
    """``torchrun``'s own arguments: strings and placeholders (``Program.command`` checks them further)."""
    for i, arg in enumerate(args):
        if not isinstance(arg, str | Placeholder):
            raise ValidationError(f"args[{i}]", "must be a string or a Placeholder")
    return [arg for arg in args if isinstance(arg, str | Placeholder)]


def pytorch_job(
    *,
    image: str,
    program: Program,
    workers: int = 2,
    nproc_per_node: int = 1,
    master_pod: PodSettings | None = None,
    worker_pod: PodSettings | None = None,
    port: int = PORT,
    **settings: Unpack[JobSettings],
) -> VolcanoJob:
    """A PyTorch job: 1 master + ``workers`` worker pods running ``program``, one gang of ``workers + 1`` pods.

    Volcano's pytorch plugin sets ``MASTER_ADDR``, ``MASTER_PORT``, ``WORLD_SIZE`` and ``RANK`` (see the module
    docstring); the svc plugin gives the master its DNS name. When the master completes, the job completes; a pod
    that fails ends it (Terminated).

    :param image: the image of every pod.
    :param program: what every pod runs: a command as it is (``Program.command(torchrun("train.py"))``), or a
        :class:`Program` function (global rank 0's return value is the job's report), script or module under
        ``torchrun``: one node per pod, the master's pod the rendezvous point, so the program sees torchrun's
        ``RANK`` (global), ``LOCAL_RANK`` and ``WORLD_SIZE`` (processes).
    :param workers: worker pods, beside the master.
    :param nproc_per_node: processes in each pod (a Python program's; a command says its own with ``torchrun``).
    :param master_pod: :class:`PodSettings` for the master, on top of ``pod``.
    :param worker_pod: :class:`PodSettings` for the workers, on top of ``pod``.
    :param port: the rendezvous port the plugin wires (``MASTER_PORT``).
    :param settings: the settings every builder shares (``name``, ``queue``, ``service_account``, ``pod``,
        ``deadline``, ``start_limit``, ``retry``...): :class:`JobSettings`; ``generate_name`` is ``pytorch-job-``
        by default.
    """
    shared = checked(settings, "pytorch_job")
    program = check_program(program)
    checks.integer("workers", workers, minimum=1, maximum=gang.MAX_WORKERS)
    checks.integer("port", port, minimum=1, maximum=65535)
    check_image(image, "image")
    checks.integer("nproc_per_node", nproc_per_node, minimum=1, maximum=MAX_PROCESSES)
    command = _command(program, nproc_per_node)
    pods = gang.FrameworkPods.of(
        shared, image, program, command, (port, PORT_NAME), PLUGIN_ENV, "pytorch", master=master_pod, worker=worker_pod
    )
    return job(
        shared,
        lead=MASTER,
        min_available=workers + 1,
        policies=gang.framework_policies(),
        # svc is what makes MASTER_ADDR resolve (Volcano's webhook would add it too).
        plugins=[Plugin.pytorch(master=MASTER, worker=WORKER, port=port), Plugin.svc()],
        tasks=[
            VolcanoTask(
                name=MASTER,
                replicas=1,
                policies=[Policy(event="TaskCompleted", action="CompleteJob")],
                template=pods.template(MASTER),
            ),
            VolcanoTask(name=WORKER, replicas=workers, template=pods.template(WORKER)),
        ],
    )


def _command(program: Program, nproc_per_node: int) -> list[str | Placeholder]:
    """What every pod runs: a command as given, or the launcher under ``torchrun``."""
    launch = program.launch
    if launch is not None:
        return torchrun(*TORCHRUN_OPTIONS, "--no_python", *launch.command("torchrun"), nproc_per_node=nproc_per_node)
    if nproc_per_node != 1:
        raise ValidationError(
            "nproc_per_node", "goes with a Python program (with Program.command: hv.torchrun(nproc_per_node=))"
        )
    return list(program.argv or ())
