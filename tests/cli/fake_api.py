"""A stand-in Kubernetes API server over HTTP for the cluster commands, run as users run them (a subprocess with a
kubeconfig): Workflows, WorkflowTemplates and CronWorkflows per namespace, no Volcano Jobs, a 403 for namespace
``forbidden``.

Only what the commands ask: list (with a ``metadata.name`` field selector), get, create; a watch is answered with
nothing until the client hangs up, as a quiet API server answers it.
"""

from __future__ import annotations

import copy
import json
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

FORBIDDEN = "forbidden"
_PATH = re.compile(
    r"/apis/(?P<group>[^/]+)/(?P<version>[^/]+)/namespaces/(?P<ns>[^/]+)/(?P<plural>[^/]+)(?:/(?P<name>[^/]+))?"
)


@dataclass
class World:
    """What the server holds and what it was asked to create (namespace, body), in order."""

    objects: dict[tuple[str, str], dict[str, dict[str, Any]]] = field(default_factory=dict)
    created: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)

    def put(self, plural: str, namespace: str, obj: dict[str, Any]) -> None:
        obj = copy.deepcopy(obj)
        obj.setdefault("metadata", {})["namespace"] = namespace
        self.objects.setdefault((plural, namespace), {})[obj["metadata"]["name"]] = obj


def workflow(name: str, phase: str | None, created: str = "2024-05-01T10:00:00Z") -> dict[str, Any]:
    status: dict[str, Any] = {}
    if phase:
        status = {"phase": phase, "startedAt": created}
        if phase in ("Succeeded", "Failed", "Error"):
            status["finishedAt"] = created
    return {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Workflow",
        "metadata": {"name": name, "creationTimestamp": created, "resourceVersion": "7"},
        "spec": {"entrypoint": "main", "templates": [{"name": "main", "container": {"image": "busybox"}}]},
        "status": status,
    }


def _handler(world: World) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _send(self, code: int, body: dict[str, Any]) -> None:
            data = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _status(self, code: int, reason: str, message: str) -> None:
            self._send(code, {"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": message,
                              "reason": reason, "code": code})  # fmt: skip

        def _route(self) -> tuple[re.Match[str], dict[str, list[str]]] | None:
            url = urlparse(self.path)
            match = _PATH.fullmatch(url.path)
            if match is None:
                self._status(404, "NotFound", "the server could not find the requested resource")
                return None
            if match["ns"] == FORBIDDEN:
                user = "system:serviceaccount:ci:robot"
                self._status(
                    403,
                    "Forbidden",
                    f'{match["plural"]}.{match["group"]} is forbidden: User "{user}" cannot {self.command.lower()}'
                    f' resource "{match["plural"]}" in API group "{match["group"]}" in the namespace "{FORBIDDEN}"',
                )
                return None
            return match, parse_qs(url.query)

        def do_GET(self) -> None:
            routed = self._route()
            if routed is None:
                return
            match, query = routed
            held = world.objects.get((match["plural"], match["ns"]), {})
            if match["name"]:
                found = held.get(match["name"])
                if found is None:
                    self._status(404, "NotFound", f'{match["plural"]}.{match["group"]} "{match["name"]}" not found')
                else:
                    self._send(200, found)
                return
            if query.get("watch") == ["true"]:
                self._hold()
                return
            selector = (query.get("fieldSelector") or [""])[0]
            items = [o for name, o in sorted(held.items()) if not selector or selector == f"metadata.name={name}"]
            self._send(200, {"kind": "List", "apiVersion": "v1", "metadata": {"resourceVersion": "9"}, "items": items})

        def _hold(self) -> None:
            """A watch on which nothing happens: headers, then silence until the client or the test ends it."""
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.flush()
            world.stop.wait(120)

        def do_POST(self) -> None:
            routed = self._route()
            if routed is None:
                return
            match, _ = routed
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            world.created.append((match["ns"], body))
            made = copy.deepcopy(body)
            meta = made.setdefault("metadata", {})
            meta.setdefault("name", f"{meta.get('generateName', 'wf-')}x7k2p")
            meta["uid"] = f"uid-of-{meta['name']}"
            meta["creationTimestamp"] = "2024-05-01T10:00:00Z"
            world.put(match["plural"], match["ns"], made)
            self._send(201, made)

    return Handler


def serve(world: World) -> Iterator[str]:
    """Serve ``world`` on a free local port; yields the server's URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(world))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        world.stop.set()
        server.shutdown()
        server.server_close()


def kubeconfig(path: Path, server: str, namespace: str | None = None) -> Path:
    """A kubeconfig for ``server`` whose context names ``namespace`` (or none)."""
    context: dict[str, str] = {"cluster": "c", "user": "u"}
    if namespace:
        context["namespace"] = namespace
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": {"server": server, "insecure-skip-tls-verify": True}}],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [{"name": "x", "context": context}],
        "current-context": "x",
    }
    path.write_text(json.dumps(config))
    return path
