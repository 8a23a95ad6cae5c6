"""A gang that waits for its queue, made from the objects recorded in ``fixtures/no-fit`` (a real Volcano wrote them).

The recorded run's gang asks more CPU than the node has. Here the node is made large enough (16 CPUs, 8 GPUs), each
worker asks one ``nvidia.com/gpu`` (the PodGroup's ``minResources`` says so, as Volcano writes it from the pods),
the queue gets a capability, deserved and guarantee with GPUs in them and part of it allocated, and the scheduler's
PodGroup event is the one Volcano's proportion and capacity plugins write when a queue cannot admit a gang
(``queue resource quota insufficient: insufficient nvidia.com/gpu``). Until a queue-bound gang is recorded on the
end-to-end cluster, these are the objects explain is tested on.
"""

from __future__ import annotations

import copy
from typing import Any

from tests.client.recorded import items, load, observed

GPU = "nvidia.com/gpu"
REFUSAL = f"queue resource quota insufficient: insufficient {GPU}"


def queue(**spec: Any) -> dict[str, Any]:
    """The recorded default queue with a capability of 16 CPUs and 4 GPUs (``spec`` replaces parts of its spec),
    2 CPUs and 2 GPUs allocated."""
    recorded = copy.deepcopy(load("no-fit/queue-default.json"))
    recorded["spec"].update({"capability": {"cpu": "16", GPU: "4"}, **spec})
    recorded["status"]["allocated"] = {"cpu": "2", "memory": "0", GPU: "2"}
    return recorded


def objects(refusal: str | None = REFUSAL) -> dict[str, Any]:
    """The run's objects: nodes with room, GPU workers, and the scheduler's refusal as the PodGroup's Normal event
    (None: no such event, as before the scheduler's next cycle)."""
    nodes = items("no-fit", "nodes")
    nodes[0]["status"]["allocatable"].update({"cpu": "16", GPU: "8"})
    jobs = items("no-fit", "jobs")
    worker = jobs[0]["spec"]["tasks"][1]["template"]["spec"]["containers"][0]
    worker["resources"] = {"requests": {"cpu": "1", GPU: "1"}, "limits": {GPU: "1"}}
    groups = items("no-fit", "podgroups")
    groups[0]["spec"]["minResources"].update({GPU: "3", f"requests.{GPU}": "3"})
    events = [e for e in items("no-fit", "events") if e["type"] != "Normal" or refusal is not None]
    for event in events:
        if event["type"] == "Normal":
            event["message"] = refusal
    return {"nodes": nodes, "jobs": jobs, "podgroups": groups, "events": events}


def queue_bound(queue_object: Any = None, refusal: str | None = REFUSAL, **changes: Any) -> Any:
    """Everything explain reads about the run (``Observed``), the queue as :func:`queue` makes it unless given."""
    parts = {**objects(refusal), "queues": {"default": queue() if queue_object is None else queue_object}}
    return observed("no-fit", **{**parts, **changes})
