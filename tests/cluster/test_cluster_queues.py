"""Volcano Queues against the real Queue CRD (kube-apiserver, strict field validation, server-side dry run).

a. Queues rendered by ``hera-volcano render`` (a hierarchy with GPUs, every field the model writes) and edge cases
   the queue rules accept are accepted, every field kept.
b. Edge cases the queue rules refuse because of the CRD are refused by the API server too; those the rules refuse
   because of Volcano's webhook (which does not run here) pass the CRD: the rules know which is which.
c. What the rules warn is dropped (a namespace, a status) is dropped.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml
from controlplane import ControlPlane
from kubernetes import client

from hera_volcano import Queue
from hera_volcano.tools.render import KUSTOMIZATION, queue_files
from hera_volcano.volcano.queue_rules import check_queue

GPU = "nvidia.com/gpu"
RENDERED = [
    Queue(
        "org",
        capability={"cpu": "256", "memory": "2Ti", GPU: 32},
        deserved={"cpu": "128", GPU: 16},
        guarantee={GPU: 4},
    ),
    Queue(
        "research",
        parent="org",
        weight=4,
        priority=10,
        reclaimable=False,
        dequeue_strategy="fifo",
        capability={"cpu": "64", "memory": "512Gi", GPU: 8},
        deserved={"cpu": "32", GPU: "8"},
        guarantee={GPU: 2},
        labels={"team": "research"},
        annotations={"owner": "ml-platform"},
    ),
    Queue("batch", weight=65535, priority=0, capability={"pods": "1000", "hugepages-2Mi": "1Gi"}),
]


def base(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "metadata": {"name": "edge"},
        "spec": spec,
    }


ACCEPTED = {
    "max-weight-priority": base(weight=65535, priority=2**31 - 1),
    "quantities": base(capability={"cpu": "1e3", "memory": "1.5Gi", GPU: "8000m", "example.com/fpga": 2}),
    "dotted-parent": base(parent="team.research"),
    "type": base(type="x" * 253),
    "affinity": base(affinity={"nodeGroupAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": ["a"]}}),
    "extend-clusters": base(extendClusters=[{"name": "c1", "weight": 2, "capacity": {"cpu": "8"}}]),
    "hierarchy-annotations": {
        **base(),
        "metadata": {
            "name": "edge",
            "annotations": {"volcano.sh/hierarchy": "a/b", "volcano.sh/hierarchy-weights": "1/2"},
        },
    },
}
#: Refused by the CRD: the rules must refuse them too.
CRD_REFUSED = {
    "weight-zero": base(weight=0),
    "weight-over": base(weight=65536),
    "priority-negative": base(priority=-1),
    "float-quantity": base(capability={"cpu": 0.5}),
    "huge-integer": base(capability={"cpu": 2**63}),
    "unknown-field": base(capabilities={"cpu": "1"}),
    "dequeue-strategy": base(dequeueStrategy="lifo"),
    "parent-pattern": base(parent="Research_A"),
    "type-long": base(type="x" * 254),
    "reclaimable-string": base(reclaimable="false"),
    "name": {**base(), "metadata": {"name": "Edge"}},
}
#: Refused by Volcano's webhook only: the CRD lets them through.
WEBHOOK_ONLY = {
    "negative": base(capability={"cpu": "-1"}),
    "gpu-fraction": base(capability={GPU: "1.5"}),
    "guarantee-without-deserved": base(guarantee={"resource": {"cpu": "1"}}),
    "deserved-over-capability": base(capability={"cpu": "1"}, deserved={"cpu": "2"}),
    "hierarchy-weights": {
        **base(),
        "metadata": {
            "name": "edge",
            "annotations": {"volcano.sh/hierarchy": "a/b", "volcano.sh/hierarchy-weights": "1"},
        },
    },
}


def _errors(queue: dict[str, Any]) -> list[str]:
    return [f"{f.path}: {f.message}" for f in check_queue(queue) if f.severity == "error"]


def _message(e: client.ApiException) -> str:
    try:
        return str(yaml.safe_load(e.body).get("message") or e.body)
    except Exception:
        return f"{e.status} {e.body}"


def test_rendered_queues_are_accepted_with_every_field(control_plane: ControlPlane) -> None:
    files = queue_files(RENDERED)
    for name, text in files.items():
        if name == KUSTOMIZATION:
            continue
        queue = yaml.safe_load(text)
        assert _errors(queue) == []
        served = control_plane.apply(queue, dry_run=True)
        assert served["metadata"]["name"] == queue["metadata"]["name"]
        assert {k: served["spec"][k] for k in queue["spec"]} == queue["spec"], "every field kept as written"


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_edge_cases_the_rules_accept_the_crd_accepts(control_plane: ControlPlane, name: str) -> None:
    queue = ACCEPTED[name]
    assert _errors(queue) == []
    served = control_plane.apply(queue, dry_run=True)
    assert {k: served["spec"][k] for k in queue["spec"]} == queue["spec"]


@pytest.mark.parametrize("name", sorted(CRD_REFUSED))
def test_what_the_crd_refuses_the_rules_refuse(control_plane: ControlPlane, name: str) -> None:
    queue = CRD_REFUSED[name]
    assert _errors(queue), "the rules must refuse it"
    with pytest.raises(client.ApiException) as caught:
        control_plane.create(copy.deepcopy(queue), dry_run=True)
    assert caught.value.status in (400, 422), _message(caught.value)


@pytest.mark.parametrize("name", sorted(WEBHOOK_ONLY))
def test_what_only_volcanos_webhook_refuses_passes_the_crd(control_plane: ControlPlane, name: str) -> None:
    queue = WEBHOOK_ONLY[name]
    assert _errors(queue), "the rules refuse it, as Volcano's webhook does"
    control_plane.create(copy.deepcopy(queue), dry_run=True)


def test_a_namespace_and_a_status_are_dropped(control_plane: ControlPlane) -> None:
    queue = base(weight=2)
    queue["metadata"]["namespace"] = "argo"
    queue["status"] = {"state": "Closed", "allocated": {"cpu": "1"}}
    assert {f.path for f in check_queue(queue) if f.severity == "warning"} == {"metadata.namespace", "status"}
    served = control_plane.create(queue, dry_run=True)
    assert "namespace" not in served["metadata"]
    assert served.get("status") is None
