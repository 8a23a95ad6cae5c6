"""What the admission policy must refuse, as documents: the candidates of issue 43 and the controls of issue 34, per
kind. Plain data and one function that asks a cluster (``kubectl create --dry-run=server --as=ACCOUNT``) for each
verdict, so that test_policy.py and a trial on a shared cluster read the same table."""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import yaml

BUSYBOX = "busybox:1.37.0"
TOKEN_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"


class Ran(Protocol):
    code: int
    err: str


#: (name, what the pod spec holds, what the Volcano job spec holds, words of the refusal): each thing the policy
#: refuses. ``container`` in the pod merges into its container.
Case = tuple[str, dict[str, Any], dict[str, Any], str]


def _claim(**spec: Any) -> dict[str, Any]:
    return {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}, **spec}


def _volume(**source: Any) -> dict[str, Any]:
    return {"volumes": [{"name": "v", **source}]}


#: The 14 that slipped past the policy of issue 34 (and a few neighbours of theirs).
CANDIDATES: tuple[Case, ...] = (
    ("capabilities-all", {"container": {"securityContext": {"capabilities": {"add": ["ALL"]}}}}, {}, "capability"),
    ("capability-sys-admin", {"container": {"securityContext": {"capabilities": {"add": ["SYS_ADMIN"]}}}}, {},
     "capability"),
    ("seccomp-unconfined", {"securityContext": {"seccompProfile": {"type": "Unconfined"}}}, {}, "seccomp"),
    ("apparmor-unconfined", {"container": {"securityContext": {"appArmorProfile": {"type": "Unconfined"}}}}, {},
     "AppArmor"),
    ("selinux-spc", {"securityContext": {"seLinuxOptions": {"type": "spc_t"}}}, {}, "SELinux"),
    ("proc-unmasked", {"hostUsers": False, "container": {"securityContext": {"procMount": "Unmasked"}}}, {},
     "procMount"),
    ("sysctl-unsafe", {"securityContext": {"sysctls": [{"name": "kernel.msgmax", "value": "65536"}]}}, {}, "sysctl"),
    ("job-claim-named-pv", {}, {"volumes": [{"mountPath": "/data", "volumeClaim": _claim(volumeName="other-pv")}]},
     "spec.volumes"),
    ("job-claim-clone", {},
     {"volumes": [{"mountPath": "/data",
                   "volumeClaim": _claim(dataSource={"kind": "PersistentVolumeClaim", "name": "other-claim"})}]},
     "spec.volumes"),
    ("ephemeral-named-pv",
     _volume(ephemeral={"volumeClaimTemplate": {"spec": _claim(volumeName="other-pv")}}), {}, "ephemeral volume"),
    ("azure-file-secret", _volume(azureFile={"secretName": "other-secret", "shareName": "s"}), {}, "volume driver"),
    ("iscsi-secret",
     _volume(iscsi={"targetPortal": "10.0.0.1:3260", "iqn": "iqn.2001-04.com.example:x", "lun": 0,
                    "chapAuthSession": True, "secretRef": {"name": "other-secret"}}), {}, "volume driver"),
    ("flex-volume-secret", _volume(flexVolume={"driver": "example/x", "secretRef": {"name": "other-secret"}}), {},
     "volume driver"),
    ("csi-secret", _volume(csi={"driver": "x.example.com", "nodePublishSecretRef": {"name": "other-secret"}}), {},
     "volume driver"),
    ("rbd-secret", _volume(rbd={"monitors": ["10.0.0.1:6789"], "image": "i", "secretRef": {"name": "other-secret"}}),
     {}, "volume driver"),
    ("image-pull-secret", {"imagePullSecrets": [{"name": "other-registry"}]}, {}, "pull images"),
    ("host-port", {"container": {"ports": [{"containerPort": 80, "hostPort": 8080}]}}, {}, "hostPort"),
    ("runtime-class", {"runtimeClassName": "privileged-runtime"}, {}, "runtime class"),
    ("node-name", {"nodeName": "control-plane"}, {}, "nodeName"),
    ("no-account-token", {}, {}, "default account"),  # the namespace's default, its token mounted
    ("no-account-projected-token",
     {"automountServiceAccountToken": False,
      **_volume(projected={"sources": [{"serviceAccountToken": {"path": "token"}}]})}, {}, "default account"),
    ("ssh-over-token", {}, {"plugins": {"ssh": [f"--ssh-key-file-path={TOKEN_DIR}"]}}, "ssh plugin"),
    ("ssh-over-token-split", {}, {"plugins": {"ssh": ["--ssh-key-file-path", "/run/secrets/kubernetes.io"]}},
     "ssh plugin"),
)  # fmt: skip
#: What the policy of issue 34 refused already.
CONTROLS: tuple[Case, ...] = (
    ("other-account", {"serviceAccountName": "argo-server"}, {}, "service account other than"),
    ("deprecated-field", {"serviceAccount": "argo-server"}, {}, "service account other than"),
    ("privileged", {"container": {"securityContext": {"privileged": True}}}, {}, "privileged"),
    ("host-path", _volume(hostPath={"path": "/"}), {}, "hostPath"),
    ("host-network", {"hostNetwork": True}, {}, "network, PID or IPC namespace"),
    ("host-pid", {"hostPID": True}, {}, "network, PID or IPC namespace"),
    ("secret-volume", _volume(secret={"secretName": "other-secret"}), {}, "Secret"),
    ("secret-env", {"container": {"envFrom": [{"secretRef": {"name": "other-secret"}}]}}, {}, "Secret"),
)  # fmt: skip


def pod_spec(account: str | None, pod: dict[str, Any]) -> dict[str, Any]:
    """A busybox pod spec running as ``account`` (None: naming none) plus ``pod``."""
    pod = copy.deepcopy(pod)
    container = {"name": "main", "image": BUSYBOX, "command": ["true"], **pod.pop("container", {})}
    named = {"serviceAccountName": account} if account and "serviceAccount" not in pod else {}
    return {"restartPolicy": "Never", **named, "containers": [container], **pod}


def job_spec(account: str | None, pod: dict[str, Any], job: dict[str, Any]) -> dict[str, Any]:
    """A Volcano job spec of one task whose pod is :func:`pod_spec`, plus ``job``."""
    task = {"name": "work", "replicas": 1, "template": {"spec": pod_spec(account, pod)}}
    return {"schedulerName": "volcano", "minAvailable": 1, "tasks": [task], **copy.deepcopy(job)}


#: What the policy accepts: a pod that names no account and mounts no token, one with a baseline capability.
ACCEPTED: tuple[Case, ...] = (
    ("no-account-no-token", {"automountServiceAccountToken": False}, {}, ""),
    ("baseline-capability", {"container": {"securityContext": {"capabilities": {"add": ["NET_BIND_SERVICE"]}}}}, {},
     ""),
    ("runtime-default", {"securityContext": {"seccompProfile": {"type": "RuntimeDefault"}}}, {}, ""),
    ("own-ssh-path", {}, {"plugins": {"ssh": ["--ssh-key-file-path=/home/mpi/.ssh"]}}, ""),
    ("new-claim", {}, {"volumes": [{"mountPath": "/data", "volumeClaim": _claim()}]}, ""),
)  # fmt: skip


def _no_account(case: Case) -> bool:
    return case[0].startswith("no-account")


#: For each kind: (apiVersion, kind, the object's spec from (account, pod, job), whether Volcano job rules apply).
KINDS: dict[str, tuple[str, str, Callable[[str | None, dict[str, Any], dict[str, Any]], dict[str, Any]], bool]] = {
    "Volcano Job": ("batch.volcano.sh/v1alpha1", "Job", job_spec, True),
    "JobTemplate": ("flow.volcano.sh/v1alpha1", "JobTemplate", job_spec, True),
    "JobFlow": ("flow.volcano.sh/v1alpha1", "JobFlow",
                lambda a, p, j: {"flows": [{"name": "work", "patch": {"jobSpec": job_spec(a, p, j)}}]}, True),
    "Volcano CronJob": ("batch.volcano.sh/v1alpha1", "CronJob",
                        lambda a, p, j: {"schedule": "0 0 1 1 *", "jobTemplate": {"spec": job_spec(a, p, j)}}, True),
    "Pod": ("v1", "Pod", lambda a, p, _: pod_spec(a, p), False),
    "Job (batch)": ("batch/v1", "Job", lambda a, p, _: {"template": {"spec": pod_spec(a, p)}}, False),
    "CronJob (batch)": ("batch/v1", "CronJob",
                        lambda a, p, _: {"schedule": "0 0 1 1 *",
                                         "jobTemplate": {"spec": {"template": {"spec": pod_spec(a, p)}}}}, False),
    "Deployment": ("apps/v1", "Deployment",
                   lambda a, p, _: {"selector": {"matchLabels": {"app": "x"}},
                                    "template": {"metadata": {"labels": {"app": "x"}},
                                                 "spec": {**pod_spec(a, p), "restartPolicy": "Always"}}}, False),
}  # fmt: skip


def _refused(kind: str, said: Ran, words: str) -> bool:
    """Whether the API server refused it: by an admission policy with ``words``, or before the policies, by its own
    rule (``--allow-privileged=false``) or, for a Pod, by an admission plugin that reads pods (Pod Security, the
    service account's, the runtime class's)."""
    if said.code == 0:
        return False
    if "disallowed by cluster policy" in said.err or (kind == "Pod" and "is forbidden" in said.err):
        return True
    return words in said.err and "denied request" in said.err


def document(kind: str, account: str | None, pod: dict[str, Any], job: dict[str, Any]) -> str:
    api_version, kind_name, spec, _ = KINDS[kind]
    obj = {"apiVersion": api_version, "kind": kind_name, "metadata": {"generateName": "policy-"}}
    if kind == "Pod":
        obj["metadata"] = {"name": "policy-pod"}  # a Pod's generateName is fine too; a name reads better
    obj["spec"] = spec(account, pod, job)
    return yaml.safe_dump(obj)


def disagreements(
    kubectl: Callable[..., Ran],
    namespace: str,
    account: str,
    kinds: Sequence[str],
    cases: Sequence[Case],
    accepted_too: bool = True,
) -> list[str]:
    """Every case of ``cases`` as each kind of ``kinds`` (the Volcano job rules only where they apply), created by
    ``system:serviceaccount:NAMESPACE:ACCOUNT`` with a server-side dry run: each must be refused by an admission
    policy with its words (a case without words: accepted), and (``accepted_too``) the same object without the case
    accepted. One line per disagreement."""
    user = f"system:serviceaccount:{namespace}:{account}"
    create = ("create", "-n", namespace, "--dry-run=server", f"--as={user}", "-o", "name", "-f", "-")
    found = []
    for kind in kinds:
        if accepted_too:
            said = kubectl(*create, input=document(kind, account, {}, {}))
            if said.code != 0:
                found.append(f"{kind} without a case: refused: {said.err.strip()[:300]}")
        for case in cases:
            name, pod, job, words = case
            if job and not KINDS[kind][3]:
                continue
            said = kubectl(*create, input=document(kind, None if _no_account(case) else account, pod, job))
            if not words and said.code != 0:
                found.append(f"{kind} {name}: refused: {said.err.strip()[:300]}")
            elif words and not _refused(kind, said, words):
                found.append(f"{kind} {name}: {'accepted' if said.code == 0 else said.err.strip()[:300]}")
    return found


def probe_workflow(namespace: str, account: str) -> dict[str, Any]:
    """A Workflow whose resource steps create one object of each kind of :data:`KINDS` as ``account``: what
    ``rbac_for`` reads to grant it ``create`` on them, and so to put the policy of each kind beside its Role."""
    templates = [
        {"name": f"create-{i}", "resource": {"action": "create", "manifest": document(kind, account, {}, {})}}
        for i, kind in enumerate(KINDS)
    ]
    steps = [[{"name": t["name"], "template": t["name"]}] for t in templates]
    return {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Workflow",
        "metadata": {"generateName": "policy-probe-", "namespace": namespace},
        "spec": {
            "serviceAccountName": account,
            "entrypoint": "main",
            "templates": [{"name": "main", "steps": steps}, *templates],
        },
    }
