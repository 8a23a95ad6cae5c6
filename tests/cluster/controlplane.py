"""A real Kubernetes control plane (etcd + kube-apiserver) on loopback, for tests.

No kubelet, scheduler, controller-manager or webhooks run: objects are stored and validated (OpenAPI and CRD
schemas, strict field validation, admission plugins, RBAC) but nothing acts on them. Garbage collection does not
run either, so owner references with made-up uids are harmless and deleted namespaces stay Terminating.

    binaries = build()                      # cluster/build.sh: fast no-op when up to date
    with ControlPlane(binaries) as cp:      # etcd + kube-apiserver on free loopback ports
        cp.install_crds()                   # the pinned Argo and Volcano CRDs, waited for until served
        api = cp.api_client()               # kubernetes.client.ApiClient as a cluster admin
        cp.kubeconfig                       # a kubeconfig file for the same admin

Certificates and keys are made with the ``openssl`` command by cluster/e2e/pki.py (a CA, a serving certificate for
127.0.0.1, an admin client certificate in group system:masters, an EC service-account signing key), so that tests
need nothing beyond the ``kubernetes`` client package. Everything lives in one temporary directory, removed by
:meth:`stop` unless ``HERA_VOLCANO_KEEP_CLUSTER=1`` (then its path is printed, with the logs in it).

The ``kubernetes`` package is imported lazily, so that :func:`build` works and fails clearly without it.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

REPO_ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO_ROOT / "cluster" / "e2e"))  # the certificates are made as for the e2e cluster

from pki import PKI, PKIError  # noqa: E402

BUILD_SCRIPT = REPO_ROOT / "cluster" / "build.sh"
ADMIN_USER = "hera-volcano-admin"
SERVICE_ACCOUNT_ISSUER = "https://kubernetes.default.svc.cluster.local"
T = TypeVar("T")


class ControlPlaneError(RuntimeError):
    """The control plane could not be built, started or used; the message says why and where the logs are."""


@dataclass(frozen=True)
class Binaries:
    kube_apiserver: Path
    etcd: Path
    crds: tuple[Path, ...]


def cache_dir() -> Path:
    return Path(os.environ.get("HERA_VOLCANO_CLUSTER_CACHE") or REPO_ROOT / ".cache" / "cluster")


def build(timeout: float = 3600) -> Binaries:
    """Run cluster/build.sh (a fast no-op when up to date) and return what it made.

    Raises ControlPlaneError with the tail of the build output when it fails.
    """
    if shutil.which("go") is None:
        raise ControlPlaneError(
            "cannot build the test control plane: `go` is not on PATH (Go >= 1.26 is needed to build "
            "kube-apiserver and etcd with cluster/build.sh). Set HERA_VOLCANO_SKIP_CLUSTER=1 to skip the cluster tests."
        )
    try:
        proc = subprocess.run(
            ["bash", str(BUILD_SCRIPT), "control-plane"],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired as e:
        raise ControlPlaneError(f"cluster/build.sh did not finish within {timeout:.0f} s") from e
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-40:])
        raise ControlPlaneError(
            f"cluster/build.sh failed (exit {proc.returncode}); the cluster tests need its kube-apiserver and etcd. "
            f"Set HERA_VOLCANO_SKIP_CLUSTER=1 to skip them. Last output:\n{tail}"
        )
    out = cache_dir()
    crds_list = out / "crds" / "control-plane.list"
    binaries = Binaries(
        kube_apiserver=out / "bin" / "kube-apiserver",
        etcd=out / "bin" / "etcd",
        crds=tuple(Path(line) for line in crds_list.read_text().split("\n") if line.strip()),
    )
    for path in (binaries.kube_apiserver, binaries.etcd, *binaries.crds):
        if not path.is_file():
            raise ControlPlaneError(f"cluster/build.sh succeeded but {path} is missing")
    return binaries


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _die_with_parent() -> None:
    """In the child before exec: get SIGKILL when the test process dies, so no server outlives a killed run."""
    with contextlib.suppress(Exception):
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def make_pki(directory: Path) -> dict[str, Path]:
    """A throwaway CA, a serving cert for 127.0.0.1, an admin client cert (system:masters) and an SA key."""
    try:
        pki = PKI(directory)
        pki.server("server", ips=["127.0.0.1"], dns=["localhost"])
        pki.client("admin", ADMIN_USER, ["system:masters"])
    except PKIError as e:
        raise ControlPlaneError(str(e)) from e
    return {
        name: directory / name
        for name in ("ca.crt", "server.crt", "server.key", "admin.crt", "admin.key", "sa.key", "sa.pub")
    }


class ControlPlane:
    """etcd and kube-apiserver (RBAC authorization) on free loopback ports, in a temporary directory.

    Reusable: start once per test session (it takes a few seconds), give each test its own namespace.
    """

    def __init__(
        self,
        binaries: Binaries,
        *,
        extra_apiserver_args: Sequence[str] = (),
        startup_timeout: float = 120,
        keep: bool | None = None,
    ) -> None:
        self.binaries = binaries
        self.extra_apiserver_args = tuple(extra_apiserver_args)
        self.startup_timeout = startup_timeout
        self.keep = os.environ.get("HERA_VOLCANO_KEEP_CLUSTER") == "1" if keep is None else keep
        self.dir: Path | None = None
        self.pki: dict[str, Path] = {}
        self.port = 0
        self.etcd_port = 0
        self._procs: dict[str, subprocess.Popen[bytes]] = {}
        self._api_client: Any = None
        self._dynamic: Any = None

    # ------------------------------------------------------------------ lifecycle

    def __enter__(self) -> ControlPlane:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def server(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    @property
    def kubeconfig(self) -> Path:
        assert self.dir is not None, "not started"
        return self.dir / "kubeconfig"

    def log(self, name: str) -> Path:
        """The log file of `etcd` or `kube-apiserver`."""
        assert self.dir is not None, "not started"
        return self.dir / f"{name}.log"

    def start(self) -> ControlPlane:
        if self.dir is not None:
            raise ControlPlaneError("already started")
        self.dir = Path(tempfile.mkdtemp(prefix="hera-volcano-cluster-"))
        atexit.register(self.stop)
        try:
            self.pki = make_pki(self.dir / "pki")
            # A port picked here can be taken before the server binds it; then start again on new ports.
            for attempt in range(3):
                try:
                    self._start_etcd()
                    self._start_apiserver()
                    break
                except ControlPlaneError as e:
                    in_use = "address already in use" in str(e)
                    self._kill_all()
                    if not in_use or attempt == 2:
                        raise
            self._write_kubeconfig()
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        """Stop both servers and remove the temporary directory (kept if HERA_VOLCANO_KEEP_CLUSTER=1)."""
        self._kill_all()
        if self._api_client is not None:
            with contextlib.suppress(Exception):
                self._api_client.close()
            self._api_client = None
        self._dynamic = None
        if self.dir is not None:
            if self.keep:
                print(f"hera-volcano test control plane kept in {self.dir}", file=sys.stderr)
            else:
                shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None
        with contextlib.suppress(Exception):
            atexit.unregister(self.stop)

    def _kill_all(self) -> None:
        # apiserver first: it is etcd's client.
        for name in ("kube-apiserver", "etcd"):
            proc = self._procs.pop(name, None)
            if proc is None or proc.poll() is not None:
                continue
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=15)

    def _spawn(self, name: str, args: list[str]) -> subprocess.Popen[bytes]:
        assert self.dir is not None
        with open(self.log(name), "ab") as log:
            proc = subprocess.Popen(
                args,
                cwd=self.dir,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=_die_with_parent,
            )
        self._procs[name] = proc
        return proc

    def _failure(self, name: str, what: str) -> ControlPlaneError:
        tail = ""
        with contextlib.suppress(OSError):
            tail = "\n".join(self.log(name).read_text(errors="replace").splitlines()[-30:])
        where = "" if not self.keep else f" (logs kept in {self.dir})"
        return ControlPlaneError(f"{name} {what}{where}; last lines of its log:\n{tail}")

    def _wait(self, name: str, url: str, ok: Any, context: ssl.SSLContext | None = None) -> None:
        deadline = time.monotonic() + self.startup_timeout
        proc = self._procs[name]
        last = ""
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise self._failure(name, f"exited with code {proc.returncode} while starting")
            try:
                with urllib.request.urlopen(url, timeout=5, context=context) as response:
                    body = response.read().decode(errors="replace")
                    if ok(response.status, body):
                        return
                    last = body
            except urllib.error.HTTPError as e:
                last = e.read().decode(errors="replace")
            except (OSError, ValueError) as e:
                last = str(e)
            time.sleep(0.2)
        raise self._failure(name, f"was not ready within {self.startup_timeout:.0f} s ({url}: {last[-2000:]})")

    def _start_etcd(self) -> None:
        assert self.dir is not None
        self.etcd_port, peer = free_port(), free_port()
        client_url, peer_url = f"http://127.0.0.1:{self.etcd_port}", f"http://127.0.0.1:{peer}"
        data = self.dir / "etcd-data"
        shutil.rmtree(data, ignore_errors=True)
        self._spawn(
            "etcd",
            [
                str(self.binaries.etcd),
                "--name=test",
                f"--data-dir={data}",
                f"--listen-client-urls={client_url}",
                f"--advertise-client-urls={client_url}",
                f"--listen-peer-urls={peer_url}",
                f"--initial-advertise-peer-urls={peer_url}",
                f"--initial-cluster=test={peer_url}",
                "--unsafe-no-fsync",  # throwaway data: no fsync keeps the tests fast
                "--log-level=warn",
            ],
        )
        self._wait("etcd", f"{client_url}/health", lambda status, body: json.loads(body).get("health") == "true")

    def _start_apiserver(self) -> None:
        assert self.dir is not None
        self.port = free_port()
        pki = self.pki
        self._spawn(
            "kube-apiserver",
            [
                str(self.binaries.kube_apiserver),
                f"--etcd-servers=http://127.0.0.1:{self.etcd_port}",
                "--bind-address=127.0.0.1",
                "--advertise-address=127.0.0.1",
                f"--secure-port={self.port}",
                f"--cert-dir={self.dir / 'apiserver-certs'}",
                f"--tls-cert-file={pki['server.crt']}",
                f"--tls-private-key-file={pki['server.key']}",
                f"--client-ca-file={pki['ca.crt']}",
                "--authorization-mode=RBAC",
                "--anonymous-auth=false",
                f"--service-account-issuer={SERVICE_ACCOUNT_ISSUER}",
                f"--service-account-key-file={pki['sa.pub']}",
                f"--service-account-signing-key-file={pki['sa.key']}",
                "--service-cluster-ip-range=10.0.0.0/24",
                # The "kubernetes" Service's endpoints would be 127.0.0.1, which Endpoints validation rejects.
                "--endpoint-reconciler-type=none",
                *self.extra_apiserver_args,
            ],
        )
        context = self.ssl_context()
        self._wait("kube-apiserver", f"{self.server}/readyz", lambda status, body: status == 200, context)

    def ssl_context(self) -> ssl.SSLContext:
        """An SSL context that trusts the test CA and presents the admin client certificate."""
        context = ssl.create_default_context(cafile=str(self.pki["ca.crt"]))
        context.load_cert_chain(str(self.pki["admin.crt"]), str(self.pki["admin.key"]))
        return context

    def _write_kubeconfig(self) -> None:
        import yaml

        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {"name": "test", "cluster": {"server": self.server, "certificate-authority": str(self.pki["ca.crt"])}}
            ],
            "users": [
                {
                    "name": ADMIN_USER,
                    "user": {
                        "client-certificate": str(self.pki["admin.crt"]),
                        "client-key": str(self.pki["admin.key"]),
                    },
                }
            ],
            "contexts": [{"name": "test", "context": {"cluster": "test", "user": ADMIN_USER}}],
            "current-context": "test",
        }
        self.kubeconfig.write_text(yaml.safe_dump(config, sort_keys=False))

    # ------------------------------------------------------------------ clients

    def api_client(self) -> Any:
        """A kubernetes.client.ApiClient for the cluster admin (group system:masters), shared by callers."""
        if self._api_client is None:
            from kubernetes import config

            self._api_client = config.new_client_from_config(config_file=str(self.kubeconfig))
        return self._api_client

    def dynamic(self) -> Any:
        """A kubernetes.dynamic.DynamicClient for the admin (discovery cached in the temporary directory)."""
        if self._dynamic is None:
            from kubernetes.dynamic import DynamicClient

            assert self.dir is not None
            self._dynamic = DynamicClient(self.api_client(), cache_file=str(self.dir / "discovery.json"))
        return self._dynamic

    def service_account_client(self, namespace: str, name: str, *, create: bool = True) -> Any:
        """An ApiClient authenticated as a ServiceAccount, with a token from the TokenRequest API.

        Creates the ServiceAccount (and the namespace) first unless ``create`` is false.
        """
        from kubernetes import client

        core = client.CoreV1Api(self.api_client())
        if create:
            self.ensure_namespace(namespace)
            with contextlib.suppress(client.ApiException):
                core.create_namespaced_service_account(namespace, {"metadata": {"name": name}})
        token = core.create_namespaced_service_account_token(
            name, namespace, {"spec": {"expirationSeconds": 3600}}
        ).status.token
        configuration = client.Configuration()
        configuration.host = self.server
        configuration.ssl_ca_cert = str(self.pki["ca.crt"])
        configuration.api_key = {"authorization": token}
        configuration.api_key_prefix = {"authorization": "Bearer"}
        return client.ApiClient(configuration)

    # ------------------------------------------------------------------ helpers

    def ensure_namespace(self, name: str) -> None:
        from kubernetes import client

        core = client.CoreV1Api(self.api_client())
        try:
            core.create_namespace({"metadata": {"name": name}})
        except client.ApiException as e:
            if e.status != 409:
                raise

    def install_crds(self, paths: Iterable[Path] | None = None, timeout: float = 120) -> list[str]:
        """Create the CRDs (default: those cluster/build.sh resolved) and wait until each one is served.

        Returns the CRD names. Create, not apply: the Argo "full" CRDs are too large for the
        last-applied annotation of a client-side apply.
        """
        import yaml
        from kubernetes import client

        ext = client.ApiextensionsV1Api(self.api_client())
        crds: list[dict[str, Any]] = []
        for path in paths if paths is not None else self.binaries.crds:
            with open(path, encoding="utf-8") as f:
                loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
                crds.extend(d for d in yaml.load_all(f, Loader=loader) if d)
        for crd in crds:
            if crd.get("kind") != "CustomResourceDefinition":
                raise ControlPlaneError(f"not a CustomResourceDefinition: {crd.get('kind')} in the CRD files")
            try:
                ext.create_custom_resource_definition(crd)
            except client.ApiException as e:
                if e.status != 409:
                    raise ControlPlaneError(f"creating CRD {crd['metadata']['name']}: {e.status} {e.body}") from e
        deadline = time.monotonic() + timeout
        for crd in crds:
            self._wait_crd_served(crd, deadline)
        return [crd["metadata"]["name"] for crd in crds]

    def _wait_crd_served(self, crd: dict[str, Any], deadline: float) -> None:
        from kubernetes import client

        ext = client.ApiextensionsV1Api(self.api_client())
        name = crd["metadata"]["name"]
        spec = crd["spec"]
        versions = [v["name"] for v in spec["versions"] if v.get("served", True)]
        while True:
            live = ext.read_custom_resource_definition(name)
            conditions = {c.type: c.status for c in (live.status.conditions or [])}
            if conditions.get("NamesAccepted") == "False":
                raise ControlPlaneError(f"CRD {name}: names not accepted: {live.status.conditions}")
            if conditions.get("Established") == "True":
                # Established can precede the REST handler: list each served version until it answers.
                try:
                    for version in versions:
                        self.request(
                            "GET", f"/apis/{spec['group']}/{version}/{spec['names']['plural']}", query={"limit": "1"}
                        )
                    return
                except client.ApiException as e:
                    if e.status != 404:
                        raise
            if time.monotonic() > deadline:
                raise ControlPlaneError(f"CRD {name} was not established and served in time: {conditions}")
            time.sleep(0.1)

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        query: dict[str, str] | None = None,
        content_type: str = "application/json",
    ) -> Any:
        """A raw API call as the admin; returns the decoded JSON body (text if it is not JSON).

        Raises kubernetes.client.ApiException (a kubernetes.dynamic.exceptions.DynamicApiError) on an error status.
        """
        response = self.dynamic().request(
            method.lower(),
            path,
            body=body,
            query_params=list((query or {}).items()),
            header_params={"Accept": "application/json"},
            content_type=content_type,
            serialize=False,
        )
        data = response.data
        if not data:
            return None
        try:
            return json.loads(data)
        except ValueError:
            return data.decode(errors="replace")  # /readyz, /healthz and the like answer text

    def resource_path(self, obj: dict[str, Any], namespace: str | None = None, *, named: bool = True) -> str:
        """The REST path of an object (its collection if ``named`` is false), found through discovery."""
        resource = self.dynamic().resources.get(api_version=obj["apiVersion"], kind=obj["kind"])
        ns = None
        if resource.namespaced:
            ns = (obj.get("metadata") or {}).get("namespace") or namespace
            if not ns:
                raise ControlPlaneError(f"{obj['kind']} is namespaced: give it a namespace")
        name = (obj.get("metadata") or {}).get("name") if named else None
        return str(resource.path(name=name, namespace=ns))

    def create(
        self, obj: dict[str, Any], namespace: str | None = None, *, dry_run: bool = False, strict: bool = True
    ) -> Any:
        """POST an object (works with generateName). Strict field validation unless ``strict`` is false."""
        query = {"fieldValidation": "Strict" if strict else "Warn"}
        if dry_run:
            query["dryRun"] = "All"
        return self.request("POST", self.resource_path(obj, namespace, named=False), obj, query=query)

    def apply(
        self,
        obj: dict[str, Any],
        namespace: str | None = None,
        *,
        dry_run: bool = False,
        strict: bool = True,
        field_manager: str = "hera-volcano-tests",
    ) -> Any:
        """Server-side apply (needs metadata.name). Strict field validation unless ``strict`` is false.

        An undeclared field fails an apply even without strict validation, answered 500 "field not declared in
        schema" (create answers 400 "strict decoding error: unknown field").
        """
        query = {"fieldManager": field_manager, "force": "true", "fieldValidation": "Strict" if strict else "Warn"}
        if dry_run:
            query["dryRun"] = "All"
        return self.request(
            "PATCH", self.resource_path(obj, namespace), obj, query=query, content_type="application/apply-patch+yaml"
        )

    def delete(self, obj: dict[str, Any], namespace: str | None = None) -> Any:
        return self.request("DELETE", self.resource_path(obj, namespace))

    def can_i(
        self,
        user: str,
        verb: str,
        resource: str,
        *,
        namespace: str | None = None,
        group: str = "",
        subresource: str = "",
        groups: Sequence[str] | None = None,
    ) -> tuple[bool, str]:
        """A SubjectAccessReview: may ``user`` do ``verb`` on ``resource``? Returns (allowed, reason).

        For ``system:serviceaccount:NS:NAME`` the groups a real token carries are added unless given.
        """
        from kubernetes import client

        if groups is None:
            groups = ["system:authenticated"]
            if user.startswith("system:serviceaccount:"):
                sa_namespace = user.split(":")[2]
                groups += ["system:serviceaccounts", f"system:serviceaccounts:{sa_namespace}"]
        review = client.AuthorizationV1Api(self.api_client()).create_subject_access_review(
            {
                "apiVersion": "authorization.k8s.io/v1",
                "kind": "SubjectAccessReview",
                "spec": {
                    "user": user,
                    "groups": list(groups),
                    "resourceAttributes": {
                        "namespace": namespace or "",
                        "verb": verb,
                        "group": group,
                        "resource": resource,
                        "subresource": subresource,
                    },
                },
            }
        )
        return bool(review.status.allowed), review.status.reason or review.status.evaluation_error or ""

    def settle(self, check: Callable[[], T], expected: T, timeout: float = 10) -> T:
        """``check()`` until it returns ``expected`` or ``timeout`` passes; returns its last result.

        The RBAC authorizer reads Roles and bindings from an informer cache, so a SubjectAccessReview (or a real
        request) right after a RoleBinding is written can still see the old rules for a moment.
        """
        deadline = time.monotonic() + timeout
        while True:
            result = check()
            if result == expected or time.monotonic() > deadline:
                return result
            time.sleep(0.1)
