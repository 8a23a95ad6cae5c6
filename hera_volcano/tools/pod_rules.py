"""What the admission policy refuses in a pod spec, or in a Volcano job spec, as CEL: one small function per rule.

Each rule is written once, about a pod spec at any path (a Volcano task's ``t.template.spec``, a Pod's ``object.spec``,
a batch Job's ``object.spec.template.spec``): the policy of each kind places the same rules at its own path. The
baseline rules mirror Pod Security Admission's ``baseline`` level at :data:`PSA_VERSION` (the namespace enforces
it on the pods Volcano creates; the policy says it earlier, at the job, where a server-side dry run sees it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Final

#: The Pod Security Admission version the namespace pins and these rules mirror.
PSA_VERSION: Final = "v1.30"
#: Capabilities ``baseline`` lets a container add.
BASELINE_CAPABILITIES: Final = (
    "AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD", "NET_BIND_SERVICE", "SETFCAP",
    "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT",
)  # fmt: skip
#: The sysctls ``baseline`` calls safe.
BASELINE_SYSCTLS: Final = (
    "kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.ip_local_reserved_ports",
    "net.ipv4.ip_unprivileged_port_start", "net.ipv4.ping_group_range", "net.ipv4.tcp_fin_timeout",
    "net.ipv4.tcp_keepalive_intvl", "net.ipv4.tcp_keepalive_probes", "net.ipv4.tcp_keepalive_time",
    "net.ipv4.tcp_syncookies",
)  # fmt: skip
#: The SELinux types ``baseline`` allows.
_SELINUX_TYPES: Final = ("container_t", "container_init_t", "container_kvm_t")
_ACCOUNT_FIELDS: Final = ("serviceAccountName", "serviceAccount")
_CONTAINER_LISTS: Final = ("containers", "initContainers", "ephemeralContainers")
#: In-tree volume sources that name a Secret for the kubelet's volume driver: (source, the reference's field).
_DRIVER_SECRETS: Final = (
    ("cephfs", "secretRef"), ("cinder", "secretRef"), ("csi", "nodePublishSecretRef"), ("flexVolume", "secretRef"),
    ("iscsi", "secretRef"), ("rbd", "secretRef"), ("scaleIO", "secretRef"), ("storageos", "secretRef"),
)  # fmt: skip
_APPARMOR_ANNOTATION: Final = "container.apparmor.security.beta.kubernetes.io/"


@dataclass(frozen=True)
class At:
    """Where a spec is, as CEL expressions known to be set: a pod's spec and what holds its ``metadata`` (the
    template, or the Pod), or a Volcano job's spec (``meta`` unused)."""

    spec: str
    meta: str = ""


@dataclass(frozen=True)
class Rule:
    """One thing the policy refuses: its name, what it is in words (after "whose pods"), the CEL that is true when a
    pod (or a Volcano job spec) does it, and the JobPolicy switch that allows it (None: always refused)."""

    name: str
    words: str
    offends: Callable[[At], str]
    allowed_by: str | None = None


def cel_list(values: Iterable[str]) -> str:
    """A CEL list of names (no quote or backslash in them to escape)."""
    return "[" + ", ".join(f"'{v}'" for v in sorted(set(values))) + "]"


def _has(base: str, path: str) -> str:
    """CEL: every field of the dotted ``path`` under ``base`` is set."""
    parts = path.split(".")
    return " && ".join(f"has({base}.{'.'.join(parts[: i + 1])})" for i in range(len(parts)))


def _set(base: str, path: str) -> str:
    """CEL: the string field ``base.path`` is set and not empty."""
    return f"({_has(base, path)} && {base}.{path} != '')"


def _any_container(pod: At, predicate: str) -> str:
    """CEL: some container (init and ephemeral ones too) satisfies ``predicate`` about ``c``. Each list separately:
    the three have distinct schema types, which CEL cannot concatenate."""
    p = pod.spec
    return "(" + " || ".join(f"(has({p}.{lst}) && {p}.{lst}.exists(c, {predicate}))" for lst in _CONTAINER_LISTS) + ")"


def _any_volume(pod: At, predicate: str) -> str:
    """CEL: some volume of the pod satisfies ``predicate`` about ``v``."""
    return f"(has({pod.spec}.volumes) && {pod.spec}.volumes.exists(v, {predicate}))"


def _security(pod: At, path: str, predicate: Callable[[str], str]) -> str:
    """CEL: the pod's security context or a container's has ``path`` set and ``predicate`` (of its value) holds."""
    pod_level = f"({_has(pod.spec, 'securityContext.' + path)} && ({predicate(pod.spec + '.securityContext.' + path)}))"
    return f"({pod_level} || {_container_security(pod, path, predicate)})"


def _container_security(pod: At, path: str, predicate: Callable[[str], str]) -> str:
    """CEL: some container's security context has ``path`` set and ``predicate`` (of its value) holds."""
    return _any_container(pod, f"{_has('c', 'securityContext.' + path)} && ({predicate('c.securityContext.' + path)})")


def _unlisted(ref: str) -> str:
    """CEL: the Secret reference ``ref`` names no Secret of ``variables.secrets`` (an unnamed one counts)."""
    return f"(!has({ref}.name) || !({ref}.name in variables.secrets))"


def _outside(pod: At, field: str, allowed: str) -> str:
    """CEL: the pod's string ``field`` is set, not empty, and not in the list variable ``allowed``."""
    return f"({_set(pod.spec, field)} && !({pod.spec}.{field} in variables.{allowed}))"


def _account(pod: At, field: str) -> str:
    """CEL: the pod names an account other than ``default`` in ``field`` (the API server writes ``default`` into a
    Pod that names none: naming it is naming none)."""
    return f"({_set(pod.spec, field)} && {pod.spec}.{field} != 'default')"


def accounts(pod: At) -> str:
    return " || ".join(f"({_account(pod, f)} && !({pod.spec}.{f} in variables.accounts))" for f in _ACCOUNT_FIELDS)


def default_account(pod: At) -> str:
    """A pod that names no account (or ``default``) runs as the namespace's ``default``: refused when it gets a
    token of it (mounted or projected), unless ``default`` is an allowed account."""
    p = pod.spec
    token = f"(!has({p}.automountServiceAccountToken) || {p}.automountServiceAccountToken)"
    projected = _any_volume(
        pod, "has(v.projected) && has(v.projected.sources) && v.projected.sources.exists(s, has(s.serviceAccountToken))"
    )
    unnamed = " && ".join(f"!{_account(pod, f)}" for f in _ACCOUNT_FIELDS)
    return f"{unnamed} && !('default' in variables.accounts) && ({token} || {projected})"


def secrets(pod: At) -> str:
    volumes = _any_volume(
        pod,
        "(has(v.secret) && (!has(v.secret.secretName) || !(v.secret.secretName in variables.secrets)))"
        " || (has(v.projected) && has(v.projected.sources) && v.projected.sources.exists(s,"
        f" has(s.secret) && {_unlisted('s.secret')}))",
    )
    env = _any_container(
        pod,
        "(has(c.env) && c.env.exists(e, has(e.valueFrom) && has(e.valueFrom.secretKeyRef)"
        f" && {_unlisted('e.valueFrom.secretKeyRef')}))"
        f" || (has(c.envFrom) && c.envFrom.exists(e, has(e.secretRef) && {_unlisted('e.secretRef')}))",
    )
    return f"{volumes} || {env}"


def driver_secrets(pod: At) -> str:
    refs = [f"(has(v.{src}) && has(v.{src}.{ref}) && {_unlisted(f'v.{src}.{ref}')})" for src, ref in _DRIVER_SECRETS]
    azure = "(has(v.azureFile) && !(v.azureFile.secretName in variables.secrets))"
    return _any_volume(pod, " || ".join([azure, *refs]))


def pull_secrets(pod: At) -> str:
    return f"(has({pod.spec}.imagePullSecrets) && {pod.spec}.imagePullSecrets.exists(s, {_unlisted('s')}))"


def privileged(pod: At) -> str:
    return (
        f"{_container_security(pod, 'privileged', lambda v: v)}"
        f" || {_security(pod, 'windowsOptions.hostProcess', lambda v: v)}"
    )


def host_paths(pod: At) -> str:
    return _any_volume(pod, "has(v.hostPath)")


def host_namespaces(pod: At) -> str:
    return " || ".join(f"(has({pod.spec}.{f}) && {pod.spec}.{f})" for f in ("hostNetwork", "hostPID", "hostIPC"))


def host_ports(pod: At) -> str:
    return _any_container(pod, "has(c.ports) && c.ports.exists(q, has(q.hostPort) && q.hostPort != 0)")


def capabilities(pod: At) -> str:
    return _container_security(pod, "capabilities.add", lambda v: f"{v}.exists(a, !(a in variables.capabilities))")


def sysctls(pod: At) -> str:
    listed = f"{pod.spec}.securityContext.sysctls"
    return f"({_has(pod.spec, 'securityContext.sysctls')} && {listed}.exists(s, !(s.name in variables.sysctls)))"


def _unconfined(profile_type: str) -> str:
    return f"{profile_type} == 'Unconfined'"


def seccomp(pod: At) -> str:
    return _security(pod, "seccompProfile.type", _unconfined)


def apparmor(pod: At) -> str:
    annotations = f"{pod.meta}.metadata.annotations"
    annotation = (
        f"({_has(pod.meta, 'metadata.annotations')} && {annotations}.exists(k,"
        f" k.startsWith('{_APPARMOR_ANNOTATION}') && !({annotations}[k] in ['', 'runtime/default'])"
        f" && !{annotations}[k].startsWith('localhost/')))"
    )
    return f"{_security(pod, 'appArmorProfile.type', _unconfined)} || {annotation}"


def selinux(pod: At) -> str:
    def outside(v: str) -> str:
        return (
            f"({_set(v, 'type')} && !({v}.type in {cel_list(_SELINUX_TYPES)}))"
            f" || {_set(v, 'user')} || {_set(v, 'role')}"
        )

    return _security(pod, "seLinuxOptions", outside)


def proc_mount(pod: At) -> str:
    return _container_security(pod, "procMount", lambda v: f"{v} != 'Default'")


def runtime_class(pod: At) -> str:
    return _outside(pod, "runtimeClassName", "runtimeClasses")


def node_name(pod: At) -> str:
    return _set(pod.spec, "nodeName")


def _claim(spec: str) -> str:
    """CEL: the claim spec at ``spec`` picks its PersistentVolume (by name or labels) or copies another volume."""
    return f"{_set(spec, 'volumeName')} || has({spec}.selector) || has({spec}.dataSource) || has({spec}.dataSourceRef)"


def ephemeral_claims(pod: At) -> str:
    return _any_volume(
        pod,
        "has(v.ephemeral) && has(v.ephemeral.volumeClaimTemplate) && has(v.ephemeral.volumeClaimTemplate.spec)"
        f" && ({_claim('v.ephemeral.volumeClaimTemplate.spec')})",
    )


def job_claims(job: At) -> str:
    """A volume of the Volcano job (Volcano's controller creates its claim) picks its PersistentVolume or copies
    another volume."""
    s = job.spec
    return f"has({s}.volumes) && {s}.volumes.exists(v, has(v.volumeClaim) && ({_claim('v.volumeClaim')}))"


def ssh_key_path(job: At) -> str:
    """The ssh plugin is told to mount its Secret over the kubelet's credentials (``/var/run/secrets``: the
    service account's token) or at a path that is not plainly one (``..``, ``//``)."""
    s = job.spec
    return (
        f"has({s}.plugins) && 'ssh' in {s}.plugins"
        f" && {s}.plugins['ssh'].exists(a, a.matches('run/secrets|//|(^|[=/])[.][.]?(/|$)'))"
    )


#: The rules about a pod spec, in the order the policy lists them.
POD_RULES: Final[tuple[Rule, ...]] = (
    Rule("accounts", "run as a service account other than {accounts}", accounts),
    Rule(
        "default-account",
        "run as the default account of the namespace with its token (name an account, or set"
        " automountServiceAccountToken to false)",
        default_account,
    ),
    Rule("secrets", "mount or read a Secret{other_secrets}", secrets),
    Rule("driver-secrets", "give a volume driver a Secret{other_secrets}", driver_secrets),
    Rule("pull-secrets", "pull images with a Secret{other_secrets}", pull_secrets),
    Rule("privileged", "run a privileged or Windows HostProcess container", privileged, "privileged"),
    Rule("host-paths", "mount a hostPath volume", host_paths, "host_paths"),
    Rule("host-namespaces", "use the network, PID or IPC namespace of the node", host_namespaces, "host_namespaces"),
    Rule("host-ports", "open a port on the node (hostPort)", host_ports, "host_ports"),
    Rule("capabilities", "add a capability{capabilities}", capabilities),
    Rule("sysctls", "set a sysctl{sysctls}", sysctls),
    Rule("seccomp", "run without a seccomp profile (Unconfined)", seccomp, "unconfined"),
    Rule("apparmor", "run without an AppArmor profile (unconfined)", apparmor, "unconfined"),
    Rule("selinux", "set an SELinux user, role or type beyond container_t", selinux, "unconfined"),
    Rule("proc-mount", "unmask /proc (procMount)", proc_mount, "unconfined"),
    Rule("runtime-class", "choose a runtime class{runtime_classes}", runtime_class),
    Rule("node-name", "name their node (nodeName), past the scheduler", node_name, "node_names"),
    Rule(
        "ephemeral-claims",
        "claim an ephemeral volume that picks its PersistentVolume or copies a volume",
        ephemeral_claims,
        "claim_sources",
    ),
)
#: The rules about a Volcano job spec (what its controller does for the job beyond its pods).
JOB_RULES: Final[tuple[Rule, ...]] = (
    Rule(
        "job-claims",
        "claim a volume (spec.volumes) that picks its PersistentVolume or copies a volume",
        job_claims,
        "claim_sources",
    ),
    Rule(
        "ssh-key-path", "mount the Secret of the ssh plugin over /var/run/secrets (--ssh-key-file-path)", ssh_key_path
    ),
)
