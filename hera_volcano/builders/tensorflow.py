"""The TensorFlow job builder: a chief, parameter servers and workers, gang-scheduled, wired by Volcano's
``tensorflow`` plugin alone (no Kubeflow Training Operator).

The plugin gives every container ``TF_CONFIG``: ``{"cluster": {"chief": [...], "ps": [...], "worker": [...]},
"task": {"type": ..., "index": ...}}``, each address ``JOB-TASK-I.JOB:PORT`` (the pod's DNS name through the svc
plugin), the task its role and its index within the role: what ``tf.distribute`` strategies read.
"""

from __future__ import annotations

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
    chief_pod: PodSettings | None = None,
    ps_pod: PodSettings | None = None,
    worker_pod: PodSettings | None = None,
    port: int = PORT,
    **settings: Unpack[JobSettings],
) -> VolcanoJob:
    """A TensorFlow job: a chief, parameter servers and workers running ``program``, one gang of all of them.

    Volcano's tensorflow plugin sets ``TF_CONFIG`` (see the module docstring). The job completes when the chief
    completes (without a chief: when every worker has), as parameter servers never finish on their own; a pod that
    fails ends it (Terminated).

    :param image: the image of every pod.
    :param program: what every pod runs: a command as it is, or a :class:`Program` function, script or module under
        ``python3``; the chief (without one, worker 0) is global rank 0, whose function's return value is the job's
        report.
    :param workers: worker pods.
    :param ps: parameter server pods.
    :param chief: whether the job has a chief (1 pod).
    :param chief_pod: :class:`PodSettings` for the chief, on top of ``pod``.
    :param ps_pod: :class:`PodSettings` for the parameter servers, on top of ``pod``.
    :param worker_pod: :class:`PodSettings` for the workers, on top of ``pod``.
    :param port: the port every address in ``TF_CONFIG`` names.
    :param settings: the settings every builder shares (``name``, ``queue``, ``service_account``, ``pod``,
        ``deadline``, ``start_limit``, ``retry``...): :class:`JobSettings`; ``generate_name`` is
        ``tensorflow-job-`` by default.
    """
    shared = checked(settings, "tensorflow_job")
    program = check_program(program)
    _check_shape(workers, ps, chief)
    checks.integer("port", port, minimum=1, maximum=65535)
    check_image(image, "image")
    launch = program.launch
    command: list[str | Placeholder] = list(program.argv or ()) if launch is None else [*launch.command("tensorflow")]
    pods = gang.FrameworkPods.of(
        shared,
        image,
        program,
        command,
        (port, PORT_NAME),
        PLUGIN_ENV,
        "tensorflow",
        chief=chief_pod,
        ps=ps_pod,
        worker=worker_pod,
    )
    completes = [Policy(event="TaskCompleted", action="CompleteJob")]

    def task(role: str, replicas: int, finishes: bool) -> VolcanoTask:
        return VolcanoTask(
            name=role, replicas=replicas, policies=completes if finishes else (), template=pods.template(role)
        )

    tasks = [task(CHIEF, 1, True)] if chief else []
    if ps:
        tasks.append(task(PS, ps, False))
    tasks.append(task(WORKER, workers, not chief))
    return job(
        shared,
        lead=CHIEF if chief else WORKER,
        min_available=int(chief) + ps + workers,
        policies=gang.framework_policies(),
        # svc is what makes the addresses in TF_CONFIG resolve (Volcano's webhook would add it too).
        plugins=[
            Plugin.tensorflow(ps=PS if ps else None, worker=WORKER, chief=CHIEF if chief else None, port=port),
            Plugin.svc(),
        ],
        tasks=tasks,
    )


def _check_shape(workers: int, ps: int, chief: bool) -> None:
    checks.integer("workers", workers, minimum=1, maximum=gang.MAX_WORKERS)
    checks.integer("ps", ps, maximum=gang.MAX_WORKERS)
    if not isinstance(chief, bool):
        raise ValidationError("chief", "must be true or false")
    if not chief and not ps and workers == 1:
        raise ValidationError(
            "workers", "a job without chief or ps needs 2 workers: Volcano sets no TF_CONFIG for 1 pod"
        )
