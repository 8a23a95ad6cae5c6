"""The follower's transport (:class:`hera_volcano.pods.kubeapi.Transport`) over the ``kubernetes`` package
(:class:`~hera_volcano.client.kubeapi.KubeApi`), so ``Run.logs`` and ``Run.wait`` run the loop and the watches of
the pods' follower (:mod:`hera_volcano.pods.run`, :mod:`hera_volcano.pods.kubeapi`) rather than copies of them.

Every ClusterError becomes the transport's ApiError, the ClusterError kept as its cause, and back again at the end
(:func:`cluster_error`): a caller gets the words the client's own calls give.
"""

from __future__ import annotations

import json
import math
import queue
import threading
import time
from collections.abc import Callable, Iterator
from datetime import datetime
from typing import TypeVar

from hera_volcano.client import failures
from hera_volcano.client.kubeapi import KubeApi, Stream
from hera_volcano.client.patience import Patience
from hera_volcano.client.resources import JOBS, PODGROUPS, PODS, WORKFLOWS, Resource
from hera_volcano.pods.kubeapi import WATCH_SECONDS, WHOLE_LOG, ApiError, Change, Closing, Kind, LogQuery, Obj, Watcher
from hera_volcano.pods.run import FollowLogs
from hera_volcano.shared.errors import ClusterError
from hera_volcano.shared.findings import as_map

T = TypeVar("T")
_RESOURCES = {(r.group, r.plural): r for r in (PODS, JOBS, PODGROUPS, WORKFLOWS)}
#: A reattached stream asks for this many seconds more than since its last line: the server's clock and this
#: machine's may differ, and the lines read twice are dropped (:class:`~hera_volcano.pods.follow.LineCursor`).
SINCE_SLACK = 10


def _answer(call: Callable[[], T]) -> T:
    try:
        return call()
    except ClusterError as e:
        raise ApiError(e.status, e.reason, str(e)) from e


def cluster_error(error: ApiError) -> ClusterError:
    """The ClusterError an ApiError of this transport stands for (one of the loop's own: made from its words)."""
    cause = error.__cause__
    if isinstance(cause, ClusterError):
        return cause
    made = ClusterError(error.message or str(error), reason=error.reason, status=error.status)
    made.__cause__ = cause
    return made


class _Lines(Closing):
    """A stream of the ``kubernetes`` package as the transport's: its failures ApiErrors; a watch's ERROR event
    raised as the ClusterError the client's calls give for it."""

    def __init__(self, stream: Stream, watched: Resource | None = None, namespace: str = "") -> None:
        self._stream = stream
        self._watched = watched
        self._namespace = namespace

    def __iter__(self) -> Iterator[str]:
        lines = iter(self._stream)
        while True:
            line = _answer(lambda: next(lines, None))
            if line is None:
                return
            if self._watched is not None:
                self._error_event(line)
            yield line

    def _error_event(self, line: str) -> None:
        try:
            event = as_map(json.loads(line))
        except ValueError:
            return
        obj = as_map(event.get("object"))
        if event.get("type") == "ERROR" and self._watched is not None:
            code = obj.get("code") if isinstance(obj.get("code"), int) else None
            error = failures.from_answer(
                code, json.dumps(obj), verb="watch", resource=self._watched, namespace=self._namespace
            )
            raise ApiError(error.status, error.reason, str(error)) from error

    def close(self) -> None:
        self._stream.close()


class KubeTransport:
    """Namespace ``namespace`` of the API server ``api`` talks to, as the follower's loop calls it."""

    def __init__(self, api: KubeApi, namespace: str) -> None:
        self._api = api
        self.namespace = namespace

    def get(self, kind: Kind, name: str) -> Obj:
        return _answer(lambda: self._api.get(_resource(kind), self.namespace, name))

    def list(self, kind: Kind, selector: str, fields: str | None = None) -> tuple[list[Obj], str]:
        listing = _answer(
            lambda: self._api.list(_resource(kind), self.namespace, labels=selector or None, fields=fields)
        )
        items = [i for i in listing.get("items") or [] if isinstance(i, dict)]
        return items, str(as_map(listing.get("metadata")).get("resourceVersion") or "")

    def delete(self, kind: Kind, name: str) -> None:
        _answer(lambda: self._api.delete(_resource(kind), self.namespace, name))

    def patch(self, kind: Kind, name: str, body: Obj) -> Obj:
        return _answer(lambda: self._api.patch(_resource(kind), self.namespace, name, body))

    def watch(
        self, kind: Kind, selector: str, version: str, seconds: int = WATCH_SECONDS, fields: str | None = None
    ) -> _Lines:
        resource = _resource(kind)
        stream = _answer(
            lambda: self._api.watch(
                resource, self.namespace, version=version, seconds=seconds, labels=selector or None, fields=fields
            )
        )
        return _Lines(stream, resource, self.namespace)

    def log(self, pod: str, container: str, query: LogQuery = WHOLE_LOG) -> _Lines:
        """The ``kubernetes`` package asks for seconds, not a time: those since ``since_time``, with some slack."""
        since = None
        if query.since_time is not None:
            then = datetime.fromisoformat(query.since_time.replace("Z", "+00:00")).timestamp()
            since = max(math.ceil(time.time() - then), 0) + SINCE_SLACK

        def call() -> Stream:
            return self._api.log(
                self.namespace, pod, container, follow=query.follow, previous=query.previous, tail=query.tail,
                since_seconds=since, timestamps=query.timestamps,
            )  # fmt: skip

        return _Lines(_answer(call))


def _resource(kind: Kind) -> Resource:
    return _RESOURCES[(kind.group, kind.plural)]


def watcher(
    transport: KubeTransport, kind: Kind, selector: str, change: Change, patience: Patience, fields: str | None = None
) -> Watcher:
    """A watcher of the pods' kind, with the client's patience: failures that may pass are tried again every
    ``patience.retry`` seconds for ``patience.grace``, and not printed."""
    return Watcher(
        transport, kind, selector, change, fields=fields, report=_quiet, patience=patience.grace,
        backoff=patience.retry, backoff_max=patience.retry,
    )  # fmt: skip


def _quiet(message: str) -> None:
    """The client says nothing of failures it tries again; it raises those it gives up on."""


class Relay:
    """The follower's loop in a thread of its own, its lines handed to the caller's thread as they come."""

    def __init__(self) -> None:
        self._lines: queue.Queue[str | None] = queue.Queue()

    def put(self, line: str) -> None:
        self._lines.put(line)

    def lines(self, follow: FollowLogs, timeout: float | None, timed_out: str) -> Iterator[str]:
        """Each line of ``follow`` until it ends; TimeoutError(``timed_out``) after ``timeout`` seconds (the loop
        and its stream cut then), the ClusterError that ended it, if any. Closing the iterator ends the loop."""
        deadline = None if timeout is None else time.monotonic() + timeout
        failed: list[BaseException] = []

        def run() -> None:
            try:
                follow.run()
            except BaseException as e:
                failed.append(e)
            finally:
                self._lines.put(None)

        threading.Thread(target=run, name="hera-volcano-follow", daemon=True).start()
        try:
            while True:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    raise TimeoutError(timed_out)
                try:
                    line = self._lines.get(timeout=left)
                except queue.Empty:
                    raise TimeoutError(timed_out) from None
                if line is None:
                    break
                yield line
        finally:
            follow.close()
        if failed:
            raise failed[0]
        if follow.error is not None:
            raise cluster_error(follow.error)
