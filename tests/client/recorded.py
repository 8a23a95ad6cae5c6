"""The recorded API objects of ``fixtures/`` (see record_fixtures.py), and a stand-in API server that serves them.

``World`` implements the calls the client makes of ``hera_volcano.client.kubeapi.KubeApi`` (get, list, watch,
create, patch, delete, log) on objects held in memory: a change made with :meth:`World.put` or :meth:`World.remove`
reaches every open watch, as a real API server's would, so the client's threads and waits run for real. It can be
told to fail as real servers do (``faults.py``): error answers, no answer, slow answers, watches that expire, break
or end with an ERROR event, versions it no longer has (:meth:`World.compact`), bookmarks, log streams that drop.
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
from tests.client.faults import (
    Answer,
    CallFault,
    Drop,
    End,
    ErrorEvent,
    Fault,
    Raise,
    Slow,
    StreamFault,
    Unreachable,
    status,
)

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


def merged(obj: dict[str, Any], patch: Mapping[str, Any]) -> dict[str, Any]:
    """``obj`` with a JSON merge patch applied (RFC 7386): objects merged key by key, null removes, the rest
    replaces."""
    out = dict(obj)
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        elif isinstance(value, Mapping) and isinstance(out.get(key), dict):
            out[key] = merged(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


#: What one watch is of: the resource, and its label and field selectors.
WatchKey = tuple[Resource, str | None, str | None]


class Lines:
    """A stream of lines (the shape of kubeapi.Stream): a fixed list (then ``after`` runs), or lines pushed until it
    is closed, where :meth:`settle` waits until the reader has taken (and handled) every line pushed. A ``fault``
    ends it early, once the reader has taken ``fault.after`` lines: the server ends it, the connection breaks, or an
    ERROR event comes last."""

    def __init__(
        self,
        lines: list[str] | None = None,
        after: Callable[[], None] | None = None,
        *,
        fault: StreamFault | None = None,
        host: str = "",
    ) -> None:
        self._fixed = lines
        self._after = after
        self._fault = fault
        self._host = host
        self._queue: queue.Queue[str | StreamFault | None] = queue.Queue()
        #: The lines the reader took, in order.
        self.handed: list[str] = []
        #: Closed by the reader (the client); ended by the server (a fault, or the test is over).
        self.closed = False
        self.ended = False

    def __enter__(self) -> Lines:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def open(self) -> bool:
        return not (self.closed or self.ended)

    def push(self, line: str) -> None:
        self._queue.put(line)

    def close(self) -> None:
        self.closed = True
        self._queue.put(None)

    def interrupt(self, fault: StreamFault) -> None:
        """Once the reader has taken the lines pushed so far, ``fault`` ends the stream (whatever its ``after``)."""
        self._queue.put(fault)

    def end(self) -> None:
        self.ended = True
        self._queue.put(None)

    def caught_up(self) -> bool:
        """Nothing is on its way to the reader: it has handled every line pushed, or closed the stream itself."""
        if self.ended:
            return False
        return self.closed or self._queue.unfinished_tasks == 0

    def settle(self, timeout: float = 10) -> None:
        deadline = time.monotonic() + timeout
        while self._queue.unfinished_tasks and self.open and time.monotonic() < deadline:
            time.sleep(0.005)

    def __iter__(self) -> Iterator[str]:
        fixed = iter(self._fixed) if self._fixed is not None else None
        while True:
            if self._fault is not None and len(self.handed) >= self._fault.after:
                yield from self._break(self._fault)
                return
            line = next(fixed, None) if fixed is not None else self._queue.get()
            if not isinstance(line, str):
                if fixed is None:
                    self._queue.task_done()
                if line is not None:
                    yield from self._break(line)
                elif fixed is not None and self._after is not None:
                    self._after()
                return
            self.handed.append(line)
            yield line  # the reader handles it before it asks for the next line
            if fixed is None:
                self._queue.task_done()

    def _break(self, fault: StreamFault) -> Iterator[str]:
        self.ended = True
        if isinstance(fault, Drop):  # what kubeapi.Stream raises when the connection breaks mid-stream
            raise failures.unreachable(self._host, ConnectionResetError(104, "Connection reset by peer"))
        if isinstance(fault, ErrorEvent):
            line = json.dumps({"type": "ERROR", "object": fault.status})
            self.handed.append(line)
            yield line


class World:
    """Objects by resource and name, served as the API server serves them; RBAC refusals by (verb, resource); faults
    queued by (verb, resource)."""

    host = "https://recorded.invalid"

    def __init__(self) -> None:
        self.objects: dict[Resource, dict[str, dict[str, Any]]] = {}
        self.refused: dict[tuple[str, Resource], ClusterError] = {}
        self.logs: dict[tuple[str, str], list[str]] = {}
        #: Containers whose kubelet has no previous run yet (a log asked ``previous`` is refused, 400).
        self.no_previous: set[tuple[str, str]] = set()
        self.after_log: dict[tuple[str, str], Callable[[], None]] = {}
        self.calls: list[tuple[str, Resource, str | None]] = []
        #: Each watch request: what it watched and from which version.
        self.watched: list[tuple[Resource, str]] = []
        #: Each log request: the pod, the container and the options.
        self.log_calls: list[tuple[str, str, dict[str, Any]]] = []
        self._faults: dict[tuple[str, Resource], list[Fault]] = {}
        self._slow: list[Slow] = []
        self._open_logs: dict[tuple[str, str], Lines] = {}
        self._watches: list[tuple[WatchKey, Lines]] = []
        self._latest: dict[WatchKey, Lines | None] = {}
        self._history: list[tuple[int, Resource, str, dict[str, Any]]] = []
        self._lock = threading.RLock()
        self._version = 100
        self._compacted = 0

    # ------------------------------------------------------------------------------------------- the test's side

    @property
    def version(self) -> int:
        """The resource version of the last change (a list's version)."""
        with self._lock:
            return self._version

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

    def fault(self, verb: str, resource: Resource, *faults: Fault) -> None:
        """The next calls of ``verb`` (get, list, watch, log) on ``resource`` (PODS for log) each meet one of
        ``faults``, in order; the calls after them are served as usual. End, Drop and ErrorEvent are faults of the
        stream a watch or log call returns, the others of the call."""
        assert all(verb in ("watch", "log") or not isinstance(f, End | Drop | ErrorEvent) for f in faults)
        with self._lock:
            self._faults.setdefault((verb, resource), []).extend(faults)

    def compact(self) -> None:
        """Forget the changes made so far, as etcd's compaction does: a watch from an older version is told 410."""
        with self._lock:
            self._compacted = self._version
            self._history.clear()

    def bookmark(self, resource: Resource) -> None:
        """A BOOKMARK on every open watch of ``resource``: the version the server has got to (changes to other
        collections move it on), with no object in it."""
        with self._lock:
            meta = {"resourceVersion": str(self._version)}
            version = f"{resource.group}/{resource.version}" if resource.group else resource.version
            line = json.dumps({"type": "BOOKMARK", "object": {"apiVersion": version, "metadata": meta}})
            notified = [lines for key, lines in self._watches if key[0] == resource and lines.open]
            for lines in notified:
                lines.push(line)
        for lines in notified:
            lines.settle()

    def interrupt(self, resource: Resource, fault: StreamFault) -> None:
        """Every open watch of ``resource`` meets ``fault`` now (once it has handed over what it holds): the server
        ends it, the connection breaks, or an ERROR event ends it."""
        with self._lock:
            for key, lines in self._watches:
                if key[0] == resource and lines.open:
                    lines.interrupt(fault)

    def open_log(self, pod: str, container: str) -> Lines:
        """A log stream that stays open (the container runs), for the next log request of ``container``: the test
        pushes its lines, and ends it or lets the client close it."""
        lines = Lines(host=self.host)
        with self._lock:
            self._open_logs[(pod, container)] = lines
        return lines

    def settle(self, *resources: Resource, timeout: float = 10) -> None:
        """Until the client has caught up: every collection it watches (``resources`` among them) has an open watch
        that has handed over every change, or one the client closed itself. Fails the test after ``timeout``."""
        deadline = time.monotonic() + timeout
        while True:
            with self._lock:
                behind = [key for key, lines in self._latest.items() if lines is None or not lines.caught_up()]
                unwatched = [r for r in resources if r not in {key[0] for key in self._latest}]
            if not behind and not unwatched:
                return
            assert time.monotonic() < deadline, f"the client has not caught up with {behind or unwatched}"
            time.sleep(0.005)

    def delivered(self, resource: Resource) -> list[int]:
        """The versions of the changes to ``resource`` that watches handed to the client, in order."""
        with self._lock:
            lines = [line for key, stream in self._watches if key[0] == resource for line in stream.handed]
        events = [json.loads(line) for line in lines]
        return [
            int(e["object"]["metadata"]["resourceVersion"])
            for e in events
            if e["type"] in ("ADDED", "MODIFIED", "DELETED")
        ]

    def changes(self, resource: Resource, since: int) -> list[int]:
        """The versions of the changes made to ``resource`` after version ``since``."""
        with self._lock:
            return [version for version, changed, _, _ in self._history if changed == resource and version > since]

    def _notify(self, resource: Resource, kind: str, obj: dict[str, Any]) -> list[Lines]:
        self._version += 1
        obj["metadata"]["resourceVersion"] = str(self._version)
        self._history.append((self._version, resource, kind, copy.deepcopy(obj)))
        notified = []
        for (watched, labels, fields), lines in self._watches:
            if watched == resource and lines.open and selected(obj, labels, fields):
                lines.push(json.dumps({"type": kind, "object": obj}))
                notified.append(lines)
        return notified

    def _call(
        self, verb: str, resource: Resource, name: str | None = None, namespace: str | None = None
    ) -> StreamFault | None:
        """Record the call and meet its refusal or its next fault; a stream fault is for the caller to apply."""
        self.calls.append((verb, resource, name))
        if (verb, resource) in self.refused:
            raise self.refused[(verb, resource)]
        with self._lock:
            queued = self._faults.get((verb, resource))
            fault = queued.pop(0) if queued else None
            if isinstance(fault, Slow):
                self._slow.append(fault)
        if fault is None or isinstance(fault, End | Drop | ErrorEvent):
            return fault
        self._meet(fault, verb, resource, name, namespace)
        return None

    def _meet(self, fault: CallFault, verb: str, resource: Resource, name: str | None, namespace: str | None) -> None:
        if isinstance(fault, Slow):
            fault.entered.set()
            fault.release.wait(fault.limit)
        elif isinstance(fault, Answer):
            # A log is a ``get`` of the pods/log subresource, as kubeapi names it.
            asked = "get" if verb == "log" else verb
            raise failures.from_answer(
                fault.code, fault.body, verb=asked, resource=resource, namespace=namespace, name=name
            )
        elif isinstance(fault, Unreachable):
            raise failures.unreachable(self.host, ConnectionRefusedError(111, "Connection refused"))
        elif isinstance(fault, Raise):
            raise fault.exception

    # ------------------------------------------------------------------------------------------- the client's side

    def get(self, resource: Resource, namespace: str | None, name: str) -> dict[str, Any]:
        self._call("get", resource, name, namespace)
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
        self._call("list", resource, None, namespace)
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
        key = (resource, labels, fields)
        with self._lock:
            self._latest[key] = None  # a watch on its way
            self.watched.append((resource, version))
        fault = self._call("watch", resource, None, namespace)
        with self._lock:
            if int(version) < self._compacted:  # as the API server: 200, then an ERROR event, then the end
                expired = status(410, "Expired", f"too old resource version: {version} ({self._compacted})")
                lines = Lines(fault=ErrorEvent(expired), host=self.host)
            else:  # what changed since ``version``, then what changes
                lines = Lines(fault=fault, host=self.host)
                for changed, kind_of, kind, obj in self._history:
                    if changed > int(version) and kind_of == resource and selected(obj, labels, fields):
                        lines.push(json.dumps({"type": kind, "object": obj}))
            self._watches.append((key, lines))
            self._latest[key] = lines
        return lines

    def create(self, resource: Resource, namespace: str, body: dict[str, Any]) -> dict[str, Any]:
        self._call("create", resource, None, namespace)
        created = copy.deepcopy(body)
        meta = created["metadata"]
        meta.setdefault("name", meta.get("generateName", "") + "x7k2p")
        self.put(resource, created, "ADDED")
        return created

    def patch(self, resource: Resource, namespace: str, name: str, body: dict[str, Any]) -> dict[str, Any]:
        self._call("patch", resource, name, namespace)
        obj = merged(self.get(resource, namespace, name), body)
        self.put(resource, obj)
        return obj

    def delete(self, resource: Resource, namespace: str, name: str) -> None:
        self._call("delete", resource, name, namespace)
        self.remove(resource, name)

    def log(self, namespace: str, pod: str, container: str, **options: Any) -> Lines:
        """The container's log as recorded in :attr:`logs`, whole (a stream from ``since_seconds`` ago may hold
        more than asked for, never less); once all of it was read, ``after_log`` runs."""
        self.log_calls.append((pod, container, dict(options)))
        fault = self._call("log", PODS, f"{pod}/log", namespace)
        key = (pod, container)
        with self._lock:
            opened = self._open_logs.pop(key, None)
        if opened is not None:
            return opened
        if key not in self.logs or (options.get("previous") and key in self.no_previous):
            raise failures.from_answer(400, "{}", verb="get", resource=PODS, namespace=namespace, name=pod)
        return Lines(list(self.logs[key]), lambda: self._after_log(key), fault=fault, host=self.host)

    def _after_log(self, key: tuple[str, str]) -> None:
        after = self.after_log.pop(key, None)
        if after is not None:
            after()

    def close(self) -> None:
        """The test is over: end every watch, answer every slow call."""
        with self._lock:
            for _, lines in self._watches:
                lines.end()
            slow = list(self._slow)
        for fault in slow:
            fault.release.set()
