"""Kubernetes' rules for a pod spec that its field types do not say: names of the objects it refers to, its
deadline, host aliases, DNS, the security context's ids and its volumes' sources.

Volcano's admission webhook runs Kubernetes' pod-template validation on every task of a Job: a task that breaks one
of these rules fails the whole job at creation.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator, Mapping
from typing import Final

from hera_volcano.kube import names
from hera_volcano.kube.containers import check_security_ids
from hera_volcano.shared.checks import INT32_MAX
from hera_volcano.shared.findings import Finding, as_list, as_map, error

#: Pod fields that name another object: a DNS-1123 subdomain each.
_OBJECT_NAMES: Final = ("serviceAccountName", "nodeName", "priorityClassName", "runtimeClassName")
_PREEMPTION_POLICIES: Final = ("PreemptLowerPriority", "Never")
#: Volume sources whose name is required, by source and field.
_REQUIRED: Final = {
    "secret": "secretName",
    "configMap": "name",
    "hostPath": "path",
    "persistentVolumeClaim": "claimName",
}


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def check_pod_spec(spec: Mapping[str, object], path: str) -> Iterator[Finding]:
    """The pod-level rules of ``spec`` (a pod template's spec, at ``path``)."""
    for key in _OBJECT_NAMES:
        value = spec.get(key)
        if isinstance(value, str) and value:
            message = names.dns1123_subdomain(value)
            if message is not None:
                yield error(f"{path}.{key}", message)
    preemption = spec.get("preemptionPolicy")
    if isinstance(preemption, str) and preemption not in _PREEMPTION_POLICIES:
        yield error(f"{path}.preemptionPolicy", f"must be one of {', '.join(_PREEMPTION_POLICIES)}")
    deadline = _int(spec.get("activeDeadlineSeconds"))
    if deadline is not None and not 1 <= deadline <= INT32_MAX:
        yield error(f"{path}.activeDeadlineSeconds", f"must be between 1 and {INT32_MAX} (seconds), got {deadline}")
    for i, alias in enumerate(as_list(spec.get("hostAliases"))):
        ip = as_map(alias).get("ip")
        if isinstance(ip, str) and not _is_ip(ip):
            yield error(f"{path}.hostAliases[{i}].ip", f"must be an IP address, not {ip!r}")
    if spec.get("dnsPolicy") == "None" and not as_list(as_map(spec.get("dnsConfig")).get("nameservers")):
        yield error(f"{path}.dnsConfig", "must list at least one nameserver when dnsPolicy is None")
    yield from check_security_ids(as_map(spec.get("securityContext")), f"{path}.securityContext")
    for i, volume in enumerate(as_list(spec.get("volumes"))):
        if isinstance(volume, Mapping):
            yield from _check_volume_source(volume, f"{path}.volumes[{i}]")


def grace_seconds(spec: Mapping[str, object]) -> int | None:
    """The pod's terminationGracePeriodSeconds (Kubernetes' default 30 when left out; None when not a number)."""
    value = spec.get("terminationGracePeriodSeconds", 30)
    return 30 if value is None else _int(value)


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def _check_volume_source(volume: Mapping[str, object], path: str) -> Iterator[Finding]:
    for source, key in _REQUIRED.items():
        body = volume.get(source)
        if not isinstance(body, Mapping):
            continue
        if body.get(key) in (None, ""):
            yield error(f"{path}.{source}.{key}", f"{key} is required")
        for j, item in enumerate(as_list(body.get("items"))):
            target = as_map(item).get("path")
            if isinstance(target, str) and (target.startswith(("/", "..")) or ".." in target.split("/")):
                yield error(
                    f"{path}.{source}.items[{j}].path",
                    f"must be a relative path inside the volume, without '..', not {target!r}",
                )
