"""Kubernetes' rules for a pod's volumes and mounts (kube/volumes): each rule refuses its case at the field, with
Kubernetes' words, and accepts the boundary; lint and the job model reach them through a pod template, the
builders' PodVolume through its source and sub path."""

from __future__ import annotations

from typing import Any

import pytest

from hera_volcano import PodVolume
from hera_volcano.kube.volumes import (
    FILE_MODE_MESSAGE,
    check_mounts,
    check_pod_volumes,
    check_volume_source,
    descending_path_problem,
    item_path_problem,
)
from hera_volcano.shared.errors import ValidationError
from hera_volcano.volcano.rules import check_pod_template


def _volume(source: str, body: dict[str, Any]) -> list[tuple[str, str]]:
    return [(f.path, f.message) for f in check_volume_source({"name": "v", source: body}, "v")]


def _mount(mount: dict[str, Any], security: dict[str, Any] | None = None) -> list[tuple[str, str]]:
    container: dict[str, Any] = {"name": "c", "volumeMounts": [{"name": "v", "mountPath": "/v", **mount}]}
    if security is not None:
        container["securityContext"] = security
    return [(f.path, f.message) for f in check_mounts(container, "c")]


# ---- file modes -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "body", "at"),
    [
        ("configMap", {"name": "c", "defaultMode": 0o1000}, "v.configMap.defaultMode"),
        ("secret", {"secretName": "s", "defaultMode": 512}, "v.secret.defaultMode"),
        ("downwardAPI", {"defaultMode": -1}, "v.downwardAPI.defaultMode"),
        ("projected", {"defaultMode": 1000, "sources": []}, "v.projected.defaultMode"),
        ("configMap", {"name": "c", "items": [{"key": "k", "path": "k", "mode": 0o1000}]}, "v.configMap.items[0].mode"),
        (
            "projected",
            {"sources": [{"secret": {"name": "s", "items": [{"key": "k", "path": "k", "mode": 4096}]}}]},
            "v.projected.sources[0].secret.items[0].mode",
        ),
        (
            "downwardAPI",
            {"items": [{"path": "n", "fieldRef": {"fieldPath": "metadata.name"}, "mode": 0o1777}]},
            "v.downwardAPI.items[0].mode",
        ),
    ],
)
def test_every_file_mode_is_0_to_0777(source: str, body: dict[str, Any], at: str) -> None:
    found = _volume(source, body)
    assert [p for p, _ in found] == [at]
    assert FILE_MODE_MESSAGE in found[0][1]


@pytest.mark.parametrize("mode", [0, 0o644, 0o777])
def test_file_modes_at_the_bounds_pass(mode: int) -> None:
    body = {"name": "c", "defaultMode": mode, "items": [{"key": "k", "path": "k", "mode": mode}]}
    assert _volume("configMap", body) == []
    assert _volume("secret", {"secretName": "s", "defaultMode": mode}) == []


# ---- paths inside a volume --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "problem"),
    [
        ("/etc/k", "must be a relative path"),
        ("../x", "must not contain '..'"),
        ("a/../b", "must not contain '..'"),
        ("..x", "must not start with '..'"),
        ("", "is required"),
    ],
)
def test_item_paths_stay_inside_the_volume(path: str, problem: str) -> None:
    assert item_path_problem(path) == problem


@pytest.mark.parametrize("path", ["k", "conf/k", "a..b", "x..", ".hidden", "a/.../b"])
def test_item_paths_inside_the_volume_pass(path: str) -> None:
    assert item_path_problem(path) is None


def test_every_kind_of_item_path_is_checked() -> None:
    assert _volume("secret", {"secretName": "s", "items": [{"key": "k", "path": "../k"}]}) == [
        ("v.secret.items[0].path", "must not contain '..'")
    ]
    assert _volume("downwardAPI", {"items": [{"path": "/n", "fieldRef": {"fieldPath": "metadata.name"}}]}) == [
        ("v.downwardAPI.items[0].path", "must be a relative path")
    ]
    token = {"sources": [{"serviceAccountToken": {"path": "..token"}}]}
    assert _volume("projected", token) == [
        ("v.projected.sources[0].serviceAccountToken.path", "must not start with '..'")
    ]


def test_downward_api_files_read_one_field_a_volume_can_hold() -> None:
    items = [
        {"path": "a", "fieldRef": {"fieldPath": "status.podIP"}},
        {"path": "b"},
        {"path": "c", "fieldRef": {"fieldPath": "metadata.name"}, "resourceFieldRef": {"resource": "limits.cpu"}},
        {"path": "d", "resourceFieldRef": {"resource": "limits.cpu"}},
        {"path": "e", "resourceFieldRef": {"containerName": "c", "resource": "limits.cpu", "divisor": "2"}},
    ]
    found = _volume("downwardAPI", {"items": items})
    assert [p for p, _ in found] == [
        "v.downwardAPI.items[0].fieldRef.fieldPath",
        "v.downwardAPI.items[1]",
        "v.downwardAPI.items[2]",
        "v.downwardAPI.items[3].resourceFieldRef.containerName",
        "v.downwardAPI.items[4].resourceFieldRef.divisor",
    ]
    fine = [
        {"path": "labels", "fieldRef": {"fieldPath": "metadata.labels"}},
        {"path": "team", "fieldRef": {"fieldPath": "metadata.labels['team']"}},
        {"path": "cpu", "resourceFieldRef": {"containerName": "c", "resource": "limits.cpu", "divisor": "1m"}},
    ]
    assert _volume("downwardAPI", {"items": fine}) == []


# ---- projected volumes ------------------------------------------------------------------------------------------


def test_projected_sources_write_each_path_once() -> None:
    sources: list[dict[str, Any]] = [
        {"configMap": {"name": "a", "items": [{"key": "k", "path": "conf"}]}},
        {"downwardAPI": {"items": [{"path": "conf", "fieldRef": {"fieldPath": "metadata.name"}}]}},
        {"serviceAccountToken": {"path": "conf"}},
    ]
    found = _volume("projected", {"sources": sources})
    assert [p for p, _ in found] == ["v.projected.sources[1].downwardAPI.items[0].path"]
    assert "conflicting duplicate paths" in found[0][1]
    sources[1]["downwardAPI"]["items"][0]["path"] = "name"
    assert _volume("projected", {"sources": sources}) == []  # Kubernetes does not compare the token's path


def test_a_projected_source_is_one_kind() -> None:
    both = {"configMap": {"name": "a"}, "secret": {"name": "b"}}
    assert _volume("projected", {"sources": [both]}) == [
        ("v.projected.sources[0]", "may not specify more than 1 volume type per source, not secret, configMap")
    ]


@pytest.mark.parametrize(("seconds", "refused"), [(599, True), (600, False), (2**32, False), (2**32 + 1, True)])
def test_a_projected_token_lives_ten_minutes_to_2_to_the_32_seconds(seconds: int, refused: bool) -> None:
    found = _volume("projected", {"sources": [{"serviceAccountToken": {"path": "t", "expirationSeconds": seconds}}]})
    assert bool(found) == refused
    if refused:
        assert found[0][0] == "v.projected.sources[0].serviceAccountToken.expirationSeconds"
        assert "may not specify a duration" in found[0][1]


# ---- host paths and other sources --------------------------------------------------------------------------------


@pytest.mark.parametrize(("kind", "refused"), [("Bogus", True), ("directory", True), ("", False), ("Socket", False)])
def test_host_path_types_are_kubernetes_own(kind: str, refused: bool) -> None:
    found = _volume("hostPath", {"path": "/x", "type": kind})
    assert [p for p, _ in found] == (["v.hostPath.type"] if refused else [])
    if refused:
        assert "Unsupported value" in found[0][1]


def test_host_paths_and_git_directories_have_no_backsteps() -> None:
    assert _volume("hostPath", {"path": "/x/../etc"}) == [("v.hostPath.path", "must not contain '..'")]
    assert _volume("hostPath", {"path": "/x..y"}) == []
    assert _volume("gitRepo", {"repository": "r", "directory": "/abs"}) == [
        ("v.gitRepo.directory", "must be a relative path")
    ]


def test_sources_name_what_they_mount() -> None:
    assert _volume("secret", {}) == [("v.secret.secretName", "secretName is required")]
    assert _volume("persistentVolumeClaim", {"claimName": ""}) == [
        ("v.persistentVolumeClaim.claimName", "claimName is required")
    ]
    assert _volume("configMap", {"name": "c", "items": [{"path": "k"}]}) == [
        ("v.configMap.items[0].key", "key is required")
    ]


# ---- mounts ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value", "problem"),
    [
        ("subPath", "/abs", "must be a relative path"),
        ("subPath", "a/../../b", "must not contain '..'"),
        ("subPathExpr", "/$(POD)", "must be a relative path"),
        ("subPathExpr", "../$(POD)", "must not contain '..'"),
    ],
)
def test_sub_paths_stay_inside_the_volume(field: str, value: str, problem: str) -> None:
    assert _mount({field: value}) == [(f"c.volumeMounts[0].{field}", problem)]


@pytest.mark.parametrize("value", ["a", "a/b", "..a", "a..", "$(POD_NAME)/logs"])
def test_sub_paths_inside_the_volume_pass(value: str) -> None:
    assert descending_path_problem(value) is None
    assert _mount({"subPath": value}) == []


def test_sub_path_and_sub_path_expr_exclude_each_other() -> None:
    assert _mount({"subPath": "a", "subPathExpr": "b"}) == [
        ("c.volumeMounts[0].subPathExpr", "subPathExpr and subPath are mutually exclusive")
    ]


def test_bidirectional_propagation_needs_a_privileged_container() -> None:
    found = _mount({"mountPropagation": "Bidirectional"})
    assert [p for p, _ in found] == ["c.volumeMounts[0].mountPropagation"]
    assert "available only to privileged containers" in found[0][1]
    assert _mount({"mountPropagation": "Bidirectional"}, {"privileged": False}) == found
    assert _mount({"mountPropagation": "Bidirectional"}, {"privileged": True}) == []
    assert _mount({"mountPropagation": "HostToContainer"}) == []
    assert _mount({"mountPropagation": "None"}) == []
    assert "Unsupported value" in _mount({"mountPropagation": "bidirectional"})[0][1]


def test_every_container_of_the_pod_is_checked() -> None:
    spec = {
        "volumes": [{"name": "v", "configMap": {"name": "c", "defaultMode": 1000}}],
        "initContainers": [{"name": "i", "volumeMounts": [{"name": "v", "mountPath": "/v", "subPath": "/a"}]}],
        "containers": [{"name": "c", "volumeMounts": [{"name": "v", "mountPath": "/v", "subPath": "../a"}]}],
    }
    assert [f.path for f in check_pod_volumes(spec, "spec")] == [
        "spec.volumes[0].configMap.defaultMode",
        "spec.initContainers[0].volumeMounts[0].subPath",
        "spec.containers[0].volumeMounts[0].subPath",
    ]


def test_a_pod_template_is_held_to_them() -> None:
    template = {
        "spec": {
            "containers": [
                {"name": "c", "image": "busybox", "volumeMounts": [{"name": "v", "mountPath": "/v", "subPath": "/a"}]}
            ],
            "volumes": [{"name": "v", "emptyDir": {}}],
        }
    }
    found = [f for f in check_pod_template(template, "t") if f.severity == "error"]
    assert [f.path for f in found] == ["t.spec.containers[0].volumeMounts[0].subPath"]


# ---- the builders ------------------------------------------------------------------------------------------------


def test_pod_volume_holds_its_source_and_sub_path_to_the_same_rules() -> None:
    with pytest.raises(ValidationError, match=r"volumes\[cfg\].configMap.defaultMode: must be a number between 0"):
        PodVolume("cfg", "/cfg", {"configMap": {"name": "c", "defaultMode": 1000}})
    with pytest.raises(ValidationError, match=r"volumes\[data\].hostPath.type: Unsupported value"):
        PodVolume("data", "/data", {"hostPath": {"path": "/d", "type": "Dir"}})
    with pytest.raises(ValidationError, match=r"volumes\[a\].sub_path: must be a relative path"):
        PodVolume("a", "/a", {"emptyDir": {}}, sub_path="/up")
    PodVolume("cfg", "/cfg", {"configMap": {"name": "c", "defaultMode": 0o777}}, sub_path="a..b")
