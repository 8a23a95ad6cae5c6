"""The TensorFlow job builder: a chief, parameter servers and workers, gang-scheduled, wired by Volcano's
``tensorflow`` plugin alone (no Kubeflow Training Operator).

The plugin gives every container ``TF_CONFIG``: ``{"cluster": {"chief": [...], "ps": [...], "worker": [...]},
"task": {"type": ..., "index": ...}}``, each address ``JOB-TASK-I.JOB:PORT`` (the pod's DNS name through the svc
plugin), the task its role and its index within the role: what ``tf.distribute`` strategies read.
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

CHIEF: Final = "chief"
PS: Final = "ps"
WORKER: Final = "worker"
#: The tensorflow plugin's default port; the plugin opens none itself, so the builder names it.
PORT: Final = 2222
PORT_NAME: Final = "tfjob-port"
PLUGIN_ENV: Final = ("TF_CONFIG",)


def tensorflow_job(
    *,
    image: str,
    program: Program,
    workers: int = 2,
    ps: int = 0,
    chief: bool = True,
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
    chief_pod: PodSettings | None = None,
    ps_pod: PodSettings | None = None,
    worker_pod: PodSettings | None = None,
    port: int = PORT,
) -> VolcanoJob:
    """A TensorFlow job: a ``chief`` (1 pod, if true), ``ps`` parameter server pods and ``workers`` worker pods
    running ``program``, one gang of all of them.

    Volcano's tensorflow plugin sets ``TF_CONFIG`` (see the module docstring). The job completes when the chief
    completes (without a chief: when every worker has), as parameter servers never finish on their own; a pod that
    fails ends it (Terminated). ``pod`` settings apply to every pod, ``chief_pod``, ``ps_pod`` and ``worker_pod``
    on top of them. Without ``name`` the job gets ``generate_name`` (default ``tensorflow-job-``).

    A :class:`Program` function, script or module runs under ``python3`` in every pod; the chief (without one,
    worker 0) is global rank 0, whose function's return value is the job's report. ``deadline``, ``start_limit``
    and ``retry``: see :class:`VolcanoJob`.
    """
    generate_name = gang.job_names(name, generate_name, "tensorflow-job-")
    program = check_program(program)
    checks.integer("workers", workers, minimum=1, maximum=gang.MAX_WORKERS)
    checks.integer("ps", ps, maximum=gang.MAX_WORKERS)
    if not isinstance(chief, bool):
        raise ValidationError("chief", "must be true or false")
    if not chief and not ps and workers == 1:
        raise ValidationError(
            "workers", "a job without chief or ps needs 2 workers: Volcano sets no TF_CONFIG for 1 pod"
        )
    checks.integer("port", port, minimum=1, maximum=65535)
    check_image(image, "image")
    launch = program.launch
    command = list(program.argv or ()) if launch is None else launch.command("tensorflow")
    gang.service_account(service_account)
    if working_dir is not None:
        gang.working_dir(working_dir)
    roles = {
        "pod": check_settings("pod", pod),
        "chief_pod": check_settings("chief_pod", chief_pod),
        "ps_pod": check_settings("ps_pod", ps_pod),
        "worker_pod": check_settings("worker_pod", worker_pod),
    }
    gang.reserved_env("tensorflow", PLUGIN_ENV, roles)
    if launch is not None:
        check_env(roles)
    env = None if launch is None else launch.env()
    completes = [Policy(event="TaskCompleted", action="CompleteJob")]

    def task(role: str, replicas: int, finishes: bool) -> VolcanoTask:
        container = gang.framework_container(role, image, command, (port, PORT_NAME), working_dir, env)
        spec = gang.framework_pod(container, service_account)
        if launch is not None:
            with_launcher(spec, container)
        template: dict[str, Any] = {"spec": spec}
        template = apply_settings(template, role, roles["pod"], roles[f"{role}_pod"])
        return VolcanoTask(name=role, replicas=replicas, policies=completes if finishes else (), template=template)

    tasks = [task(CHIEF, 1, True)] if chief else []
    if ps:
        tasks.append(task(PS, ps, False))
    tasks.append(task(WORKER, workers, not chief))
    return VolcanoJob(
        name=name,
        generate_name=generate_name,
        min_available=int(chief) + ps + workers,
        deadline=deadline,
        start_limit=start_limit,
        retry=retry,
        policies=gang.framework_policies(),
        scheduler_name="volcano",
        queue=queue,
        priority_class_name=priority_class_name,
        annotations={LEAD_TASK_ANNOTATION: CHIEF if chief else WORKER},
        # svc is what makes the addresses in TF_CONFIG resolve (Volcano's webhook would add it too).
        plugins=[
            Plugin.tensorflow(ps=PS if ps else None, worker=WORKER, chief=CHIEF if chief else None, port=port),
            Plugin.svc(),
        ],
        tasks=tasks,
    )
