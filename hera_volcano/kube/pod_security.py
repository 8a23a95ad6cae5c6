"""Kubernetes' rules for a pod's security settings that their field types do not say: the pod's and each container's
security context (seccomp and AppArmor profiles, procMount, privilege escalation, sysctls, group ids and policies),
user namespaces (``hostUsers``) and the pod's OS.

Volcano's admission webhook runs Kubernetes' pod-template validation on every task of a Job (every Volcano release
the project supports vendors Kubernetes 1.32 or later, so the rules of 1.31+ hold, such as ``procMount: Unmasked``
only with ``hostUsers: false``): a task that breaks one fails the whole job at creation. The messages use the
validation's own words.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Final

from hera_volcano.shared.checks import INT32_MAX
from hera_volcano.shared.findings import Finding, as_list, as_map, error

_SECCOMP_TYPES: Final = ("Localhost", "RuntimeDefault", "Unconfined")
_PROC_MOUNTS: Final = ("Default", "Unmasked")
_FS_GROUP_CHANGE_POLICIES: Final = ("Always", "OnRootMismatch")
_SELINUX_CHANGE_POLICIES: Final = ("MountOption", "Recursive")
_SUPPLEMENTAL_GROUPS_POLICIES: Final = ("Merge", "Strict")
_OS_NAMES: Final = ("linux", "windows")
#: Kubernetes' sysctl name: dot- or slash-separated segments, at most 253 characters.
_SYSCTL_SEGMENT: Final = "[a-z0-9]([-_a-z0-9]*[a-z0-9])?"
_SYSCTL_PATTERN: Final = f"({_SYSCTL_SEGMENT}[\\./])*{_SYSCTL_SEGMENT}"
_SYSCTL: Final = re.compile(_SYSCTL_PATTERN)
SYSCTL_MAX_LENGTH: Final = 253
SYSCTL_MESSAGE: Final = f"must have at most {SYSCTL_MAX_LENGTH} characters and match regex ^{_SYSCTL_PATTERN}$"
#: Sysctls of the network and IPC namespaces: a pod that shares the host's namespace may not set them.
_IPC_SYSCTLS: Final = ("kernel.sem",)
_IPC_SYSCTL_PREFIXES: Final = ("kernel.shm", "kernel.msg", "fs.mqueue.")
_MAX_APPARMOR_PROFILE: Final = 4095
#: Security-context fields a Windows pod may not set, at pod level (under securityContext, or of the spec itself).
_WINDOWS_POD_CONTEXT: Final = (
    "appArmorProfile",
    "seLinuxOptions",
    "seccompProfile",
    "fsGroup",
    "fsGroupChangePolicy",
    "sysctls",
    "runAsUser",
    "runAsGroup",
    "supplementalGroups",
    "supplementalGroupsPolicy",
    "seLinuxChangePolicy",
)
_WINDOWS_POD_SPEC: Final = ("hostUsers", "hostPID", "hostIPC", "shareProcessNamespace")
_WINDOWS_CONTAINER_CONTEXT: Final = (
    "appArmorProfile",
    "seLinuxOptions",
    "seccompProfile",
    "capabilities",
    "readOnlyRootFilesystem",
    "privileged",
    "allowPrivilegeEscalation",
    "procMount",
    "runAsUser",
    "runAsGroup",
)
_WINDOWS: Final = "cannot be set for a windows pod"
_LINUX: Final = "windows options cannot be set for a linux pod"


def unsupported(path: str, value: object, allowed: Sequence[str]) -> Iterator[Finding]:
    """Kubernetes' ``Unsupported value`` for a string outside ``allowed`` (other types: the shape check says)."""
    if isinstance(value, str) and value not in allowed:
        yield error(path, f"unsupported value {value!r}: supported values: {', '.join(allowed)}")


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def containers(spec: Mapping[str, object], path: str) -> Iterator[tuple[Mapping[str, object], str]]:
    """Each init and regular container of a pod spec with its path, as Kubernetes visits them."""
    for group in ("initContainers", "containers"):
        for i, container in enumerate(as_list(spec.get(group))):
            if isinstance(container, Mapping):
                yield container, f"{path}.{group}[{i}]"


def check_pod_security(spec: Mapping[str, object], path: str) -> Iterator[Finding]:
    """Every security rule of a pod spec at ``path``: its security context, each container's, user namespaces, OS."""
    host_users = spec.get("hostUsers") is not False  # Kubernetes' default is true
    yield from _check_pod_context(spec, path)
    for container, at in containers(spec, path):
        yield from _check_container_context(
            as_map(container.get("securityContext")), f"{at}.securityContext", host_users
        )
    if not host_users:
        for key in ("hostNetwork", "hostPID", "hostIPC"):
            if spec.get(key) is True:
                yield error(f"{path}.{key}", "is forbidden when `hostUsers` is false")
    yield from _check_os(spec, path)


def _check_pod_context(spec: Mapping[str, object], pod_path: str) -> Iterator[Finding]:
    context, path = as_map(spec.get("securityContext")), f"{pod_path}.securityContext"
    for i, gid in enumerate(as_list(context.get("supplementalGroups"))):
        value = _int(gid)
        if value is not None and not 0 <= value <= INT32_MAX:
            yield error(f"{path}.supplementalGroups[{i}]", f"must be between 0 and {INT32_MAX}, inclusive, got {value}")
    if spec.get("shareProcessNamespace") is True and spec.get("hostPID") is True:
        yield error(f"{pod_path}.shareProcessNamespace", "ShareProcessNamespace and HostPID cannot both be enabled")
    yield from _check_sysctls(spec, context.get("sysctls"), f"{path}.sysctls")
    yield from unsupported(f"{path}.fsGroupChangePolicy", context.get("fsGroupChangePolicy"), _FS_GROUP_CHANGE_POLICIES)
    yield from unsupported(f"{path}.seLinuxChangePolicy", context.get("seLinuxChangePolicy"), _SELINUX_CHANGE_POLICIES)
    yield from unsupported(
        f"{path}.supplementalGroupsPolicy", context.get("supplementalGroupsPolicy"), _SUPPLEMENTAL_GROUPS_POLICIES
    )
    yield from _check_profiles(context, path)


def _check_container_context(context: Mapping[str, object], path: str, host_users: bool) -> Iterator[Finding]:
    proc_mount = context.get("procMount")
    yield from unsupported(f"{path}.procMount", proc_mount, _PROC_MOUNTS)
    if proc_mount == "Unmasked" and host_users:
        yield error(f"{path}.procMount", "`hostUsers` must be false to use `Unmasked`")
    yield from _check_profiles(context, path)
    if context.get("allowPrivilegeEscalation") is False:
        if context.get("privileged") is True:
            yield error(path, "cannot set `allowPrivilegeEscalation` to false and `privileged` to true")
        if "CAP_SYS_ADMIN" in as_list(as_map(context.get("capabilities")).get("add")):
            yield error(path, "cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN")


def _check_profiles(context: Mapping[str, object], path: str) -> Iterator[Finding]:
    """The seccomp and AppArmor profiles of a (pod or container) security context."""
    seccomp = context.get("seccompProfile")
    if isinstance(seccomp, Mapping):
        yield from _check_seccomp(seccomp, f"{path}.seccompProfile")
    apparmor = context.get("appArmorProfile")
    if isinstance(apparmor, Mapping):
        yield from _check_apparmor(apparmor, f"{path}.appArmorProfile")


def _check_seccomp(profile: Mapping[str, object], path: str) -> Iterator[Finding]:
    kind, local = profile.get("type"), profile.get("localhostProfile")
    if kind in (None, ""):
        yield error(f"{path}.type", "type is required when seccompProfile is set")
    yield from unsupported(f"{path}.type", kind or None, _SECCOMP_TYPES)
    if kind == "Localhost" and local is None:
        yield error(f"{path}.localhostProfile", "must be set when seccomp type is Localhost")
    elif kind == "Localhost" and isinstance(local, str):
        problem = _local_descending_path(local)
        if problem is not None:
            yield error(f"{path}.localhostProfile", problem)
    elif kind != "Localhost" and local is not None:
        yield error(f"{path}.localhostProfile", "can only be set when seccomp type is Localhost")


def _local_descending_path(text: str) -> str | None:
    """Kubernetes' rule for a seccomp profile's file (read on a Linux API server): relative, without '..'."""
    if text.startswith("/"):
        return "must be a relative path"
    if ".." in text.split("/"):
        return "must not contain '..'"
    return None


def _check_apparmor(profile: Mapping[str, object], path: str) -> Iterator[Finding]:
    kind, local = profile.get("type"), profile.get("localhostProfile")
    if kind == "Localhost":
        if local is None or (isinstance(local, str) and local == ""):
            yield error(f"{path}.localhostProfile", "must be set when AppArmor type is Localhost")
        elif isinstance(local, str) and local != local.strip():
            yield error(f"{path}.localhostProfile", "must not be padded with whitespace")
        if isinstance(local, str) and len(local.encode()) > _MAX_APPARMOR_PROFILE:
            yield error(f"{path}.localhostProfile", f"must have at most {_MAX_APPARMOR_PROFILE} bytes")
    elif kind in ("RuntimeDefault", "Unconfined"):
        if local is not None:
            yield error(f"{path}.localhostProfile", "can only be set when AppArmor type is Localhost")
    elif kind in (None, ""):
        yield error(f"{path}.type", "type is required when appArmorProfile is set")
    else:
        yield from unsupported(f"{path}.type", kind, _SECCOMP_TYPES)


def sysctl_name_problem(name: str) -> str | None:
    """Kubernetes' rule for a sysctl's name (``IsValidSysctlName``), or None."""
    if len(name) > SYSCTL_MAX_LENGTH or _SYSCTL.fullmatch(name) is None:
        return SYSCTL_MESSAGE
    return None


def _sysctl_namespace(name: str) -> str | None:
    """``net`` or ``ipc`` for a sysctl of those namespaces; a name whose first separator is '/' has '.' and '/'
    swapped first, as Kubernetes normalizes it."""
    first = re.search(r"[./]", name)
    normal = name.translate(str.maketrans("./", "/.")) if first is not None and first.group() == "/" else name
    if normal.startswith("net."):
        return "net"
    if normal in _IPC_SYSCTLS or normal.startswith(_IPC_SYSCTL_PREFIXES):
        return "ipc"
    return None


def _check_sysctls(spec: Mapping[str, object], sysctls: object, path: str) -> Iterator[Finding]:
    seen: set[str] = set()
    for i, sysctl in enumerate(as_list(sysctls)):
        name = as_map(sysctl).get("name")
        at = f"{path}[{i}].name"
        if name in (None, ""):
            yield error(at, "is required")
            continue
        if not isinstance(name, str):
            continue
        problem = sysctl_name_problem(name)
        if problem is not None:
            yield error(at, problem)
        elif name in seen:
            yield error(at, f"duplicate sysctl {name!r}")
        seen.add(name)
        namespace = _sysctl_namespace(name)
        if namespace == "net" and spec.get("hostNetwork") is True:
            yield error(at, "may not be specified when 'hostNetwork' is true")
        elif namespace == "ipc" and spec.get("hostIPC") is True:
            yield error(at, "may not be specified when 'hostIPC' is true")


def _check_os(spec: Mapping[str, object], path: str) -> Iterator[Finding]:
    """The OS name, and the security fields the other OS's pods may not set."""
    os = spec.get("os")
    if not isinstance(os, Mapping):
        return
    name = os.get("name")
    if name in (None, ""):
        yield error(f"{path}.os.name", "cannot be empty")
        return
    yield from unsupported(f"{path}.os.name", name, _OS_NAMES)
    context = as_map(spec.get("securityContext"))
    if name == "windows":
        for key in _WINDOWS_POD_CONTEXT:
            if context.get(key) is not None:
                yield error(f"{path}.securityContext.{key}", _WINDOWS)
        for key in _WINDOWS_POD_SPEC:
            # hostUsers and shareProcessNamespace are refused when set at all; hostPID and hostIPC when true
            set_at_all = key in ("hostUsers", "shareProcessNamespace") and spec.get(key) is not None
            if set_at_all or spec.get(key) is True:
                yield error(f"{path}.{key}", _WINDOWS)
        for container, at in containers(spec, path):
            container_context = as_map(container.get("securityContext"))
            for key in _WINDOWS_CONTAINER_CONTEXT:
                if container_context.get(key) is not None:
                    yield error(f"{at}.securityContext.{key}", _WINDOWS)
    elif name == "linux":
        if context.get("windowsOptions") is not None:
            yield error(f"{path}.securityContext.windowsOptions", _LINUX)
        for container, at in containers(spec, path):
            if as_map(container.get("securityContext")).get("windowsOptions") is not None:
                yield error(f"{at}.securityContext.windowsOptions", _LINUX)
