"""The MPI master's wait for its workers, in an init container: until ``count`` pods of the job's worker task are
Ready (their sshd accepts connections), at most ``seconds`` (:class:`WaitSettings`, which the builder writes into the
container's environment and the pod reads back). It lists the pods once, then waits on a watch of them (no polling);
SIGTERM (the job deleted, ``argo stop``) ends it at once. When the time is up it exits 1, so that the kubelet runs it
again, within the master's retries (Volcano ends the job after them).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import ClassVar, TextIO

from hera_volcano.pods.kubeapi import PODS, Api, Reporter, Store, Watcher
from hera_volcano.pods.labels import JOB_NAME_LABEL, TASK_LABEL

#: The API calls the wait makes, as RBAC names them (``hera_volcano.tools.rbac`` grants exactly these).
WAIT_CALLS = (("", "pods", ("list", "watch")),)
#: The argument that makes the pods' program wait for workers rather than follow logs.
WAIT_COMMAND = "wait-for-workers"


@dataclass(frozen=True)
class WaitSettings:
    """Which pods to wait for: ``count`` Ready pods of ``task`` in ``job``, for at most ``seconds``.

    The one place that names the wait's environment variables: the MPI builder writes them with :meth:`to_env`, the
    pod reads them with :meth:`from_env`. ``job`` None (the builder's: a job's name may be generated) has the kubelet
    fill it in from the master pod's ``volcano.sh/job-name`` label."""

    job: str | None
    task: str
    count: int
    seconds: int

    JOB: ClassVar[str] = "JOB_NAME"
    TASK: ClassVar[str] = "WORKER_TASK"
    COUNT: ClassVar[str] = "WORKERS"
    SECONDS: ClassVar[str] = "WAIT_SECONDS"
    #: Every variable, in the order :meth:`to_env` writes them.
    NAMES: ClassVar[tuple[str, ...]] = (JOB, TASK, COUNT, SECONDS)

    @property
    def selector(self) -> str:
        return f"{JOB_NAME_LABEL}={self.job},{TASK_LABEL}={self.task}"

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> WaitSettings:
        """The settings a pod was given (KeyError or ValueError when the environment lacks or garbles one)."""
        return cls(env[cls.JOB], env[cls.TASK], int(env[cls.COUNT]), int(env[cls.SECONDS]))

    def to_env(self) -> list[dict[str, object]]:
        """The container's ``env`` entries that :meth:`from_env` reads back."""
        job: dict[str, object] = (
            {"valueFrom": {"fieldRef": {"fieldPath": f"metadata.labels['{JOB_NAME_LABEL}']"}}}
            if self.job is None
            else {"value": self.job}
        )
        return [
            {"name": self.JOB, **job},
            {"name": self.TASK, "value": self.task},
            {"name": self.COUNT, "value": str(self.count)},
            {"name": self.SECONDS, "value": str(self.seconds)},
        ]


def is_ready(pod: object) -> bool:
    status = pod.get("status") if isinstance(pod, dict) else None
    conditions = status.get("conditions") if isinstance(status, dict) else None
    return any(isinstance(c, dict) and c.get("type") == "Ready" and c.get("status") == "True" for c in conditions or [])


def wait_for_workers(
    api: Api,
    workers: WaitSettings,
    out: TextIO = sys.stdout,
    *,
    clock: Callable[[], float] = time.monotonic,
    report: Callable[[str], None] | None = None,
) -> int:
    """0 once ``workers.count`` of the pods are Ready; 1 when ``workers.seconds`` pass first, or the API server
    refuses the watch (RBAC does not change while the pod waits), saying which."""
    print(f"Waiting for {workers.count} Ready pods labelled {workers.selector}", file=out, flush=True)
    pods = Store([PODS.plural])
    watcher = Watcher(api, PODS, workers.selector, pods.sink(PODS.plural), report=report or Reporter()).start()
    end = clock() + workers.seconds
    try:
        while True:
            pods.changed.clear()
            ready = sum(1 for pod in pods.objects(PODS.plural) if is_ready(pod))
            if ready >= workers.count:
                print(f"{ready} workers Ready", file=out, flush=True)
                return 0
            if watcher.refused is not None:
                print(f"Cannot watch the worker pods: {watcher.refused}", file=out, flush=True)
                return 1
            left = end - clock()
            if left <= 0:
                print(f"Only {ready} of {workers.count} workers Ready after {workers.seconds} s", file=out, flush=True)
                return 1
            pods.changed.wait(min(left, 1.0))
    finally:
        watcher.stop()
