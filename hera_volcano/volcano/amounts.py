"""Resource amounts as the scheduler counts them: a pod's requests, a gang's sum, and how to print them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction

from hera_volcano.kube.quantities import quantity
from hera_volcano.shared.findings import as_list, as_map

Amounts = dict[str, Fraction]
#: Quota bookkeeping keys in a PodGroup's minResources (``requests.cpu``, ``count/pods``), which repeat the plain
#: resource names or count objects: nothing a node or queue offers under that name.
_BOOKKEEPING = ("requests.", "limits.", "count/")
_BINARY = (("Ei", 2**60), ("Pi", 2**50), ("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10))
_BYTES = ("memory", "ephemeral-storage", "storage")


def resource_list(value: object) -> Amounts:
    """A ResourceList (``{"cpu": "500m", ...}``) as exact amounts, leaving out quota bookkeeping and non-quantities."""
    found: Amounts = {}
    for name, text in as_map(value).items():
        amount = quantity(text)
        if amount is not None and not name.startswith(_BOOKKEEPING):
            found[name] = amount
    return found


def add(*lists: Mapping[str, Fraction]) -> Amounts:
    total: Amounts = {}
    for amounts in lists:
        for name, amount in amounts.items():
            total[name] = total.get(name, Fraction(0)) + amount
    return total


def largest(lists: Iterable[Mapping[str, Fraction]]) -> Amounts:
    """Per resource, the largest amount any of ``lists`` has."""
    most: Amounts = {}
    for amounts in lists:
        for name, amount in amounts.items():
            most[name] = max(most.get(name, amount), amount)
    return most


def _container_requests(container: Mapping[str, object]) -> Amounts:
    """A container's requests; a resource with only a limit requests the limit, as the API server defaults it."""
    resources = as_map(container.get("resources"))
    return {**resource_list(resources.get("limits")), **resource_list(resources.get("requests"))}


def pod_requests(spec: Mapping[str, object]) -> Amounts:
    """What a pod of this spec asks the scheduler for: per resource, its containers' sum or its largest init
    container, whichever is more (init containers run one at a time, before the others), plus ``pods: 1``."""
    containers = add(*(_container_requests(as_map(c)) for c in as_list(spec.get("containers"))))
    inits = largest(_container_requests(as_map(c)) for c in as_list(spec.get("initContainers")))
    asked = {
        name: max(containers.get(name, Fraction(0)), inits.get(name, Fraction(0))) for name in {*containers, *inits}
    }
    asked["pods"] = Fraction(1)
    return {name: asked[name] for name in sorted(asked)}


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def gang_pods(job: Mapping[str, object]) -> list[tuple[str, Amounts]]:
    """(task, requests) of the pods a Volcano Job's gang needs at once: its first ``minAvailable`` pods, task by task
    in order (Volcano orders tasks by priority class first, which this leaves out)."""
    spec = as_map(job.get("spec"))
    tasks = [as_map(t) for t in as_list(spec.get("tasks"))]
    left = _count(spec.get("minAvailable")) or sum(_count(t.get("replicas")) for t in tasks)
    pods: list[tuple[str, Amounts]] = []
    for task in tasks:
        count = min(_count(task.get("replicas")), left)
        left -= count
        requests = pod_requests(as_map(as_map(task.get("template")).get("spec")))
        pods += [(str(task.get("name", "")), requests)] * count
    return pods


def gang_requests(job: Mapping[str, object]) -> Amounts:
    """What a Volcano Job's gang asks for before Volcano writes its PodGroup's ``minResources``."""
    return add(*(requests for _, requests in gang_pods(job)))


def first_misfit(
    pods: Sequence[tuple[str, Amounts]], nodes: Sequence[Mapping[str, Fraction]]
) -> tuple[str, Amounts] | None:
    """Placing the pods on empty ``nodes`` first fit, largest first (by their largest share of a node): the first
    pod that finds no node with room left, or None when they all fit."""
    free = [dict(node) for node in nodes]
    most = largest(nodes)

    def share(pod: tuple[str, Amounts]) -> Fraction:
        return max((amount / most[name] for name, amount in pod[1].items() if most.get(name)), default=Fraction(0))

    for task, asked in sorted(pods, key=share, reverse=True):
        node = next((n for n in free if all(n.get(r, Fraction(0)) >= a for r, a in asked.items() if a > 0)), None)
        if node is None:
            return task, asked
        for name, amount in asked.items():
            node[name] = node.get(name, Fraction(0)) - amount
    return None


def show(name: str, amount: Fraction) -> str:
    """An amount as a person reads it: ``500m`` or ``2`` CPUs, ``7.8Gi`` of memory, ``3`` pods or GPUs."""
    if name in _BYTES or name.startswith("hugepages-"):
        for suffix, size in _BINARY:
            if amount >= size:
                return _number(amount / size) + suffix
        return _number(amount)
    if amount.denominator == 1:
        return _number(amount)
    return _number(amount * 1000) + "m"


def _number(value: Fraction) -> str:
    """Whole numbers exactly, others to one decimal (``1.5``, not ``1.5000000001``)."""
    return str(value.numerator) if value.denominator == 1 else f"{float(value):.1f}".removesuffix(".0")
