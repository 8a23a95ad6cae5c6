"""The stand-in API server of the client's tests (``tests/client/recorded.World``) served over real HTTPS
(``tests/pods/https_server.py``), so the pod's own API client (``hera_volcano.pods.kubeapi.Api``) talks to the same
objects, watches and log streams as the client's adapter does in the shared follower cases."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from hera_volcano.client.resources import JOBS, PODGROUPS, PODS, WORKFLOWS, Resource
from hera_volcano.pods.kubeapi import Api
from hera_volcano.shared.errors import ClusterError
from tests.client.recorded import Lines, World
from tests.pods.https_server import Reply, Request, serving

RESOURCES = {(r.group, r.plural): r for r in (PODS, JOBS, PODGROUPS, WORKFLOWS)}
NAMESPACE = "argo"


def _target(path: str) -> tuple[Resource, str | None, str | None]:
    """(resource, name, subresource) of an API path in the namespace."""
    parts = path.strip("/").split("/")
    group, rest = ("", parts[2:]) if parts[0] == "api" else (parts[1], parts[3:])
    assert rest[:2] == ["namespaces", NAMESPACE], path
    plural, name, sub = [*rest[2:], None, None][:3]
    return RESOURCES[(group, str(plural))], name, sub


def _streamed(lines: Lines) -> Iterator[bytes]:
    """A stream's lines as chunks; a stream that breaks breaks the connection, as a real one does."""
    try:
        for line in lines:
            yield line.encode() + b"\n"
    except ClusterError as e:
        raise ConnectionResetError(str(e)) from None


def _status(e: ClusterError) -> Reply:
    code = e.status or 503
    return Reply(code, {"kind": "Status", "reason": e.reason, "message": str(e), "code": code})


def answer(world: World, r: Request) -> Reply:
    resource, name, sub = _target(r.path)
    q = r.query
    try:
        if r.method == "DELETE":
            world.delete(resource, NAMESPACE, str(name))
            return Reply(body={})
        if r.method == "PATCH":
            assert r.content_type == "application/merge-patch+json", r.content_type
            return Reply(body=world.patch(resource, NAMESPACE, str(name), json.loads(r.body)))
        if sub == "log":
            flags = {key: True for key in ("follow", "previous", "timestamps") if q.get(key) == "true"}
            since = {"since_time": q["sinceTime"]} if "sinceTime" in q else {}
            tail = {"tail": int(q["tailLines"])} if "tailLines" in q else {}
            options: dict[str, object] = {**flags, **since, **tail}
            return Reply(chunks=_streamed(world.log(NAMESPACE, str(name), q["container"], **options)))
        if name is not None:
            return Reply(body=world.get(resource, NAMESPACE, name))
        labels, fields = q.get("labelSelector") or None, q.get("fieldSelector")
        if q.get("watch") == "true":
            watch = world.watch(
                resource, NAMESPACE, version=q["resourceVersion"], seconds=int(q["timeoutSeconds"]),
                labels=labels, fields=fields,
            )  # fmt: skip
            return Reply(chunks=_streamed(watch))
        return Reply(body=world.list(resource, NAMESPACE, labels=labels, fields=fields))
    except ClusterError as e:
        return _status(e)


@contextmanager
def world_api(world: World, folder: Path) -> Iterator[Api]:
    """The pod's API client, in namespace ``argo`` of ``world`` served over HTTPS."""
    with serving(folder, NAMESPACE) as server:
        server.handler = lambda request: answer(world, request)
        yield Api.in_cluster(server.env(), str(server.account))
