"""The Volcano Queue model: typed inputs that render to a ``scheduling.volcano.sh/v1beta1`` Queue as plain data.

A queue is shared infrastructure that jobs name: kept as code beside the workflows, rendered for GitOps, and checked
against every rule of the Queue CRD and Volcano's queue webhook (``volcano.queue_rules``) when it is built, so a
queue the cluster would refuse fails here, with the field and the rule named.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import KW_ONLY, dataclass, field
from typing import Literal

from hera_volcano.kube import names
from hera_volcano.shared import checks
from hera_volcano.shared.errors import ValidationError
from hera_volcano.volcano.schema import CRD_QUANTITY_MESSAGE, QUEUE_API_VERSION, QUEUE_KIND

#: A quantity as the Queue CRD takes it: a string ("500m", "64", "512Gi") or a whole number.
Quantity = int | str
Resources = Mapping[str, Quantity]


@dataclass(frozen=True)
class Queue:
    """A Volcano queue: jobs that name it share its ``capability`` (a ceiling per resource, extended resources such
    as ``nvidia.com/gpu`` included), are granted its ``deserved`` share when the cluster is contended (the capacity
    plugin) and keep its ``guarantee`` reserved. ``weight`` sets its share against its siblings (the proportion
    plugin), ``priority`` the order queues are served in, ``reclaimable`` whether others may take back what it
    borrowed (Volcano's default: yes). ``parent`` places it under another queue (hierarchical queues).

    :param name: the queue's name, which jobs give as ``queue=``.
    :param weight: its share against its siblings (proportion plugin).
    :param capability: the most its jobs may use together, per resource.
    :param deserved: the share it is granted when the cluster is contended (capacity plugin).
    :param guarantee: resources kept for it alone.
    :param reclaimable: whether other queues may take back what it borrowed (default: Volcano's, yes).
    :param priority: the order queues are served in (higher first).
    :param parent: the queue it sits under (hierarchical queues).
    :param dequeue_strategy: ``fifo`` (a job that does not fit holds back the ones behind it) or ``traverse``
        (they may pass it); default: Volcano's.
    :param labels: the queue's labels.
    :param annotations: the queue's annotations.
    """

    name: str
    _: KW_ONLY
    weight: int = 1
    capability: Resources | None = None
    deserved: Resources | None = None
    guarantee: Resources | None = None
    reclaimable: bool | None = None
    priority: int | None = None
    parent: str | None = None
    dequeue_strategy: Literal["fifo", "traverse"] | None = None
    labels: Mapping[str, str] = field(default_factory=dict)
    annotations: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        names.check("name", self.name, names.dns1123_subdomain)
        checks.integer("weight", self.weight, minimum=1, maximum=65535)
        if self.priority is not None:
            checks.integer("priority", self.priority, maximum=checks.INT32_MAX)
        if self.reclaimable is not None and not isinstance(self.reclaimable, bool):
            raise ValidationError("reclaimable", "must be true or false")
        if self.parent is not None:
            names.check("parent", self.parent, names.dns1123_subdomain)
        if self.dequeue_strategy not in (None, "fifo", "traverse"):
            raise ValidationError("dequeue_strategy", "must be fifo or traverse")
        for field_name in ("capability", "deserved", "guarantee"):
            _resources(field_name, getattr(self, field_name))
        for field_name in ("labels", "annotations"):
            _strings(field_name, getattr(self, field_name))
        self.to_dict()  # every other rule, now: the queue is built where it is defined

    def to_dict(self) -> dict[str, object]:
        """The Queue as plain data, after checking every rule of the CRD and Volcano's webhook on it."""
        from hera_volcano.volcano.queue_rules import check_queue
        from hera_volcano.volcano.rules import raise_first

        data = self._data()
        raise_first(check_queue(data))
        return data

    def _data(self) -> dict[str, object]:
        metadata: dict[str, object] = {"name": self.name}
        if self.labels:
            metadata["labels"] = dict(self.labels)
        if self.annotations:
            metadata["annotations"] = dict(self.annotations)
        spec: dict[str, object] = {"weight": self.weight}
        optional = {
            "reclaimable": self.reclaimable,
            "priority": self.priority,
            "parent": self.parent,
            "dequeueStrategy": self.dequeue_strategy,
            "capability": None if self.capability is None else dict(self.capability),
            "deserved": None if self.deserved is None else dict(self.deserved),
            "guarantee": None if self.guarantee is None else {"resource": dict(self.guarantee)},
        }
        spec.update({k: v for k, v in optional.items() if v is not None})
        return {"apiVersion": QUEUE_API_VERSION, "kind": QUEUE_KIND, "metadata": metadata, "spec": spec}


def _resources(field_name: str, value: object) -> None:
    """A resource list: names to quantities given as strings or whole numbers (a float may be inexact, and the CRD
    refuses one)."""
    if value is None:
        return
    if not isinstance(value, Mapping):
        raise ValidationError(field_name, 'must be a mapping of resource names to quantities, e.g. {"cpu": "64"}')
    for name, amount in value.items():
        if not isinstance(name, str):
            raise ValidationError(field_name, "resource names must be strings")
        if isinstance(amount, bool) or not isinstance(amount, int | str):
            raise ValidationError(f"{field_name}[{name}]", CRD_QUANTITY_MESSAGE)


def _strings(field_name: str, value: object) -> None:
    if not isinstance(value, Mapping) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise ValidationError(field_name, "must be a mapping of strings")


def queue_name(value: object, field_name: str = "queue") -> str | None:
    """The name of the queue a job names: a :class:`Queue`'s name, or the name given (None: Volcano's default)."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, Queue):
        return value.name
    raise ValidationError(field_name, f"must be a queue name or a Queue, not {type(value).__name__}")
