"""The batch job builder: ``replicas`` pods running one command, gang-scheduled, as a job of a :class:`Pipeline`.

Every batch job with the same settings shares one shape, so a pipeline of thousands of jobs renders one template.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any, Final

from hera_volcano.argo.conditions import DEFAULT_DEADLINE
from hera_volcano.argo.labels import LEAD_TASK_ANNOTATION
from hera_volcano.builders import program
from hera_volcano.builders.pipeline_entries import JobShape, PipelineJob
from hera_volcano.builders.pod import GPU, MAX_DEVICES, PodSettings, check_settings
from hera_volcano.builders.retries import ArgoRetry, VolcanoRetry
from hera_volcano.kube import names
from hera_volcano.kube.images import check_image
from hera_volcano.shared import checks
from hera_volcano.shared import outputs as reports
from hera_volcano.shared.errors import ValidationError
from hera_volcano.shared.placeholders import Placeholder
from hera_volcano.volcano.job import Plugin, Policy, VolcanoJob, VolcanoTask
from hera_volcano.volcano.queue import Queue, queue_name

#: The per-job input holding a program's arguments (JSON), where a command job has ``command``.
FUNC_ARGS: Final = "func-args"


def batch_job(
    name: str,
    *,
    image: str,
    command: Sequence[str] | None = None,
    func: Callable[..., Any] | None = None,
    func_args: Mapping[str, Any] | None = None,
    script: str | os.PathLike[str] | None = None,
    module: str | None = None,
    replicas: int = 1,
    min_available: int | None = None,
    after: Sequence[str] = (),
    retry: ArgoRetry | VolcanoRetry | None = None,
    follow_logs: bool = False,
    queue: str | Queue | None = None,
    cpu: str | None = None,
    memory: str | None = None,
    gpus: int = 0,
    deadline: int = DEFAULT_DEADLINE,
    pod: PodSettings | None = None,
    outputs: Sequence[str] = (),
    arguments: Mapping[str, Any] | None = None,
) -> PipelineJob:
    """A job of ``replicas`` pods running ``command`` in ``image``, gang-scheduled (all or none) by default.

    A pod that fails (or is evicted) ends the job Terminated, which fails its step, unless ``retry`` says otherwise:
    ``VolcanoRetry`` restarts the job on those events, ``ArgoRetry`` creates it anew.

    ``name``, ``image``, ``command``, ``replicas`` and ``min_available`` are per-job arguments: jobs that agree on
    the other settings share one template. ``name`` starts the job's generated name, so it is a DNS-1035 label.
    ``cpu`` and ``memory`` (requests) and ``gpus`` are pod settings too: give each once, here or in ``pod``.

    Instead of ``command``, ``func`` (a module-level function, called with ``func_args`` in every replica; replica
    0's return value is the job's report), ``script`` (a Python file, read now) or ``module`` (in the image) runs
    under ``python3`` (see :mod:`hera_volcano.builders.program`). Jobs running the same code share one template;
    their ``func_args`` are a per-job argument (``func-args``), as ``command`` is otherwise. The replica's index
    comes from Volcano's env plugin (``VC_TASK_INDEX``), which such jobs use.

    ``outputs`` names the values replica 0 reports (a function's returned dict, or ``hera-volcano:output`` lines):
    the job's task carries them, for a later step's :class:`StepOutput`. ``arguments`` gives the job's run-time
    inputs (each ``Placeholder.input`` in ``func_args`` or ``pod`` env) their values: text, JSON values, or a
    :class:`StepOutput` of an earlier step.
    """
    names.check("name", name, names.dns1035_label)
    check_image(image, "image")
    launch = program.from_arguments(command=command, func=func, func_args=func_args, script=script, module=module)
    if launch is None:
        checks.strings("command", command, non_empty=True)
    checks.strings("after", after)
    checks.integer("replicas", replicas, minimum=1)
    if min_available is not None:
        checks.integer("min_available", min_available, minimum=1)
    checks.integer("gpus", gpus, maximum=MAX_DEVICES)
    checks.integer("deadline", deadline, minimum=1, maximum=checks.INT32_MAX)
    queue = queue_name(queue)  # shapes are keyed by the queue's name
    for label, value in (("queue", queue), ("cpu", cpu), ("memory", memory)):
        if value is not None and not isinstance(value, str):
            raise ValidationError(label, "must be a string")
    if retry is not None and not isinstance(retry, ArgoRetry | VolcanoRetry):
        raise ValidationError("retry", "must be ArgoRetry(...) or VolcanoRetry(...)")
    if not isinstance(follow_logs, bool):
        raise ValidationError("follow_logs", "must be true or false")
    settings = _settings(cpu, memory, gpus, check_settings("pod", pod))
    if launch is not None:
        program.check_env({"pod": settings})
    shared = None if launch is None else replace(launch, args="")
    reported = reports.check_names("outputs", outputs)
    if arguments is not None and not isinstance(arguments, Mapping):
        raise ValidationError("arguments", "must be a mapping of run-time input names to values")
    shape = _batch_shape(queue, settings, retry, deadline, shared, reported)
    given: dict[str, Any] = {"job": name, "image": image}
    if launch is None:
        given["command"] = list(command or ())
    else:
        given[FUNC_ARGS] = launch.args
    given.update({"replicas": replicas, "min-available": min_available or replicas})
    for key, value in (arguments or {}).items():
        if key in given:
            raise ValidationError(f"arguments.{key}", f"is the builder's own argument {key!r}: set it there")
        given[key] = value
    return PipelineJob(name=name, shape=shape, arguments=given, after=tuple(after), follow_logs=follow_logs)


def _settings(cpu: str | None, memory: str | None, gpus: int, pod: PodSettings | None) -> PodSettings:
    """``cpu``, ``memory`` and ``gpus`` folded into the pod settings, rendered as they always were (GPUs as text)."""
    pod = pod or PodSettings()
    for field_name, value, theirs in (
        ("cpu", cpu, pod.cpu),
        ("memory", memory, pod.memory),
        ("gpus", gpus, pod.gpus or GPU in pod.extended_resources),
    ):
        if value and theirs:
            raise ValidationError(field_name, "is also set in pod: set it once")
    devices = {GPU: str(gpus), **pod.extended_resources} if gpus else pod.extended_resources
    return replace(
        pod,
        cpu=pod.cpu if cpu is None else cpu,
        memory=pod.memory if memory is None else memory,
        extended_resources=devices,
    )


@functools.lru_cache(maxsize=256)
def _batch_shape(
    queue: str | None,
    pod: PodSettings,
    retry: ArgoRetry | VolcanoRetry | None,
    deadline: int,
    launch: program.Program | None = None,
    outputs: tuple[str, ...] = (),
) -> JobShape:
    """The one shape every :func:`batch_job` with these settings (and code, and reported values) shares
    (memoised: a pure function of immutable inputs, so a pipeline of thousands of jobs holds one shape, not
    thousands)."""
    digest = _digest(queue, pod, retry, deadline, launch, outputs)
    container: dict[str, Any] = {"name": "main", "image": Placeholder.input("image", "busybox:1")}
    if launch is None:
        container["command"] = Placeholder.input("command", ["true"])
    else:
        container["command"] = launch.command("replica")
        container["env"] = launch.env(Placeholder.input(FUNC_ARGS, "{}"))
    # Never: a failed container fails its pod, which Volcano sees (PodFailed); OnFailure would restart it in place
    # forever and the job would never fail.
    template = pod.apply({"spec": {"containers": [container], "restartPolicy": "Never"}}, container="main")
    label = Placeholder.input("job", "job")
    job = VolcanoJob(
        generate_name=f"{label}-",
        min_available=Placeholder.input("min-available", 1),
        queue=queue,
        annotations={LEAD_TASK_ANNOTATION: "main"},
        tasks=[
            VolcanoTask(
                name="main",
                replicas=Placeholder.input("replicas", 1),
                template=template,
            )
        ],
        policies=[Policy(event=e, action="TerminateJob") for e in ("PodFailed", "PodEvicted")],
        plugins=[] if launch is None else [Plugin.env()],  # VC_TASK_INDEX: which replica reports
    )
    if isinstance(retry, VolcanoRetry):
        job = replace(
            job,
            max_retry=retry.max_retry,
            policies=[Policy(event=e, action="RestartJob") for e in retry.restart_on],
        )
    return JobShape(
        name="volcano-job" if digest == _DEFAULT_DIGEST else f"volcano-job-{digest}",
        job=job,
        job_label=label,
        follow_task="main",
        follow_container="main",
        deadline=deadline,
        retry=retry if isinstance(retry, ArgoRetry) else None,
        outputs=outputs,
    )


def _digest(
    queue: str | None,
    pod: PodSettings,
    retry: object,
    deadline: int,
    launch: program.Program | None = None,
    outputs: tuple[str, ...] = (),
) -> str:
    """A short stable name for a set of shape settings: for what the arguments ``cpu``, ``memory`` and ``gpus`` can
    express, the same as before pod settings existed; anything else adds the rest of the settings (and the code
    a program job runs)."""
    gpus = pod.extended_resources.get(GPU)
    legacy = {k: v for k, v in (("cpu", pod.cpu), ("memory", pod.memory)) if v is not None}
    if isinstance(gpus, str):
        legacy[GPU] = gpus
    settings: dict[str, Any] = {
        "queue": queue,
        "resources": legacy,
        "gpus": int(gpus) if isinstance(gpus, str) else 0,
        "retry": repr(retry),
        "deadline": deadline,
    }
    devices = {k: v for k, v in pod.extended_resources.items() if k not in legacy}
    rest = replace(pod, cpu=None, memory=None, extended_resources=devices)
    if rest != PodSettings():
        settings["pod"] = rest.key()
    if launch is not None:
        runtime = [[a.name, a.value.expression, a.kind] for a in launch.runtime]
        settings["program"] = [launch.run, launch.source, runtime]
    if outputs:
        settings["outputs"] = list(outputs)
    return hashlib.sha256(json.dumps(settings, sort_keys=True).encode()).hexdigest()[:8]


#: The settings of a plain batch_job, whose shape keeps the plain name ``volcano-job``.
_DEFAULT_DIGEST = _digest(None, PodSettings(), None, DEFAULT_DEADLINE)
