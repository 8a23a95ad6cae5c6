"""The batch job builder: ``replicas`` pods running one program, gang-scheduled.

Its image, command (or a Python program's arguments), replicas and min-available are the job's own ``arguments``
(``Placeholder.input`` parameters bound to their values), so a :class:`Pipeline` of thousands of batch jobs that
agree on the rest renders one template.
"""

from __future__ import annotations

import functools
from dataclasses import replace
from typing import TYPE_CHECKING, Final

from hera_volcano.argo.labels import LEAD_TASK_ANNOTATION
from hera_volcano.builders import checkpoints, gang
from hera_volcano.builders.pod import PodSettings
from hera_volcano.builders.program import Launch, Program, check_command_env, check_env, with_launcher
from hera_volcano.builders.program import check as check_program
from hera_volcano.builders.settings import JobSettings, checked
from hera_volcano.kube import values
from hera_volcano.kube.images import check_image
from hera_volcano.shared import checks
from hera_volcano.shared.placeholders import Placeholder
from hera_volcano.volcano.job import Plugin, VolcanoJob, VolcanoTask, check_fits_queue
from hera_volcano.volcano.queue import Queue, queue_name

if TYPE_CHECKING:
    from typing_extensions import Unpack

#: The job's input holding a Python program's arguments (JSON), where a command job has ``command``.
FUNC_ARGS: Final = "func-args"
#: The one task (and its container): the lead task.
MAIN: Final = "main"


def batch_job(
    *,
    image: str,
    program: Program,
    replicas: int = 1,
    min_available: int | None = None,
    **settings: Unpack[JobSettings],
) -> VolcanoJob:
    """A job of ``replicas`` pods (the task ``main``, all alike) running ``program`` in ``image``, gang-scheduled.

    A pod that fails (or is evicted) ends the job Terminated, which fails its step, unless ``retry`` says otherwise:
    ``VolcanoRetry`` restarts the job on those events, ``ArgoRetry`` creates it anew. ``image``, the command (or a
    Python program's ``args``), ``replicas`` and ``min_available`` are the job's own ``arguments``: jobs that agree
    on the other settings share one template in a :class:`Pipeline`.

    :param image: the image of every replica.
    :param program: what every replica runs: a command, or a :class:`Program` function, script or module under
        ``python3``; replica 0's return value is the job's report (the replica's index comes from Volcano's env
        plugin, ``VC_TASK_INDEX``, which such jobs use).
    :param replicas: the job's pods.
    :param min_available: how many of them start together or none does (default: all).
    :param settings: the settings every builder shares (``name``, ``queue``, ``service_account``, ``pod``,
        ``deadline``, ``start_limit``, ``retry``...): :class:`JobSettings`; ``generate_name`` is ``batch-job-``
        by default.
    """
    program = check_program(program)
    check_image(image, "image")
    checks.integer("replicas", replicas, minimum=1)
    if min_available is not None:
        checks.integer("min_available", min_available, minimum=1)
    shared = checked(settings, "batch_job")
    if program.launch is not None:
        check_env({"pod": shared["pod"]})
    check_command_env(program, {"pod": shared["pod"]})
    launch = None if program.launch is None else replace(program.launch, args="")
    # A command with run-time values stands in the job itself (its values are the job's inputs); any other is the
    # job's argument, so that jobs differing only in it share one template.
    argv = program.argv or ()
    own_command = None if all(isinstance(arg, str) for arg in argv) else program.argv
    job = _shape(
        shared["name"],
        shared["generate_name"],
        queue_name(shared["queue"]),  # a queue's name: the shape is cached on it
        shared["priority_class_name"],
        shared["service_account"],
        shared["working_dir"],
        shared["pod"],
        launch,
        own_command,
    )
    given: dict[str, object] = {"image": image}
    if program.launch is None:
        if own_command is None:
            given["command"] = list(program.argv or ())
    else:
        # The JSON itself, exact: the manifest's expression doubles its $ for the kubelet in a Pipeline, and bound
        # into this job's own manifest so does Exact (hera_volcano.kube.values).
        given[FUNC_ARGS] = values.Exact(program.launch.args.replace("$$", "$"))
    given.update({"replicas": replicas, "min-available": min_available or replicas})
    job = replace(
        job, arguments=given, deadline=shared["deadline"], start_limit=shared["start_limit"], retry=shared["retry"]
    )
    job = checkpoints.mounted(job, shared["checkpoints"])
    if isinstance(shared["queue"], Queue):  # the shared shape names the queue only: check its own gang here
        check_fits_queue(job.bound_data(), shared["queue"])
    return job


@functools.lru_cache(maxsize=256)
def _shape(
    name: str | Placeholder | None,
    generate_name: str | None,
    queue: str | None,
    priority_class_name: str | None,
    service_account: str | None,
    working_dir: str | None,
    pod: PodSettings | None,
    launch: Launch | None,
    command: tuple[str | Placeholder, ...] | None = None,
) -> VolcanoJob:
    """The job every :func:`batch_job` with these settings (and code) shares, its per-job values as input parameters
    (memoised: a pure function of immutable inputs, so a pipeline of thousands of jobs holds one, not thousands)."""
    container: dict[str, object] = {"name": MAIN, "image": Placeholder.input("image", "busybox:1")}
    if working_dir is not None:
        container["workingDir"] = working_dir
    if command is not None:
        container["command"] = list(command)
    elif launch is None:
        container["command"] = Placeholder.input("command", ["true"])
    else:
        container["command"] = launch.command("replica")
        container["env"] = launch.env(Placeholder.input(FUNC_ARGS, "{}"))
    # Never: a failed container fails its pod, which Volcano sees (PodFailed); OnFailure would restart it in place
    # forever and the job would never fail.
    spec = gang.framework_pod(container, service_account)
    if launch is not None:
        with_launcher(spec, container)
    template = {"spec": spec} if pod is None else pod.apply({"spec": spec}, container=MAIN)
    return VolcanoJob(
        name=name,
        generate_name=generate_name,
        min_available=Placeholder.input("min-available", 1),
        queue=queue,
        priority_class_name=priority_class_name,
        annotations={LEAD_TASK_ANNOTATION: MAIN},
        tasks=[VolcanoTask(name=MAIN, replicas=Placeholder.input("replicas", 1), template=template)],
        policies=gang.terminate_on_pod_failure(),
        plugins=[] if launch is None else [Plugin.env()],  # VC_TASK_INDEX: which replica reports
    )
