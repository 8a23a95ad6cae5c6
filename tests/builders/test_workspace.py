"""A pipeline's workspace: one claim at one path, as a job pod's volume and as an ordinary step's volume."""

from __future__ import annotations

from typing import Any

import pytest
from hera.workflows import Container, Steps, Workflow

import hera_volcano as hv
from hera_volcano.volcano.rules import check_job

CLAIM = {"persistentVolumeClaim": {"claimName": "data"}}


def test_jobs_mount_the_workspace_in_every_pod() -> None:
    workspace = hv.Workspace("data", "/work")
    job = hv.mpi_job(image="img", program=hv.Program.command(["true"]), pod=workspace.add_to(hv.PodSettings(cpu="1")))
    data = job.to_dict()
    assert [f for f in check_job(data) if f.severity == "error"] == []
    for task in data["spec"]["tasks"]:
        spec = task["template"]["spec"]
        assert {"name": "workspace", **CLAIM} in spec["volumes"]
        main = spec["containers"][0]
        assert main["volumeMounts"] == [{"name": "workspace", "mountPath": "/work"}]
        assert main["resources"]["requests"] == {"cpu": "1"}, "the settings given are kept"
    reading = workspace.add_to(read_only=True).volumes[0]
    assert reading.mount() == {"name": "workspace", "mountPath": "/work", "readOnly": True}


def test_ordinary_steps_mount_the_same_claim_at_the_same_path() -> None:
    workspace = hv.Workspace("data", "/work", name="shared")
    with Workflow(generate_name="w-", entrypoint="main") as w:
        prep = Container(name="prep", image="busybox", command=["true"], volumes=[workspace.hera_volume()])
        report = Container(name="report", image="busybox", volumes=[workspace.hera_volume(read_only=True)])
        with Steps(name="main"):
            prep()
            report()
    templates = {t["name"]: t for t in w.to_dict()["spec"]["templates"]}
    assert templates["prep"]["volumes"] == [{"name": "shared", **CLAIM}]
    assert templates["prep"]["container"]["volumeMounts"] == [{"name": "shared", "mountPath": "/work"}]
    assert templates["report"]["volumes"] == [
        {"name": "shared", "persistentVolumeClaim": {"claimName": "data", "readOnly": True}}
    ]
    assert templates["report"]["container"]["volumeMounts"] == [
        {"name": "shared", "mountPath": "/work", "readOnly": True}
    ]


@pytest.mark.parametrize(
    ("make", "field"),
    [
        (lambda: hv.Workspace(""), "volumes[workspace].claim"),
        (lambda: hv.Workspace("Data"), "volumes[workspace].claim"),
        (lambda: hv.Workspace("data", "work"), "volumes[workspace].mount_path"),
        (lambda: hv.Workspace("data", name="Work Space"), "volume.name"),
        (
            lambda: hv.Workspace("data").add_to(hv.PodSettings(volumes=[hv.PodVolume.empty_dir("x", "/workspace")])),
            "volumes[x]",
        ),
        (
            lambda: hv.Workspace("data").add_to(hv.PodSettings(volumes=[hv.PodVolume.empty_dir("workspace", "/x")])),
            "volumes[workspace]",
        ),
        (lambda: hv.Workspace("data").add_to({"volumes": []}), "settings"),  # type: ignore[arg-type]
    ],
)
def test_bad_workspaces_are_refused(make: Any, field: str) -> None:
    with pytest.raises(hv.ValidationError) as e:
        make()
    assert e.value.field == field
