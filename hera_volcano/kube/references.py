"""Kubernetes' rules for what a pod template refers to that its field types do not say: the ConfigMap and Secret
keys and the resource fields its environment reads, the resource claims its containers use, the conditions its
readiness gates wait for, the nameservers and search domains of its DNS config.

Volcano's admission webhook runs Kubernetes' pod-template validation on every task: a task that breaks one of these
fails the whole job at creation.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterator, Mapping
from fractions import Fraction
from typing import Final

from hera_volcano.kube import names
from hera_volcano.kube.quantities import quantity
from hera_volcano.shared.findings import Finding, as_list, as_map, error

IP_MESSAGE: Final = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"
CONFIG_KEY_MAX: Final = 253
CONFIG_KEY_MESSAGE: Final = (
    "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (at most 253 characters, not '.',"
    " not starting with '..')"
)
#: Resources a container's ``resourceFieldRef`` may name (and ``limits.hugepages-<size>``, ``requests.hugepages-...``).
RESOURCE_FIELDS: Final = tuple(
    f"{kind}.{name}" for kind in ("limits", "requests") for name in ("cpu", "memory", "ephemeral-storage")
)
#: Libc's limits, which Kubernetes holds a pod's DNS config to.
MAX_NAMESERVERS: Final = 3
MAX_SEARCHES: Final = 32
MAX_SEARCH_CHARS: Final = 2048
_CONFIG_KEY: Final = re.compile(r"[-._a-zA-Z0-9]+")
_IPV4_SLOPPY: Final = re.compile(r"([0-9]+)\.([0-9]+)\.([0-9]+)\.([0-9]+)")
_HUGEPAGES: Final = re.compile(r"(limits|requests)\.hugepages-")
_DECIMAL_DIVISORS: Final = ("1", "1k", "1M", "1G", "1T", "1P", "1E")
_BINARY_DIVISORS: Final = ("1Ki", "1Mi", "1Gi", "1Ti", "1Pi", "1Ei")
_BINARY_SUFFIX: Final = re.compile(r"[KMGTPE]i")
_EXPONENT: Final = re.compile(r"[0-9.][eE][+-]?[0-9]+")


def ip_problem(text: str) -> str | None:
    """Kubernetes' IP rule (``IsValidIP``: Go's ``ParseIP``, leading zeros in IPv4 allowed), or None."""
    v4 = _IPV4_SLOPPY.fullmatch(text)
    if v4 is not None:
        return None if all(int(part) <= 255 for part in v4.groups()) else IP_MESSAGE
    if ":" not in text or "%" in text:
        return IP_MESSAGE
    try:
        ipaddress.IPv6Address(text)
    except ValueError:
        return IP_MESSAGE
    return None


def config_key_problem(key: str) -> str | None:
    """Kubernetes' rule for a ConfigMap or Secret key (``IsConfigMapKey``), or None."""
    if len(key) > CONFIG_KEY_MAX or _CONFIG_KEY.fullmatch(key) is None or key == "." or key.startswith(".."):
        return CONFIG_KEY_MESSAGE
    return None


def resource_field_problem(resource: str) -> str | None:
    """The resources a ``resourceFieldRef`` can read: a container's cpu, memory, ephemeral storage or hugepages."""
    if resource in RESOURCE_FIELDS or _HUGEPAGES.match(resource):
        return None
    return f"must be one of {', '.join(RESOURCE_FIELDS)} (or a hugepages size)"


def _canonical_divisor(raw: object) -> str | None:
    """The divisor as Kubernetes writes it back (``Quantity.String()``) when that is a power of its unit ("1m",
    "1", "1k", "1Ki"...), "" for any other quantity, None for what is not a quantity (reported elsewhere)."""
    value = quantity(raw)
    if value is None:
        return None
    text = raw if isinstance(raw, str) else repr(raw)
    if value == 1:
        return "1"
    if _BINARY_SUFFIX.search(text) and value >= 1024:  # below 1024 Kubernetes writes a binary quantity in decimal
        return next((s for k, s in enumerate(_BINARY_DIVISORS, 1) if value == Fraction(1024) ** k), "")
    if _EXPONENT.search(text):
        return ""
    if value == Fraction(1, 1000):
        return "1m"
    return next((s for k, s in enumerate(_DECIMAL_DIVISORS) if value == Fraction(1000) ** k), "")


def divisor_problem(resource: str, divisor: object) -> str | None:
    """Kubernetes' rule for the divisor of a ``resourceFieldRef`` of ``resource``
    (``validateContainerResourceDivisor``): 1m or 1 for cpu, a power of 1000 or 1024 for the others."""
    canonical = _canonical_divisor(divisor)
    if canonical is None or divisor is None or quantity(divisor) == 0:
        return None  # left out (or 0): Kubernetes' default, 1
    kind = resource.partition(".")[2]
    allowed: tuple[str, ...]
    if kind == "cpu":
        allowed, what = ("1m", "1"), "the cpu resource"
    elif kind in ("memory", "ephemeral-storage") or kind.startswith("hugepages-"):
        allowed = (*_DECIMAL_DIVISORS, *_BINARY_DIVISORS)
        what = {"memory": "the memory resource", "ephemeral-storage": "the local ephemeral storage resource"}.get(
            kind, "the hugepages resource"
        )
    else:
        return None
    if canonical in allowed:
        return None
    shown = " and ".join(allowed) if len(allowed) == 2 else ", ".join(allowed)
    return f"only divisor's values {shown} are supported with {what}, not {divisor!r}"


def resource_field_findings(ref: Mapping[str, object], path: str) -> Iterator[Finding]:
    """A ``resourceFieldRef`` (of an environment variable or a downward API file, at ``path``): a resource a
    container can be asked about, and a divisor that resource supports."""
    resource = ref.get("resource")
    if isinstance(resource, str):
        problem = resource_field_problem(resource)
        if problem is not None:
            yield error(f"{path}.resource", problem)
        divisor = divisor_problem(resource, ref.get("divisor"))
        if divisor is not None:
            yield error(f"{path}.divisor", divisor)


def _check_key_refs(container: Mapping[str, object], path: str) -> Iterator[Finding]:
    """The names and keys of the ConfigMaps and Secrets a container's environment variables read."""
    for k, env in enumerate(as_list(container.get("env"))):
        source = as_map(as_map(env).get("valueFrom"))
        at = f"{path}.env[{k}].valueFrom"
        for selector in ("configMapKeyRef", "secretKeyRef"):
            ref = as_map(source.get(selector))
            name, key = ref.get("name"), ref.get("key")
            if isinstance(name, str) and name and names.dns1123_subdomain(name) is not None:
                yield error(f"{at}.{selector}.name", names.DNS1123_SUBDOMAIN_MESSAGE)
            if isinstance(key, str) and key and config_key_problem(key) is not None:
                yield error(f"{at}.{selector}.key", CONFIG_KEY_MESSAGE)


def _pod_claims(spec: Mapping[str, object], path: str) -> tuple[set[str], list[Finding]]:
    """The names of the pod's ``resourceClaims`` and what is wrong with them."""
    found: list[Finding] = []
    claim_names: set[str] = set()
    for i, claim in enumerate(as_list(spec.get("resourceClaims"))):
        claim = as_map(claim)
        at = f"{path}.resourceClaims[{i}]"
        name = claim.get("name")
        if name in (None, ""):
            found.append(error(f"{at}.name", "name is required"))
        elif isinstance(name, str) and name in claim_names:
            found.append(error(f"{at}.name", f"Duplicate value: {name!r}"))
        elif isinstance(name, str):
            if names.dns1123_label(name) is not None:
                found.append(error(f"{at}.name", names.DNS1123_LABEL_MESSAGE))
            claim_names.add(name)
        sources = [s for s in ("resourceClaimName", "resourceClaimTemplateName") if claim.get(s) is not None]
        if len(sources) != 1:
            found.append(error(at, "must specify one of: `resourceClaimName`, `resourceClaimTemplateName` (only one)"))
        for s in sources:
            if names.dns1123_subdomain(claim[s]) is not None:
                found.append(error(f"{at}.{s}", names.DNS1123_SUBDOMAIN_MESSAGE))
    return claim_names, found


def _container_claims(container: Mapping[str, object], path: str, pod_claims: set[str]) -> Iterator[Finding]:
    """A container's ``resources.claims``: each names a claim of the pod's ``resourceClaims``, once."""
    seen: set[str] = set()
    for i, claim in enumerate(as_list(as_map(container.get("resources")).get("claims"))):
        claim = as_map(claim)
        at = f"{path}.resources.claims[{i}]"
        name, request = claim.get("name"), claim.get("request")
        if not isinstance(name, str) or not name:
            yield error(at, "name is required")
            continue
        key = f"{name}/{request}" if isinstance(request, str) and request else name
        if isinstance(request, str) and request and names.dns1123_label(request) is not None:
            yield error(f"{at}.request", names.DNS1123_LABEL_MESSAGE)
        if name in seen or key in seen or (key == name and any(s.startswith(f"{name}/") for s in seen)):
            yield error(at, f"Duplicate value: {key!r}")
        seen.add(key)
        if name not in pod_claims:
            listed = f": {', '.join(sorted(pod_claims))}" if pod_claims else " which is empty"
            yield error(f"{at}.name", f"must be one of the names in pod.spec.resourceClaims{listed}, not {name!r}")


def _check_dns(config: Mapping[str, object], path: str) -> Iterator[Finding]:
    """A pod's ``dnsConfig``: at most 3 nameservers, each an IP; at most 32 search domains of 2048 characters in
    all, each a DNS subdomain (a trailing '.' allowed); each option named."""
    nameservers = as_list(config.get("nameservers"))
    if len(nameservers) > MAX_NAMESERVERS:
        yield error(
            f"{path}.nameservers", f"must not have more than {MAX_NAMESERVERS} nameservers, got {len(nameservers)}"
        )
    for i, server in enumerate(nameservers):
        if isinstance(server, str) and ip_problem(server) is not None:
            yield error(f"{path}.nameservers[{i}]", f"{IP_MESSAGE}, not {server!r}")
    searches = [s for s in as_list(config.get("searches")) if isinstance(s, str)]
    if len(searches) > MAX_SEARCHES:
        yield error(f"{path}.searches", f"must not have more than {MAX_SEARCHES} search paths, got {len(searches)}")
    if len(" ".join(searches)) > MAX_SEARCH_CHARS:
        yield error(
            f"{path}.searches",
            f"must not have more than {MAX_SEARCH_CHARS} characters (including spaces) in the search list",
        )
    for i, search in enumerate(as_list(config.get("searches"))):
        if isinstance(search, str) and names.dns1123_subdomain(search.removesuffix(".")) is not None:
            yield error(f"{path}.searches[{i}]", names.DNS1123_SUBDOMAIN_MESSAGE)
    for i, option in enumerate(as_list(config.get("options"))):
        if as_map(option).get("name") in (None, ""):
            yield error(f"{path}.options[{i}].name", "must not be empty")


def check_pod_references(spec: Mapping[str, object], path: str) -> Iterator[Finding]:
    """Every rule of this module for a pod spec (at ``path``): its containers' and init containers' environment
    and resource claims, its claims, readiness gates and DNS config."""
    pod_claims, found = _pod_claims(spec, path)
    yield from found
    for group in ("initContainers", "containers"):
        for j, container in enumerate(as_list(spec.get(group))):
            if isinstance(container, Mapping):
                yield from _check_key_refs(container, f"{path}.{group}[{j}]")
                yield from _container_claims(container, f"{path}.{group}[{j}]", pod_claims)
    for i, gate in enumerate(as_list(spec.get("readinessGates"))):
        condition = as_map(gate).get("conditionType")
        if isinstance(condition, str):
            problem = names.qualified_name(condition)
            if problem is not None:
                yield error(f"{path}.readinessGates[{i}].conditionType", problem)
    config = spec.get("dnsConfig")
    if isinstance(config, Mapping):
        yield from _check_dns(config, f"{path}.dnsConfig")
