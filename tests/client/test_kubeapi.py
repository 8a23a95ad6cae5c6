"""KubeApi against a small HTTP server on the loopback interface, through the real ``kubernetes`` client: what it
asks for, how answers and failures become data or ClusterErrors, and how streams (watches, logs) come line by line,
break, and end when closed from another thread."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import kubernetes
import pytest

from hera_volcano import ClusterError
from hera_volcano.client import failures
from hera_volcano.client.kubeapi import KubeApi
from hera_volcano.client.resources import JOBS, NODES, WORKFLOWS
from tests.client.faults import EXPIRED, UNAVAILABLE
from tests.client.harness import BOUND, Background
from tests.client.recorded import error, load

Route = Callable[[BaseHTTPRequestHandler], None]
WORKFLOW_PATH = "/apis/argoproj.io/v1alpha1/namespaces/argo/workflows"
JOBS_PATH = "/apis/batch.volcano.sh/v1alpha1/namespaces/argo/jobs"


class Server:
    """Answers each request by the route of its path; remembers the requests (path and query)."""

    def __init__(self) -> None:
        self.routes: dict[str, Route] = {}
        self.requests: list[tuple[str, dict[str, list[str]]]] = []
        #: Set when the test is over: a route that holds its stream open lets go.
        self.over = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                url = urlsplit(self.path)
                server.requests.append((url.path, parse_qs(url.query)))
                server.routes.get(url.path, answer(404, "404 page not found", "text/plain"))(self)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, args=(0.01,), daemon=True).start()

    def close(self) -> None:
        self.over.set()
        self.httpd.shutdown()
        self.httpd.server_close()


def answer(code: int, body: str, content_type: str = "application/json") -> Route:
    def route(h: BaseHTTPRequestHandler) -> None:
        data = body.encode()
        h.send_response(code)
        h.send_header("Content-Type", content_type)
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        h.wfile.write(data)

    return route


def chunked(*parts: bytes | Callable[[], object], end: bool = True) -> Route:
    """A streaming answer (as the API server sends watches and followed logs): each part a chunk, or a callable
    to wait on between chunks; without ``end`` the connection is cut instead of the stream's last chunk."""

    def route(h: BaseHTTPRequestHandler) -> None:
        h.send_response(200)
        h.send_header("Content-Type", "application/json")
        h.send_header("Transfer-Encoding", "chunked")
        h.end_headers()
        h.wfile.flush()
        for part in parts:
            if callable(part):
                part()
                continue
            h.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
            h.wfile.flush()
        if end:
            h.wfile.write(b"0\r\n\r\n")
        else:
            h.close_connection = True

    return route


def event(kind: str, name: str, version: int) -> bytes:
    obj = {"metadata": {"name": name, "resourceVersion": str(version)}}
    return json.dumps({"type": kind, "object": obj}).encode() + b"\n"


@pytest.fixture
def server() -> Iterator[Server]:
    s = Server()
    yield s
    s.close()


@pytest.fixture
def api(server: Server) -> Iterator[KubeApi]:
    configuration = kubernetes.client.Configuration()
    configuration.host = f"http://127.0.0.1:{server.port}"
    configuration.retries = 0  # a refused connection is the client's to retry (Patience), not urllib3's
    a = KubeApi(kubernetes.client.ApiClient(configuration))
    yield a
    a.close()


def test_objects_come_as_the_plain_json_the_server_sent(server: Server, api: KubeApi) -> None:
    workflow = load("running/workflow.json")
    server.routes[f"{WORKFLOW_PATH}/w"] = answer(200, json.dumps(workflow))
    server.routes["/api/v1/nodes"] = answer(200, json.dumps({"items": [], "metadata": {"resourceVersion": "7"}}))
    assert api.get(WORKFLOWS, "argo", "w") == workflow
    assert api.list(NODES, None) == {"items": [], "metadata": {"resourceVersion": "7"}}


def test_every_core_read_the_client_makes_goes_through_the_kubernetes_package(server: Server, api: KubeApi) -> None:
    """Each core resource the client reads by name has its CoreV1Api call (the recorded API of the other tests
    does not go through the kubernetes package)."""
    from hera_volcano.client.resources import CONFIG_MAPS, PODS

    for resource, name in ((PODS, "p"), (CONFIG_MAPS, "hera-volcano-follower-x")):
        body = {"kind": "X", "metadata": {"name": name}}
        server.routes[f"/api/v1/namespaces/argo/{resource.plural}/{name}"] = answer(200, json.dumps(body))
        assert api.get(resource, "argo", name) == body


@pytest.mark.parametrize(
    ("code", "body", "content_type", "message", "reason"),
    [
        (*error("notfound-workflow"), "application/json", r"workflows\.argoproj\.io w not found", "NotFound"),
        (403, error("forbidden-create-workflows")[1], "application/json", "forbidden: system:serv", "Forbidden"),
        (503, json.dumps(UNAVAILABLE), "application/json", "unable to handle the request", "ServiceUnavailable"),
        (502, "Bad Gateway\n", "text/plain", r"cannot get workflows\.argoproj\.io w .*: Bad Gateway$", "HTTP502"),
        (404, "404 page not found", "text/plain", "are the Argo Workflows CRDs installed", "NotFound"),
        (200, "<html>a captive portal</html>", "text/html", "is not a JSON object: '<html>", "BadAnswer"),
        (200, "[1, 2]", "application/json", r"is not a JSON object: '\[1, 2\]'", "BadAnswer"),
    ],
)
def test_error_answers_are_cluster_errors_that_say_what_was_asked(
    server: Server, api: KubeApi, code: int, body: str, content_type: str, message: str, reason: str
) -> None:
    server.routes[f"{WORKFLOW_PATH}/w"] = answer(code, body, content_type)
    with pytest.raises(ClusterError, match=message) as raised:
        api.get(WORKFLOWS, "argo", "w")
    assert raised.value.reason == reason
    assert failures.transient(raised.value) == (code in (502, 503))


def test_no_server_is_a_transient_cluster_error_naming_the_host(server: Server, api: KubeApi) -> None:
    server.close()
    with pytest.raises(ClusterError, match=f"cannot reach the API server at http://127.0.0.1:{server.port}") as raised:
        api.get(WORKFLOWS, "argo", "w")
    assert failures.transient(raised.value)


def test_a_watch_asks_for_bookmarks_from_a_version_and_gives_each_line_as_it_comes(
    server: Server, api: KubeApi
) -> None:
    first_read = threading.Event()
    split = event("MODIFIED", "b", 12)
    server.routes[JOBS_PATH] = chunked(
        event("ADDED", "a", 11),
        lambda: first_read.wait(BOUND),  # the second line is sent only once the first was read
        split[:10],
        split[10:],  # one line in two chunks
    )
    lines: list[str] = []

    def read() -> None:
        with api.watch(JOBS, "argo", version="10", seconds=5, labels="a=b") as stream:
            for line in stream:
                lines.append(line)
                first_read.set()

    Background(read).result()
    assert [json.loads(line)["object"]["metadata"]["resourceVersion"] for line in lines] == ["11", "12"]
    [(path, query)] = server.requests
    assert path == JOBS_PATH
    assert {k: v[0] for k, v in query.items()} == {
        "watch": "true",
        "allowWatchBookmarks": "true",
        "resourceVersion": "10",
        "timeoutSeconds": "5",
        "labelSelector": "a=b",
    }


def test_a_watch_answered_410_is_a_cluster_error_with_that_status(server: Server, api: KubeApi) -> None:
    server.routes[JOBS_PATH] = answer(410, json.dumps(EXPIRED))
    with pytest.raises(ClusterError, match="too old resource version") as raised:
        api.watch(JOBS, "argo", version="1", seconds=5)
    assert raised.value.status == 410


def test_a_stream_cut_by_the_server_is_a_transient_cluster_error(server: Server, api: KubeApi) -> None:
    server.routes[JOBS_PATH] = chunked(event("ADDED", "a", 11), b'{"type":"MODIFIED","obj', end=False)
    lines: list[str] = []

    def read() -> None:
        with api.watch(JOBS, "argo", version="10", seconds=5) as stream:
            lines.extend(stream)

    with pytest.raises(ClusterError, match="cannot reach the API server") as raised:
        Background(read).result()
    assert failures.transient(raised.value)
    assert len(lines) == 1, "the cut-off line is not given"


def test_a_stream_closed_from_another_thread_ends_its_blocked_read_quietly(server: Server, api: KubeApi) -> None:
    server.routes["/api/v1/namespaces/argo/pods/p/log"] = chunked(
        b"2026-12-01T18:15:01Z one\n", lambda: server.over.wait(BOUND)
    )
    stream = api.log("argo", "p", "c", follow=True, timestamps=True)
    got_one = threading.Event()
    lines: list[str] = []

    def read() -> None:
        for line in stream:
            lines.append(line)
            got_one.set()

    reading = Background(read)
    assert got_one.wait(BOUND)
    stream.close()  # the server sends nothing more: only the close can end the read
    reading.result()
    assert lines == ["2026-12-01T18:15:01Z one"]
    [(_, query)] = server.requests
    assert {k: v[0] for k, v in query.items()} == {
        "container": "c",
        "follow": "true",
        "previous": "false",
        "timestamps": "true",
    }


def test_a_log_without_follow_is_read_to_its_end(server: Server, api: KubeApi) -> None:
    server.routes["/api/v1/namespaces/argo/pods/p/log"] = chunked(b"one\ntwo\nthree")
    with api.log("argo", "p", "c", tail=3) as stream:
        assert list(stream) == ["one", "two", "three"]
    [(_, query)] = server.requests
    assert query["tailLines"] == ["3"]


def test_a_refused_log_names_the_subresource(server: Server, api: KubeApi) -> None:
    server.routes["/api/v1/namespaces/argo/pods/p/log"] = answer(*error("forbidden-pods-log"))
    with pytest.raises(ClusterError, match=r"may not get pods/log in namespace argo") as raised:
        api.log("argo", "p", "c")
    assert (raised.value.verb, raised.value.resource) == ("get", "pods/log")
