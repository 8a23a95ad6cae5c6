"""The recorded API objects of ``fixtures/`` (see record_fixtures.py), and a stand-in API server that serves them.

``World`` implements the calls the client makes of ``hera_volcano.client.kubeapi.KubeApi`` (get, list, watch,
create, patch, delete, log) on objects held in memory: a change made with :meth:`World.put` or :meth:`World.remove`
reaches every open watch, as a real API server's would, so the client's threads and waits run for real.
"""

from __future__ import annotations

import copy
import json
import queue
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from hera_volcano.client import failures
from hera_volcano.client.explain import Observed
from hera_volcano.client.resources import EVENTS, JOBS, NODES, PODGROUPS, PODS, QUEUES, WORKFLOWS, Resource
from hera_volcano.shared.errors import ClusterError

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def load(path: str) -> Any:
    return json.loads((FIXTURES / path).read_text())


def items(scenario: str, name: str) -> list[dict[str, Any]]:
    return list(load(f"{scenario}/{name}.json")["items"])


def observed(scenario: str, **changes: Any) -> Observed:
    """Everything the client reads about the scenario's run, as recorded; ``changes`` replace parts."""
    parts: dict[str, Any] = {
        "workflow": load(f"{scenario}/workflow.json"),
        "jobs": items(scenario, "jobs"),
        "podgroups": items(scenario, "podgroups"),
        "pods": items(scenario, "pods"),
        "events": items(scenario, "events"),
        "queues": {"default": load(f"{scenario}/queue-default.json")},
        "nodes": items(scenario, "nodes"),
    }
    parts.update(changes)
    return Observed(**parts)


def error(name: str) -> tuple[int, str]:
    """(HTTP status, body) of a recorded error answer."""
    data = load(f"errors/{name}.json")
    return int(data["status"]), str(data["body"])


def selected(obj: Mapping[str, Any], labels: str | None, fields: str | None) -> bool:
    """Equality selectors only (``k=v,k2=v2``; fields: ``metadata.name``), which is all the client sends."""
    meta = obj.get("metadata", {})
    for selector, values in ((labels, meta.get("labels", {})), (fields, {"metadata.name": meta.get("name")})):
        for term in (selector or "").split(","):
            if term:
                key, _, value = term.partition("=")
                if values.get(key) != value:
                    return False
    return True


class Lines:
    """A stream of lines (the shape of kubeapi.Stream): a fixed list (then ``after`` runs), or lines pushed until
    it is closed, where :meth:`settle` waits until the reader has taken (and handled) every line pushed."""

    def __init__(self, lines: list[str] | None = None, after: Callable[[], None] | None = None) -> None:
        self._fixed = lines
        self._after = after
        self._queue: queue.Queue[str | None] = queue.Queue()
        self.closed = False

    def __enter__(self) -> Lines:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def push(self, line: str) -> None:
        self._queue.put(line)

    def close(self) -> None:
        self.closed = True
        self._queue.put(None)

    def settle(self, timeout: float = 10) -> None:
        deadline = time.monotonic() + timeout
        while self._queue.unfinished_tasks and not self.closed and time.monotonic() < deadline:
            time.sleep(0.005)

    def __iter__(self) -> Iterator[str]:
        if self._fixed is not None:
            yield from self._fixed
            if self._after is not None:
                self._after()
            return
        while True:
            line = self._queue.get()
            if line is None:
                self._queue.task_done()
                return
            yield line  # the reader handles it before it asks for the next line
            self._queue.task_done()


class World:
    """Objects by resource and name, served as the API server serves them; RBAC refusals by (verb, resource)."""

    host = "https://recorded.invalid"

    def __init__(self) -> None:
        self.objects: dict[Resource, dict[str, dict[str, Any]]] = {}
        self.refused: dict[tuple[str, Resource], ClusterError] = {}
        self.logs: dict[tuple[str, str], list[str]] = {}
        self.after_log: dict[tuple[str, str], Callable[[], None]] = {}
        self.calls: list[tuple[str, Resource, str | None]] = []
        self._watches: list[tuple[Resource, str | None, str | None, Lines]] = []
        self._history: list[tuple[int, Resource, str, dict[str, Any]]] = []
        self._lock = threading.RLock()
        self._version = 100

    # ------------------------------------------------------------------------------------------- the test's side

    def put(self, resource: Resource, obj: dict[str, Any], kind: str = "MODIFIED") -> None:
        """Store ``obj`` (a change every open watch of it sees and has handled when this returns)."""
        with self._lock:
            obj = copy.deepcopy(obj)
            self.objects.setdefault(resource, {})[obj["metadata"]["name"]] = obj
            notified = self._notify(resource, kind, obj)
        for lines in notified:
            lines.settle()

    def remove(self, resource: Resource, name: str) -> None:
        with self._lock:
            notified = self._notify(resource, "DELETED", self.objects.get(resource, {}).pop(name))
        for lines in notified:
            lines.settle()

    def scenario(self, name: str) -> World:
        """Every object recorded for a scenario."""
        for resource, file in ((JOBS, "jobs"), (PODGROUPS, "podgroups"), (PODS, "pods"), (EVENTS, "events"),
                               (NODES, "nodes")):  # fmt: skip
            for obj in items(name, file):
                self.put(resource, obj, "ADDED")
        self.put(WORKFLOWS, load(f"{name}/workflow.json"), "ADDED")
        self.put(QUEUES, load(f"{name}/queue-default.json"), "ADDED")
        return self

    def refuse(self, verb: str, resource: Resource, fixture: str = "forbidden-list-nodes") -> None:
        status, body = error(fixture)
        self.refused[(verb, resource)] = failures.from_answer(status, body, verb=verb, resource=resource)

    def _notify(self, resource: Resource, kind: str, obj: dict[str, Any]) -> list[Lines]:
        self._version += 1
        obj["metadata"]["resourceVersion"] = str(self._version)
        self._history.append((self._version, resource, kind, copy.deepcopy(obj)))
        notified = []
        for watched, labels, fields, lines in self._watches:
            if watched == resource and not lines.closed and selected(obj, labels, fields):
                lines.push(json.dumps({"type": kind, "object": obj}))
                notified.append(lines)
        return notified

    def _check(self, verb: str, resource: Resource, name: str | None = None) -> None:
        self.calls.append((verb, resource, name))
        if (verb, resource) in self.refused:
            raise self.refused[(verb, resource)]

    # ------------------------------------------------------------------------------------------- the client's side

    def get(self, resource: Resource, namespace: str | None, name: str) -> dict[str, Any]:
        self._check("get", resource, name)
        with self._lock:
            found = self.objects.get(resource, {}).get(name)
        if found is None:
            message = f'{resource.qualified} "{name}" not found'
            body = json.dumps({"kind": "Status", "code": 404, "reason": "NotFound", "message": message})
            raise failures.from_answer(404, body, verb="get", resource=resource, namespace=namespace, name=name)
        return copy.deepcopy(found)

    def list(
        self, resource: Resource, namespace: str | None, *, labels: str | None = None, fields: str | None = None
    ) -> dict[str, Any]:
        self._check("list", resource)
        with self._lock:
            found = [o for o in self.objects.get(resource, {}).values() if selected(o, labels, fields)]
            return {"items": copy.deepcopy(found), "metadata": {"resourceVersion": str(self._version)}}

    def watch(
        self,
        resource: Resource,
        namespace: str | None,
        *,
        version: str,
        seconds: int,
        labels: str | None = None,
        fields: str | None = None,
    ) -> Lines:
        self._check("watch", resource)
        lines = Lines()
        with self._lock:  # what changed since ``version``, then what changes
            for changed, kind_of, kind, obj in self._history:
                if changed > int(version) and kind_of == resource and selected(obj, labels, fields):
                    lines.push(json.dumps({"type": kind, "object": obj}))
            self._watches.append((resource, labels, fields, lines))
        return lines

    def create(self, resource: Resource, namespace: str, body: dict[str, Any]) -> dict[str, Any]:
        self._check("create", resource)
        created = copy.deepcopy(body)
        meta = created["metadata"]
        meta.setdefault("name", meta.get("generateName", "") + "x7k2p")
        self.put(resource, created, "ADDED")
        return created

    def patch(self, resource: Resource, namespace: str, name: str, body: dict[str, Any]) -> dict[str, Any]:
        self._check("patch", resource, name)
        obj = self.get(resource, namespace, name)
        for key, value in body.items():
            obj.setdefault(key, {}).update(value)
        self.put(resource, obj)
        return obj

    def delete(self, resource: Resource, namespace: str, name: str) -> None:
        self._check("delete", resource, name)
        self.remove(resource, name)

    def log(self, namespace: str, pod: str, container: str, **options: Any) -> Lines:
        self._check("get", PODS, f"{pod}/log")
        key = (pod, container)
        if key not in self.logs:
            raise failures.from_answer(400, "{}", verb="get", resource=PODS, namespace=namespace, name=pod)
        return Lines(self.logs[key], self.after_log.pop(key, None))

    def close(self) -> None:
        for _, _, _, lines in self._watches:
            lines.close()
