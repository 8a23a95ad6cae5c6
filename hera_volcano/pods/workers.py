"""The MPI master's wait for its workers, in an init container: until ``WORKERS`` pods of the job's worker task
(``WORKER_TASK``) are Ready (their sshd accepts connections), at most ``WAIT_SECONDS``. It lists the pods once, then
waits on a watch of them (no polling); SIGTERM (the job deleted, ``argo stop``) ends it at once. When the time is up
it exits 1, so that the kubelet runs it again, within the master's retries (Volcano ends the job after them).
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TextIO

from hera_volcano.pods.kubeapi import PODS, Api, Reporter, Watcher

#: The API calls the wait makes, as RBAC names them (``hera_volcano.tools.rbac`` grants exactly these).
WAIT_CALLS = (("", "pods", ("list", "watch")),)
#: The argument that makes the pods' program wait for workers rather than follow logs.
WAIT_COMMAND = "wait-for-workers"


@dataclass(frozen=True)
class Workers:
    """Which pods to wait for: ``count`` Ready pods of ``task`` in ``job``, for at most ``seconds``."""

    job: str
    task: str
    count: int
    seconds: int

    @property
    def selector(self) -> str:
        return f"volcano.sh/job-name={self.job},volcano.sh/task-spec={self.task}"

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Workers:
        return cls(env["JOB_NAME"], env["WORKER_TASK"], int(env["WORKERS"]), int(env["WAIT_SECONDS"]))


def is_ready(pod: Mapping[str, Any]) -> bool:
    status = pod.get("status")
    conditions = status.get("conditions") if isinstance(status, dict) else None
    return any(isinstance(c, dict) and c.get("type") == "Ready" and c.get("status") == "True" for c in conditions or [])


class _Pods:
    """The worker pods the watch brought, by name; :attr:`changed` is set at each change."""

    def __init__(self) -> None:
        self._pods: dict[str, Mapping[str, Any]] = {}
        self._lock = threading.Lock()
        self.changed = threading.Event()

    def change(self, kind: str, obj: Any) -> None:
        with self._lock:
            if kind == "LIST":
                self._pods = {str(p.get("metadata", {}).get("name")): p for p in obj}
            elif kind in ("ADDED", "MODIFIED"):
                self._pods[str(obj.get("metadata", {}).get("name"))] = obj
            elif kind == "DELETED":
                self._pods.pop(str(obj.get("metadata", {}).get("name")), None)
        self.changed.set()

    def ready(self) -> int:
        with self._lock:
            return sum(1 for pod in self._pods.values() if is_ready(pod))


def wait_for_workers(
    api: Api,
    workers: Workers,
    out: TextIO = sys.stdout,
    *,
    clock: Callable[[], float] = time.monotonic,
    report: Callable[[str], None] | None = None,
) -> int:
    """0 once ``workers.count`` of the pods are Ready; 1 when ``workers.seconds`` pass first, or the API server
    refuses the watch (RBAC does not change while the pod waits), saying which."""
    print(f"Waiting for {workers.count} Ready pods labelled {workers.selector}", file=out, flush=True)
    pods = _Pods()
    watcher = Watcher(api, PODS, workers.selector, pods.change, report=report or Reporter()).start()
    end = clock() + workers.seconds
    try:
        while True:
            pods.changed.clear()
            ready = pods.ready()
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
