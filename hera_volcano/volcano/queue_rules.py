"""Every Volcano Queue admission and CRD rule, checked on a queue as plain data; and the rules that tie the queues
of one hierarchy together, checked over a set of queues (those one ``render`` writes).

A queue the cluster refuses is found when GitOps applies it, long after review; these checks find it at render and
lint time. Sources: the Queue CRD (field types, weight and priority bounds, ``dequeueStrategy``, the parent's
pattern), the ``validatequeue.volcano.sh`` webhook (quantities, ``guarantee <= deserved <= capability``, the
hierarchy annotations, and against the queues already there: the parent exists, the depth, a child's capability
within its ancestors', the children's deserved and guarantee within their parent's), and what the API server does
with a cluster-scoped object (no namespace) and a status subresource (status dropped). Checks that need the cluster
(a parent or hierarchy path defined elsewhere, a parent queue that already runs pods) are left out.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping, Sequence
from fractions import Fraction
from typing import Final

from hera_volcano.kube import names
from hera_volcano.kube.metadata import labels_and_annotations
from hera_volcano.kube.quantities import quantity
from hera_volcano.shared.findings import Finding, as_map, entry, error, warning
from hera_volcano.volcano.amounts import gang_pods, gang_requests, resource_list, show
from hera_volcano.volcano.rules import is_extended_resource
from hera_volcano.volcano.schema import QUEUE_API_VERSION, QUEUE_KIND, check_queue_shape

#: The queue at the top of every hierarchy, which Volcano creates: a parent of ``root`` is no parent.
ROOT: Final = "root"
DEQUEUE_STRATEGIES: Final = ("fifo", "traverse")
MIN_WEIGHT: Final = 1
MAX_WEIGHT: Final = 65535
MAX_TYPE_LENGTH: Final = 253
#: The webhook's default ``--max-queue-depth``: a queue and its ancestors below root.
MAX_QUEUE_DEPTH: Final = 5
#: The annotations of Volcano's older hierarchy (the drf plugin's): a path and one weight per part of it.
HIERARCHY: Final = "volcano.sh/hierarchy"
HIERARCHY_WEIGHTS: Final = "volcano.sh/hierarchy-weights"
#: The resource lists of a queue's spec, by path.
RESOURCE_LISTS: Final = ("capability", "deserved", "guarantee.resource")

#: Resources Kubernetes counts in whole units (besides extended resources such as nvidia.com/gpu).
_INTEGER_RESOURCES: Final = frozenset(
    {
        "pods",
        "resourcequotas",
        "services",
        "replicationcontrollers",
        "secrets",
        "configmaps",
        "persistentvolumeclaims",
        "services.nodeports",
        "services.loadbalancers",
    }
)
#: Resources Volcano's scheduler measures in milli-units (the others it counts in whole units).
_MILLI: Final = frozenset({"cpu"})
_WHOLE: Final = frozenset({"memory", "pods"})
_COUNTED_NAMES: Final = frozenset({"cpu", "memory", "pods", "ephemeral-storage"})
_UNCOUNTED: Final = (
    "Volcano does not count {name!r} against a queue: name cpu, memory, pods, ephemeral-storage, hugepages-<size>"
    " or an extended resource such as nvidia.com/gpu"
)
_GO_FLOAT: Final = re.compile(
    r"[+-]?(?:inf|infinity)|nan"
    r"|[+-]?(?:\d(?:_?\d)*(?:\.(?:\d(?:_?\d)*)?)?|\.\d(?:_?\d)*)(?:e[+-]?\d(?:_?\d)*)?"
    r"|[+-]?0x(?:_?[0-9a-f])*(?:\.[0-9a-f]*)?p[+-]?\d+",
    re.IGNORECASE,
)


def counted(name: str) -> bool:
    """Whether Volcano's scheduler counts resource ``name`` against a queue (it ignores any other name)."""
    if name.startswith("count/"):
        return False  # object counts of a resource quota
    return (
        name in _COUNTED_NAMES
        or is_extended_resource(name)
        or name.startswith(("hugepages-", "attachable-volumes-"))
        or "kubernetes.io/" in name
    )


def go_float(text: str) -> float | None:
    """The number Go's ``strconv.ParseFloat`` reads from ``text`` (None where it fails), as the webhook reads the
    hierarchy weights: Go's syntax, ``Inf`` and ``NaN``, and an error beyond the float range."""
    if _GO_FLOAT.fullmatch(text) is None:
        return None
    plain = text.replace("_", "")
    try:
        value = float.fromhex(plain) if "x" in plain.lower() else float(plain)
    except OverflowError:
        return None
    if math.isinf(value) and "inf" not in plain.lower():
        return None  # out of range: Go answers an error, not infinity
    return value


def _resource_list(spec: Mapping[str, object], path: str) -> Mapping[str, object]:
    holder: object = spec
    for key in path.split("."):
        holder = as_map(holder).get(key)
    return as_map(holder)


def _amounts(raw: Mapping[str, object]) -> dict[str, Fraction]:
    """The entries that are quantities, exactly (what is not a quantity is the shape check's to report)."""
    found = {}
    for name, value in raw.items():
        amount = quantity(value) if isinstance(value, int | str) and not isinstance(value, bool) else None
        if isinstance(name, str) and amount is not None:
            found[name] = amount
    return found


# ---- one queue -------------------------------------------------------------------------------------------------------


def _check_header(queue: Mapping[str, object]) -> Iterator[Finding]:
    if queue.get("apiVersion") != QUEUE_API_VERSION:
        yield error("apiVersion", f"must be {QUEUE_API_VERSION}")
    if queue.get("kind") != QUEUE_KIND:
        yield error("kind", f"must be {QUEUE_KIND}")
    if queue.get("metadata") is None:
        yield error("metadata", "is required: a Queue needs metadata.name")


def _check_metadata(metadata: Mapping[str, object]) -> Iterator[Finding]:
    name, generate = metadata.get("name"), metadata.get("generateName")
    if name not in (None, ""):
        message = names.dns1123_subdomain(name)
        if message is not None:
            yield error("metadata.name", message)
    elif generate not in (None, ""):
        yield warning("metadata.generateName", "gives the queue a name no job can know: set metadata.name")
    else:
        yield error("metadata.name", "is required: jobs name the queue they run in")
    if metadata.get("namespace") not in (None, ""):
        yield warning("metadata.namespace", "is dropped: a Queue is cluster-scoped")
    yield from labels_and_annotations(metadata, "metadata")
    yield from _check_hierarchy_annotations(as_map(metadata.get("annotations")))


def _check_hierarchy_annotations(annotations: Mapping[str, object]) -> Iterator[Finding]:
    """The webhook's rules for the older hierarchy: one weight per part of the path, each a number above 0."""
    hierarchy, weights = annotations.get(HIERARCHY) or "", annotations.get(HIERARCHY_WEIGHTS) or ""
    if not isinstance(hierarchy, str) or not isinstance(weights, str) or not (hierarchy or weights):
        return  # none of them, or not strings (the shape check's to report)
    parts = weights.split("/")
    if len(hierarchy.split("/")) != len(parts):
        yield error(
            entry("metadata.annotations", HIERARCHY_WEIGHTS),
            f"must have one weight per part of {HIERARCHY} ({hierarchy!r} has {len(hierarchy.split('/'))},"
            f" {weights!r} has {len(parts)})",
        )
        return
    for part in parts:
        value = go_float(part)
        if value is None or value <= 0:
            yield error(
                entry("metadata.annotations", HIERARCHY_WEIGHTS),
                f"{part!r} in {weights!r} must be a number larger than 0",
            )
            return


def _check_quantities(spec: Mapping[str, object]) -> Iterator[Finding]:
    """Each amount not negative, whole where Kubernetes counts whole units; names Volcano ignores are warned of."""
    for list_path in RESOURCE_LISTS:
        for name, amount in _amounts(_resource_list(spec, list_path)).items():
            at = entry(f"spec.{list_path}", name)
            if amount < 0:
                yield error(at, "must not be negative")
            elif (name in _INTEGER_RESOURCES or is_extended_resource(name)) and math.ceil(amount * 1000) % 1000:
                yield error(at, f"must be a whole number: {name} is counted in whole units")
            if not counted(name):
                yield warning(at, _UNCOUNTED.format(name=name))


def _check_relations(spec: Mapping[str, object]) -> Iterator[Finding]:
    """Per resource, guarantee <= deserved <= capability; a guarantee needs a deserved amount of its resource."""
    raw = {path: _resource_list(spec, path) for path in RESOURCE_LISTS}
    capability, deserved, guarantee = (_amounts(raw[path]) for path in RESOURCE_LISTS)
    for name, guaranteed in guarantee.items():
        shown = raw["guarantee.resource"][name]
        if name not in raw["deserved"]:
            yield error(
                entry("spec.deserved", name), f"is required: the queue's guarantee of {name} ({shown}) needs it"
            )
        elif name in deserved and deserved[name] < guaranteed:
            yield error(entry("spec.deserved", name), f"must be at least the guarantee of {name} ({shown})")
    for name, amount in deserved.items():
        if name in capability and amount > capability[name]:
            yield error(
                entry("spec.deserved", name), f"must not exceed the capability of {name} ({raw['capability'][name]})"
            )


def _in_range(spec: Mapping[str, object], key: str, low: int, high: int | None) -> Iterator[Finding]:
    value = spec.get(key)
    if not isinstance(value, int) or isinstance(value, bool):
        return  # absent, or not an integer: the shape check's to report
    if high is None and value < low:
        yield error(f"spec.{key}", f"must be at least {low}")
    elif high is not None and not low <= value <= high:
        yield error(f"spec.{key}", f"must be between {low} and {high}")


def _check_spec(spec: Mapping[str, object], name: object) -> Iterator[Finding]:
    yield from _in_range(spec, "weight", MIN_WEIGHT, MAX_WEIGHT)
    yield from _in_range(spec, "priority", 0, None)
    strategy = spec.get("dequeueStrategy")
    if isinstance(strategy, str) and strategy not in DEQUEUE_STRATEGIES:
        yield error("spec.dequeueStrategy", f"must be one of {', '.join(DEQUEUE_STRATEGIES)}")
    parent = spec.get("parent")
    if isinstance(parent, str) and parent:
        message = names.dns1123_subdomain(parent)
        if message is not None:
            yield error("spec.parent", f"{message}: the name of a queue")
        elif parent == name:
            yield error("spec.parent", "must not be the queue itself")
    kind = spec.get("type")
    if isinstance(kind, str) and len(kind) > MAX_TYPE_LENGTH:
        yield error("spec.type", f"must be at most {MAX_TYPE_LENGTH} characters")
    yield from _check_quantities(spec)
    yield from _check_relations(spec)


def check_queue(queue: object) -> list[Finding]:
    """Every rule of the Queue CRD and Volcano's queue webhook that ``queue`` (a Queue as plain data) breaks, errors
    and warnings, with paths relative to the queue."""
    if not isinstance(queue, Mapping):
        return [error("queue", "must be a mapping: a Volcano Queue object")]
    findings = list(check_queue_shape(queue))
    findings.extend(_check_header(queue))
    metadata = queue.get("metadata")
    if isinstance(metadata, Mapping):
        findings.extend(_check_metadata(metadata))
    spec = queue.get("spec")
    if isinstance(spec, Mapping):
        findings.extend(_check_spec(spec, as_map(metadata).get("name")))
    if queue.get("status") is not None:
        findings.append(
            warning("status", "is dropped: Volcano writes a queue's status (open it or close it with vcctl)")
        )
    return findings


# ---- queues of one hierarchy -----------------------------------------------------------------------------------------


def _name(queue: Mapping[str, object]) -> str:
    return str(as_map(queue.get("metadata")).get("name") or "")


def parent_of(queue: Mapping[str, object]) -> str | None:
    """The queue's parent, None for a queue directly under root."""
    parent = as_map(queue.get("spec")).get("parent")
    return parent if isinstance(parent, str) and parent not in ("", ROOT) else None


def _volcano_units(raw: Mapping[str, object]) -> dict[str, int]:
    """A resource list as Volcano's scheduler holds it: cpu in milli-units, memory and pods whole, the rest in
    milli-units, each rounded up; names it ignores left out."""
    return {
        name: math.ceil(amount * (1 if name in _WHOLE else 1000))
        for name, amount in _amounts(raw).items()
        if counted(name) and amount >= 0
    }


def _at(name: str, path: str) -> str:
    return f"queues[{name}].{path}"


def _ancestors(name: str, by_name: Mapping[str, Mapping[str, object]]) -> list[str]:
    """The queue's parent, its parent's parent... as far as ``by_name`` knows them; stops short of a cycle."""
    chain: list[str] = []
    parent = parent_of(by_name[name])
    while parent is not None and parent not in chain and parent != name:
        chain.append(parent)
        if parent not in by_name:
            break
        parent = parent_of(by_name[parent])
    return chain


def _check_chain(name: str, by_name: Mapping[str, Mapping[str, object]]) -> Iterator[Finding]:
    """No cycle, at most :data:`MAX_QUEUE_DEPTH` deep, a capability within its nearest ancestor's, per resource."""
    chain = _ancestors(name, by_name)
    last = by_name.get(chain[-1]) if chain else None
    if last is not None and parent_of(last) in (*chain, name):
        yield error(_at(name, "spec.parent"), f"queues must form a tree: {' -> '.join([name, *chain])} goes round")
        return
    if len(chain) + 1 > MAX_QUEUE_DEPTH:
        yield error(
            _at(name, "spec.parent"),
            f"makes the queue {len(chain) + 1} deep below root ({' -> '.join([name, *chain])}): Volcano allows"
            f" at most {MAX_QUEUE_DEPTH}",
        )
    spec = as_map(by_name[name].get("spec"))
    capability = _volcano_units(as_map(spec.get("capability")))
    for resource, amount in capability.items():
        for ancestor in (a for a in chain if a in by_name):
            ceiling = _volcano_units(as_map(as_map(by_name[ancestor].get("spec")).get("capability")))
            if ceiling.get(resource, 0) > 0:
                if amount > ceiling[resource]:
                    shown = as_map(as_map(by_name[ancestor].get("spec")).get("capability"))[resource]
                    yield error(
                        _at(name, entry("spec.capability", resource)),
                        f"must not exceed the capability of its ancestor {ancestor} ({shown})",
                    )
                break


def _check_children(
    parent: str, children: Sequence[str], by_name: Mapping[str, Mapping[str, object]]
) -> Iterator[Finding]:
    """The children's deserved and guarantee, added up, within the parent's, as Volcano compares them: a resource
    the children name and the parent does not is one the parent has none of."""
    for path in ("deserved", "guarantee.resource"):
        own_raw = _resource_list(as_map(by_name[parent].get("spec")), path)
        own = _volcano_units(own_raw)
        total: dict[str, int] = {}
        shares: dict[str, list[str]] = {}
        for child in children:
            raw = _resource_list(as_map(by_name[child].get("spec")), path)
            for resource, amount in _volcano_units(raw).items():
                total[resource] = total.get(resource, 0) + amount
                shares.setdefault(resource, []).append(f"{child} {raw[resource]}")
        for resource, amount in total.items():
            if resource in ("cpu", "memory") and amount == 0:
                continue
            if resource not in own or own[resource] < amount:
                have = f"this queue's is {own_raw[resource]}" if resource in own else "this queue sets none"
                yield error(
                    _at(parent, entry(f"spec.{path}", resource)),
                    f"must cover its children's {path.split('.')[0]} of {resource} together"
                    f" ({', '.join(shares[resource])}); {have}",
                )


def check_queues(queues: Sequence[Mapping[str, object]]) -> list[Finding]:
    """The rules Volcano's webhook checks between queues, over a set of queues (plain data) meant to exist
    together: unique names, parents forming a tree at most :data:`MAX_QUEUE_DEPTH` deep, a child's capability
    within its ancestors', the children's deserved and guarantee within their parent's. Paths start
    ``queues[NAME]``; a parent outside the set is taken on trust."""
    by_name: dict[str, Mapping[str, object]] = {}
    findings: list[Finding] = []
    for queue in queues:
        name = _name(queue)
        if name in by_name:
            findings.append(error(_at(name, "metadata.name"), f"two queues are both named {name!r}"))
        by_name[name] = queue
    children: dict[str, list[str]] = {}
    for name in sorted(by_name):
        findings.extend(_check_chain(name, by_name))
        parent = parent_of(by_name[name])
        if parent is not None and parent in by_name and parent != name:
            children.setdefault(parent, []).append(name)
    for parent, kids in sorted(children.items()):
        findings.extend(_check_children(parent, kids, by_name))
    return findings


# ---- a job against its queue -----------------------------------------------------------------------------------------


def check_gang_fits(job: Mapping[str, object], queue: Mapping[str, object]) -> Iterator[Finding]:
    """The job's gang minimum (its first ``minAvailable`` pods' requests, as the scheduler counts them) within the
    capability of ``queue`` (the Queue the job names, as plain data), per resource the queue limits.

    Volcano admits a gang only when its minimum fits what the queue may still hold: one that asks more than the whole
    capability is never admitted, and the job waits, Pending, until its start limit."""
    capability = resource_list(as_map(queue.get("spec")).get("capability"))
    if not capability:
        return
    asked = gang_requests(job)
    for name, ceiling in capability.items():
        amount = asked.get(name)
        if amount is not None and amount > ceiling:
            yield error(
                "spec.queue",
                f"names queue {_name(queue)!r}, whose capability of {name} is {show(name, ceiling)}, but the gang's"
                f" minimum ({len(gang_pods(job))} pods) asks {show(name, amount)}: Volcano never admits it, and the"
                " job waits until its start limit; ask less, lower minAvailable, or use a larger queue",
            )
