"""The thin part that talks to the API server, through the ``kubernetes`` package's typed calls: plain JSON in and
out (as the API sends it, so recorded objects and live ones are the same data), every failure a ClusterError.

Imported only by :class:`~hera_volcano.client.runs.Client`, which is where ``kubernetes`` is first needed.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote

from hera_volcano.client import failures
from hera_volcano.client.resources import CONFIG_MAPS, EVENTS, NODES, PODS, Resource
from hera_volcano.pods.kubeapi import Closing
from hera_volcano.shared.errors import ClusterError

#: (connect, read) seconds for a request that answers at once.
REQUEST_TIMEOUT = (10.0, 60.0)
#: Silence on a log stream this long ends it; the follower reattaches without repeating a line.
LOG_READ_TIMEOUT = 120.0
_SERVICE_ACCOUNT_NAMESPACE = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
T = TypeVar("T")


def _kubernetes() -> Any:
    try:
        import kubernetes
    except ImportError:
        raise ClusterError(
            "the Kubernetes client is not installed: pip install 'hera-volcano[cluster]'", reason="NoClient"
        ) from None
    return kubernetes


def _network_error(e: BaseException) -> bool:
    """A refused or broken connection, a timeout, a TLS failure: no answer from the server."""
    from urllib3.exceptions import HTTPError

    return isinstance(e, OSError | HTTPError)


def connect(kubeconfig: str | os.PathLike[str] | None, context: str | None) -> tuple[Any, str | None]:
    """An ``ApiClient`` and the namespace its configuration names (None when it names none): the pod's own service
    account inside a cluster (no kubeconfig or context given and ``KUBERNETES_SERVICE_HOST`` set), else the kubeconfig
    (``KUBECONFIG``, else ``~/.kube/config``) with its current or the given context."""
    kubernetes = _kubernetes()
    config, configuration = kubernetes.config, kubernetes.client.Configuration()
    try:
        if kubeconfig is None and context is None and os.environ.get("KUBERNETES_SERVICE_HOST"):
            config.load_incluster_config(client_configuration=configuration)
            with contextlib.suppress(OSError):
                return kubernetes.client.ApiClient(configuration), _SERVICE_ACCOUNT_NAMESPACE.read_text().strip()
            return kubernetes.client.ApiClient(configuration), None
        path = os.fspath(kubeconfig) if kubeconfig is not None else os.environ.get("KUBECONFIG") or "~/.kube/config"
        config.load_kube_config(config_file=path, context=context, client_configuration=configuration)
        contexts, current = config.list_kube_config_contexts(path)
        active = next((c for c in contexts if c.get("name") == context), current) if context else current
        namespace = (active or {}).get("context", {}).get("namespace")
    except (config.ConfigException, OSError, ValueError) as e:
        raise ClusterError(f"no usable Kubernetes configuration: {e}", reason="NoConfiguration") from None
    return kubernetes.client.ApiClient(configuration), str(namespace) if namespace else None


class _NotJson(Exception):
    """An answer that should be a JSON object and is not (a proxy's error page, a cut-off body)."""


class Stream(Closing):
    """The lines of a streaming answer (a watch, a log), closable from another thread to end a blocked read."""

    def __init__(self, response: Any, host: str) -> None:
        self._response = response
        self._host = host
        self._closed = False

    def __iter__(self) -> Iterator[str]:
        pending = b""
        try:
            for chunk in self._response.stream(amt=None, decode_content=True):
                pending += chunk
                *complete, pending = pending.split(b"\n")
                for line in complete:
                    yield line.decode("utf-8", "replace")
        except Exception as e:
            if self._closed:  # closed here, on purpose: the read it cut short is not a failure
                return
            if not _network_error(e):
                raise
            raise failures.unreachable(self._host, e) from None
        if pending and not self._closed:
            yield pending.decode("utf-8", "replace")

    def close(self) -> None:
        """Unblock a read in progress (urllib3 >= 2.3; otherwise the server's timeout ends it) and release."""
        self._closed = True
        with contextlib.suppress(Exception):
            self._response.shutdown()
        with contextlib.suppress(Exception):
            self._response.release_conn()


class KubeApi:
    """One API server: create, get, list, watch, patch and delete any of :mod:`~hera_volcano.client.resources`,
    and read pod logs."""

    def __init__(self, api_client: Any) -> None:
        kubernetes = _kubernetes()
        self._api_client = api_client
        self._core = kubernetes.client.CoreV1Api(api_client)
        self._custom = kubernetes.client.CustomObjectsApi(api_client)
        self._api_exception: type[Exception] = kubernetes.client.exceptions.ApiException
        # Any path at all (discovery, dry runs of any kind), without the typed APIs' checks made in the client.
        self._dynamic = kubernetes.dynamic.DynamicClient(api_client, discoverer=_NoDiscovery)
        self.host = str(api_client.configuration.host)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._api_client.close()

    # ------------------------------------------------------------------------------------------------- calls

    def _call(self, verb: str, resource: Resource, namespace: str | None, name: str | None, call: Callable[[], T]) -> T:
        """``call()``, its failures as ClusterErrors that say what was asked."""
        try:
            return call()
        except _NotJson as e:
            target = f"{resource.qualified} {name}" if name else resource.qualified
            raise ClusterError(
                f"cannot {verb} {target}: the answer of the API server at {self.host} is not a JSON object: {e}",
                reason="BadAnswer",
            ) from None
        except self._api_exception as e:
            raise failures.from_answer(
                getattr(e, "status", None),
                getattr(e, "body", None),
                verb=verb,
                resource=resource,
                namespace=namespace,
                name=name,
            ) from None
        except Exception as e:
            if not _network_error(e):
                raise
            raise failures.unreachable(self.host, e) from None

    @staticmethod
    def _json(response: Any) -> dict[str, Any]:
        text = (response.data or b"{}").decode("utf-8", "replace")
        try:
            data = json.loads(text)
        except ValueError:
            data = None
        if not isinstance(data, dict):
            raise _NotJson(repr(text[:80]))
        return data

    def _core_call(self, action: str, resource: Resource) -> Callable[..., Any]:
        """The CoreV1Api function for ``action`` (``list``, ``read``) on a core ``resource``."""
        names = {
            ("list", PODS): "list_namespaced_pod",
            ("read", PODS): "read_namespaced_pod",
            ("list", EVENTS): "list_namespaced_event",
            ("list", NODES): "list_node",
            ("read", NODES): "read_node",
            ("read", CONFIG_MAPS): "read_namespaced_config_map",
        }
        function: Callable[..., Any] = getattr(self._core, names[(action, resource)])
        return function

    def _scope(self, resource: Resource, namespace: str | None) -> tuple[Any, ...]:
        return (namespace,) if resource.namespaced else ()

    def get(self, resource: Resource, namespace: str | None, name: str) -> dict[str, Any]:
        def call() -> dict[str, Any]:
            if not resource.group:
                read = self._core_call("read", resource)
                return self._json(read(name, *self._scope(resource, namespace), **_PLAIN))
            kind = (resource.group, resource.version)
            if resource.namespaced:
                return self._json(
                    self._custom.get_namespaced_custom_object(*kind, namespace, resource.plural, name, **_PLAIN)
                )
            return self._json(self._custom.get_cluster_custom_object(*kind, resource.plural, name, **_PLAIN))

        return self._call("get", resource, namespace, name, call)

    def list(
        self, resource: Resource, namespace: str | None, *, labels: str | None = None, fields: str | None = None
    ) -> dict[str, Any]:
        """The List object (``items``, ``metadata.resourceVersion`` to watch from)."""
        selectors = {k: v for k, v in (("label_selector", labels), ("field_selector", fields)) if v}
        return self._call(
            "list",
            resource,
            namespace,
            None,
            lambda: self._json(self._lister(resource, namespace)(**selectors, **_PLAIN)),
        )

    def _lister(self, resource: Resource, namespace: str | None) -> Callable[..., Any]:
        if not resource.group:
            function = self._core_call("list", resource)
            return lambda **kw: function(*self._scope(resource, namespace), **kw)
        if resource.namespaced:
            return lambda **kw: self._custom.list_namespaced_custom_object(
                resource.group, resource.version, namespace, resource.plural, **kw
            )
        return lambda **kw: self._custom.list_cluster_custom_object(
            resource.group, resource.version, resource.plural, **kw
        )

    def watch(
        self,
        resource: Resource,
        namespace: str | None,
        *,
        version: str,
        seconds: int,
        labels: str | None = None,
        fields: str | None = None,
    ) -> Stream:
        """Changes after ``version``, one JSON event a line, for ``seconds`` (the server then ends the stream)."""
        selectors = {k: v for k, v in (("label_selector", labels), ("field_selector", fields)) if v}
        options = {
            **selectors,
            "watch": True,
            "allow_watch_bookmarks": True,
            "resource_version": version,
            "timeout_seconds": seconds,
            "_preload_content": False,
            "_request_timeout": (REQUEST_TIMEOUT[0], seconds + 30.0),
        }
        response = self._call("watch", resource, namespace, None, lambda: self._lister(resource, namespace)(**options))
        return Stream(response, self.host)

    def create(self, resource: Resource, namespace: str, body: dict[str, Any]) -> dict[str, Any]:
        args = (resource.group, resource.version, namespace, resource.plural, body)
        return self._call(
            "create",
            resource,
            namespace,
            None,
            lambda: self._json(self._custom.create_namespaced_custom_object(*args, **_PLAIN)),
        )

    def patch(self, resource: Resource, namespace: str, name: str, body: dict[str, Any]) -> dict[str, Any]:
        """A JSON merge patch: ``body`` is the fields to change."""
        args = (resource.group, resource.version, namespace, resource.plural, name, body)
        merge = {"_content_type": "application/merge-patch+json", **_PLAIN}
        return self._call(
            "patch",
            resource,
            namespace,
            name,
            lambda: self._json(self._custom.patch_namespaced_custom_object(*args, **merge)),
        )

    def delete(self, resource: Resource, namespace: str, name: str) -> None:
        """Delete in the background: the garbage collector removes what the object owns (its Volcano Jobs)."""
        args = (resource.group, resource.version, namespace, resource.plural, name)
        self._call(
            "delete",
            resource,
            namespace,
            name,
            lambda: self._custom.delete_namespaced_custom_object(*args, propagation_policy="Background", **_PLAIN),
        )

    def discover(self, group: str, version: str) -> dict[str, object] | None:
        """The ``APIResourceList`` of ``group``/``version`` (``""`` for core); None when the server serves neither."""
        path = f"/apis/{group}/{version}" if group else f"/api/{version}"

        def call() -> dict[str, object] | None:
            try:
                response = self._dynamic.request("get", path, serialize=False, _request_timeout=REQUEST_TIMEOUT)
            except self._api_exception as e:
                if getattr(e, "status", None) == 404:
                    return None
                raise
            return self._json(response)

        return self._call("discover", Resource(group, version, "resources", namespaced=False), None, None, call)

    def dry_run(
        self, resource: Resource, namespace: str | None, body: Mapping[str, object]
    ) -> tuple[int, dict[str, object]]:
        """Create ``body`` as a server-side dry run (``dryRun=All``, ``fieldValidation=Strict``, as kubectl asks it):
        the HTTP status and the answer, the object as it would be stored or the ``Status`` that says why not. Nothing
        is stored; only a failed connection raises."""
        base = f"/apis/{resource.group}/{resource.version}" if resource.group else f"/api/{resource.version}"
        scope = f"/namespaces/{quote(namespace, safe='')}" if namespace is not None else ""
        query = [("dryRun", "All"), ("fieldValidation", "Strict")]

        def call() -> tuple[int, dict[str, object]]:
            try:
                response = self._dynamic.request(
                    "post", f"{base}{scope}/{resource.plural}", body=body, query_params=query, serialize=False,
                    _request_timeout=REQUEST_TIMEOUT,
                )  # fmt: skip
            except self._api_exception as e:
                status = int(getattr(e, "status", 0) or 0)
                return status, dict(failures.status_body(getattr(e, "body", None))) or {"message": _first(e)}
            return int(response.status), self._json(response)

        return self._call("create", resource, namespace, None, call)

    def log(
        self,
        namespace: str,
        pod: str,
        container: str,
        *,
        follow: bool = False,
        previous: bool = False,
        tail: int | None = None,
        since_seconds: int | None = None,
        timestamps: bool = False,
    ) -> Stream:
        """One container's log, as it comes when ``follow``."""
        options: dict[str, Any] = {"container": container, "follow": follow, "previous": previous}
        options.update({k: v for k, v in (("tail_lines", tail), ("since_seconds", since_seconds)) if v is not None})
        options.update(timestamps=timestamps, _preload_content=False)
        options["_request_timeout"] = (REQUEST_TIMEOUT[0], LOG_READ_TIMEOUT if follow else REQUEST_TIMEOUT[1])
        response = self._call(
            "get", PODS, namespace, pod, lambda: self._core.read_namespaced_pod_log(pod, namespace, **options)
        )
        return Stream(response, self.host)


class _NoDiscovery:
    """The dynamic client's discoverer, left out: it would read every API group and cache them in a file."""

    def __init__(self, client: object, cache_file: object) -> None:
        pass


def _first(e: BaseException) -> str:
    """The first line of an error answer that is not a ``Status`` (a proxy's page, ``404 page not found``)."""
    body = getattr(e, "body", None)
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else str(body or "")
    lines = text.strip().splitlines()
    return lines[0] if lines else f"HTTP {getattr(e, 'status', '?')}"


#: Every call returns the raw answer, decoded here as JSON, so core and custom objects are the same plain data.
_PLAIN: dict[str, Any] = {"_preload_content": False, "_request_timeout": REQUEST_TIMEOUT}
