"""Where everything of the test cluster lives: paths, addresses, ports, names. One place, so teardown and the
tests agree with start-up.

Pods must reach the API server, so it listens on a bridge of our own (``e2e0``, 10.244.0.1/24) that the CNI bridge
plugin adopts as the pods' gateway; the kubelet and CoreDNS listen there too. Everything else stays on loopback.
Ports are fixed (so a person can export the kubeconfig) and lie away from the usual defaults and below the
ephemeral range.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
#: What cluster/build.sh made: binaries, Argo lines, CRD lists, images.
BUILD = Path(os.environ.get("HERA_VOLCANO_CLUSTER_CACHE") or REPO / ".cache" / "cluster")
#: The running cluster: kubeconfig, CLIs on PATH, and the state directory (wiped at every start).
HOME = Path(os.environ.get("HERA_VOLCANO_E2E_HOME") or REPO / ".cache" / "e2e")

NODE_NAME = "hera-volcano-e2e"
BRIDGE = "e2e0"
NODE_IP = "10.244.0.1"
POD_CIDR = "10.244.0.0/24"
#: The kubelet's pod limit: within the 253 addresses of POD_CIDR, with room for pods still being torn down.
MAX_PODS = 240
SERVICE_CIDR = "10.96.0.0/16"
SERVICE_IP = "10.96.0.1"  # the `kubernetes` Service
CLUSTER_DOMAIN = "cluster.local"

ETCD_PORT = 12379
ETCD_PEER_PORT = 12380
APISERVER_PORT = 16443
CONTROLLER_MANAGER_PORT = 17257
SCHEDULER_PORT = 17259
KUBELET_PORT = 17250
KUBELET_HEALTHZ_PORT = 17248
KUBE_PROXY_HEALTHZ_PORT = 17256
KUBE_PROXY_METRICS_PORT = 17249
COREDNS_HEALTH_PORT = 18180
COREDNS_READY_PORT = 18181
VOLCANO_WEBHOOK_PORT = 18443
VOLCANO_SCHEDULER_HEALTHZ_PORT = 18251
VOLCANO_SCHEDULER_METRICS_PORT = 18252
VOLCANO_CONTROLLER_HEALTHZ_PORT = 18253
VOLCANO_CONTROLLER_METRICS_PORT = 18254
VOLCANO_WEBHOOK_HEALTHZ_PORT = 18255
#: Hard-coded by Argo's workflow-controller (every interface): one controller per host at a time.
ARGO_HEALTHZ_PORT = 6060
#: kwok's server (healthz, and the logs of fake pods), on loopback.
KWOK_PORT = 18260

VOLCANO_NAMESPACE = "volcano-system"
ARGO_NAMESPACE = "argo"
ARGO_CONFIGMAP = "workflow-controller-configmap"

#: Paths outside the state directory that containerd 1.6, runc, the CNI plugins and the kubelet use whatever they
#: are told. Removed at teardown when they were absent before.
FIXED_PATHS = ("/run/containerd", "/var/lib/cni", "/var/log/containers", "/run/netns", "/run/runc", "/etc/cni")

#: Sysctls the kubelet, kube-proxy and the CNI bridge plugin may change; recorded at start, restored at teardown.
SYSCTLS = (
    "kernel/panic",
    "kernel/panic_on_oops",
    "kernel/keys/root_maxkeys",
    "kernel/keys/root_maxbytes",
    "vm/overcommit_memory",
    "vm/panic_on_oom",
    "net/ipv4/ip_forward",
    "net/ipv4/conf/all/forwarding",
    "net/ipv4/conf/all/route_localnet",
    "net/ipv6/conf/all/forwarding",
    "net/bridge/bridge-nf-call-iptables",
    "net/bridge/bridge-nf-call-ip6tables",
    "net/netfilter/nf_conntrack_max",
    "net/netfilter/nf_conntrack_tcp_timeout_established",
    "net/netfilter/nf_conntrack_tcp_timeout_close_wait",
    "net/netfilter/nf_conntrack_tcp_be_liberal",
)

#: Argo lines the suite runs on, with their CLI, controller and executor from cluster/build.sh.
ARGO_LINES = ("v3.7.18", "v4.1.4")

# The controllers' throughput settings, given explicitly (each is its program's own default) so a run can say what
# it ran with. HERA_VOLCANO_ARGO_SETTINGS ("qps=100,burst=200,workflow-workers=32,DEFAULT_REQUEUE_TIME=2s") overrides
# Argo's: `make bench` drains the scale burst once more with faster settings, to show what they change.
ARGO_FLAGS = {"workflow-workers": "32", "qps": "20", "burst": "30"}
# ARGO_PROGRESS_PATCH_TICK_DURATION (Argo's default 1m): how often each pod's executor sends the progress its step
# wrote (a job's follower writes rank 0's); 5s, so that a scenario of seconds sees a job's progress while it runs
# (tests/e2e/test_progress.py). Both lines read it; 3.7's executor patches its task result on every tick.
ARGO_ENV = {"DEFAULT_REQUEUE_TIME": "10s", "ARGO_PROGRESS_PATCH_TICK_DURATION": "5s"}
VOLCANO_SCHEDULER_FLAGS = {"schedule-period": "1s", "kube-api-qps": "2000", "kube-api-burst": "2000"}
VOLCANO_CONTROLLER_FLAGS = {"worker-threads": "3", "kube-api-qps": "50", "kube-api-burst": "100"}


def argo_settings() -> tuple[dict[str, str], dict[str, str]]:
    """The workflow controller's flags and environment: the defaults above, with the overrides of
    HERA_VOLCANO_ARGO_SETTINGS (upper-case names are environment variables, the rest flags)."""
    flags, env = dict(ARGO_FLAGS), dict(ARGO_ENV)
    for item in filter(None, os.environ.get("HERA_VOLCANO_ARGO_SETTINGS", "").split(",")):
        key, _, value = item.partition("=")
        if not key or not value:
            raise ValueError(f"HERA_VOLCANO_ARGO_SETTINGS: {item!r} is not NAME=VALUE")
        (env if key.isupper() else flags)[key.strip()] = value.strip()
    return flags, env


def settings() -> dict[str, dict[str, str]]:
    """What the controllers run with (for results)."""
    flags, env = argo_settings()
    return {
        "argo workflow-controller": {**flags, **env},
        "vc-scheduler": VOLCANO_SCHEDULER_FLAGS,
        "vc-controller-manager": VOLCANO_CONTROLLER_FLAGS,
    }


DEFAULT_ARGO_LINE = "v4.1.4"


@dataclass(frozen=True)
class Paths:
    """The files of one running cluster (under HOME)."""

    home: Path = HOME

    @property
    def state(self) -> Path:
        return self.home / "state"

    @property
    def kubeconfig(self) -> Path:
        return self.home / "kubeconfig"

    @property
    def bin(self) -> Path:
        return self.home / "bin"

    @property
    def pki(self) -> Path:
        return self.state / "pki"

    @property
    def logs(self) -> Path:
        return self.state / "logs"

    @property
    def pids(self) -> Path:
        return self.state / "pids.json"

    @property
    def host_before(self) -> Path:
        """The host as it was before the first start (kept across restarts until teardown)."""
        return self.home / "host-before.json"

    @property
    def containerd_socket(self) -> Path:
        return self.state / "containerd" / "containerd.sock"

    @property
    def audit_log(self) -> Path:
        return self.logs / "audit.log"

    def log(self, name: str) -> Path:
        return self.logs / f"{name}.log"


def built(name: str) -> Path:
    """A binary cluster/build.sh made."""
    return BUILD / "bin" / name


def argo_binary(line: str, name: str) -> Path:
    return BUILD / "argo" / line / name


def executor_image(line: str) -> str:
    return f"quay.io/argoproj/argoexec:{line}"
