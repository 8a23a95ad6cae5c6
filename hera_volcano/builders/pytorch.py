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

from typing import Any, Final

from hera_volcano.argo.labels import LEAD_TASK_ANNOTATION
from hera_volcano.builders import gang
from hera_volcano.builders.pod import PodSettings, apply_settings, check_settings
from hera_volcano.builders.program import Program, check_env, with_launcher
from hera_volcano.builders.program import check as check_program
from hera_volcano.kube.images import check_image
from hera_volcano.shared import checks
from hera_volcano.shared.errors import ValidationError
from hera_volcano.shared.placeholders import Placeholder
from hera_volcano.volcano.job import Plugin, Policy, VolcanoJob, VolcanoTask
from hera_volcano.volcano.queue import Queue
from hera_volcano.volcano.step import DEFAULT_START_LIMIT, ArgoRetry, VolcanoRetry

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


def torchrun(*args: str, nproc_per_node: int = 1) -> list[str]:
    """A ``torchrun`` command taking what the pytorch plugin sets, then ``args`` (your script and its arguments):
    one node per pod, ``nproc_per_node`` processes in each, the master's pod the rendezvous point.

    No shell needed: Kubernetes expands ``$(VAR)`` in a container's command from its environment, which holds the
    plugin's variables when the pod is created.
    """
    checks.integer("nproc_per_node", nproc_per_node, minimum=1, maximum=MAX_PROCESSES)
    return [
        "torchrun",
        "--nnodes=$(WORLD_SIZE)",
        "--node_rank=$(RANK)",
        f"--nproc_per_node={nproc_per_node}",
        "--master_addr=$(MASTER_ADDR)",
        "--master_port=$(MASTER_PORT)",
        *checks.strings("args", args),
    ]


def pytorch_job(
    *,
    image: str,
    program: Program,
    workers: int = 2,
    nproc_per_node: int = 1,
    name: str | Placeholder | None = None,
    generate_name: str | None = None,
    queue: str | Queue | None = None,
    priority_class_name: str | None = None,
    service_account: str | None = None,
    working_dir: str | None = None,
    deadline: int | None = None,
    start_limit: int | None = DEFAULT_START_LIMIT,
    retry: ArgoRetry | VolcanoRetry | None = None,
    pod: PodSettings | None = None,
    master_pod: PodSettings | None = None,
    worker_pod: PodSettings | None = None,
    port: int = PORT,
) -> VolcanoJob:
    """A PyTorch job: 1 master + ``workers`` worker pods running ``program``, one gang of ``workers + 1`` pods.

    Volcano's pytorch plugin sets ``MASTER_ADDR``, ``MASTER_PORT``, ``WORLD_SIZE`` and ``RANK`` (see the module
    docstring; a command may be ``Program.command(torchrun("train.py"))``); the svc plugin gives the master its DNS
    name. When the master completes, the job completes; a pod that fails ends it (Terminated). ``pod`` settings
    apply to every pod, ``master_pod`` and ``worker_pod`` on top of them. Without ``name`` the job gets
    ``generate_name`` (default ``pytorch-job-``).

    A :class:`Program` function (global rank 0's return value is the job's report), script or module runs under
    ``torchrun`` on every pod, ``nproc_per_node`` processes each: one node per pod, the master's pod the rendezvous
    point, so the program sees torchrun's ``RANK`` (global), ``LOCAL_RANK`` and ``WORLD_SIZE`` (processes).
    ``deadline``, ``start_limit`` and ``retry``: see :class:`VolcanoJob`.
    """
    generate_name = gang.job_names(name, generate_name, "pytorch-job-")
    program = check_program(program)
    checks.integer("workers", workers, minimum=1, maximum=gang.MAX_WORKERS)
    checks.integer("port", port, minimum=1, maximum=65535)
    check_image(image, "image")
    checks.integer("nproc_per_node", nproc_per_node, minimum=1, maximum=MAX_PROCESSES)
    launch = program.launch
    if launch is None:
        command = list(program.argv or ())
        if nproc_per_node != 1:
            raise ValidationError(
                "nproc_per_node", "goes with a Python program (with Program.command: hv.torchrun(nproc_per_node=))"
            )
    else:
        command = torchrun(*TORCHRUN_OPTIONS, "--no_python", *launch.command("torchrun"), nproc_per_node=nproc_per_node)
    gang.service_account(service_account)
    if working_dir is not None:
        gang.working_dir(working_dir)
    roles = {
        "pod": check_settings("pod", pod),
        "master_pod": check_settings("master_pod", master_pod),
        "worker_pod": check_settings("worker_pod", worker_pod),
    }
    gang.reserved_env("pytorch", PLUGIN_ENV, roles)
    if launch is not None:
        check_env(roles)
    env = None if launch is None else launch.env()

    def template(task: str, role: PodSettings | None) -> dict[str, Any]:
        container = gang.framework_container(task, image, command, (port, PORT_NAME), working_dir, env)
        spec = gang.framework_pod(container, service_account)
        if launch is not None:
            with_launcher(spec, container)
        return apply_settings({"spec": spec}, task, roles["pod"], role)

    return VolcanoJob(
        name=name,
        generate_name=generate_name,
        min_available=workers + 1,
        deadline=deadline,
        start_limit=start_limit,
        retry=retry,
        policies=gang.framework_policies(),
        scheduler_name="volcano",
        queue=queue,
        priority_class_name=priority_class_name,
        annotations={LEAD_TASK_ANNOTATION: MASTER},
        # svc is what makes MASTER_ADDR resolve (Volcano's webhook would add it too).
        plugins=[Plugin.pytorch(master=MASTER, worker=WORKER, port=port), Plugin.svc()],
        tasks=[
            VolcanoTask(
                name=MASTER,
                replicas=1,
                policies=[Policy(event="TaskCompleted", action="CompleteJob")],
                template=template(MASTER, roles["master_pod"]),
            ),
            VolcanoTask(name=WORKER, replicas=workers, template=template(WORKER, roles["worker_pod"])),
        ],
    )
