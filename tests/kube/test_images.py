"""Image references as users write them: what the kubelet pulls is accepted, what it refuses (``InvalidImageName``)
is refused where it is written, by the builders and by lint, naming the field."""

from __future__ import annotations

from typing import Any

import pytest

from hera_volcano import ValidationError, batch_job
from hera_volcano.builders.pipeline_entries import PipelineJob
from hera_volcano.builders.program import Program
from hera_volcano.kube.images import check_image, image_problem
from hera_volcano.tools.lint import lint_document

ACCEPTED = [
    "busybox",
    "busybox:1.37.0",
    "library/busybox:latest",
    "docker.io/library/busybox:1.37",
    "ghcr.io/my-org/train_v2:2024.05",
    "localhost:5000/team/trainer",
    "Registry.Example.COM:443/team/trainer:v1",  # a host is case-insensitive
    "registry.example.com/a__b/c.d/e---f:TAG_Upper",  # tags may hold uppercase
    "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime",
    "busybox@sha256:" + "a" * 64,
    "busybox:1.37@sha256:" + "0123456789abcdef" * 4,
    "[::1]:5000/img:1",
]
REFUSED = {
    "MyOrg/Train:1": "lowercase",
    "ghcr.io/MyOrg/trainer:1": "lowercase",
    "Busybox": "lowercase",
    "busybox:": "image reference",
    "busybox:-1": "image reference",
    "busybox@sha256:abc": "image reference",
    "my image:1": "image reference",
    "team//img": "image reference",
    "img_/x": "image reference",
    "-img": "image reference",
    "img:1\n": "image reference",
    "a" * 64: "64-hex",
    "x/" + "a" * 260: "at most 255",
    "": "must not be empty",
}


@pytest.mark.parametrize("image", ACCEPTED)
def test_references_the_kubelet_pulls_are_accepted(image: str) -> None:
    assert image_problem(image) is None
    check_image(image, "image")


@pytest.mark.parametrize(("image", "words"), REFUSED.items())
def test_references_the_kubelet_refuses_are_refused_naming_the_rule(image: str, words: str) -> None:
    with pytest.raises(ValidationError) as caught:
        check_image(image, "image")
    assert caught.value.field == "image" and words in caught.value.rule


def test_a_users_job_with_an_uppercase_image_is_refused_when_built() -> None:
    with pytest.raises(ValidationError) as caught:
        PipelineJob("train", batch_job(image="MyOrg/Trainer:1.0", program=Program.command(["python", "train.py"])))
    assert caught.value.field == "image"
    assert "lowercase" in caught.value.rule and "'MyOrg/Trainer:1.0'" in caught.value.rule


def _workflow(image: str) -> dict[str, Any]:
    return {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Workflow",
        "metadata": {"generateName": "train-"},
        "spec": {
            "entrypoint": "main",
            "arguments": {"parameters": [{"name": "image", "value": "busybox"}]},
            "templates": [
                {"name": "main", "container": {"image": image, "command": ["true"]}},
                {"name": "later", "script": {"image": "{{workflow.parameters.image}}", "source": "true"}},
            ],
        },
    }


def _volcano_job(image: str) -> dict[str, Any]:
    pod = {"spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": image}]}}
    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": "train"},
        "spec": {"schedulerName": "volcano", "minAvailable": 1, "tasks": [{"name": "main", "replicas": 1,
                                                                            "template": pod}]},
    }  # fmt: skip


@pytest.mark.parametrize(
    ("document", "path"),
    [
        (_workflow, "spec.templates[0].container.image"),
        (_volcano_job, "spec.tasks[0].template.spec.containers[0].image"),
    ],
)
def test_lint_flags_an_uppercase_image_of_a_workflow_or_a_volcano_job(document: Any, path: str) -> None:
    good = [f for f in lint_document(document("my-org/trainer:1")) if f.severity == "error"]
    assert good == [], good
    bad = {f.path: f.message for f in lint_document(document("My-Org/Trainer:1")) if f.severity == "error"}
    assert "lowercase" in bad.get(path, ""), bad
