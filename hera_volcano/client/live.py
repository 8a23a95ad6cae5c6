"""The current state of a few collections (a workflow, its Volcano Jobs, its pods), kept fresh by watches.

Each collection is listed once, then watched from the list's resource version, one thread each; a watch that
expires (410 Gone) lists again, one that drops is resumed from the last version seen, and a failure that may pass
(the server unreachable or busy) is retried for a grace period before it is reported. Readers wait for a change
instead of polling.
"""

from __future__ import annotations

import copy
import json
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hera_volcano.client import failures
from hera_volcano.client.kubeapi import KubeApi, Stream
from hera_volcano.client.resources import Resource
from hera_volcano.shared.errors import ClusterError
from hera_volcano.shared.findings import as_map

#: How long one watch request lasts before the server ends it and the next one starts (seconds).
WATCH_SECONDS = 60
#: How long failures that may pass (unreachable, overloaded) are retried before they are reported (seconds).
DEFAULT_GRACE = 60.0


@dataclass(frozen=True)
class Query:
    """One watched collection: a resource in the namespace, narrowed by a label and/or field selector."""

    resource: Resource
    labels: str | None = None
    fields: str | None = None


class Live:
    """The objects of each query, by name, and the last version of each one deleted since the start.

    Use as a context manager; :meth:`wait` blocks until something changed (or raises the error a watch gave up on).
    """

    def __init__(
        self, api: KubeApi, namespace: str, queries: Mapping[str, Query], *, grace: float = DEFAULT_GRACE
    ) -> None:
        self._api = api
        self._namespace = namespace
        self._queries = dict(queries)
        self._grace = grace
        self._objects: dict[str, dict[str, dict[str, Any]]] = {key: {} for key in queries}
        self._deleted: dict[str, dict[str, dict[str, Any]]] = {key: {} for key in queries}
        self._listed: set[str] = set()
        self._changes = 0
        self._error: ClusterError | None = None
        self._condition = threading.Condition()
        self._stop = threading.Event()
        self._streams: set[Stream] = set()
        self._threads = [
            threading.Thread(target=self._follow, args=(key, query), name=f"hera-volcano-watch-{key}", daemon=True)
            for key, query in queries.items()
        ]

    def __enter__(self) -> Live:
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop watching: end the streams in progress and let the threads finish."""
        self._stop.set()
        with self._condition:
            streams = list(self._streams)
            self._condition.notify_all()
        for stream in streams:
            stream.close()
        for thread in self._threads:
            if thread.is_alive() and thread is not threading.current_thread():
                thread.join(timeout=2)

    # ------------------------------------------------------------------------------------------------ readers

    def wait(self, seen: int, timeout: float | None) -> int:
        """Until there were more than ``seen`` changes (the first list of every query counts as one), or
        ``timeout`` seconds passed; returns the number of changes so far."""
        with self._condition:
            self._condition.wait_for(lambda: self._changes > seen or self._error is not None, timeout)
            if self._error is not None:
                raise self._error
            return self._changes

    @property
    def ready(self) -> bool:
        """Every query has been listed once: what is absent now does not exist."""
        with self._condition:
            return self._listed == set(self._queries)

    def objects(self, key: str) -> list[dict[str, Any]]:
        with self._condition:
            return copy.deepcopy(list(self._objects[key].values()))

    def deleted(self, key: str) -> list[dict[str, Any]]:
        with self._condition:
            return copy.deepcopy(list(self._deleted[key].values()))

    # ----------------------------------------------------------------------------------------------- watchers

    def _follow(self, key: str, query: Query) -> None:
        version: str | None = None
        failing_since: float | None = None
        while not self._stop.is_set():
            try:
                if version is None:
                    listing = self._api.list(query.resource, self._namespace, labels=query.labels, fields=query.fields)
                    version = str(as_map(listing.get("metadata")).get("resourceVersion") or "")
                    self._replace(key, [as_map(item) for item in listing.get("items") or []])
                version = self._watch(key, query, version)
                failing_since = None
            except ClusterError as e:
                if self._stop.is_set():
                    return
                if e.status == 410:  # the version expired: list again
                    version = None
                    continue
                if failures.transient(e):
                    failing_since = failing_since or time.monotonic()
                    if time.monotonic() - failing_since <= self._grace:
                        self._stop.wait(2)
                        continue
                with self._condition:
                    self._error = e
                    self._condition.notify_all()
                return

    def _watch(self, key: str, query: Query, version: str) -> str | None:
        """One watch request: apply its events; returns the version to resume from (None: list again)."""
        stream = self._api.watch(
            query.resource,
            self._namespace,
            version=version,
            seconds=WATCH_SECONDS,
            labels=query.labels,
            fields=query.fields,
        )
        with self._condition:
            if self._stop.is_set():
                stream.close()
                return version
            self._streams.add(stream)
        try:
            for line in stream:
                if self._stop.is_set():
                    break
                event = _event(line)
                if event is None:
                    continue
                kind, obj = event
                if kind == "ERROR":
                    if obj.get("code") == 410:
                        return None
                    code = obj.get("code") if isinstance(obj.get("code"), int) else None
                    raise failures.from_answer(code, json.dumps(obj), verb="watch", resource=query.resource)
                version = str(as_map(obj.get("metadata")).get("resourceVersion") or version)
                if kind != "BOOKMARK":
                    self._apply(key, kind, obj)
        finally:
            with self._condition:
                self._streams.discard(stream)
            stream.close()
        return version

    def _replace(self, key: str, items: list[Mapping[str, Any]]) -> None:
        with self._condition:
            current = {str(as_map(i.get("metadata")).get("name")): dict(i) for i in items}
            for name, gone in self._objects[key].items():
                if name not in current:
                    self._deleted[key][name] = gone
            self._objects[key] = current
            self._listed.add(key)
            self._changes += 1
            self._condition.notify_all()

    def _apply(self, key: str, kind: str, obj: dict[str, Any]) -> None:
        name = str(as_map(obj.get("metadata")).get("name"))
        with self._condition:
            if kind == "DELETED":
                self._objects[key].pop(name, None)
                self._deleted[key][name] = obj
            else:
                self._objects[key][name] = obj
                self._deleted[key].pop(name, None)
            self._changes += 1
            self._condition.notify_all()


def _event(line: str) -> tuple[str, dict[str, Any]] | None:
    """A watch event line as (type, object); None for a blank or garbled line."""
    try:
        data = json.loads(line)
    except ValueError:
        return None
    obj = as_map(data).get("object")
    kind = as_map(data).get("type")
    return (kind, dict(obj)) if isinstance(kind, str) and isinstance(obj, Mapping) else None
