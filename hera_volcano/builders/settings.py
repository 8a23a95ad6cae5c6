"""The settings every job builder shares, declared, documented and checked here once.

Each builder takes its own shape (pod counts, roles, ports) and its program as named parameters, and these settings
as keyword arguments collected into one :class:`JobSettings` (``**settings: Unpack[JobSettings]``): a call stays
as short as the common case is (``pytorch_job(image=..., program=..., workers=2, queue="gpu")``, no settings object
to build), a type checker knows every key and its type, and settings kept for several jobs pass on as one dict
(``pytorch_job(..., **shared)``). A key that is neither a parameter nor a setting is refused with Python's own
``TypeError``, as any misspelled keyword argument is.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final, TypedDict

from hera_volcano.argo.labels import LEAD_TASK_ANNOTATION
from hera_volcano.builders import checkpoints as checkpoints_setting
from hera_volcano.builders.checkpoints import Checkpoints
from hera_volcano.builders.pod import PodSettings, check_settings
from hera_volcano.kube import names
from hera_volcano.shared import checks
from hera_volcano.shared.errors import ValidationError
from hera_volcano.shared.placeholders import Placeholder, has_expression
from hera_volcano.volcano.job import Plugin, Policy, VolcanoJob, VolcanoTask
from hera_volcano.volcano.queue import Queue, queue_name
from hera_volcano.volcano.step import DEFAULT_START_LIMIT, ArgoRetry, VolcanoRetry


class JobSettings(TypedDict, total=False):
    """The settings every builder (:func:`hera_volcano.mpi_job`, :func:`hera_volcano.pytorch_job`,
    :func:`hera_volcano.tensorflow_job`, :func:`hera_volcano.batch_job`) takes as keyword arguments, each meaning
    the same on all four. All are optional."""

    name: str | Placeholder | None
    """A fixed job name (a DNS-1035 label: the svc plugin names a Service after the job). Without it the job gets
    ``generate_name``."""
    generate_name: str | None
    """The prefix of a name generated per creation, so creating the job twice never collides (default: the kind's,
    ``mpi-job-``, ``pytorch-job-``, ``tensorflow-job-``, ``batch-job-``, when there is no ``name``)."""
    queue: str | Queue | None
    """The Volcano queue: its name or a :class:`hera_volcano.Queue` (default: Volcano's ``default``)."""
    priority_class_name: str | None
    """The job's Kubernetes priority class."""
    service_account: str | None
    """The account of the pods that need the API (the MPI master's wait for its workers); without it user code gets
    no API token."""
    working_dir: str | None
    """The main container's working folder, an absolute path (MPI: ``/home`` by default; others: the image's)."""
    deadline: int | None
    """Seconds for the job's whole step and each of its pods (none by default; see :class:`hera_volcano.VolcanoJob`)."""
    start_limit: int | None
    """Seconds the gang may wait to start, kept by the job's log follower (a day by default, None for no limit)."""
    retry: ArgoRetry | VolcanoRetry | None
    """:class:`hera_volcano.ArgoRetry` (the step is retried, the job created again) or
    :class:`hera_volcano.VolcanoRetry` (Volcano restarts the job on the events it names)."""
    pod: PodSettings | None
    """:class:`hera_volcano.PodSettings` for every pod of the job (resources, env, volumes, placement, a patch);
    a builder's per-role settings (``master_pod``, ``worker_pod``...) apply on top of them."""
    checkpoints: Checkpoints | None
    """:class:`hera_volcano.Checkpoints`: a claim mounted in every pod of the job, and the directory of this run of
    this job on it given to the program (the same across Volcano restarts and Argo retries; another for another run,
    another job, another iteration of a loop), which ``hera_volcano.runtime`` reads."""


#: Every key of :class:`JobSettings`, in the order they are declared.
KEYS: Final = tuple(JobSettings.__annotations__)


def checked(given: Mapping[str, object], builder: str, *, working_dir: str | None = None) -> JobSettings:
    """``given`` (the ``**settings`` of the function ``builder``) checked, every key filled: the default
    ``generate_name`` is the builder's (``mpi_job``: ``mpi-job-``) when there is no name, ``working_dir`` the
    builder's default, ``start_limit`` a day."""
    unknown = sorted(set(given) - set(KEYS))
    if unknown:
        raise TypeError(f"{builder}() got an unexpected keyword argument {unknown[0]!r}")
    prefix = builder.replace("_", "-") + "-"
    return JobSettings(
        name=_name(given.get("name")),
        generate_name=_generate_name(given.get("name"), given.get("generate_name"), prefix),
        queue=_queue(given.get("queue")),
        priority_class_name=_optional_name("priority_class_name", given.get("priority_class_name")),
        service_account=_optional_name("service_account", given.get("service_account")),
        working_dir=_working_dir(given.get("working_dir", working_dir)),
        deadline=_seconds("deadline", given.get("deadline")),
        start_limit=_seconds("start_limit", given.get("start_limit", DEFAULT_START_LIMIT)),
        retry=_retry(given.get("retry")),
        pod=check_settings("pod", given.get("pod")),
        checkpoints=checkpoints_setting.check(given.get("checkpoints")),
    )


def job(
    settings: JobSettings,
    *,
    lead: str,
    min_available: int,
    tasks: Sequence[VolcanoTask],
    plugins: Sequence[Plugin],
    policies: Sequence[Policy],
) -> VolcanoJob:
    """The job of a gang builder: its shape (``tasks``, ``plugins``, ``policies``, the ``lead`` task its follower
    streams, and how many pods start together) with the shared settings (the checkpoints in every pod)."""
    made = VolcanoJob(
        name=settings["name"],
        generate_name=settings["generate_name"],
        min_available=min_available,
        deadline=settings["deadline"],
        start_limit=settings["start_limit"],
        retry=settings["retry"],
        policies=policies,
        scheduler_name="volcano",
        queue=settings["queue"],
        priority_class_name=settings["priority_class_name"],
        annotations={LEAD_TASK_ANNOTATION: lead},
        plugins=plugins,
        tasks=tasks,
    )
    return checkpoints_setting.mounted(made, settings["checkpoints"])


def _name(value: object) -> str | Placeholder | None:
    if isinstance(value, str):
        names.check("name", value, names.dns1035_label)
    elif value is not None and not isinstance(value, Placeholder):
        raise ValidationError("name", "must be a string or a Placeholder")
    return value


def _generate_name(name: object, value: object, prefix: str) -> str | None:
    if name is None and value is None:
        value = prefix
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValidationError("generate_name", "must be a string")
    names.check("generate_name", value.rstrip("-") or "-", names.dns1035_label)
    return value


def _queue(value: object) -> str | Queue | None:
    queue_name(value)  # a name, a Queue or None
    return value if isinstance(value, str | Queue) else None


def _optional_name(field: str, value: object) -> str | None:
    if value is None:
        return None
    names.check(field, value, names.dns1123_subdomain)
    return str.__str__(value) if isinstance(value, str) else str(value)  # a StrEnum's member: its value


def _working_dir(value: object) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.startswith("/") or has_expression(value):
        raise ValidationError("working_dir", "must be an absolute path without Argo expressions")
    return value


def _seconds(field: str, value: object) -> int | None:
    return None if value is None else checks.integer(field, value, minimum=1, maximum=checks.INT32_MAX)


def _retry(value: object) -> ArgoRetry | VolcanoRetry | None:
    if value is not None and not isinstance(value, ArgoRetry | VolcanoRetry):
        raise ValidationError("retry", "must be ArgoRetry(...) or VolcanoRetry(...)")
    return value
