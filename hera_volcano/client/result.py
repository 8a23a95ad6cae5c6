"""Where a run is, from its recorded API objects: the Workflow's phase and each step's, and each Volcano Job's phase
with its pod counts."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from hera_volcano.argo.conditions import FAILURE_PHASES, SUCCESS_PHASES
from hera_volcano.argo.labels import JOB_LABEL
from hera_volcano.pods.progress import PROGRESS_ANNOTATION, Number, read_annotation
from hera_volcano.shared.findings import as_list, as_map

#: The phases of a Workflow that has finished (Argo also writes ``finishedAt`` then).
FINISHED: Final = ("Succeeded", "Failed", "Error")
#: A Volcano Job in these phases will not run again.
JOB_FINISHED: Final = (*SUCCESS_PHASES, *FAILURE_PHASES)
#: Nodes that group others (the DAG, a step group, the retries of one step) rather than do work themselves.
_GROUPS: Final = frozenset({"DAG", "Steps", "StepGroup", "TaskGroup"})


@dataclass(frozen=True)
class StepStatus:
    """One step (or DAG task) of the workflow: a pod, a suspend, a skipped step, or a retried step's last try."""

    name: str
    phase: str
    message: str = ""
    type: str = "Pod"


@dataclass(frozen=True)
class JobStatus:
    """One Volcano Job of the run, with its pod counts (``deleted`` once the exit handler or Volcano removed it: the
    last version seen), and the latest progress (``DONE/TOTAL``, None before rank 0 reports one) and metrics its
    rank 0 reported, as its follower put them on the job (:mod:`hera_volcano.pods.progress`)."""

    name: str
    phase: str
    label: str | None = None
    pending: int = 0
    running: int = 0
    succeeded: int = 0
    failed: int = 0
    min_available: int = 0
    deleted: bool = False
    progress: str | None = None
    metrics: Mapping[str, Number] = field(default_factory=dict)

    @property
    def finished(self) -> bool:
        return self.phase in JOB_FINISHED


@dataclass(frozen=True)
class Result:
    """A run as it stands: the Workflow's phase and message, its steps by display name (in the order they started),
    and its Volcano Jobs (oldest first).

    :param name: the Workflow's name.
    :param namespace: its namespace.
    :param phase: its phase (``Pending``, ``Running``, ``Succeeded``, ``Failed``, ``Error``).
    :param message: Argo's message, why it failed for instance (empty if none).
    :param steps: each step that does work (a ``StepStatus``), by display name, in the order they started.
    :param jobs: each Volcano Job of the run (a ``JobStatus``, deleted ones as last seen), oldest first.
    """

    name: str
    namespace: str
    phase: str
    message: str = ""
    steps: Mapping[str, StepStatus] = field(default_factory=dict)
    jobs: tuple[JobStatus, ...] = ()

    @property
    def finished(self) -> bool:
        return self.phase in FINISHED

    @property
    def succeeded(self) -> bool:
        return self.phase == "Succeeded"


def workflow_finished(workflow: Mapping[str, Any]) -> bool:
    """Finished for good: Argo writes ``finishedAt`` with the final phase, after the exit handler has run."""
    status = as_map(workflow.get("status"))
    return bool(status.get("finishedAt")) and status.get("phase") in FINISHED


def steps_of(workflow: Mapping[str, Any]) -> dict[str, StepStatus]:
    """The steps that do work, by display name: a retried step once (its Retry node, not each attempt)."""
    nodes = [as_map(n) for n in as_map(as_map(workflow.get("status")).get("nodes")).values()]
    attempts = {child for n in nodes if n.get("type") == "Retry" for child in as_list(n.get("children"))}
    steps = sorted(
        (n for n in nodes if n.get("type") not in _GROUPS and n.get("id") not in attempts and n.get("displayName")),
        key=lambda n: (str(n.get("startedAt") or "~"), str(n.get("displayName"))),
    )
    return {
        str(n["displayName"]): StepStatus(
            str(n["displayName"]), str(n.get("phase") or "Pending"), str(n.get("message") or ""), str(n.get("type"))
        )
        for n in steps
    }


def job_status(job: Mapping[str, Any], deleted: bool = False) -> JobStatus:
    meta, status = as_map(job.get("metadata")), as_map(job.get("status"))

    def count(key: str) -> int:
        value = status.get(key)
        return value if isinstance(value, int) else 0

    label = as_map(meta.get("labels")).get(JOB_LABEL)
    done, metrics = read_annotation(as_map(meta.get("annotations")).get(PROGRESS_ANNOTATION))
    return JobStatus(
        name=str(meta.get("name", "")),
        phase=str(as_map(status.get("state")).get("phase") or "Pending"),
        label=str(label) if label is not None else None,
        pending=count("pending"),
        running=count("running"),
        succeeded=count("succeeded"),
        failed=count("failed"),
        min_available=count("minAvailable") or int(as_map(job.get("spec")).get("minAvailable") or 0),
        deleted=deleted,
        progress=None if done is None else str(done),
        metrics=metrics,
    )


def _created(obj: Mapping[str, Any]) -> tuple[str, str]:
    meta = as_map(obj.get("metadata"))
    return str(meta.get("creationTimestamp", "")), str(meta.get("name", ""))


def result_of(
    workflow: Mapping[str, Any], jobs: Iterable[Mapping[str, Any]], deleted: Iterable[Mapping[str, Any]] = ()
) -> Result:
    """The run's :class:`Result` from its Workflow, its Volcano Jobs, and the last version of those deleted since."""
    meta, status = as_map(workflow.get("metadata")), as_map(workflow.get("status"))
    listed = [(job, False) for job in jobs] + [(job, True) for job in deleted]
    return Result(
        name=str(meta.get("name", "")),
        namespace=str(meta.get("namespace", "")),
        phase=str(status.get("phase") or "Pending"),
        message=str(status.get("message") or ""),
        steps=steps_of(workflow),
        jobs=tuple(job_status(job, gone) for job, gone in sorted(listed, key=lambda item: _created(item[0]))),
    )
