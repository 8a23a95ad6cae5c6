"""Kubernetes' rules for a pod spec that its field types do not say: names of the objects it refers to, its
deadline, host aliases, DNS, the security context's ids; its volumes and mounts (``kube.volumes``) and what it
refers to (``kube.references``).

Volcano's admission webhook runs Kubernetes' pod-template validation on every task of a Job: a task that breaks one
of these rules fails the whole job at creation.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Final

from hera_volcano.kube import names
from hera_volcano.kube.containers import check_security_ids
from hera_volcano.kube.references import check_pod_references, ip_problem
from hera_volcano.kube.volumes import check_pod_volumes
from hera_volcano.shared.checks import INT32_MAX
from hera_volcano.shared.findings import Finding, as_list, as_map, error

#: Pod fields that name another object: a DNS-1123 subdomain each.
_OBJECT_NAMES: Final = ("serviceAccountName", "nodeName", "priorityClassName", "runtimeClassName")
_PREEMPTION_POLICIES: Final = ("PreemptLowerPriority", "Never")


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
        if isinstance(ip, str) and ip_problem(ip) is not None:
            yield error(f"{path}.hostAliases[{i}].ip", f"{ip_problem(ip)}, not {ip!r}")
    if spec.get("dnsPolicy") == "None" and not as_list(as_map(spec.get("dnsConfig")).get("nameservers")):
        yield error(f"{path}.dnsConfig", "must list at least one nameserver when dnsPolicy is None")
    yield from check_security_ids(as_map(spec.get("securityContext")), f"{path}.securityContext")
    yield from check_pod_volumes(spec, path)
    yield from check_pod_references(spec, path)


def grace_seconds(spec: Mapping[str, object]) -> int | None:
    """The pod's terminationGracePeriodSeconds (Kubernetes' default 30 when left out; None when not a number)."""
    value = spec.get("terminationGracePeriodSeconds", 30)
    return 30 if value is None else _int(value)
