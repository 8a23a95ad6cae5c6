"""Where a workflow template's pod puts its files (tools/lint/template_mounts): Argo refuses a container template
whose mounts or input artifacts share a path, and the pod Argo makes for a step meets Kubernetes' mount and volume
rules."""

from __future__ import annotations

from typing import Any

from hera_volcano.tools.lint import lint_document


def _workflow(template: dict[str, Any], volumes: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"entrypoint": "main", "templates": [{"name": "main", **template}]}
    spec["volumes"] = volumes or [{"name": "a", "emptyDir": {}}, {"name": "b", "emptyDir": {}}]
    return {"apiVersion": "argoproj.io/v1alpha1", "kind": "Workflow", "metadata": {"generateName": "w-"}, "spec": spec}


def _errors(doc: dict[str, Any]) -> list[tuple[str, str]]:
    return [(f.path, f.message) for f in lint_document(doc) if f.severity == "error"]


def _body(mounts: list[dict[str, Any]]) -> dict[str, Any]:
    return {"image": "busybox:1.37.0", "command": ["true"], "volumeMounts": mounts}


TWICE = [{"name": "a", "mountPath": "/d"}, {"name": "b", "mountPath": "/d"}]
APART = [{"name": "a", "mountPath": "/d"}, {"name": "b", "mountPath": "/e"}]


def test_a_container_mounts_each_path_once() -> None:
    assert _errors(_workflow({"container": _body(TWICE)})) == [
        (
            "spec.templates[0].container.volumeMounts[1].mountPath",
            "'/d' already mounted in container.volumeMounts.a: Argo refuses the workflow",
        )
    ]
    assert _errors(_workflow({"container": _body(APART)})) == []


def test_an_input_artifact_does_not_land_on_a_mount() -> None:
    artifacts = {"artifacts": [{"name": "data", "path": "/d", "raw": {"data": "x"}}]}
    found = _errors(_workflow({"inputs": artifacts, "container": _body(APART[:1])}))
    assert found == [
        (
            "spec.templates[0].inputs.artifacts[0].path",
            "'/d' already mounted in container.volumeMounts.a: Argo refuses the workflow",
        )
    ]
    artifacts["artifacts"][0]["path"] = "/in"
    assert _errors(_workflow({"inputs": artifacts, "container": _body(APART[:1])})) == []


def test_a_script_and_a_container_set_mount_each_path_once() -> None:
    script = {**_body(TWICE), "source": "echo hi"}
    del script["command"]
    found = _errors(_workflow({"script": script}))
    assert [p for p, _ in found] == ["spec.templates[0].script.volumeMounts[1].mountPath"]
    assert "Kubernetes refuses the step's pod" in found[0][1]
    container_set = {"volumeMounts": TWICE, "containers": [{"name": "main", "image": "busybox:1.37.0"}]}
    assert [p for p, _ in _errors(_workflow({"containerSet": container_set}))] == [
        "spec.templates[0].containerSet.volumeMounts[1].mountPath"
    ]


def test_the_steps_pod_meets_kubernetes_mount_and_volume_rules() -> None:
    mounts = [{"name": "a", "mountPath": "/d", "subPath": "../x"}]
    assert [p for p, _ in _errors(_workflow({"container": _body(mounts)}))] == [
        "spec.templates[0].container.volumeMounts[0].subPath"
    ]
    volumes = [{"name": "a", "configMap": {"name": "c", "defaultMode": 1000}}]
    assert [p for p, _ in _errors(_workflow({"container": _body(APART[:1])}, volumes))] == [
        "spec.volumes[0].configMap.defaultMode"
    ]
    template = {"container": _body(APART[:1]), "volumes": [{"name": "t", "hostPath": {"path": "/x", "type": "Dir"}}]}
    assert [p for p, _ in _errors(_workflow(template))] == ["spec.templates[0].volumes[0].hostPath.type"]
