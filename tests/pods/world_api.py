"""The stand-in API server of the client's tests (``tests/client/recorded.World``), spoken to as the follower in a pod
speaks to the real one (``hera_volcano.pods.kubeapi.Api``): the same objects, faults and streams for both loops that
drive the follower's state machine."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from hera_volcano.client import resources
from hera_volcano.pods.kubeapi import JOBS, PODGROUPS, PODS, WHOLE_LOG, WORKFLOWS, ApiError, Kind, LogQuery
from hera_volcano.shared.errors import ClusterError
from tests.client.recorded import World

T = TypeVar("T")
KINDS = {PODS: resources.PODS, JOBS: resources.JOBS, PODGROUPS: resources.PODGROUPS, WORKFLOWS: resources.WORKFLOWS}


def _answer(call: Callable[[], T]) -> T:
    try:
        return call()
    except ClusterError as e:
        raise ApiError(e.status, e.reason, str(e)) from None


class _Lines:
    def __init__(self, lines: Any) -> None:
        self._lines = lines

    def __enter__(self) -> _Lines:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __iter__(self) -> Iterator[str]:
        it = iter(self._lines)
        while True:
            try:
                line = _answer(lambda: next(it, None))
            except ApiError:
                raise
            if line is None:
                return
            yield line

    def close(self) -> None:
        self._lines.close()


class WorldApi:
    """``World`` as the pod's API client sees the API server, in namespace ``namespace``."""

    def __init__(self, world: World, namespace: str = "argo") -> None:
        self.world = world
        self.namespace = namespace

    def get(self, kind: Kind, name: str) -> dict[str, Any]:
        return _answer(lambda: self.world.get(KINDS[kind], self.namespace, name))

    def list(self, kind: Kind, selector: str, fields: str | None = None) -> tuple[list[dict[str, Any]], str]:
        listing = _answer(lambda: self.world.list(KINDS[kind], self.namespace, labels=selector or None, fields=fields))
        return list(listing["items"]), str(listing["metadata"]["resourceVersion"])

    def delete(self, kind: Kind, name: str) -> None:
        _answer(lambda: self.world.delete(KINDS[kind], self.namespace, name))

    def patch(self, kind: Kind, name: str, body: dict[str, Any]) -> dict[str, Any]:
        return _answer(lambda: self.world.patch(KINDS[kind], self.namespace, name, body))

    def watch(self, kind: Kind, selector: str, version: str, seconds: int = 300, fields: str | None = None) -> _Lines:
        return _Lines(
            _answer(
                lambda: self.world.watch(
                    KINDS[kind],
                    self.namespace,
                    version=version,
                    seconds=seconds,
                    labels=selector or None,
                    fields=fields,
                )
            )
        )

    def log(self, pod: str, container: str, query: LogQuery = WHOLE_LOG) -> _Lines:
        options = {k: v for k, v in dataclasses.asdict(query).items() if v}
        return _Lines(_answer(lambda: self.world.log(self.namespace, pod, container, **options)))
