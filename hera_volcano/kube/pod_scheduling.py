"""Kubernetes' rules for where a pod may run that its field types do not say: node affinity, pod (anti-)affinity,
topology spread constraints and the label selectors inside them.

Volcano's admission webhook runs Kubernetes' pod-template validation on every task of a Job with default options
(label values in selectors and required node affinity are checked), so a task that breaks one fails the whole job.
The messages use the validation's own words.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Final

from hera_volcano.kube import names
from hera_volcano.kube.pod_security import unsupported
from hera_volcano.shared.findings import Finding, as_list, as_map, entry, error

_WHEN_UNSATISFIABLE: Final = ("DoNotSchedule", "ScheduleAnyway")
_NODE_INCLUSION_POLICIES: Final = ("Honor", "Ignore")
_NOT_POSITIVE: Final = "must be greater than zero"
_WEIGHT: Final = "must be in the range 1-100"
_REQUIRED: Final = "requiredDuringSchedulingIgnoredDuringExecution"
_PREFERRED: Final = "preferredDuringSchedulingIgnoredDuringExecution"


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def check_pod_scheduling(spec: Mapping[str, object], path: str) -> Iterator[Finding]:
    """Every scheduling rule of a pod spec at ``path``: its affinity and its topology spread constraints."""
    affinity = as_map(spec.get("affinity"))
    node = affinity.get("nodeAffinity")
    if isinstance(node, Mapping):
        yield from _check_node_affinity(node, f"{path}.affinity.nodeAffinity")
    for kind in ("podAffinity", "podAntiAffinity"):
        terms = affinity.get(kind)
        if isinstance(terms, Mapping):
            yield from _check_pod_affinity(terms, f"{path}.affinity.{kind}")
    yield from _check_spread(spec.get("topologySpreadConstraints"), f"{path}.topologySpreadConstraints")


def _weight(term: Mapping[str, object], path: str) -> Iterator[Finding]:
    weight = _int(term.get("weight"))
    if weight is not None and not 1 <= weight <= 100:
        yield error(f"{path}.weight", _WEIGHT)


def _check_node_affinity(affinity: Mapping[str, object], path: str) -> Iterator[Finding]:
    required = affinity.get(_REQUIRED)
    if isinstance(required, Mapping):
        terms = required.get("nodeSelectorTerms")
        if not as_list(terms):
            yield error(f"{path}.{_REQUIRED}.nodeSelectorTerms", "must have at least one node selector term")
        for i, term in enumerate(as_list(terms)):
            if isinstance(term, Mapping):
                yield from _check_node_term(term, f"{path}.{_REQUIRED}.nodeSelectorTerms[{i}]", values=True)
    for i, preferred in enumerate(as_list(affinity.get(_PREFERRED))):
        if isinstance(preferred, Mapping):
            at = f"{path}.{_PREFERRED}[{i}]"
            yield from _weight(preferred, at)
            # Kubernetes allows any label value in a preferred term: it may still match on a one-node cluster
            yield from _check_node_term(as_map(preferred.get("preference")), f"{at}.preference", values=False)


def _check_node_term(term: Mapping[str, object], path: str, values: bool) -> Iterator[Finding]:
    for j, requirement in enumerate(as_list(term.get("matchExpressions"))):
        if isinstance(requirement, Mapping):
            yield from _check_node_requirement(requirement, f"{path}.matchExpressions[{j}]", values)
    for j, requirement in enumerate(as_list(term.get("matchFields"))):
        if isinstance(requirement, Mapping):
            yield from _check_field_requirement(requirement, f"{path}.matchFields[{j}]")


def _check_node_requirement(requirement: Mapping[str, object], path: str, check_values: bool) -> Iterator[Finding]:
    operator, values = requirement.get("operator"), as_list(requirement.get("values"))
    if operator in ("In", "NotIn") and not values:
        yield error(f"{path}.values", "must be specified when `operator` is 'In' or 'NotIn'")
    elif operator in ("Exists", "DoesNotExist") and values:
        yield error(f"{path}.values", "may not be specified when `operator` is 'Exists' or 'DoesNotExist'")
    elif operator in ("Gt", "Lt") and len(values) != 1:
        yield error(f"{path}.values", "must be specified single value when `operator` is 'Lt' or 'Gt'")
    elif operator not in ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"):
        yield error(f"{path}.operator", f"{operator!r} is not a valid selector operator")
    yield from _label_name(requirement.get("key"), f"{path}.key")
    if check_values:
        yield from _label_values(values, f"{path}.values")


def _check_field_requirement(requirement: Mapping[str, object], path: str) -> Iterator[Finding]:
    """A ``matchFields`` requirement: only ``metadata.name``, In or NotIn, one node name."""
    operator, values = requirement.get("operator"), as_list(requirement.get("values"))
    if operator not in ("In", "NotIn"):
        yield error(f"{path}.operator", f"{operator!r} is not a valid selector operator")
    elif len(values) != 1:
        yield error(
            f"{path}.values", "must be only one value when `operator` is 'In' or 'NotIn' for node field selector"
        )
    if requirement.get("key") != "metadata.name":
        yield error(f"{path}.key", "not a valid field selector key (only metadata.name)")
    else:
        for k, value in enumerate(values):
            message = names.dns1123_subdomain(value) if isinstance(value, str) else None
            if message is not None:
                yield error(f"{path}.values[{k}]", message)


def _check_pod_affinity(affinity: Mapping[str, object], path: str) -> Iterator[Finding]:
    for i, term in enumerate(as_list(affinity.get(_REQUIRED))):
        if isinstance(term, Mapping):
            yield from _check_pod_term(term, f"{path}.{_REQUIRED}[{i}]")
    for i, weighted in enumerate(as_list(affinity.get(_PREFERRED))):
        if isinstance(weighted, Mapping):
            at = f"{path}.{_PREFERRED}[{i}]"
            yield from _weight(weighted, at)
            yield from _check_pod_term(as_map(weighted.get("podAffinityTerm")), f"{at}.podAffinityTerm")


def _check_pod_term(term: Mapping[str, object], path: str) -> Iterator[Finding]:
    yield from check_label_selector(term.get("labelSelector"), f"{path}.labelSelector")
    yield from check_label_selector(term.get("namespaceSelector"), f"{path}.namespaceSelector")
    for k, namespace in enumerate(as_list(term.get("namespaces"))):
        message = names.dns1123_label(namespace) if isinstance(namespace, str) else None
        if message is not None:
            yield error(f"{path}.namespaces[{k}]", message)
    for kind in ("matchLabelKeys", "mismatchLabelKeys"):
        for k, key in enumerate(as_list(term.get(kind))):
            yield from _label_name(key, f"{path}.{kind}[{k}]")
    topology_key = term.get("topologyKey")
    if topology_key in (None, ""):
        yield error(f"{path}.topologyKey", "can not be empty")
    else:
        yield from _label_name(topology_key, f"{path}.topologyKey")


def _check_spread(constraints: object, path: str) -> Iterator[Finding]:
    items = [(i, c) for i, c in enumerate(as_list(constraints)) if isinstance(c, Mapping)]
    for i, constraint in items:
        at = f"{path}[{i}]"
        key, when = constraint.get("topologyKey"), constraint.get("whenUnsatisfiable")
        yield from _spread_fields(constraint, at)
        if any(c.get("topologyKey") == key and c.get("whenUnsatisfiable") == when for j, c in items if j > i):
            yield error(f"{at}.{{topologyKey, whenUnsatisfiable}}", f"duplicate constraint {{{key}, {when}}}")
        selector = constraint.get("labelSelector")
        for k, label_key in enumerate(as_list(constraint.get("matchLabelKeys"))):
            yield from _label_name(label_key, f"{at}.matchLabelKeys[{k}]")
        if as_list(constraint.get("matchLabelKeys")) and selector is None:
            yield error(f"{at}.matchLabelKeys", "must not be specified when labelSelector is not set")
        yield from check_label_selector(selector, f"{at}.labelSelector")


def _spread_fields(constraint: Mapping[str, object], path: str) -> Iterator[Finding]:
    """One constraint's own fields (left out, maxSkew and whenUnsatisfiable are Go's zero values: refused)."""
    skew = constraint.get("maxSkew")
    number = _int(skew)
    if skew is None or (number is not None and number <= 0):
        yield error(f"{path}.maxSkew", _NOT_POSITIVE)
    if constraint.get("topologyKey") in (None, ""):
        yield error(f"{path}.topologyKey", "can not be empty")
    when = constraint.get("whenUnsatisfiable")
    yield from unsupported(f"{path}.whenUnsatisfiable", "" if when is None else when, _WHEN_UNSATISFIABLE)
    if constraint.get("minDomains") is not None:
        domains = _int(constraint.get("minDomains"))
        if domains is not None and domains <= 0:
            yield error(f"{path}.minDomains", _NOT_POSITIVE)
        if when != "DoNotSchedule":
            yield error(f"{path}.minDomains", f"can only use minDomains if whenUnsatisfiable=DoNotSchedule, not {when}")
    for policy in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
        yield from unsupported(f"{path}.{policy}", constraint.get(policy), _NODE_INCLUSION_POLICIES)


def check_label_selector(selector: object, path: str) -> Iterator[Finding]:
    """Kubernetes' rules for a label selector (``matchLabels`` and ``matchExpressions``), label values checked."""
    if not isinstance(selector, Mapping):
        return
    for key, value in as_map(selector.get("matchLabels")).items():
        at = entry(f"{path}.matchLabels", key)
        yield from _label_name(key, at)
        message = names.label_value(value) if isinstance(value, str) else None
        if message is not None:
            yield error(at, message)
    for j, requirement in enumerate(as_list(selector.get("matchExpressions"))):
        if not isinstance(requirement, Mapping):
            continue
        at = f"{path}.matchExpressions[{j}]"
        operator, values = requirement.get("operator"), as_list(requirement.get("values"))
        if operator in ("In", "NotIn") and not values:
            yield error(f"{at}.values", "must be specified when `operator` is 'In' or 'NotIn'")
        elif operator in ("Exists", "DoesNotExist") and values:
            yield error(f"{at}.values", "may not be specified when `operator` is 'Exists' or 'DoesNotExist'")
        elif operator not in ("In", "NotIn", "Exists", "DoesNotExist"):
            yield error(f"{at}.operator", f"{operator!r} is not a valid selector operator")
        yield from _label_name(requirement.get("key"), f"{at}.key")
        yield from _label_values(values, f"{at}.values")


def _label_name(key: object, path: str) -> Iterator[Finding]:
    message = names.qualified_name(key) if isinstance(key, str) else None
    if message is not None:
        yield error(path, f"label key {message}")


def _label_values(values: list[object], path: str) -> Iterator[Finding]:
    for k, value in enumerate(values):
        message = names.label_value(value) if isinstance(value, str) else None
        if message is not None:
            yield error(f"{path}[{k}]", message)
