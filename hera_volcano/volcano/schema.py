"""The shape of a Volcano Job and a Volcano Queue: which fields exist where, and the type of each scalar.

Volcano's CRDs (the Job's with its embedded pod template) reject unknown fields and wrong types; these tables say
the same without a cluster. Kubernetes types come from the snapshot of Hera's models (``kube.pod_fields``).
"""

from __future__ import annotations

import functools
import typing
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Final, Literal, TypeAlias

from hera_volcano.kube import pod_fields
from hera_volcano.kube.quantities import QUANTITY_MESSAGE, quantity
from hera_volcano.shared.checks import INT32_MAX, INT32_MIN
from hera_volcano.shared.findings import Finding, entry, error, join
from hera_volcano.shared.placeholders import DEFAULT_SAMPLE

API_VERSION: Final = "batch.volcano.sh/v1alpha1"
KIND: Final = "Job"
QUEUE_API_VERSION: Final = "scheduling.volcano.sh/v1beta1"
QUEUE_KIND: Final = "Queue"
#: What a quantity of a Queue must be: its CRD takes an integer or a string, and refuses any other number.
CRD_QUANTITY_MESSAGE: Final = (
    "must be a quantity string such as '500m', '64' or '512Gi', or a whole number: the CRD refuses a decimal"
    " number (quote it)"
)
_INT64_MAX: Final = 2**63 - 1


@dataclass(frozen=True)
class _Leaf:
    kind: Literal["str", "int", "int32", "bool", "int-or-str", "quantity", "crd-quantity", "any"]


@dataclass(frozen=True)
class _ListOf:
    item: _Node


@dataclass(frozen=True)
class _MapOf:
    value: _Node


@dataclass(frozen=True)
class _Struct:
    """An object with a fixed set of fields; ``what`` names it in unknown-field messages."""

    what: str
    fields: Mapping[str, _Node]


@dataclass(frozen=True)
class _Model:
    """A Kubernetes type whose fields come from the snapshot of Hera's models (``kube.pod_fields``)."""

    name: str


_Node: TypeAlias = "_Leaf | _ListOf | _MapOf | _Struct | _Model"

_STR: Final = _Leaf("str")
_INT: Final = _Leaf("int")
_INT32: Final = _Leaf("int32")
_BOOL: Final = _Leaf("bool")
_ANY: Final = _Leaf("any")
_QUANTITY_LEAF: Final = _Leaf("quantity")
_CRD_QUANTITY: Final = _Leaf("crd-quantity")
_INT_OR_STR: Final = _Leaf("int-or-str")


def _core(name: str) -> _Model:
    return _Model(name)


def _struct(what: str, **fields: _Node) -> _Struct:
    return _Struct(what, fields)


_TOPOLOGY_SPREAD: Final = _struct(
    "a Kubernetes TopologySpreadConstraint",
    labelSelector=_Model("meta.LabelSelector"),
    matchLabelKeys=_ListOf(_STR),
    maxSkew=_INT32,
    minDomains=_INT32,
    nodeAffinityPolicy=_STR,
    nodeTaintsPolicy=_STR,
    topologyKey=_STR,
    whenUnsatisfiable=_STR,
)
# Hera has no PodSpec model (Argo templates carry their own pod fields), so this table lists its field names.
_POD_SPEC: Final = _struct(
    "a Kubernetes PodSpec",
    activeDeadlineSeconds=_INT,
    affinity=_core("Affinity"),
    automountServiceAccountToken=_BOOL,
    containers=_ListOf(_core("Container")),
    dnsConfig=_core("PodDNSConfig"),
    dnsPolicy=_STR,
    enableServiceLinks=_BOOL,
    ephemeralContainers=_ListOf(_ANY),
    hostAliases=_ListOf(_core("HostAlias")),
    hostIPC=_BOOL,
    hostNetwork=_BOOL,
    hostPID=_BOOL,
    hostUsers=_BOOL,
    hostname=_STR,
    hostnameOverride=_STR,
    imagePullSecrets=_ListOf(_core("LocalObjectReference")),
    initContainers=_ListOf(_core("Container")),
    nodeName=_STR,
    nodeSelector=_MapOf(_STR),
    os=_struct("a Kubernetes PodOS", name=_STR),
    overhead=_MapOf(_QUANTITY_LEAF),
    preemptionPolicy=_STR,
    priority=_INT32,
    priorityClassName=_STR,
    readinessGates=_ListOf(_struct("a Kubernetes PodReadinessGate", conditionType=_STR)),
    resourceClaims=_ListOf(
        _struct("a Kubernetes PodResourceClaim", name=_STR, resourceClaimName=_STR, resourceClaimTemplateName=_STR)
    ),
    resources=_core("ResourceRequirements"),
    restartPolicy=_STR,
    runtimeClassName=_STR,
    schedulerName=_STR,
    schedulingGates=_ListOf(_struct("a Kubernetes PodSchedulingGate", name=_STR)),
    schedulingGroup=_struct("a Kubernetes PodSchedulingGroup", podGroupName=_STR),
    securityContext=_core("PodSecurityContext"),
    serviceAccount=_STR,
    serviceAccountName=_STR,
    setHostnameAsFQDN=_BOOL,
    shareProcessNamespace=_BOOL,
    subdomain=_STR,
    terminationGracePeriodSeconds=_INT,
    tolerations=_ListOf(_core("Toleration")),
    topologySpreadConstraints=_ListOf(_TOPOLOGY_SPREAD),
    volumes=_ListOf(_core("Volume")),
)
# The CRD keeps only these metadata fields in a task's pod template.
_POD_TEMPLATE: Final = _struct(
    "a Volcano task's pod template",
    metadata=_struct(
        "pod template metadata",
        name=_STR,
        namespace=_STR,
        labels=_MapOf(_STR),
        annotations=_MapOf(_STR),
        finalizers=_ListOf(_STR),
    ),
    spec=_POD_SPEC,
)
_NETWORK_TOPOLOGY: Final = _struct(
    "a Volcano networkTopology", mode=_STR, highestTierAllowed=_INT32, highestTierName=_STR
)
_POLICY: Final = _struct(
    "a Volcano lifecycle policy", event=_STR, events=_ListOf(_STR), action=_STR, exitCode=_INT32, timeout=_STR
)
_TASK: Final = _struct(
    "a Volcano task",
    name=_STR,
    replicas=_INT32,
    minAvailable=_INT32,
    maxRetry=_INT32,
    template=_POD_TEMPLATE,
    policies=_ListOf(_POLICY),
    topologyPolicy=_STR,
    dependsOn=_struct("a Volcano dependsOn", name=_ListOf(_STR), iteration=_STR),
    partitionPolicy=_struct(
        "a Volcano partitionPolicy",
        totalPartitions=_INT32,
        partitionSize=_INT32,
        minPartitions=_INT32,
        networkTopology=_NETWORK_TOPOLOGY,
    ),
)
_SPEC: Final = _struct(
    "the Volcano Job spec",
    schedulerName=_STR,
    minAvailable=_INT32,
    volumes=_ListOf(
        _struct(
            "a Volcano volume", mountPath=_STR, volumeClaimName=_STR, volumeClaim=_core("PersistentVolumeClaimSpec")
        )
    ),
    tasks=_ListOf(_TASK),
    policies=_ListOf(_POLICY),
    plugins=_MapOf(_ListOf(_STR)),
    runningEstimate=_STR,
    queue=_STR,
    maxRetry=_INT32,
    ttlSecondsAfterFinished=_INT32,
    priorityClassName=_STR,
    minSuccess=_INT32,
    networkTopology=_NETWORK_TOPOLOGY,
)
_JOB: Final = _struct(
    "a Volcano Job", apiVersion=_STR, kind=_STR, metadata=_Model("meta.ObjectMeta"), spec=_SPEC, status=_ANY
)

_RESOURCE_LIST: Final = _MapOf(_CRD_QUANTITY)
_NODE_GROUPS: Final = _struct(
    "a Volcano node group affinity",
    preferredDuringSchedulingIgnoredDuringExecution=_ListOf(_STR),
    requiredDuringSchedulingIgnoredDuringExecution=_ListOf(_STR),
)
_QUEUE_SPEC: Final = _struct(
    "the Volcano Queue spec",
    affinity=_struct("a Volcano queue affinity", nodeGroupAffinity=_NODE_GROUPS, nodeGroupAntiAffinity=_NODE_GROUPS),
    capability=_RESOURCE_LIST,
    dequeueStrategy=_STR,
    deserved=_RESOURCE_LIST,
    extendClusters=_ListOf(_struct("a Volcano queue cluster", capacity=_RESOURCE_LIST, name=_STR, weight=_INT32)),
    guarantee=_struct("a Volcano queue guarantee", resource=_RESOURCE_LIST),
    parent=_STR,
    priority=_INT32,
    reclaimable=_BOOL,
    type=_STR,
    weight=_INT32,
)
_QUEUE: Final = _struct(
    "a Volcano Queue", apiVersion=_STR, kind=_STR, metadata=_Model("meta.ObjectMeta"), spec=_QUEUE_SPEC, status=_ANY
)


@functools.cache
def _model_struct(name: str) -> _Struct:
    """The field table of one Kubernetes type, keyed by JSON name; built once per type from the snapshot."""
    fields = {field: _node(kind) for field, kind in pod_fields.table()[name].items()}
    fields.update(dict.fromkeys(pod_fields.NEWER_FIELDS.get(name, ()), _ANY))  # the Volcano CRD has them
    return _Struct(f"a Kubernetes {name.removeprefix('meta.')}", fields)


_LEAVES: Final[Mapping[str, _Leaf]] = {
    "str": _STR,
    "int": _INT,
    "bool": _BOOL,
    "int-or-str": _INT_OR_STR,
    "quantity": _QUANTITY_LEAF,
    "any": _ANY,
}


def _node(kind: pod_fields.FieldKind) -> _Node:
    """A shape node from a snapshot kind; nested models stay lazy (resolved when data reaches them)."""
    if isinstance(kind, str):
        return _LEAVES[kind]
    if "list" in kind:
        return _ListOf(_node(kind["list"]))
    if "map" in kind:
        return _MapOf(_node(kind["map"]))
    return _Model(pod_fields.model_name(kind))


def _leaf_problem(kind: str, value: object) -> str | None:
    is_int = isinstance(value, int) and not isinstance(value, bool)
    if value == DEFAULT_SAMPLE:
        return None  # a placeholder with no known value (an input without default, {{item}}, ...): known at run time
    if kind == "str":
        return None if isinstance(value, str) else "must be a string"
    if kind in ("int", "int32"):
        if not is_int:
            quoted = f", not the string {value!r}" if isinstance(value, str) else ""
            return f"must be an integer{quoted}"
        if kind == "int32" and not INT32_MIN <= typing.cast(int, value) <= INT32_MAX:
            return f"must be a 32-bit integer (at most {INT32_MAX})"
        return None
    if kind == "bool":
        return None if isinstance(value, bool) else "must be true or false"
    if kind == "int-or-str":
        return None if is_int or isinstance(value, str) else "must be an integer or a string"
    if kind == "quantity":
        return None if quantity(value) is not None else QUANTITY_MESSAGE
    if kind == "crd-quantity":
        if isinstance(value, bool) or not isinstance(value, int | str):
            return CRD_QUANTITY_MESSAGE
        if is_int and abs(typing.cast(int, value)) > _INT64_MAX:
            return f"{CRD_QUANTITY_MESSAGE}; this number is too large for one"
        return None if quantity(value) is not None else QUANTITY_MESSAGE
    return None


def _shape(value: object, node: _Node, path: str) -> Iterator[Finding]:
    """Unknown fields and wrongly typed scalars; ``null`` is always accepted, as the API server decodes it."""
    if value is None:
        return
    if isinstance(node, _Leaf):
        problem = _leaf_problem(node.kind, value)
        if problem is not None:
            yield error(path, problem)
        return
    if isinstance(node, _ListOf):
        if not isinstance(value, list):
            yield error(path, "must be a list")
            return
        for i, item in enumerate(value):
            yield from _shape(item, node.item, f"{path}[{i}]")
        return
    if not isinstance(value, Mapping):
        yield error(path, "must be a mapping")
        return
    if isinstance(node, _MapOf):
        for key, item in value.items():
            if not isinstance(key, str):
                yield error(entry(path, key), "map keys must be strings")
            else:
                yield from _shape(item, node.value, entry(path, key))
        return
    struct = node if isinstance(node, _Struct) else _model_struct(node.name)
    for key, item in value.items():
        child = struct.fields.get(key) if isinstance(key, str) else None
        if child is None:
            yield error(entry(path, key), f"unknown field {key!r}: not a field of {struct.what}")
        else:
            yield from _shape(item, child, join(path, key))


def check_shape(job: object) -> Iterator[Finding]:
    """Unknown fields and wrongly typed scalars anywhere in a Volcano Job (paths relative to the job)."""
    return _shape(job, _JOB, "")


def check_pod_template_shape(template: object, path: str) -> Iterator[Finding]:
    """Unknown fields and wrongly typed scalars anywhere in a task's pod template (paths under ``path``)."""
    return _shape(template, _POD_TEMPLATE, path)


def check_queue_shape(queue: object) -> Iterator[Finding]:
    """Unknown fields and wrongly typed scalars anywhere in a Volcano Queue (paths relative to the queue)."""
    return _shape(queue, _QUEUE, "")
