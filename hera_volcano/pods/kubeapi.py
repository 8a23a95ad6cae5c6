"""A small client of the Kubernetes API for code that runs in a pod, as the pod's service account: no kubectl (which
drops its in-cluster configuration as soon as a client flag is given, kubernetes/kubernetes#93474), no API
discovery, no package beyond the standard library.

The server is the one ``KUBERNETES_SERVICE_HOST``/``_PORT`` name, over TLS checked against the mounted CA; the token
file is read again every minute and after a 401, keeping the last good token when a read fails (the kubelet rotates
it in place). Every request has a bound: a connect timeout, a read timeout, a watch the server ends after its
``timeoutSeconds``. A stream (a watch, a log) can be closed from another thread, which ends a read in progress.
:class:`Watcher` keeps one collection current: it lists, watches from the list's version, resumes from the last
version seen when the server ends the watch, lists again on 410 Gone, and backs off when calls fail.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import socket
import ssl
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlencode

#: Where the kubelet mounts the pod's service account: token, CA and namespace.
SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
#: Seconds a token read from the file is used before the file is read again (client-go's period).
TOKEN_PERIOD = 60.0
#: Seconds to connect, and to wait for an answer that comes at once.
CONNECT_TIMEOUT = 10.0
REQUEST_TIMEOUT = 30.0
#: Seconds one watch request lasts before the server ends it (the next one resumes where it stopped).
WATCH_SECONDS = 300
#: Silence on a followed log this long ends its stream (the follower reattaches without repeating a line).
LOG_IDLE_SECONDS = 120.0
#: A failing watch backs off 1 s, doubling up to this.
WATCH_BACKOFF_MAX = 30.0
#: The same error is reported at most once in this many seconds.
REPORT_EVERY = 30.0


class ApiError(Exception):
    """A call that failed: ``status`` is the HTTP status (None when no answer came), ``reason`` the API's reason
    (``NotFound``, ``Expired``...) or ``Unreachable``/``Timeout``, ``message`` what the server said."""

    def __init__(self, status: int | None, reason: str, message: str) -> None:
        super().__init__(f"{reason}: {message}" if message else reason)
        self.status = status
        self.reason = reason
        self.message = message


@dataclass(frozen=True)
class Kind:
    """A namespaced resource: its group (``""`` for core), version and plural."""

    group: str
    version: str
    plural: str

    def path(self, namespace: str, name: str | None = None, sub: str | None = None) -> str:
        base = f"/api/{self.version}" if not self.group else f"/apis/{self.group}/{self.version}"
        path = f"{base}/namespaces/{quote(namespace, safe='')}/{self.plural}"
        if name is not None:
            path += "/" + quote(name, safe="")
        return path + ("/" + sub if sub else "")


PODS = Kind("", "v1", "pods")
JOBS = Kind("batch.volcano.sh", "v1alpha1", "jobs")
PODGROUPS = Kind("scheduling.volcano.sh", "v1beta1", "podgroups")


class Token:
    """The service account's token, read from its file at most every ``period`` seconds, and again after
    :meth:`expire` (a 401). A failed read keeps the last token."""

    def __init__(self, path: str, period: float = TOKEN_PERIOD, clock: Callable[[], float] = time.monotonic) -> None:
        self._path = path
        self._period = period
        self._clock = clock
        self._value: str | None = None
        self._read_at = 0.0
        self._lock = threading.Lock()

    def value(self) -> str:
        with self._lock:
            if self._value is None or self._clock() - self._read_at >= self._period:
                try:
                    with open(self._path, encoding="utf-8") as f:
                        text = f.read().strip()
                except OSError as e:
                    if self._value is None:
                        message = f"cannot read the service account token {self._path}: {e}"
                        raise ApiError(None, "NoToken", message) from None
                else:
                    if text:
                        self._value = text
                # A failed or empty read is tried again only after another period, not at every call.
                self._read_at = self._clock()
            if self._value is None:
                raise ApiError(None, "NoToken", f"the service account token {self._path} is empty")
            return self._value

    def expire(self) -> None:
        with self._lock:
            self._read_at = -self._period


class Lines:
    """The lines of a streaming answer; :meth:`close` (from any thread) ends a read in progress."""

    def __init__(self, connection: http.client.HTTPConnection, response: http.client.HTTPResponse) -> None:
        self._connection = connection
        self._response = response
        self._reading = False
        self.closed = False

    def __enter__(self) -> Lines:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __iter__(self) -> Iterator[str]:
        self._reading = True
        try:
            while True:
                raw = self._response.readline()
                if not raw:
                    return
                yield raw.decode("utf-8", "replace").rstrip("\n")
        except (OSError, http.client.HTTPException, ValueError, AttributeError) as e:
            if self.closed:  # closed on purpose (http.client may trip over its own closed file): no failure
                return
            if isinstance(e, TimeoutError):
                raise ApiError(None, "Timeout", "no data within the read timeout") from None
            raise ApiError(None, "Unreachable", f"the stream broke: {e}") from None
        finally:
            self._reading = False
            self.closed = True
            self._connection.close()

    def close(self) -> None:
        """End the stream: a read in progress in another thread returns (that thread releases the connection)."""
        self.closed = True
        sock = self._connection.sock
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        if not self._reading:
            self._connection.close()


class Api:
    """The API server at ``host``:``port`` (TLS checked against ``ca_file``), as ``token``, in ``namespace``."""

    def __init__(
        self, host: str, port: int, ca_file: str, token: Token, namespace: str, *, timeout: float = REQUEST_TIMEOUT
    ) -> None:
        self.host = host
        self.port = port
        self.namespace = namespace
        self._token = token
        self._timeout = timeout
        self._tls = ssl.create_default_context(cafile=ca_file)

    @classmethod
    def in_cluster(cls, env: Mapping[str, str] = os.environ, directory: str = SERVICE_ACCOUNT_DIR) -> Api:
        """The API server of the cluster the pod runs in, as the pod's service account, in its namespace (unless
        ``NAMESPACE`` names another)."""
        host = env.get("KUBERNETES_SERVICE_HOST", "")
        if not host:
            raise ApiError(None, "NoCluster", "KUBERNETES_SERVICE_HOST is not set: not running in a pod")
        port = int(env.get("KUBERNETES_SERVICE_PORT") or 443)
        namespace = env.get("NAMESPACE") or ""
        if not namespace:
            try:
                with open(os.path.join(directory, "namespace"), encoding="utf-8") as f:
                    namespace = f.read().strip()
            except OSError as e:
                raise ApiError(None, "NoNamespace", f"cannot read the pod's namespace: {e}") from None
        token = Token(os.path.join(directory, "token"))
        return cls(host, port, os.path.join(directory, "ca.crt"), token, namespace)

    # ---------------------------------------------------------------------------------------------- requests

    def _open(
        self, method: str, path: str, query: Mapping[str, Any], read_timeout: float
    ) -> tuple[http.client.HTTPSConnection, http.client.HTTPResponse]:
        """Send one request; an error answer raises :class:`ApiError`, and a 401 is tried once more with the token
        read again (it may have rotated)."""
        target = path + ("?" + urlencode(query) if query else "")
        for attempt in (1, 2):
            connection = http.client.HTTPSConnection(self.host, self.port, timeout=CONNECT_TIMEOUT, context=self._tls)
            try:
                headers = {"Authorization": f"Bearer {self._token.value()}", "Accept": "application/json"}
                connection.connect()
                assert connection.sock is not None
                connection.sock.settimeout(read_timeout)
                connection.request(method, target, headers=headers)
                response = connection.getresponse()
            except ApiError:
                connection.close()
                raise
            except TimeoutError:
                connection.close()
                raise ApiError(None, "Timeout", f"{method} {path}: no answer within the timeout") from None
            except (OSError, http.client.HTTPException) as e:
                connection.close()
                raise ApiError(None, "Unreachable", f"{method} {path}: {e}") from None
            if response.status < 300:
                return connection, response
            body = _read_quietly(response)
            connection.close()
            if response.status == 401 and attempt == 1:
                self._token.expire()
                continue
            raise _answer_error(response.status, body, f"{method} {path}")
        raise AssertionError("unreachable")  # pragma: no cover

    def _json(self, method: str, path: str, query: Mapping[str, Any] | None = None) -> dict[str, Any]:
        connection, response = self._open(method, path, query or {}, self._timeout)
        try:
            body = response.read()
        except (OSError, http.client.HTTPException) as e:
            raise ApiError(None, "Unreachable", f"{method} {path}: {e}") from None
        finally:
            connection.close()
        try:
            data = json.loads(body or b"{}")
        except ValueError:
            data = None
        if not isinstance(data, dict):
            raise ApiError(response.status, "BadAnswer", f"{method} {path}: the answer is not a JSON object")
        return data

    def get(self, kind: Kind, name: str) -> dict[str, Any]:
        return self._json("GET", kind.path(self.namespace, name))

    def list(self, kind: Kind, selector: str) -> tuple[list[dict[str, Any]], str]:
        """The objects ``selector`` selects, and the list's resource version (to watch from)."""
        data = self._json("GET", kind.path(self.namespace), {"labelSelector": selector})
        items = [i for i in data.get("items") or [] if isinstance(i, dict)]
        return items, str(_map(data.get("metadata")).get("resourceVersion") or "")

    def delete(self, kind: Kind, name: str) -> None:
        """Delete in the background (the garbage collector removes what the object owns)."""
        self._json("DELETE", kind.path(self.namespace, name), {"propagationPolicy": "Background"})

    def watch(self, kind: Kind, selector: str, version: str, seconds: int = WATCH_SECONDS) -> Lines:
        """The changes after ``version``, one JSON event a line; the server ends the stream after ``seconds``."""
        query = {
            "labelSelector": selector,
            "watch": "true",
            "resourceVersion": version,
            "allowWatchBookmarks": "true",
            "timeoutSeconds": str(seconds),
        }
        return Lines(*self._open("GET", kind.path(self.namespace), query, seconds + REQUEST_TIMEOUT))

    def log(
        self,
        pod: str,
        container: str,
        *,
        follow: bool = False,
        previous: bool = False,
        timestamps: bool = False,
        since_time: str | None = None,
        tail: int | None = None,
    ) -> Lines:
        """One container's log (as it comes, with ``follow``), from ``since_time`` (RFC 3339) if given."""
        query: dict[str, str] = {"container": container}
        for key, value in (("follow", follow), ("previous", previous), ("timestamps", timestamps)):
            if value:
                query[key] = "true"
        if since_time is not None:
            query["sinceTime"] = since_time
        if tail is not None:
            query["tailLines"] = str(tail)
        timeout = LOG_IDLE_SECONDS if follow else self._timeout
        return Lines(*self._open("GET", PODS.path(self.namespace, pod, "log"), query, timeout))


def _read_quietly(response: http.client.HTTPResponse) -> bytes:
    try:
        return response.read(65536)
    except (OSError, http.client.HTTPException):
        return b""


def _map(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _answer_error(status: int, body: bytes, what: str) -> ApiError:
    """The API's ``Status`` answer (or a proxy's page) as an :class:`ApiError`."""
    text = body.decode("utf-8", "replace")
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, dict) and data.get("kind") == "Status":
        return ApiError(status, str(data.get("reason") or status), str(data.get("message") or ""))
    reason = {401: "Unauthorized", 403: "Forbidden", 404: "NotFound", 410: "Expired"}.get(status, str(status))
    return ApiError(status, reason, f"{what}: {text.strip()[:200]}")


class Reporter:
    """Errors on stderr, the same message at most once every ``every`` seconds (a failing call is retried often)."""

    def __init__(self, every: float = REPORT_EVERY, clock: Callable[[], float] = time.monotonic) -> None:
        self._every = every
        self._clock = clock
        self._last: dict[str, float] = {}
        self._lock = threading.Lock()

    def __call__(self, message: str) -> None:
        with self._lock:
            now = self._clock()
            if now - self._last.get(message, -self._every) < self._every:
                return
            self._last[message] = now
        print(message, file=sys.stderr, flush=True)


#: The answers that do not change on a retry: the account lacks the right.
REFUSED = (401, 403)

#: What a watcher hands over: ("LIST", [objects]) after each list, (event type, object) for each change.
Change = Callable[[str, Any], None]


class Watcher:
    """One collection, kept current in a thread of its own until :meth:`stop`: each list and each change goes to
    ``change``. A watch the server ends is resumed from the last version seen; one whose version expired (410) lists
    again; a call that fails is reported and tried again after a back-off (1 s, doubling up to ``backoff_max``),
    except one the server refuses (401, 403): RBAC does not change while a pod waits, so the watcher stops and keeps
    the answer in :attr:`refused` for its owner to end on."""

    def __init__(
        self,
        api: Api,
        kind: Kind,
        selector: str,
        change: Change,
        *,
        report: Callable[[str], None],
        seconds: int = WATCH_SECONDS,
        backoff_max: float = WATCH_BACKOFF_MAX,
    ) -> None:
        self._api = api
        self._kind = kind
        self._selector = selector
        self._change = change
        self._report = report
        self._seconds = seconds
        self._backoff_max = backoff_max
        self._stopped = threading.Event()
        self._stream: Lines | None = None
        self._version: str | None = None
        self._brought = False
        self.refused: ApiError | None = None
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name=f"watch-{kind.plural}", daemon=True)

    def start(self) -> Watcher:
        self._thread.start()
        return self

    def stop(self, timeout: float = 2.0) -> None:
        self._stopped.set()
        with self._lock:
            stream = self._stream
        if stream is not None:
            stream.close()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    def _run(self) -> None:
        backoff = 1.0
        while not self._stopped.is_set():
            self._brought = False
            try:
                if self._version is None:
                    items, version = self._api.list(self._kind, self._selector)
                    self._change("LIST", items)
                    self._version, self._brought = version, True
                self._watch(self._version)
                backoff = 1.0
            except ApiError as e:
                if self._stopped.is_set():
                    return
                if e.status == 410 or e.reason == "Expired":
                    self._version = None  # the version is gone from the server's history: list again
                    continue
                self._report(f"watch {self._kind.plural}: {e}")
                if e.status in REFUSED:
                    self.refused = e
                    self._change("REFUSED", e)
                    return
                if not self._brought:
                    self._stopped.wait(backoff)
                    backoff = min(backoff * 2, self._backoff_max)
                continue
            if not self._brought:  # a server (or proxy) that ends every watch at once is not asked in a tight loop
                self._stopped.wait(1.0)

    def _watch(self, version: str) -> None:
        """One watch request from ``version``, moving the version to resume from with each event."""
        stream = self._api.watch(self._kind, self._selector, version, self._seconds)
        with self._lock:
            self._stream = stream
        if self._stopped.is_set():
            stream.close()
        try:
            for line in stream:
                try:
                    event = json.loads(line)
                except ValueError:
                    continue
                kind, obj = _map(event).get("type"), _map(event).get("object")
                if not isinstance(kind, str) or not isinstance(obj, dict):
                    continue
                if kind == "ERROR":
                    code = obj.get("code")
                    status = code if isinstance(code, int) else None
                    raise ApiError(status, str(obj.get("reason") or "Error"), str(obj.get("message") or ""))
                self._version = str(_map(obj.get("metadata")).get("resourceVersion") or self._version)
                self._brought = True
                if kind != "BOOKMARK" and not self._stopped.is_set():
                    self._change(kind, obj)
        finally:
            with self._lock:
                self._stream = None
