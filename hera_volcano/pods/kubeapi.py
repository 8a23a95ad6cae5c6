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
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar
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
T = TypeVar("T")
C = TypeVar("C", bound="Closing")


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

    @property
    def qualified(self) -> str:
        """``plural.group``, as RBAC and the API server's messages name it."""
        return f"{self.plural}.{self.group}" if self.group else self.plural


PODS = Kind("", "v1", "pods")
JOBS = Kind("batch.volcano.sh", "v1alpha1", "jobs")
PODGROUPS = Kind("scheduling.volcano.sh", "v1beta1", "podgroups")
#: Watched by the client's follower only (the pod's service account may not read workflows: ``CALLS``).
WORKFLOWS = Kind("argoproj.io", "v1alpha1", "workflows")
#: An object as the API server sends it (plain JSON).
Obj = dict[str, Any]


@dataclass(frozen=True)
class LogQuery:
    """Which part of a container's log to read: as it comes (``follow``), of its previous run, each line after its
    time (``timestamps``), from a time on (RFC 3339), its last ``tail`` lines."""

    follow: bool = False
    previous: bool = False
    timestamps: bool = False
    since_time: str | None = None
    tail: int | None = None


#: The whole log, as it is now.
WHOLE_LOG = LogQuery()


class LineStream(Protocol):
    """The lines of a streaming answer (a watch, a log); :meth:`close`, from any thread, ends a read in progress."""

    def __enter__(self) -> LineStream: ...

    def __exit__(self, *exc: object) -> None: ...

    def __iter__(self) -> Iterator[str]: ...

    def close(self) -> None: ...


class Transport(Protocol):
    """The calls the follower and the watchers make of one namespace of an API server; every failure an
    :class:`ApiError`. :class:`Api` is one (in a pod); ``hera_volcano.client.transport`` adapts the ``kubernetes``
    package to it (``Run.logs``, ``Run.wait``)."""

    namespace: str

    def get(self, kind: Kind, name: str) -> Obj: ...

    def list(self, kind: Kind, selector: str, fields: str | None = None) -> tuple[list[Obj], str]: ...

    def delete(self, kind: Kind, name: str) -> None: ...

    def patch(self, kind: Kind, name: str, body: Obj) -> Obj: ...

    def watch(
        self, kind: Kind, selector: str, version: str, seconds: int = ..., fields: str | None = None
    ) -> LineStream: ...

    def log(self, pod: str, container: str, query: LogQuery = ...) -> LineStream: ...


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


class Closing:
    """A stream that is a context manager: leaving it closes the stream."""

    def __enter__(self: C) -> C:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        raise NotImplementedError


class Lines(Closing):
    """The lines of a streaming answer; :meth:`close` (from any thread) ends a read in progress."""

    def __init__(self, connection: http.client.HTTPConnection, response: http.client.HTTPResponse) -> None:
        self._connection = connection
        self._response = response
        self._reading = False
        self.closed = False

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
        self, method: str, path: str, query: Mapping[str, str], read_timeout: float, patch: Obj | None = None
    ) -> tuple[http.client.HTTPSConnection, http.client.HTTPResponse]:
        """Send one request; an error answer raises :class:`ApiError`, and a 401 is tried once more with the token
        read again (it may have rotated)."""
        target = path + ("?" + urlencode(query) if query else "")
        for attempt in (1, 2):
            connection = http.client.HTTPSConnection(self.host, self.port, timeout=CONNECT_TIMEOUT, context=self._tls)
            try:
                headers = {"Authorization": f"Bearer {self._token.value()}", "Accept": "application/json"}
                data = None if patch is None else json.dumps(patch).encode("utf-8")
                if data is not None:
                    headers["Content-Type"] = "application/merge-patch+json"
                connection.connect()
                assert connection.sock is not None
                connection.sock.settimeout(read_timeout)
                connection.request(method, target, body=data, headers=headers)
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

    def _json(self, method: str, path: str, query: Mapping[str, str] | None = None, patch: Obj | None = None) -> Obj:
        connection, response = self._open(method, path, query or {}, self._timeout, patch)
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

    def get(self, kind: Kind, name: str) -> Obj:
        return self._json("GET", kind.path(self.namespace, name))

    def list(self, kind: Kind, selector: str, fields: str | None = None) -> tuple[list[Obj], str]:
        """The objects ``selector`` (and ``fields``) select, and the list's resource version (to watch from)."""
        data = self._json("GET", kind.path(self.namespace), _selectors(selector, fields))
        items = [i for i in data.get("items") or [] if isinstance(i, dict)]
        return items, str(_map(data.get("metadata")).get("resourceVersion") or "")

    def delete(self, kind: Kind, name: str) -> None:
        """Delete in the background (the garbage collector removes what the object owns)."""
        self._json("DELETE", kind.path(self.namespace, name), {"propagationPolicy": "Background"})

    def patch(self, kind: Kind, name: str, body: Obj) -> Obj:
        """A JSON merge patch (RFC 7386): ``body`` holds the fields to change."""
        return self._json("PATCH", kind.path(self.namespace, name), patch=body)

    def watch(
        self, kind: Kind, selector: str, version: str, seconds: int = WATCH_SECONDS, fields: str | None = None
    ) -> Lines:
        """The changes after ``version``, one JSON event a line; the server ends the stream after ``seconds``."""
        query = {
            **_selectors(selector, fields),
            "watch": "true",
            "resourceVersion": version,
            "allowWatchBookmarks": "true",
            "timeoutSeconds": str(seconds),
        }
        return Lines(*self._open("GET", kind.path(self.namespace), query, seconds + REQUEST_TIMEOUT))

    def log(self, pod: str, container: str, query: LogQuery = WHOLE_LOG) -> Lines:
        """One container's log (as it comes, with ``follow``), from ``since_time`` (RFC 3339) if given."""
        asked: dict[str, str] = {"container": container}
        for key, value in (("follow", query.follow), ("previous", query.previous), ("timestamps", query.timestamps)):
            if value:
                asked[key] = "true"
        if query.since_time is not None:
            asked["sinceTime"] = query.since_time
        if query.tail is not None:
            asked["tailLines"] = str(query.tail)
        timeout = LOG_IDLE_SECONDS if query.follow else self._timeout
        return Lines(*self._open("GET", PODS.path(self.namespace, pod, "log"), asked, timeout))


def _selectors(labels: str, fields: str | None) -> dict[str, str]:
    return {"labelSelector": labels, **({"fieldSelector": fields} if fields else {})}


def _read_quietly(response: http.client.HTTPResponse) -> bytes:
    try:
        return response.read(65536)
    except (OSError, http.client.HTTPException):
        return b""


def _map(value: object) -> Mapping[str, object]:
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


def transient(error: ApiError) -> bool:
    """Whether trying again may help (no answer, the server overloaded or restarting), rather than the server saying
    no."""
    return error.status is None or error.status == 429 or error.status >= 500


#: What a watcher hands over: ("LIST", [objects]) after each list, (event type, object) for each change, and
#: ("REFUSED", the error) when it gives up.
Change = Callable[[str, Any], None]


class _Stopped(Exception):
    """Raised in a watcher's thread that was about to call the API after :meth:`Watcher.stop`."""


class Watcher:
    """One collection, kept current in a thread of its own until :meth:`stop`: each list and each change goes to
    ``change``. A watch the server ends, or that breaks after the server answered, is resumed from the last version
    seen; one whose version expired (410) lists again; a call that fails in a way that may pass is reported and tried
    again after a back-off (``backoff`` s, doubling up to ``backoff_max``), for ``patience`` seconds (None: for
    ever). What cannot pass (RBAC refuses it: RBAC does not change while a pod waits; a bad request; anything else
    that ends the thread) stops the watcher and is kept in :attr:`refused` for its owner to end on. No call starts
    after :meth:`stop`."""

    def __init__(
        self,
        api: Transport,
        kind: Kind,
        selector: str,
        change: Change,
        *,
        report: Callable[[str], None],
        fields: str | None = None,
        seconds: int = WATCH_SECONDS,
        backoff: float = 1.0,
        backoff_max: float = WATCH_BACKOFF_MAX,
        patience: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._api = api
        self._kind = kind
        self._selector = selector
        self._fields = fields
        self._change = change
        self._report = report
        self._seconds = seconds
        self._backoff = (backoff, backoff_max)
        self._patience = patience
        self._clock = clock
        self._stopped = threading.Event()
        self._stream: LineStream | None = None
        self._version: str | None = None
        self._received = 0
        self._opened = 0
        self.refused: ApiError | None = None
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name=f"hera-volcano-watch-{kind.plural}", daemon=True)

    def describe(self) -> str:
        """The collection in words, for an error message."""
        selectors = ",".join(s for s in (self._selector, self._fields) if s)
        return f"{self._kind.qualified}{f' ({selectors})' if selectors else ''} in namespace {self._api.namespace}"

    def start(self) -> Watcher:
        self._thread.start()
        return self

    def stop(self, timeout: float = 2.0) -> None:
        with self._lock:
            self._stopped.set()
            stream = self._stream
        if stream is not None:
            stream.close()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    def _run(self) -> None:
        """However the thread ends, unless :meth:`stop` ended it, the owner learns why."""
        try:
            self._keep_watching()
        except _Stopped:
            pass
        except ApiError as e:
            self._give_up(e)
        except Exception as e:
            cause = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
            self._give_up(ApiError(None, "WatchFailed", f"the watch of {self.describe()} failed: {cause}"), e)
        finally:
            self._give_up(ApiError(None, "WatchFailed", f"the watch of {self.describe()} stopped unexpectedly"))

    def _give_up(self, error: ApiError, cause: BaseException | None = None) -> None:
        """Keep ``error`` and hand it over (the first one only, and nothing after :meth:`stop`)."""
        if self.refused is not None or self._stopped.is_set():
            return
        if cause is not None:
            error.__cause__ = cause
        self.refused = error
        self._change("REFUSED", error)

    def _keep_watching(self) -> None:
        backoff, failing = self._backoff[0], None
        while not self._stopped.is_set():
            received, opened = self._received, self._opened
            listed = received
            try:
                if self._version is None:
                    items, version = self._call(lambda: self._api.list(self._kind, self._selector, self._fields))
                    self._change("LIST", items)
                    self._version, self._received = version, self._received + 1
                    listed = self._received
                self._watch(self._version)
                failing = None
            except ApiError as e:
                if self._stopped.is_set():
                    return
                failing = None if self._received > received else failing
                if e.status == 410 or e.reason == "Expired":
                    self._version = None  # the version is gone from the server's history: list again
                    continue
                if not (e.reason in ("Unreachable", "Timeout") and self._opened > opened):  # broke once answered
                    failing = self._clock() if failing is None else failing
                    if e.status in REFUSED or not transient(e) or self._outlasted(failing):
                        self._report(f"watch {self._kind.plural}: {e}")
                        raise
                    self._report(f"watch {self._kind.plural}: {e}")
            if self._received == listed:  # a server (or proxy) that ends every watch at once is not asked in a loop
                self._stopped.wait(backoff)
                backoff = min(backoff * 2, self._backoff[1])
            else:
                backoff = self._backoff[0]

    def _outlasted(self, failing: float) -> bool:
        return self._patience is not None and self._clock() - failing > self._patience

    def _call(self, call: Callable[[], T]) -> T:
        """``call()``, unless :meth:`stop` came first."""
        if self._stopped.is_set():
            raise _Stopped
        return call()

    def _watch(self, version: str) -> None:
        """One watch request from ``version``, moving the version to resume from with each event."""
        stream = self._call(
            lambda: self._api.watch(self._kind, self._selector, version, self._seconds, fields=self._fields)
        )
        self._opened += 1
        with self._lock:
            self._stream = stream
            if self._stopped.is_set():
                stream.close()
        try:
            for line in stream:
                self._event(line)
        finally:
            with self._lock:
                self._stream = None
            stream.close()

    def _event(self, line: str) -> None:
        try:
            event = json.loads(line)
        except ValueError:
            return
        kind, obj = _map(event).get("type"), _map(event).get("object")
        if not isinstance(kind, str) or not isinstance(obj, dict):
            return
        if kind == "ERROR":
            code = obj.get("code")
            status = code if isinstance(code, int) else None
            raise ApiError(status, str(obj.get("reason") or "Error"), str(obj.get("message") or ""))
        self._version = str(_map(obj.get("metadata")).get("resourceVersion") or self._version)
        self._received += 1
        if kind != "BOOKMARK" and not self._stopped.is_set():
            self._change(kind, obj)


class Store:
    """The objects of each watched collection by name, and those deleted since watching began, as the watchers hand
    them over; :attr:`changed` is set at each change (and when a watcher gives up)."""

    def __init__(self, keys: Iterable[str]) -> None:
        self._objects: dict[str, dict[str, Obj]] = {key: {} for key in keys}
        self._deleted: dict[str, dict[str, Obj]] = {key: {} for key in self._objects}
        self._listed: set[str] = set()
        self._lock = threading.Lock()
        self.changed = threading.Event()

    def sink(self, key: str) -> Change:
        def change(kind: str, obj: Any) -> None:
            with self._lock:
                current, deleted = self._objects[key], self._deleted[key]
                if kind == "LIST":
                    fresh = {_name(o): o for o in obj}
                    deleted.update({n: o for n, o in current.items() if n not in fresh})
                    self._objects[key] = fresh
                    self._listed.add(key)
                elif kind == "DELETED":
                    current.pop(_name(obj), None)
                    deleted[_name(obj)] = obj
                elif kind != "REFUSED":  # the watcher keeps it; its owner ends on it
                    current[_name(obj)] = obj
                    deleted.pop(_name(obj), None)
            self.changed.set()

        return change

    @property
    def ready(self) -> bool:
        """Every collection has been listed once: what is absent now does not exist."""
        with self._lock:
            return self._listed == set(self._objects)

    def objects(self, key: str) -> list[Obj]:
        with self._lock:
            return list(self._objects[key].values())

    def deleted(self, key: str) -> list[Obj]:
        with self._lock:
            return list(self._deleted[key].values())


def _name(obj: Mapping[str, object]) -> str:
    return str(_map(obj.get("metadata")).get("name") or "")
