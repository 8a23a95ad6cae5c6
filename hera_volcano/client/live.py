"""The current state of a few collections (a workflow, its Volcano Jobs, its pods), kept fresh by watches.

Each collection is listed once, then watched from the list's resource version, one thread each; a watch that
expires (410 Gone) lists again, one that drops or that the server ends is resumed from the last version seen, and a
failure that may pass (the server unreachable or busy) is retried for a grace period before it is reported. Readers
wait for a change instead of polling. Whatever ends a watcher thread other than :meth:`Live.close` ends every
:meth:`Live.wait` with a ClusterError that says why, so a reader never waits for a thread that is gone.
"""

from __future__ import annotations

import copy
import json
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from hera_volcano.client import failures
from hera_volcano.client.kubeapi import KubeApi, Stream
from hera_volcano.client.patience import Failing, Patience
from hera_volcano.client.resources import Resource
from hera_volcano.shared.errors import ClusterError
from hera_volcano.shared.findings import as_map

#: How long one watch request lasts before the server ends it and the next one starts (seconds).
WATCH_SECONDS = 60
#: The longest :meth:`Live.close` waits for a thread that is not inside a request (it only has to notice the stop).
_JOIN_SECONDS = 5.0
T = TypeVar("T")


class _Closed(Exception):
    """Raised in a watcher thread that was about to call the API after :meth:`Live.close`."""


@dataclass(frozen=True)
class Query:
    """One watched collection: a resource in the namespace, narrowed by a label and/or field selector."""

    resource: Resource
    labels: str | None = None
    fields: str | None = None

    def describe(self, namespace: str) -> str:
        """The collection in words, for an error message."""
        selectors = ",".join(s for s in (self.labels, self.fields) if s)
        where = f" in namespace {namespace}" if self.resource.namespaced else ""
        return f"{self.resource.qualified}{f' ({selectors})' if selectors else ''}{where}"


@dataclass
class _Position:
    """Where one collection's watch got to: the version to resume from (None: list again), how many answers
    (lists, events, bookmarks) it has had, which tells a watch that brought something from one that did not, and
    how many watch requests the server answered, which tells a broken stream from a request that failed."""

    version: str | None = None
    received: int = 0
    opened: int = 0


class Live:
    """The objects of each query, by name, and the last version of each one deleted since the start.

    Use as a context manager; :meth:`wait` blocks until something changed (or raises the error a watch gave up on).
    """

    def __init__(
        self, api: KubeApi, namespace: str, queries: Mapping[str, Query], *, patience: Patience | None = None
    ) -> None:
        self._api = api
        self._namespace = namespace
        self._queries = dict(queries)
        self._patience = patience or Patience()
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
        """Stop watching: end the streams in progress and let the threads finish, each within a bound. A thread
        inside a request the server has not answered yet makes no other call once the answer comes; it is waited for
        too (within the bound): a process that exits while one of its threads is inside a request can abort."""
        self._stop.set()
        with self._condition:
            streams = list(self._streams)
            self._condition.notify_all()
        for stream in streams:
            stream.close()
        for thread in self._threads:
            if thread.is_alive() and thread is not threading.current_thread():
                thread.join(timeout=_JOIN_SECONDS)

    # ------------------------------------------------------------------------------------------------ readers

    def wait(self, seen: int, timeout: float | None) -> int:
        """Until there were more than ``seen`` changes (the first list of every query counts as one), or
        ``timeout`` seconds passed; returns the number of changes so far. Once a watch gave up, raises its error
        (after the changes it brought before, so that the reader sees each one)."""
        with self._condition:
            self._condition.wait_for(lambda: self._changes > seen or self._error is not None, timeout)
            if self._error is not None and self._changes <= seen:
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
        """One collection's thread. However it ends, unless :meth:`close` ended it, the readers learn why."""
        try:
            self._keep_watching(key, query)
        except _Closed:
            pass
        except ClusterError as e:
            self._fail(e)
        except Exception as e:
            cause = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
            message = f"the watch of {query.describe(self._namespace)} failed: {cause}"
            self._fail(ClusterError(message, reason="WatchFailed"), e)
        finally:
            message = f"the watch of {query.describe(self._namespace)} stopped unexpectedly"
            self._fail(ClusterError(message, reason="WatchFailed"))  # only if nothing else was reported

    def _fail(self, error: ClusterError, cause: BaseException | None = None) -> None:
        """Report ``error`` to every reader (the first one only, and nothing after :meth:`close`)."""
        if cause is not None:
            error.__cause__ = cause
        with self._condition:
            if self._error is None and not self._stop.is_set():
                self._error = error
                self._condition.notify_all()

    def _keep_watching(self, key: str, query: Query) -> None:
        """List, then watch from the list's version, and again, until closed. Failures that may pass are tried
        again for the grace period; a stream that broke after the server answered is resumed without counting as
        one (a proxy may cut idle connections). A request that brought nothing is followed by a pause, so that a
        server (or proxy) that answers every one at once is not asked again in a tight loop."""
        position = _Position()
        failing = Failing(self._patience.grace)
        while not self._stop.is_set():
            start, opened = position.received, position.opened
            listed = start
            try:
                if position.version is None:
                    self._list(key, query, position)
                    listed = position.received
                self._watch(key, query, position)
                failing.passed()
            except ClusterError as e:
                if self._stop.is_set():
                    return
                if position.received > start:
                    failing.passed()
                broke = e.reason == "Unreachable" and position.opened > opened
                if e.status == 410:  # the version expired: list again
                    position.version = None
                elif not broke and not failing.again(e):
                    raise
            if position.received == listed:
                self._stop.wait(self._patience.retry)

    def _request(self, call: Callable[[], T]) -> T:
        """``call()``, unless :meth:`close` came first (no request starts after it)."""
        with self._condition:
            if self._stop.is_set():
                raise _Closed
        return call()

    def _list(self, key: str, query: Query, position: _Position) -> None:
        listing = self._request(
            lambda: self._api.list(query.resource, self._namespace, labels=query.labels, fields=query.fields)
        )
        position.version = str(as_map(listing.get("metadata")).get("resourceVersion") or "")
        position.received += 1
        self._replace(key, [as_map(item) for item in listing.get("items") or []])

    def _watch(self, key: str, query: Query, position: _Position) -> None:
        """One watch request, from ``position``: apply its events, and move ``position`` with each one (so a drop
        resumes after the last event applied, and a 410 Gone lists again)."""
        version = str(position.version)
        stream: Stream = self._request(
            lambda: self._api.watch(
                query.resource,
                self._namespace,
                version=version,
                seconds=WATCH_SECONDS,
                labels=query.labels,
                fields=query.fields,
            )
        )
        position.opened += 1
        with self._condition:
            if self._stop.is_set():
                stream.close()
                return
            self._streams.add(stream)
        try:
            for line in stream:
                if self._stop.is_set():
                    return
                event = _event(line)
                if event is None:
                    continue
                kind, obj = event
                if kind == "ERROR":
                    code = obj.get("code") if isinstance(obj.get("code"), int) else None
                    raise failures.from_answer(
                        code, json.dumps(obj), verb="watch", resource=query.resource, namespace=self._namespace
                    )
                if kind != "BOOKMARK":
                    self._apply(key, kind, obj)
                position.version = str(as_map(obj.get("metadata")).get("resourceVersion") or position.version)
                position.received += 1
        finally:
            with self._condition:
                self._streams.discard(stream)
            stream.close()

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
