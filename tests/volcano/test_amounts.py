"""Resource amounts as Volcano counts them, checked against what Volcano itself wrote into recorded PodGroups."""

from __future__ import annotations

from fractions import Fraction

import pytest

from hera_volcano.volcano import amounts
from tests.client.recorded import items


@pytest.mark.parametrize("scenario", ["no-fit", "tight", "running", "no-account"])
def test_a_gangs_requests_are_what_volcano_wrote_into_its_podgroup(scenario: str) -> None:
    [job] = items(scenario, "jobs")
    [group] = items(scenario, "podgroups")
    assert amounts.gang_requests(job) == amounts.resource_list(group["spec"]["minResources"])


def test_quota_bookkeeping_keys_and_non_quantities_are_left_out() -> None:
    listed = {"count/pods": "4", "cpu": "3", "pods": "4", "requests.cpu": "3", "limits.memory": "1Gi", "x": "?"}
    assert amounts.resource_list(listed) == {"cpu": Fraction(3), "pods": Fraction(4)}


def test_a_pod_asks_its_containers_sum_or_its_largest_init_container_and_limits_stand_in_for_requests() -> None:
    spec = {
        "initContainers": [{"resources": {"requests": {"cpu": "3"}}}, {"resources": {"requests": {"memory": "1Gi"}}}],
        "containers": [
            {"resources": {"requests": {"cpu": "1", "memory": "256Mi"}}},
            {"resources": {"limits": {"cpu": "500m", "nvidia.com/gpu": "1"}}},
            {"resources": {"requests": {"cpu": "250m"}, "limits": {"cpu": "2"}}},
        ],
    }
    assert amounts.pod_requests(spec) == {
        "cpu": Fraction(3),  # the init container's 3 > 1 + 0.5 + 0.25
        "memory": Fraction(2**30),  # the init container's 1Gi > 256Mi
        "nvidia.com/gpu": Fraction(1),
        "pods": Fraction(1),
    }


def test_a_gang_is_its_first_min_available_pods_task_by_task() -> None:
    def task(name: str, replicas: int, cpu: str) -> dict[str, object]:
        spec = {"containers": [{"resources": {"requests": {"cpu": cpu}}}]}
        return {"name": name, "replicas": replicas, "template": {"spec": spec}}

    job = {"spec": {"minAvailable": 3, "tasks": [task("a", 2, "1"), task("b", 4, "100m")]}}
    assert [(t, r["cpu"]) for t, r in amounts.gang_pods(job)] == [("a", 1), ("a", 1), ("b", Fraction(1, 10))]
    del job["spec"]["minAvailable"]
    assert len(amounts.gang_pods(job)) == 6


def test_pods_that_fit_each_node_alone_may_still_not_fit_all_at_once() -> None:
    worker = ("mpiworker", {"cpu": Fraction(3, 2), "pods": Fraction(1)})
    master = ("mpimaster", {"pods": Fraction(1)})
    nodes = [{"cpu": Fraction(2), "pods": Fraction(110)}, {"cpu": Fraction(1), "pods": Fraction(110)}]
    assert amounts.first_misfit([master, worker, worker], nodes) == worker
    assert amounts.first_misfit([master, worker], nodes) is None
    assert amounts.first_misfit([master, worker, worker], [*nodes, {"cpu": Fraction(2), "pods": Fraction(110)}]) is None


@pytest.mark.parametrize(
    ("name", "amount", "text"),
    [
        ("cpu", Fraction(3), "3"),
        ("cpu", Fraction(1, 2), "500m"),
        ("cpu", Fraction(3, 2), "1500m"),
        ("memory", Fraction(8131676 * 1024), "7.8Gi"),
        ("memory", Fraction(512 * 2**20), "512Mi"),
        ("memory", Fraction(100), "100"),
        ("hugepages-2Mi", Fraction(4 * 2**20), "4Mi"),
        ("nvidia.com/gpu", Fraction(8), "8"),
    ],
)
def test_amounts_read_as_kubernetes_writes_them(name: str, amount: Fraction, text: str) -> None:
    assert amounts.show(name, amount) == text
