"""The in-cluster API client that runs in pods (hera_volcano/pods/kubeapi.py), against a stand-in API server over real
HTTPS: the token read again as the kubelet rotates it and after a 401, the mounted CA checked, lists, watches that
the server ends or whose version expired, log streams from a time, bounded waits for a server that does not answer,
and a stream closed from another thread."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hera_volcano.pods import kubeapi
from hera_volcano.pods.kubeapi import JOBS, PODGROUPS, PODS, Api, ApiError, LogQuery, Token, Watcher
from tests.pods.https_server import Reply, Request, Server, events, serving, status

BOUND = 10.0


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    with serving(tmp_path) as s:
        yield s


def api(server: Server, **env: str) -> Api:
    return Api.in_cluster({**server.env(), **env}, str(server.account))


def pod(name: str, version: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "resourceVersion": version}}


def test_lists_in_the_pods_namespace_with_its_token_over_tls_checked_against_the_mounted_ca(server: Server) -> None:
    server.handler = lambda r: Reply(body={"metadata": {"resourceVersion": "7"}, "items": [pod("a", "5")]})
    items, version = api(server).list(JOBS, "hera-volcano/job=mpi")
    assert (items, version) == ([pod("a", "5")], "7")
    (request,) = server.requests
    assert request.path == "/apis/batch.volcano.sh/v1alpha1/namespaces/ns/jobs"
    assert request.query == {"labelSelector": "hera-volcano/job=mpi"}
    assert request.token == "token-1"


def test_a_server_whose_certificate_the_mounted_ca_did_not_sign_is_refused(server: Server, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    with serving(other):
        (server.account / "ca.crt").write_bytes((other / "serviceaccount" / "ca.crt").read_bytes())
    with pytest.raises(ApiError) as raised:
        api(server).get(PODS, "p")
    assert raised.value.reason == "Unreachable" and "CERTIFICATE_VERIFY_FAILED" in raised.value.message
    assert not server.requests


def test_paths_of_core_and_group_resources_and_the_namespace_given_instead() -> None:
    assert PODS.path("ns", "p-1", "log") == "/api/v1/namespaces/ns/pods/p-1/log"
    assert PODGROUPS.path("other", "j-uid") == "/apis/scheduling.volcano.sh/v1beta1/namespaces/other/podgroups/j-uid"


def test_the_namespace_variable_wins_over_the_mounted_one(server: Server) -> None:
    server.handler = lambda r: Reply(body={})
    api(server, NAMESPACE="other").get(PODS, "p")
    assert server.requests[0].path == "/api/v1/namespaces/other/pods/p"


def test_outside_a_pod_there_is_no_cluster(tmp_path: Path) -> None:
    with pytest.raises(ApiError, match="KUBERNETES_SERVICE_HOST"):
        Api.in_cluster({}, str(tmp_path))


def test_a_rotated_token_is_read_again_after_its_period(tmp_path: Path) -> None:
    path = tmp_path / "token"
    path.write_text("one\n")
    now = [0.0]
    token = Token(str(path), period=60, clock=lambda: now[0])
    assert token.value() == "one"
    path.write_text("two")
    now[0] = 59
    assert token.value() == "one", "read at most once a period"
    now[0] = 60
    assert token.value() == "two"


def test_a_token_file_that_cannot_be_read_keeps_the_last_token(tmp_path: Path) -> None:
    path = tmp_path / "token"
    path.write_text("one")
    now = [0.0]
    token = Token(str(path), period=60, clock=lambda: now[0])
    assert token.value() == "one"
    path.unlink()
    now[0] = 61
    assert token.value() == "one"
    path.write_text("")  # the kubelet writing it: empty for a moment
    now[0] = 200
    assert token.value() == "one"


def test_no_token_at_all_is_an_error_that_says_so(tmp_path: Path) -> None:
    with pytest.raises(ApiError, match="cannot read the service account token"):
        Token(str(tmp_path / "absent")).value()


def test_a_401_reads_the_token_again_and_tries_once_more(server: Server) -> None:
    valid = ["token-1"]
    server.handler = lambda r: Reply(body={"as": r.token}) if r.token in valid else status(401, "Unauthorized")
    client = api(server)
    assert client.get(PODS, "p") == {"as": "token-1"}
    (server.account / "token").write_text("token-2")  # rotated well within the period the client keeps a token
    valid[:] = ["token-2"]
    assert client.get(PODS, "p") == {"as": "token-2"}
    assert [r.token for r in server.requests] == ["token-1", "token-1", "token-2"]


def test_a_401_with_the_fresh_token_too_is_the_callers_error(server: Server) -> None:
    server.handler = lambda r: status(401, "Unauthorized", "invalid bearer token")
    with pytest.raises(ApiError) as raised:
        api(server).get(PODS, "p")
    assert (raised.value.status, raised.value.reason) == (401, "Unauthorized")
    assert len(server.requests) == 2


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (status(403, "Forbidden", 'pods "p" is forbidden'), (403, "Forbidden", 'pods "p" is forbidden')),
        (status(404, "NotFound", 'pods "p" not found'), (404, "NotFound", 'pods "p" not found')),
        (Reply(502, b"<html>Bad Gateway</html>"), (502, "502", "GET /api/v1/namespaces/ns/pods/p: <html>Bad Gateway")),
        (Reply(200, b"not json"), (200, "BadAnswer", "GET /api/v1/namespaces/ns/pods/p: the answer is not a JSON")),
    ],
)
def test_error_answers_say_what_the_server_said(server: Server, reply: Reply, expected: tuple[Any, ...]) -> None:
    server.handler = lambda r: reply
    with pytest.raises(ApiError) as raised:
        api(server).get(PODS, "p")
    got = raised.value
    assert (got.status, got.reason) == expected[:2] and got.message.startswith(expected[2])


def test_a_server_that_does_not_answer_is_given_up_after_the_timeout(server: Server) -> None:
    hang = threading.Event()
    server.handler = lambda r: Reply(hang=hang)
    client = Api.in_cluster(server.env(), str(server.account))
    client._timeout = 0.5
    started = time.monotonic()
    with pytest.raises(ApiError) as raised:
        client.get(PODS, "p")
    hang.set()
    assert raised.value.reason == "Timeout" and time.monotonic() - started < 3


def test_an_unreachable_server_is_an_error_without_an_answer(server: Server) -> None:
    with pytest.raises(ApiError) as raised:
        api(server, KUBERNETES_SERVICE_PORT="1").get(PODS, "p")
    assert (raised.value.status, raised.value.reason) == (None, "Unreachable")


def test_delete_lets_the_garbage_collector_take_what_the_job_owns(server: Server) -> None:
    server.handler = lambda r: Reply(body={"kind": "Status", "status": "Success"})
    api(server).delete(JOBS, "j-1")
    (request,) = server.requests
    assert (request.method, request.path) == ("DELETE", "/apis/batch.volcano.sh/v1alpha1/namespaces/ns/jobs/j-1")
    assert request.query == {"propagationPolicy": "Background"}


def test_a_log_from_a_time_with_timestamps_streamed_as_it_comes(server: Server) -> None:
    server.handler = lambda r: Reply(chunks=[b"2026-01-01T00:00:01Z one\n2026-01-01T00:00:02Z t", b"wo\n", b"last"])
    stream = api(server).log(
        "p", "mpimaster", LogQuery(follow=True, timestamps=True, since_time="2026-01-01T00:00:01Z")
    )
    assert list(stream) == ["2026-01-01T00:00:01Z one", "2026-01-01T00:00:02Z two", "last"]
    (request,) = server.requests
    assert request.path == "/api/v1/namespaces/ns/pods/p/log"
    assert request.query == {
        "container": "mpimaster",
        "follow": "true",
        "timestamps": "true",
        "sinceTime": "2026-01-01T00:00:01Z",
    }


def test_a_previous_log_tail(server: Server) -> None:
    server.handler = lambda r: Reply(chunks=[b"failed\n"])
    assert list(api(server).log("p", "init", LogQuery(previous=True, tail=20))) == ["failed"]
    assert server.requests[0].query == {"container": "init", "previous": "true", "tailLines": "20"}


def test_a_stream_closed_from_another_thread_ends_its_read_at_once(server: Server) -> None:
    release = threading.Event()

    def chunks() -> Iterator[bytes]:
        yield b"first\n"
        release.wait(BOUND)

    server.handler = lambda r: Reply(chunks=chunks())
    stream = api(server).log("p", "c", LogQuery(follow=True))
    got: list[str] = []
    reader = threading.Thread(target=lambda: got.extend(stream))
    reader.start()
    time.sleep(0.3)
    stream.close()
    reader.join(2)
    release.set()
    assert not reader.is_alive() and got == ["first"]


def test_a_stream_that_breaks_is_an_error_and_a_silent_one_times_out(server: Server, monkeypatch: Any) -> None:
    release = threading.Event()

    def silent() -> Iterator[bytes]:
        yield b"one\n"
        release.wait(BOUND)

    server.handler = lambda r: Reply(chunks=silent())
    monkeypatch.setattr(kubeapi, "LOG_IDLE_SECONDS", 0.5)
    got: list[str] = []
    with pytest.raises(ApiError) as raised:
        for line in api(server).log("p", "c", LogQuery(follow=True)):
            got.append(line)
    release.set()
    assert got == ["one"] and raised.value.reason == "Timeout"


# ---------------------------------------------------------------------------------------------------- watches


class Collection:
    """What a Watcher handed over, and a way to wait for it."""

    def __init__(self) -> None:
        self.changes: list[tuple[str, Any]] = []
        self.errors: list[str] = []
        self.cond = threading.Condition()

    def change(self, kind: str, obj: Any) -> None:
        with self.cond:
            self.changes.append((kind, obj))
            self.cond.notify_all()

    def report(self, message: str) -> None:
        self.errors.append(message)

    def expect(self, count: int) -> list[tuple[str, Any]]:
        with self.cond:
            assert self.cond.wait_for(lambda: len(self.changes) >= count, BOUND), self.changes
            return list(self.changes)


def watching(server: Server, seen: Collection, **options: Any) -> Watcher:
    return Watcher(api(server), PODS, "a=b", seen.change, report=seen.report, **options).start()


def test_a_watch_lists_then_watches_from_the_lists_version_and_resumes_after_the_server_ends_it(
    server: Server,
) -> None:
    def handle(r: Request) -> Reply:
        if r.query.get("watch") != "true":
            return Reply(body={"metadata": {"resourceVersion": "10"}, "items": [pod("a", "9")]})
        if r.query["resourceVersion"] == "10":  # the server ends it after one event and a bookmark
            bookmark = {"metadata": {"resourceVersion": "15"}}
            return Reply(chunks=events(("MODIFIED", pod("a", "11")), ("BOOKMARK", bookmark)))
        if r.query["resourceVersion"] == "15":
            return Reply(chunks=events(("DELETED", pod("a", "16"))))
        return Reply(hang=threading.Event())

    server.handler = handle
    seen = Collection()
    watcher = watching(server, seen)
    try:
        assert seen.expect(3) == [("LIST", [pod("a", "9")]), ("MODIFIED", pod("a", "11")), ("DELETED", pod("a", "16"))]
        deadline = time.monotonic() + BOUND
        while len([r for r in server.requests if r.query.get("watch")]) < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        watcher.stop()
    watches = [r.query for r in server.requests if r.query.get("watch")]
    assert [w["resourceVersion"] for w in watches[:3]] == ["10", "15", "16"]
    assert watches[0]["allowWatchBookmarks"] == "true" and int(watches[0]["timeoutSeconds"]) > 0
    assert not seen.errors


@pytest.mark.parametrize("how", ["answer", "event"])
def test_a_watch_whose_version_expired_lists_again(server: Server, how: str) -> None:
    lists = []

    def handle(r: Request) -> Reply:
        if r.query.get("watch") != "true":
            lists.append(r)
            version = "10" if len(lists) == 1 else "50"
            return Reply(body={"metadata": {"resourceVersion": version}, "items": [pod("a", version)]})
        if r.query["resourceVersion"] == "10":
            gone = status(410, "Expired", "too old resource version: 10 (40)")
            return gone if how == "answer" else Reply(chunks=events(("ERROR", gone.body)))
        return Reply(hang=threading.Event())

    server.handler = handle
    seen = Collection()
    watcher = watching(server, seen)
    try:
        assert seen.expect(2) == [("LIST", [pod("a", "10")]), ("LIST", [pod("a", "50")])]
    finally:
        watcher.stop()
    assert not seen.errors, "an expired version is no error worth reporting"


def test_a_failing_watch_backs_off_and_reports_each_failure(server: Server) -> None:
    server.handler = lambda r: status(503, "ServiceUnavailable", "the server is currently unable")
    seen = Collection()
    watcher = watching(server, seen, backoff_max=0.4)
    time.sleep(1.5)
    watcher.stop()
    # 1 s, then 0.4 s: two or three tries in 1.5 s, where a loop without a back-off makes hundreds.
    assert 2 <= len(server.requests) <= 4, server.requests
    assert seen.errors[0] == "watch pods: ServiceUnavailable: the server is currently unable"
    assert watcher.refused is None


@pytest.mark.parametrize("code", [401, 403])
def test_a_watch_the_server_refuses_is_asked_once_and_kept_as_refused(server: Server, code: int) -> None:
    server.handler = lambda r: status(code, "Forbidden", "pods is forbidden")
    seen = Collection()
    watcher = watching(server, seen, backoff_max=0.1)
    [(kind, error)] = seen.expect(1)
    time.sleep(0.5)
    watcher.stop()
    assert kind == "REFUSED" and watcher.refused is error and error.status == code
    # RBAC does not change between tries: asked once (a 401 once more, with the token read again).
    assert len(server.requests) == (2 if code == 401 else 1), server.requests
    assert seen.errors == ["watch pods: Forbidden: pods is forbidden"]


def test_stopping_a_watcher_ends_its_watch_in_progress(server: Server) -> None:
    def handle(r: Request) -> Reply:
        if r.query.get("watch") != "true":
            return Reply(body={"metadata": {"resourceVersion": "1"}, "items": []})
        return Reply(chunks=_forever())

    server.handler = handle
    seen = Collection()
    watcher = watching(server, seen)
    seen.expect(1)
    time.sleep(0.2)
    started = time.monotonic()
    watcher.stop()
    assert time.monotonic() - started < 1.5
    assert not watcher._thread.is_alive()


def _forever() -> Iterator[bytes]:
    while True:
        time.sleep(0.1)
        yield json.dumps({"type": "BOOKMARK", "object": {"metadata": {"resourceVersion": "1"}}}).encode() + b"\n"
