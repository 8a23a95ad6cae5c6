"""Queues rendered for GitOps: one file per queue, a kustomization that applies parents first, checked together."""

from __future__ import annotations

import pytest
import yaml

from hera_volcano import Queue, ValidationError
from hera_volcano.tools.render import HEADER, QUEUES_DIR, module_files, queue_files

ORG = Queue("org", capability={"cpu": "64", "nvidia.com/gpu": 8}, deserved={"cpu": "32", "nvidia.com/gpu": 8})
ALPHA = Queue("alpha", parent="org", deserved={"cpu": "16", "nvidia.com/gpu": 4})
ZETA = Queue("zeta", parent="alpha", capability={"nvidia.com/gpu": 2})
BATCH = Queue("batch", weight=2)


def test_one_file_per_queue_and_a_kustomization_applying_parents_first() -> None:
    files = queue_files([ZETA, BATCH, ALPHA, ORG])
    assert sorted(files) == ["alpha.yaml", "batch.yaml", "kustomization.yaml", "org.yaml", "zeta.yaml"]
    for name, queue in (("org.yaml", ORG), ("zeta.yaml", ZETA), ("batch.yaml", BATCH)):
        assert files[name].startswith(HEADER)
        assert yaml.safe_load(files[name]) == queue.to_dict()
    kustomization = yaml.safe_load(files["kustomization.yaml"])
    # kustomize sorts the objects of one kind by name unless told to keep this order
    assert kustomization["sortOptions"] == {"order": "fifo"}
    # name order, except that alpha's parent org comes before it
    assert kustomization["resources"] == ["org.yaml", "alpha.yaml", "batch.yaml", "zeta.yaml"]


def test_the_same_queue_reached_twice_is_one_file() -> None:
    again = Queue("batch", weight=2)
    assert queue_files([BATCH, again]) == queue_files([BATCH])


@pytest.mark.parametrize(
    ("queues", "field", "rule"),
    [
        ([BATCH, Queue("batch", weight=3)], "queues[batch].metadata.name", "two queues are both named 'batch'"),
        ([Queue("a", parent="b"), Queue("b", parent="a")], "queues[a].spec.parent", "must form a tree"),
        (
            [ORG, Queue("greedy", parent="org", capability={"cpu": "65"})],
            "queues[greedy].spec.capability.cpu",
            "must not exceed the capability of its ancestor org (64)",
        ),
        ([Queue("kustomization")], "name", "'kustomization' is taken"),
    ],
)
def test_queues_that_cannot_exist_together_are_refused(queues: list[Queue], field: str, rule: str) -> None:
    with pytest.raises(ValidationError) as caught:
        queue_files(queues)
    assert caught.value.field == field and rule in caught.value.rule


def test_a_module_renders_its_queues_under_queues_beside_its_workflows() -> None:
    from hera.workflows import Container, WorkflowTemplate

    with WorkflowTemplate(name="nightly", entrypoint="c") as nightly:
        Container(name="c", image="alpine:3")
    files = module_files([nightly, BATCH], derive=None)  # no account named: no RBAC
    assert sorted(files) == [
        "kustomization.yaml",
        "nightly.yaml",
        f"{QUEUES_DIR}/batch.yaml",
        f"{QUEUES_DIR}/kustomization.yaml",
    ]
    assert sorted(module_files([BATCH])) == [f"{QUEUES_DIR}/batch.yaml", f"{QUEUES_DIR}/kustomization.yaml"]
    assert "queues" not in "".join(module_files([nightly], derive=None))
