"""A real single-node Kubernetes cluster with Volcano and Argo Workflows, as host processes.

``Node(paths).up(argo_line)`` starts, from wiped state: etcd, kube-apiserver, kube-controller-manager,
kube-scheduler, containerd (Debian's, with runc and the CNI plugins), the kubelet, kube-proxy and CoreDNS; imports
the images cluster/images built; installs Volcano (CRDs, admission webhook, controller manager, scheduler) and one
Argo line (CRDs, workflow-controller). ``down()`` stops all of it and restores the host (see host.py).
``use_argo(line)`` swaps the Argo line (one controller at a time: its healthz port is fixed).

The settings that matter on these machines, and why, are listed in cluster/README.md.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import re
import shutil
import socket
import ssl
import subprocess
import time
from pathlib import Path
from typing import Any

import host
import layout as L
from api import Api, ApiError
from pki import PKI
from procs import Processes, StartError, http_ok

#: Stop order: what uses the API first, the API server and etcd last.
STOP_ORDER = (
    "workflow-controller",
    "kwok",
    "vc-scheduler",
    "vc-controller-manager",
    "vc-webhook-manager",
    "kubelet",
    "kube-proxy",
    "coredns",
    "kube-scheduler",
    "kube-controller-manager",
    "containerd",
    "kube-apiserver",
    "etcd",
)

ADMIN = "hera-volcano-e2e-admin"
#: What marks a fake node, and keeps every pod off it that does not ask for it.
FAKE_NODE_LABELS = {"type": "kwok"}
FAKE_NODE_TAINT = {"key": "kwok.x-k8s.io/node", "value": "fake", "effect": "NoSchedule"}


class Node:
    def __init__(self, paths: L.Paths | None = None) -> None:
        self.paths = paths or L.Paths()
        self.procs = Processes(self.paths)
        self._api: Api | None = None
        self.argo_line: str | None = None

    # ------------------------------------------------------------------------------------------ public

    @property
    def server(self) -> str:
        return f"https://{L.NODE_IP}:{L.APISERVER_PORT}"

    @property
    def api(self) -> Api:
        if self._api is None:
            pki = self.paths.pki
            self._api = Api(self.server, pki / "ca.crt", pki / "admin.crt", pki / "admin.key")
        return self._api

    def env(self) -> dict[str, str]:
        """What a shell needs to use the cluster: KUBECONFIG, and PATH with the built kubectl and argo first."""
        return {"KUBECONFIG": str(self.paths.kubeconfig), "PATH": f"{self.paths.bin}:{os.environ.get('PATH', '')}"}

    def running(self) -> bool:
        return bool(self.procs.running())

    def up(self, argo_line: str = L.DEFAULT_ARGO_LINE) -> None:
        """Start everything from wiped state. On failure, tear down what started and raise."""
        if self.running():
            raise host.HostError(f"a cluster is already running from {self.paths.home}: `make cluster-down` first")
        self._check_built(argo_line)
        host.preflight(self._ports())
        # Leftovers of a run that was killed before its teardown: restore from its record first.
        if self.paths.host_before.exists():
            self.down()
        if self.paths.state.exists():
            host.unmount_under([self.paths.state], [])
            shutil.rmtree(self.paths.state)
        self.paths.state.mkdir(parents=True)
        self.paths.logs.mkdir()
        host.save_snapshot(self.paths.host_before, self.paths.home)
        try:
            host.create_bridge()
            self._pki()
            self._start_etcd()
            self._start_apiserver()
            self._start_controllers()
            self._start_containerd()
            self._import_images()
            self._start_kubelet()
            self._start_kube_proxy()
            self._start_coredns()
            self._wait_default_service_account()
            self._install_volcano()
            self.use_argo(argo_line)
            self._link_clis()
        except BaseException:
            self.down()
            raise

    def down(self) -> list[str]:
        """Stop everything and restore the host. Returns what could not be restored (empty when all was)."""
        with contextlib.suppress(Exception):
            if self.procs.pid("kube-apiserver"):
                self._delete_webhooks()
        # The kubelet first among the node's parts: it would restart the containers killed below.
        for name in STOP_ORDER[: STOP_ORDER.index("kubelet") + 1]:
            self.procs.stop(name)
        host.stop_pids(host.cgroup_processes(host.cgroup_dirs()), timeout=5, sig=9)
        host.stop_pids(host.processes_with_argument(str(self.paths.containerd_socket)), timeout=10)
        self.procs.stop_all(STOP_ORDER)
        # Shims that outlived containerd.
        host.stop_pids(host.processes_with_argument(str(self.paths.containerd_socket)), timeout=5, sig=9)
        problems: list[str] = []
        if self.paths.host_before.exists():
            before = json.loads(self.paths.host_before.read_text())
            problems = host.restore(before, [self.paths.state])
            # Then check: everything recorded at start is as it was.
            problems += [p for p in host.compare(before, host.snapshot(self.paths.home)) if p not in problems]
            if not problems:
                self.paths.host_before.unlink()
        for heavy in ("containerd", "kubelet", "etcd"):
            shutil.rmtree(self.paths.state / heavy, ignore_errors=True)
        self._api = None
        return problems

    def use_argo(self, line: str) -> None:
        """Run Argo ``line``: stop the other controller, delete every workflow object with the CRDs (so nothing of
        one line is left for the other), install this line's CRDs and start its controller."""
        if line not in L.ARGO_LINES:
            raise ValueError(f"unknown Argo line {line}; choose one of {', '.join(L.ARGO_LINES)}")
        self._check_built(line)
        self.procs.stop("workflow-controller")
        crds = [
            c
            for c in self.api.get("/apis/apiextensions.k8s.io/v1/customresourcedefinitions")["items"]
            if c["spec"]["group"] == "argoproj.io"
        ]
        for crd in crds:
            with contextlib.suppress(ApiError):
                self.api.request(
                    "DELETE", f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{crd['metadata']['name']}"
                )
        self._wait(
            lambda: (
                not any(
                    self.api.exists(f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{c['metadata']['name']}")
                    for c in crds
                )
            ),
            "Argo CRDs deleted",
            120,
        )
        self._create_crds(self._crd_files(f"argo-{line}"))
        self._ensure_namespace(L.ARGO_NAMESPACE)
        self.api.apply(
            f"/api/v1/namespaces/{L.ARGO_NAMESPACE}/configmaps/{L.ARGO_CONFIGMAP}",
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": L.ARGO_CONFIGMAP, "namespace": L.ARGO_NAMESPACE},
                # Else a metrics server listens on :9090 on every interface, and telemetry on another port.
                "data": {"metricsConfig": "enabled: false\n", "telemetryConfig": "enabled: false\n"},
            },
        )
        flags, env = L.argo_settings()
        self.procs.spawn(
            "workflow-controller",
            [
                L.argo_binary(line, "workflow-controller"),
                f"--kubeconfig={self.paths.kubeconfig}",
                f"--namespace={L.ARGO_NAMESPACE}",
                f"--configmap={L.ARGO_CONFIGMAP}",
                f"--executor-image={L.executor_image(line)}",
                "--executor-image-pull-policy=IfNotPresent",
                "--loglevel=info",
                *(f"--{k}={v}" for k, v in flags.items()),
            ],
            env={"LEADER_ELECTION_DISABLE": "true", **env},
        )
        self.procs.wait(
            "workflow-controller", lambda: http_ok(f"http://127.0.0.1:{L.ARGO_HEALTHZ_PORT}/healthz"), "healthz", 120
        )
        self.argo_line = line
        (self.paths.state / "argo-line").write_text(line)
        self._link_clis()

    # ------------------------------------------------------------------------------------------ fake nodes

    def add_fake_nodes(
        self, count: int, *, gpus: int = 8, cpu: str = "64", memory: str = "512Gi", prefix: str = "kwok-node"
    ) -> list[str]:
        """``count`` fake GPU nodes beside the real one, kept Ready by kwok (started first: kubernetes-sigs/kwok#1572),
        labelled ``type: kwok`` and tainted ``kwok.x-k8s.io/node=fake:NoSchedule`` so that only pods that ask for
        them land there. Their pods move along kwok's Stages: a pod completes after the delay its annotation
        ``pod-complete.stage.kwok.x-k8s.io/delay`` gives."""
        if not self.procs.pid("kwok"):
            self._start_kwok()
        names = [f"{prefix}-{i}" for i in range(count)]
        resources = {"cpu": cpu, "memory": memory, "pods": "110", "nvidia.com/gpu": str(gpus)}
        for name in names:
            self.api.apply(
                f"/api/v1/nodes/{name}",
                {
                    "apiVersion": "v1",
                    "kind": "Node",
                    "metadata": {"name": name, "labels": {**FAKE_NODE_LABELS, "kubernetes.io/hostname": name}},
                    "spec": {"taints": [FAKE_NODE_TAINT]},
                    "status": {"capacity": resources, "allocatable": resources},
                },
            )
        self._wait(lambda: all(self._ready(n) for n in names), f"{count} fake nodes Ready", 120)
        return names

    def remove_fake_nodes(self) -> None:
        """Delete the fake nodes (their pods go with them) and stop kwok."""
        nodes = self.api.get("/api/v1/nodes?labelSelector=type%3Dkwok")["items"]
        for node in nodes:
            with contextlib.suppress(ApiError):
                self.api.request("DELETE", f"/api/v1/nodes/{node['metadata']['name']}")
        self.procs.stop("kwok")

    def _ready(self, node: str) -> bool:
        found = self.api.get(f"/api/v1/nodes/{node}")
        return any(c["type"] == "Ready" and c["status"] == "True" for c in found["status"].get("conditions", []))

    def _start_kwok(self) -> None:
        listing = L.BUILD / "kwok" / "stages.list"
        if not listing.is_file() or not L.built("kwok").is_file():
            raise host.HostError("kwok is not built: run `cluster/build.sh kwok`")
        stages = "---\n".join(Path(f).read_text() for f in listing.read_text().split())
        config = self._write("kwok/stages.yaml", stages)
        self.procs.spawn(
            "kwok",
            [
                L.built("kwok"), f"--kubeconfig={self.paths.kubeconfig}", f"--config={config}",
                "--manage-nodes-with-label-selector=type=kwok", f"--server-address=127.0.0.1:{L.KWOK_PORT}",
            ],
        )  # fmt: skip
        self.procs.wait("kwok", lambda: http_ok(f"http://127.0.0.1:{L.KWOK_PORT}/healthz"), "healthz", 60)

    def current_argo_line(self) -> str | None:
        with contextlib.suppress(OSError):
            return (self.paths.state / "argo-line").read_text().strip()
        return None

    # ------------------------------------------------------------------------------------------ helpers

    def _check_built(self, argo_line: str) -> None:
        needed = [
            L.built(n)
            for n in (
                "etcd",
                "kube-apiserver",
                "kube-controller-manager",
                "kube-scheduler",
                "kubelet",
                "kube-proxy",
                "kubectl",
                "coredns",
                "vc-scheduler",
                "vc-controller-manager",
                "vc-webhook-manager",
            )
        ]
        needed += [L.argo_binary(argo_line, n) for n in ("workflow-controller", "argoexec", "argo")]
        missing = [str(p) for p in needed if not p.is_file()]
        if missing:
            raise host.HostError(f"not built: {', '.join(missing)}: run `cluster/build.sh node` (or `make test-e2e`)")

    @staticmethod
    def _ports() -> list[tuple[str, int]]:
        loop = "127.0.0.1"
        return [
            (loop, L.ETCD_PORT), (loop, L.ETCD_PEER_PORT), (L.NODE_IP, L.APISERVER_PORT),
            (loop, L.CONTROLLER_MANAGER_PORT), (loop, L.SCHEDULER_PORT), (L.NODE_IP, L.KUBELET_PORT),
            (loop, L.KUBELET_HEALTHZ_PORT), (loop, L.KUBE_PROXY_HEALTHZ_PORT), (loop, L.KUBE_PROXY_METRICS_PORT),
            (loop, L.COREDNS_HEALTH_PORT), (loop, L.COREDNS_READY_PORT), (loop, L.VOLCANO_WEBHOOK_PORT),
            (loop, L.VOLCANO_SCHEDULER_HEALTHZ_PORT), (loop, L.VOLCANO_SCHEDULER_METRICS_PORT),
            (loop, L.VOLCANO_CONTROLLER_HEALTHZ_PORT), (loop, L.VOLCANO_CONTROLLER_METRICS_PORT),
            (loop, L.VOLCANO_WEBHOOK_HEALTHZ_PORT), ("0.0.0.0", L.ARGO_HEALTHZ_PORT), (loop, L.KWOK_PORT),
        ]  # fmt: skip

    def _wait(self, ready: Any, what: str, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        last: Exception | None = None
        while time.monotonic() < deadline:
            try:
                if ready():
                    return
            except Exception as e:
                last = e
            time.sleep(0.2)
        raise StartError(
            f"timed out after {timeout:.0f} s waiting for {what}" + (f" (last error: {last})" if last else "")
        )

    def _write(self, name: str, text: str) -> Path:
        path = self.paths.state / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return path

    def _kubeconfig(self, name: str, cert: str) -> Path:
        pki = self.paths.pki
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {"name": "e2e", "cluster": {"server": self.server, "certificate-authority": str(pki / "ca.crt")}}
            ],
            "users": [
                {
                    "name": name,
                    "user": {"client-certificate": str(pki / f"{cert}.crt"), "client-key": str(pki / f"{cert}.key")},
                }
            ],
            "contexts": [{"name": "e2e", "context": {"cluster": "e2e", "user": name}}],
            "current-context": "e2e",
        }
        return self._write(f"kubeconfigs/{name}.json", json.dumps(config, indent=1))

    def _kubectl(self, *args: str, input: str | None = None) -> str:
        proc = subprocess.run(
            [str(L.built("kubectl")), f"--kubeconfig={self.paths.kubeconfig}", *args],
            capture_output=True, text=True, input=input, check=False,
        )  # fmt: skip
        if proc.returncode != 0:
            raise StartError(f"kubectl {' '.join(args)} failed: {proc.stderr.strip()}")
        return proc.stdout

    def _ensure_namespace(self, name: str) -> None:
        self.api.apply(
            f"/api/v1/namespaces/{name}", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
        )

    def _crd_files(self, name: str) -> list[Path]:
        listing = L.BUILD / "crds" / f"{name}.list"
        if not listing.is_file():
            raise host.HostError(f"{listing} is missing: run `cluster/build.sh crds`")
        return [Path(line) for line in listing.read_text().split() if line]

    def _create_crds(self, files: list[Path]) -> None:
        """Create (not apply: the Argo CRDs are too large for the last-applied annotation) and wait until served."""
        for f in files:
            self._kubectl("create", "-f", str(f))
        names = []
        for f in files:
            text = f.read_text()
            names += re.findall(r"^  name: (\S+)$", text, re.MULTILINE)[:1]
        for name in names:
            self._wait(lambda n=name: self._crd_established(n), f"CRD {name} established", 120)

    def _crd_established(self, name: str) -> bool:
        crd = self.api.get(f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}")
        conditions = {c["type"]: c["status"] for c in crd.get("status", {}).get("conditions", [])}
        if conditions.get("Established") != "True":
            return False
        spec = crd["spec"]
        version = next(v["name"] for v in spec["versions"] if v.get("served", True))
        return self.api.exists(f"/apis/{spec['group']}/{version}/{spec['names']['plural']}?limit=1")

    def _link_clis(self) -> None:
        """`.cache/e2e/bin/` holds kubectl and the argo CLI of the running line, for a person's PATH."""
        self.paths.bin.mkdir(parents=True, exist_ok=True)
        line = self.current_argo_line() or L.DEFAULT_ARGO_LINE
        for name, target in (("kubectl", L.built("kubectl")), ("argo", L.argo_binary(line, "argo"))):
            link = self.paths.bin / name
            if link.is_symlink() or link.exists():
                link.unlink()
            link.symlink_to(target)

    # ------------------------------------------------------------------------------------------ control plane

    def _pki(self) -> None:
        pki = PKI(self.paths.pki)
        pki.server(
            "apiserver",
            ips=[L.NODE_IP, "127.0.0.1", L.SERVICE_IP],
            dns=["kubernetes", "kubernetes.default", "kubernetes.default.svc",
                 f"kubernetes.default.svc.{L.CLUSTER_DOMAIN}",
                 "localhost"],
        )  # fmt: skip
        pki.server("kubelet", ips=[L.NODE_IP], dns=[L.NODE_NAME])
        pki.server("volcano-webhook", ips=["127.0.0.1"], dns=["localhost"])
        pki.client("admin", ADMIN, ["system:masters"])
        pki.client("apiserver-kubelet", "hera-volcano-e2e:apiserver-kubelet-client", ["system:masters"])
        pki.client("controller-manager", "system:kube-controller-manager")
        pki.client("scheduler", "system:kube-scheduler")
        pki.client("kube-proxy", "system:kube-proxy")
        pki.client("node", f"system:node:{L.NODE_NAME}", ["system:nodes"])
        pki.client("coredns", "hera-volcano-e2e:coredns")
        self.paths.kubeconfig.parent.mkdir(parents=True, exist_ok=True)
        admin = self._kubeconfig("admin", "admin")
        tmp = self.paths.kubeconfig.with_suffix(".tmp")
        shutil.copy(admin, tmp)
        tmp.rename(self.paths.kubeconfig)

    def _start_etcd(self) -> None:
        client, peer = f"http://127.0.0.1:{L.ETCD_PORT}", f"http://127.0.0.1:{L.ETCD_PEER_PORT}"
        self.procs.spawn(
            "etcd",
            [
                L.built("etcd"), "--name=e2e", f"--data-dir={self.paths.state / 'etcd'}",
                f"--listen-client-urls={client}", f"--advertise-client-urls={client}",
                f"--listen-peer-urls={peer}", f"--initial-advertise-peer-urls={peer}", f"--initial-cluster=e2e={peer}",
                "--unsafe-no-fsync", "--log-level=warn",
            ],
        )  # fmt: skip
        self.procs.wait("etcd", lambda: http_ok(f"{client}/health"), "health")

    def _start_apiserver(self) -> None:
        pki = self.paths.pki
        policy = self._write(
            "audit-policy.json",
            json.dumps({
                "apiVersion": "audit.k8s.io/v1",
                "kind": "Policy",
                "omitStages": ["RequestReceived"],
                # What the workflows' own pods ask of the API server (their service accounts): the load they cause.
                "rules": [{"level": "Metadata", "userGroups": ["system:serviceaccounts"]}, {"level": "None"}],
            }),
        )  # fmt: skip
        self.procs.spawn(
            "kube-apiserver",
            [
                L.built("kube-apiserver"),
                f"--etcd-servers=http://127.0.0.1:{L.ETCD_PORT}",
                f"--bind-address={L.NODE_IP}", f"--advertise-address={L.NODE_IP}", f"--secure-port={L.APISERVER_PORT}",
                f"--cert-dir={self.paths.state / 'apiserver-certs'}",
                f"--tls-cert-file={pki / 'apiserver.crt'}", f"--tls-private-key-file={pki / 'apiserver.key'}",
                f"--client-ca-file={pki / 'ca.crt'}",
                f"--kubelet-client-certificate={pki / 'apiserver-kubelet.crt'}",
                f"--kubelet-client-key={pki / 'apiserver-kubelet.key'}",
                f"--kubelet-certificate-authority={pki / 'ca.crt'}",
                "--kubelet-preferred-address-types=InternalIP",
                "--authorization-mode=Node,RBAC", "--anonymous-auth=false",
                "--enable-admission-plugins=NodeRestriction",
                "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
                f"--service-account-key-file={pki / 'sa.pub'}", f"--service-account-signing-key-file={pki / 'sa.key'}",
                f"--service-cluster-ip-range={L.SERVICE_CIDR}",
                f"--audit-policy-file={policy}", f"--audit-log-path={self.paths.audit_log}", "--audit-log-format=json",
                "--profiling=false",
            ],
        )  # fmt: skip
        context = ssl.create_default_context(cafile=str(pki / "ca.crt"))
        context.load_cert_chain(str(pki / "admin.crt"), str(pki / "admin.key"))
        self.procs.wait("kube-apiserver", lambda: http_ok(f"{self.server}/readyz", context), "readyz")

    def _start_controllers(self) -> None:
        pki = self.paths.pki
        cm = self._kubeconfig("kube-controller-manager", "controller-manager")
        self.procs.spawn(
            "kube-controller-manager",
            [
                L.built("kube-controller-manager"),
                f"--kubeconfig={cm}", f"--authentication-kubeconfig={cm}", f"--authorization-kubeconfig={cm}",
                "--bind-address=127.0.0.1", f"--secure-port={L.CONTROLLER_MANAGER_PORT}",
                f"--cert-dir={self.paths.state / 'controller-manager-certs'}", "--leader-elect=false",
                f"--service-account-private-key-file={pki / 'sa.key'}", f"--root-ca-file={pki / 'ca.crt'}",
                "--use-service-account-credentials=true", f"--service-cluster-ip-range={L.SERVICE_CIDR}",
            ],
        )  # fmt: skip
        sched = self._kubeconfig("kube-scheduler", "scheduler")
        self.procs.spawn(
            "kube-scheduler",
            [
                L.built("kube-scheduler"),
                f"--kubeconfig={sched}", f"--authentication-kubeconfig={sched}", f"--authorization-kubeconfig={sched}",
                "--bind-address=127.0.0.1", f"--secure-port={L.SCHEDULER_PORT}", "--leader-elect=false",
            ],
        )  # fmt: skip

    # ------------------------------------------------------------------------------------------ node

    def _start_containerd(self) -> None:
        root = self.paths.state / "containerd"
        config = f"""\
version = 2
root = "{root / "root"}"
state = "{root / "state"}"
oom_score = 0
[grpc]
  address = "{self.paths.containerd_socket}"
[ttrpc]
  address = "{root / "containerd.sock.ttrpc"}"
[debug]
  address = ""
[metrics]
  address = ""
[plugins."io.containerd.internal.v1.opt"]
  path = "{root / "opt"}"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "registry.k8s.io/pause:3.10.2"
  # Root here lacks CAP_SYS_RESOURCE: a pod sandbox's default oom_score_adj of -998 makes runc fail.
  restrict_oom_score_adj = true
  enable_selinux = false
  disable_apparmor = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "{self.paths.state / "cni" / "net.d"}"
"""
        self._write("containerd/config.toml", config)
        self._write(
            "cni/net.d/10-e2e.conflist",
            json.dumps({
                "cniVersion": "0.4.0",
                "name": "e2e",
                "plugins": [
                    {
                        "type": "bridge", "bridge": L.BRIDGE, "isGateway": True, "ipMasq": False, "hairpinMode": True,
                        "ipam": {
                            "type": "host-local",
                            "ranges": [[{"subnet": L.POD_CIDR, "gateway": L.NODE_IP}]],
                            # A default route through the gateway, so ClusterIP traffic reaches kube-proxy's rules.
                            "routes": [{"dst": "0.0.0.0/0"}],
                            "dataDir": str(self.paths.state / "cni" / "ipam"),
                        },
                    },
                    {"type": "portmap", "capabilities": {"portMappings": True}},
                ],
            }, indent=1),
        )  # fmt: skip
        self.procs.spawn("containerd", ["containerd", f"--config={self.paths.state / 'containerd/config.toml'}"])
        self.procs.wait("containerd", lambda: self._ctr("version") is not None, "its socket", 60)

    def _ctr(self, *args: str) -> str:
        proc = subprocess.run(
            ["ctr", f"--address={self.paths.containerd_socket}", "--namespace=k8s.io", *args],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        if proc.returncode != 0:
            raise StartError(f"ctr {' '.join(args)} failed: {proc.stderr.strip()}")
        return proc.stdout

    def _import_images(self) -> None:
        archives = sorted((L.BUILD / "images").glob("*.tar"))
        if not archives:
            raise host.HostError(f"no images in {L.BUILD / 'images'}: run `cluster/build.sh images`")
        for archive in archives:
            self._ctr("images", "import", "--platform=linux/amd64", str(archive))

    def _start_kubelet(self) -> None:
        pki = self.paths.pki
        kubeconfig = self._kubeconfig("kubelet", "node")
        resolv = self._write("resolv.conf", f"nameserver {L.NODE_IP}\n")
        config = {
            "apiVersion": "kubelet.config.k8s.io/v1beta1",
            "kind": "KubeletConfiguration",
            "address": L.NODE_IP,
            "port": L.KUBELET_PORT,
            "readOnlyPort": 0,
            "healthzBindAddress": "127.0.0.1",
            "healthzPort": L.KUBELET_HEALTHZ_PORT,
            "authentication": {
                "anonymous": {"enabled": False},
                "webhook": {"enabled": True},
                "x509": {"clientCAFile": str(pki / "ca.crt")},
            },
            "authorization": {"mode": "Webhook"},
            "tlsCertFile": str(pki / "kubelet.crt"),
            "tlsPrivateKeyFile": str(pki / "kubelet.key"),
            "containerRuntimeEndpoint": f"unix://{self.paths.containerd_socket}",
            # cgroup v1 host without systemd.
            "cgroupDriver": "cgroupfs",
            "failCgroupV1": False,
            "clusterDNS": [L.NODE_IP],
            "clusterDomain": L.CLUSTER_DOMAIN,
            # The host's resolver is unreachable from pods.
            "resolvConf": str(resolv),
            "oomScoreAdj": 0,
            # No registry: never collect the imported images.
            "imageGCHighThresholdPercent": 100,
            "imageGCLowThresholdPercent": 99,
            "evictionHard": {"memory.available": "100Mi", "nodefs.available": "1%", "imagefs.available": "1%"},
            "failSwapOn": False,
            "podLogsDir": str(self.paths.state / "pod-logs"),
            "serializeImagePulls": False,
            # Every batched scenario's pods run at once on this one node: Kubernetes' default of 110 pods left gangs
            # that Volcano had placed refused by the kubelet (OutOfpods), their jobs Terminated. As many as the pod
            # network (POD_CIDR, a /24) has addresses for, with a margin.
            "maxPods": L.MAX_PODS,
            "rotateCertificates": False,
            "registerNode": True,
        }
        path = self._write("kubelet-config.json", json.dumps(config, indent=1))
        self.procs.spawn(
            "kubelet",
            [
                L.built("kubelet"), f"--config={path}", f"--kubeconfig={kubeconfig}",
                f"--hostname-override={L.NODE_NAME}", f"--node-ip={L.NODE_IP}",
                f"--root-dir={self.paths.state / 'kubelet'}", "--v=1",
            ],
        )  # fmt: skip
        self.procs.wait("kubelet", self._node_ready, "node Ready", 120)

    def _node_ready(self) -> bool:
        node = self.api.get(f"/api/v1/nodes/{L.NODE_NAME}")
        return any(c["type"] == "Ready" and c["status"] == "True" for c in node["status"].get("conditions", []))

    def _start_kube_proxy(self) -> None:
        config = {
            "apiVersion": "kubeproxy.config.k8s.io/v1alpha1",
            "kind": "KubeProxyConfiguration",
            "clientConnection": {"kubeconfig": str(self._kubeconfig("kube-proxy", "kube-proxy"))},
            "mode": "iptables",
            "hostnameOverride": L.NODE_NAME,
            "bindAddress": L.NODE_IP,
            "healthzBindAddress": f"127.0.0.1:{L.KUBE_PROXY_HEALTHZ_PORT}",
            "metricsBindAddress": f"127.0.0.1:{L.KUBE_PROXY_METRICS_PORT}",
            "clusterCIDR": L.POD_CIDR,
            "nodePortAddresses": [f"{L.NODE_IP}/32"],
            "iptables": {"localhostNodePorts": False},
            # Zeros: leave the host's conntrack sysctls alone.
            "conntrack": {"maxPerCore": 0, "min": 0, "tcpEstablishedTimeout": "0s", "tcpCloseWaitTimeout": "0s"},
            "oomScoreAdj": 0,
        }
        path = self._write("kube-proxy-config.json", json.dumps(config, indent=1))
        self.procs.spawn("kube-proxy", [L.built("kube-proxy"), f"--config={path}", "--v=1"])
        self.procs.wait(
            "kube-proxy", lambda: http_ok(f"http://127.0.0.1:{L.KUBE_PROXY_HEALTHZ_PORT}/healthz"), "healthz", 60
        )

    def _start_coredns(self) -> None:
        user = "hera-volcano-e2e:coredns"
        self.api.apply(
            f"/apis/rbac.authorization.k8s.io/v1/clusterroles/{user}",
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRole",
                "metadata": {"name": user},
                "rules": [
                    {"apiGroups": [""], "resources": ["endpoints", "services", "pods", "namespaces"],
                     "verbs": ["list", "watch"]},
                    {"apiGroups": ["discovery.k8s.io"], "resources": ["endpointslices"], "verbs": ["list", "watch"]},
                ],
            },
        )  # fmt: skip
        self.api.apply(
            f"/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/{user}",
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRoleBinding",
                "metadata": {"name": user},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": user},
                "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}],
            },
        )
        kubeconfig = self._kubeconfig("coredns", "coredns")
        corefile = self._write(
            "Corefile",
            f""".:53 {{
    bind {L.NODE_IP}
    errors
    health 127.0.0.1:{L.COREDNS_HEALTH_PORT}
    ready 127.0.0.1:{L.COREDNS_READY_PORT}
    kubernetes {L.CLUSTER_DOMAIN} in-addr.arpa ip6.arpa {{
        kubeconfig {kubeconfig} e2e
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
    }}
    cache 5
}}
""",
        )
        self.procs.spawn("coredns", [L.built("coredns"), "-conf", corefile])
        self.procs.wait("coredns", lambda: http_ok(f"http://127.0.0.1:{L.COREDNS_READY_PORT}/ready"), "ready", 60)

    def _wait_default_service_account(self) -> None:
        self._wait(
            lambda: self.api.exists("/api/v1/namespaces/default/serviceaccounts/default"), "serviceaccount/default"
        )

    # ------------------------------------------------------------------------------------------ Volcano

    def _install_volcano(self) -> None:
        self._create_crds(self._crd_files("volcano"))
        self._ensure_namespace(L.VOLCANO_NAMESPACE)
        admissions = volcano_admissions(L.BUILD / "volcano" / "values.yaml")
        webhooks = render_webhooks(
            (L.BUILD / "volcano" / "webhooks.yaml.tmpl").read_text(), admissions, L.VOLCANO_NAMESPACE
        )
        ca = base64.b64encode((self.paths.pki / "ca.crt").read_bytes()).decode()
        url = f"https://127.0.0.1:{L.VOLCANO_WEBHOOK_PORT}"
        for webhook in webhooks:
            for hook in webhook["webhooks"]:
                path = hook["clientConfig"]["service"]["path"]
                hook["clientConfig"] = {"url": url + path, "caBundle": ca}
                # Hundreds of pods at once (the scale scenarios) took longer than the default 10 s in Volcano's
                # own tests.
                hook["timeoutSeconds"] = 30
            kind = (
                "mutatingwebhookconfigurations"
                if webhook["kind"].startswith("Mutating")
                else "validatingwebhookconfigurations"
            )
            self.api.apply(f"/apis/admissionregistration.k8s.io/v1/{kind}/{webhook['metadata']['name']}", webhook)
        (self.paths.state / "volcano-webhooks.json").write_text(
            json.dumps([[w["kind"], w["metadata"]["name"]] for w in webhooks])
        )
        pki = self.paths.pki
        self.procs.spawn(
            "vc-webhook-manager",
            [
                L.built("vc-webhook-manager"), f"--kubeconfig={self.paths.kubeconfig}",
                "--listen-address=127.0.0.1", f"--port={L.VOLCANO_WEBHOOK_PORT}",
                f"--tls-cert-file={pki / 'volcano-webhook.crt'}",
                f"--tls-private-key-file={pki / 'volcano-webhook.key'}",
                f"--ca-cert-file={pki / 'ca.crt'}", f"--webhook-url={url}",
                f"--enabled-admission={','.join(admissions)}", "--scheduler-name=volcano",
                "--enable-healthz", f"--healthz-address=127.0.0.1:{L.VOLCANO_WEBHOOK_HEALTHZ_PORT}", "-v=2",
            ],
        )  # fmt: skip
        self.procs.wait(
            "vc-webhook-manager", lambda: _tls_listening("127.0.0.1", L.VOLCANO_WEBHOOK_PORT), "serving", 120
        )
        self.procs.spawn(
            "vc-controller-manager",
            [
                L.built("vc-controller-manager"), f"--kubeconfig={self.paths.kubeconfig}", "--leader-elect=false",
                "--scheduler-name=volcano", "--enable-healthz",
                f"--healthz-address=127.0.0.1:{L.VOLCANO_CONTROLLER_HEALTHZ_PORT}",
                f"--listen-address=127.0.0.1:{L.VOLCANO_CONTROLLER_METRICS_PORT}", "-v=2",
                *(f"--{k}={v}" for k, v in L.VOLCANO_CONTROLLER_FLAGS.items()),
            ],
        )  # fmt: skip
        self.procs.spawn(
            "vc-scheduler",
            [
                L.built("vc-scheduler"), f"--kubeconfig={self.paths.kubeconfig}", "--leader-elect=false",
                f"--scheduler-conf={L.BUILD / 'volcano' / 'scheduler.conf'}", "--scheduler-name=volcano",
                "--default-queue=default", "--enable-healthz",
                f"--healthz-address=127.0.0.1:{L.VOLCANO_SCHEDULER_HEALTHZ_PORT}",
                f"--listen-address=127.0.0.1:{L.VOLCANO_SCHEDULER_METRICS_PORT}",
                f"--cache-dump-dir={self.paths.state / 'volcano-cache-dump'}", "-v=2",
                *(f"--{k}={v}" for k, v in L.VOLCANO_SCHEDULER_FLAGS.items()),
            ],
        )  # fmt: skip
        # The scheduler creates the `default` and `root` queues itself.
        self.procs.wait("vc-scheduler", self._default_queue_open, "queue default Open", 120)
        self.procs.wait(
            "vc-controller-manager",
            lambda: http_ok(f"http://127.0.0.1:{L.VOLCANO_CONTROLLER_HEALTHZ_PORT}/healthz"),
            "healthz",
            60,
        )

    def _default_queue_open(self) -> bool:
        queue = self.api.get("/apis/scheduling.volcano.sh/v1beta1/queues/default")
        return bool(queue.get("status", {}).get("state") == "Open")

    def _delete_webhooks(self) -> None:
        """Before the webhook manager stops: with failurePolicy Fail, its configurations would block every pod."""
        listing = self.paths.state / "volcano-webhooks.json"
        if not listing.exists():
            return
        for kind, name in json.loads(listing.read_text()):
            plural = (
                "mutatingwebhookconfigurations" if kind.startswith("Mutating") else "validatingwebhookconfigurations"
            )
            with contextlib.suppress(ApiError, OSError):
                self.api.request("DELETE", f"/apis/admissionregistration.k8s.io/v1/{plural}/{name}")


def _tls_listening(address: str, port: int) -> bool:
    with socket.create_connection((address, port), timeout=2):
        return True


def volcano_admissions(values: Path) -> list[str]:
    """The admissions Volcano's Helm chart enables by default (custom.enabled_admissions in values.yaml)."""
    match = re.search(r'^\s*enabled_admissions:\s*"([^"]+)"', values.read_text(), re.MULTILINE)
    if not match:
        raise host.HostError(f"no custom.enabled_admissions in {values}")
    return [a.strip() for a in match.group(1).split(",") if a.strip()]


_IF = re.compile(r"^\s*\{\{-?\s*if\s+(.+?)\s*-?\}\}\s*$")
_END = re.compile(r"^\s*\{\{-?\s*end\s*-?\}\}\s*$")
_REGEX_MATCH = re.compile(r'^\.Values\.custom\.enabled_admissions \| regexMatch "([^"]+)"$')


def render_webhooks(template: str, admissions: list[str], namespace: str) -> list[dict[str, Any]]:
    """Volcano's Helm template of its webhook configurations, rendered for the chart's defaults.

    Only what that template uses is understood (`if` on admission_enable, on an admission being enabled, and on
    the empty custom labels and namespace selector expressions; the release name and namespace); anything else is
    an error, so a changed template is noticed rather than rendered wrongly.
    """
    import yaml  # the test environment has PyYAML (the project depends on it)

    out: list[str] = []
    stack: list[bool] = []
    for line in template.splitlines():
        if m := _IF.match(line):
            cond = m.group(1)
            if cond == ".Values.custom.admission_enable":
                value = True
            elif cond in (".Values.custom.common_labels", ".Values.custom.webhooks_namespace_selector_expressions"):
                value = False
            elif rm := _REGEX_MATCH.match(cond):
                value = rm.group(1) in admissions
            else:
                raise host.HostError(f"Volcano's webhooks template has a condition this renderer does not know: {cond}")
            stack.append(value)
            continue
        if _END.match(line):
            stack.pop()
            continue
        if not all(stack):
            continue
        line = line.replace("{{ .Release.Namespace }}", namespace).replace("{{ .Release.Name }}", "volcano")
        if "{{" in line:
            raise host.HostError(f"Volcano's webhooks template has an expression this renderer does not know: {line}")
        out.append(line)
    docs = [d for d in yaml.safe_load_all("\n".join(out)) if d]
    return docs
