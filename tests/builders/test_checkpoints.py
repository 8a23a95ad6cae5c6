"""``checkpoints=`` on every builder, as a user writes it: the claim mounted and the run's directory given in every pod
of every builder, made by Argo from the workflow's uid and a digest of the step's node name (the same job twice, a
loop's iterations, another run: each its own; a loop item with quotes never reaches the manifest), a typo refused,
and a function that checkpoints, dies and resumes through the real launcher and ``hera_volcano.runtime``."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from hera.workflows import DAG, Workflow

import hera_volcano as hv
from hera_volcano.argo.calls import JobStep
from hera_volcano.pods.checkpoints import CheckpointSettings
from hera_volcano.pods.launcher import RUNTIME_FILE
from hera_volcano.pods.reports import parse_line
from hera_volcano.tools.lint.documents import lint_text
from tests.builders import podsim, userfuncs
from tests.conftest import manifests

IMAGE = "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime"
UID = "6f1c2a8e-0000-4000-8000-00000000abcd"
#: The directory as every pod's manifest holds it: Argo replaces both tags when it creates the job.
DIRECTORY = "/checkpoints/{{workflow.uid}}/{{=sprig.sha256sum(node.name)}}"


def build(builder: str, **settings: Any) -> hv.VolcanoJob:
    program = settings.pop("program", hv.Program.function(userfuncs.counts_squares, args={"steps": 5}))
    shape: dict[str, Any] = {"workers": 1} if builder in ("pytorch_job", "mpi_job") else {}
    if builder == "mpi_job":
        shape["service_account"] = "mpi"
    job: hv.VolcanoJob = getattr(hv, builder)(image=IMAGE, program=program, **shape, **settings)
    return job


BUILDERS = ("mpi_job", "pytorch_job", "tensorflow_job", "batch_job")


@pytest.mark.parametrize("builder", BUILDERS)
@pytest.mark.parametrize("command", [False, True], ids=["function", "command"])
def test_every_pod_of_every_builder_mounts_the_claim_and_is_told_the_directory(builder: str, command: bool) -> None:
    program = hv.Program.command(["python3", "train.py"]) if command else None
    extra = {"program": program} if program is not None else {}
    data = build(builder, checkpoints=hv.Checkpoints("team-checkpoints"), **extra).to_dict()
    for task in data["spec"]["tasks"]:
        spec = task["template"]["spec"]
        assert {"name": "checkpoints", "persistentVolumeClaim": {"claimName": "team-checkpoints"}} in spec["volumes"]
        [main] = [c for c in spec["containers"] if c["name"] == task["name"]]
        assert {"name": "checkpoints", "mountPath": "/checkpoints"} in main["volumeMounts"], task["name"]
        told = [e for e in main["env"] if e["name"] == CheckpointSettings.DIRECTORY]
        assert told == [{"name": CheckpointSettings.DIRECTORY, "value": DIRECTORY}], task["name"]
    if builder == "mpi_job":  # sshd starts the ranks with a clean environment: mpiexec passes the directory on
        [master] = [t for t in data["spec"]["tasks"] if t["name"] == "mpimaster"]
        script = master["template"]["spec"]["containers"][0]["command"][2]
        assert f" -x {CheckpointSettings.DIRECTORY} " in script


def test_without_checkpoints_no_pod_is_told_a_directory() -> None:
    text = json.dumps(build("pytorch_job").to_dict())
    assert CheckpointSettings.DIRECTORY not in text and "persistentVolumeClaim" not in text


def test_a_typo_in_the_claim_is_refused_by_kubernetes_name_rules() -> None:
    with pytest.raises(hv.ValidationError) as error:
        hv.Checkpoints("Team_Checkpoints")
    assert error.value.field == "checkpoints.claim" and "DNS-1123 subdomain" in error.value.rule
    with pytest.raises(hv.ValidationError, match=r"checkpoints\.path: must be an absolute path"):
        hv.Checkpoints("ckpt", path="checkpoints")
    with pytest.raises(hv.ValidationError, match="checkpoints: must be Checkpoints"):
        build("batch_job", checkpoints="team-checkpoints")


@pytest.mark.parametrize(
    ("pod", "field"),
    [
        (hv.PodSettings(env={CheckpointSettings.DIRECTORY: "/mine"}), "env"),
        (hv.PodSettings(volumes=[hv.PodVolume.claim("checkpoints", "/data", claim="other")]), "volumes[checkpoints]"),
        (hv.PodSettings(volumes=[hv.PodVolume.empty_dir("scratch", "/checkpoints")]), "volumeMounts[/checkpoints]"),
    ],
)
def test_a_pod_setting_that_would_change_the_checkpoints_is_refused(pod: hv.PodSettings, field: str) -> None:
    with pytest.raises(hv.ValidationError) as error:
        build("batch_job", program=hv.Program.command(["true"]), checkpoints=hv.Checkpoints("ckpt"), pod=pod)
    assert field in error.value.field


def test_checkpoints_on_the_pipelines_workspace_mount_it_once() -> None:
    workspace = hv.Workspace("shared-data")
    job = build("pytorch_job", checkpoints=workspace.checkpoints())
    workflow = hv.Pipeline([hv.PipelineJob("train", job)], workspace=workspace).workflow("train")
    [manifest] = [str(t.manifest) for t in workflow.templates if isinstance(t, JobStep)]
    assert DIRECTORY.replace("/checkpoints/", "/workspace/checkpoints/", 1) in manifest
    [data] = manifests(workflow)  # with sample values, parsed as Argo would
    for task in data["spec"]["tasks"]:
        spec = task["template"]["spec"]
        assert [v["name"] for v in spec["volumes"]].count("workspace") == 1, "mounted once, by the checkpoints"
        assert [m["mountPath"] for m in spec["containers"][0]["volumeMounts"]].count("/workspace") == 1


def test_checkpoints_mounting_the_workspaces_claim_elsewhere_are_refused_in_the_pipeline() -> None:
    """The user points checkpoints at the workspace's claim and volume name but another path: the pipeline cannot
    also mount the workspace at its own path (one volume, one name), so it says so instead of leaving it out."""
    workspace = hv.Workspace("shared-data")
    elsewhere = hv.Checkpoints(workspace.claim, "/ckpt", workspace.name)
    job = build("pytorch_job", checkpoints=elsewhere)
    with pytest.raises(hv.ValidationError, match="mounts the workspace's claim away from the workspace's path"):
        hv.Pipeline([hv.PipelineJob("train", job)], workspace=workspace).workflow("train")


def workflow_calling_twice_and_looped(items: list[str]) -> dict[str, Any]:
    """A user's DAG: one job's template called as two tasks and in a loop over ``items``."""
    job = build("batch_job", checkpoints=hv.Checkpoints("ckpt"), retry=hv.ArgoRetry(limit=2))
    with Workflow(generate_name="train-", entrypoint="main") as w:
        run = hv.job_template(job, name="run")
        with DAG(name="main"):
            run(name="a")
            run(name="b")
            run(name="loop", with_items=items)
    assert not [f for f in lint_text(hv.to_yaml(w), "train.yaml") if f.severity == "error"]
    data: dict[str, Any] = w.to_dict()
    return data


def directory_of(manifest: str, node: str, uid: str = UID) -> str:
    """The directory the job's pods get, once Argo made the job for the step ``node`` of the run ``uid``."""
    data = podsim.parse(manifest, {"node.name": node, "workflow.uid": uid})
    env = {e["name"]: e["value"] for e in data["spec"]["tasks"][0]["template"]["spec"]["containers"][0]["env"]}
    return env[CheckpointSettings.DIRECTORY]


def test_each_call_each_iteration_and_each_run_gets_its_own_directory() -> None:
    item = 'lr="0.1" it\'s {{workflow.name}}\n$(HOME)'  # what a loop's node name may hold: any item text
    workflow = workflow_calling_twice_and_looped([item, "0.2"])
    [template] = [t for t in workflow["spec"]["templates"] if "resource" in t]
    manifest = template["resource"]["manifest"]
    assert "node.name" in manifest and "item" not in manifest, "only a digest of the node's name is in the manifest"
    # Argo's node names of the job's steps (a retried step's attempts share their retry node's: see the docs).
    nodes = ["train-x.a", "train-x.b", f"train-x.loop(0:{item})", "train-x.loop(1:0.2)"]
    dirs = [directory_of(manifest, node) for node in nodes]
    for node, found in zip(nodes, dirs, strict=True):
        assert found == f"/checkpoints/{UID}/{hashlib.sha256(node.encode()).hexdigest()}"
    assert len(set(dirs)) == len(nodes), "two calls of one job and each iteration: each its own directory"
    assert directory_of(manifest, nodes[0], uid="another-run") != dirs[0], "another run: another directory"
    assert directory_of(manifest, nodes[0]) == dirs[0], "the same step of the same run: the same directory"


def reports(stdout: str) -> dict[str, Any]:
    found = dict(r for r in map(parse_line, stdout.split("\n")) if r is not None)
    return {k: json.loads(v) if k != "dir" and k != "runtime" else v for k, v in found.items()}


def test_a_function_that_dies_resumes_from_its_checkpoint_through_the_real_launcher(tmp_path: Path) -> None:
    """The rendered batch job, substituted as Argo does, its replica run twice with the real launcher and the runtime
    it ships beside it (hera_volcano is not importable there): the first run dies after step 2, the second (a
    Volcano restart: the same pod, the same variable) resumes at 3 and ends with the same sum as one run would."""
    (tmp_path / "bin").mkdir()
    bin_dir = podsim.fakes(tmp_path / "bin")
    claim = tmp_path / "claim"
    program = hv.Program.function(userfuncs.counts_squares, args={"steps": 6, "crash_after": 2})
    job = hv.batch_job(image=IMAGE, program=program, checkpoints=hv.Checkpoints("ckpt", path=str(claim)))
    manifest = str(hv.job_template(job, name="run").manifest)
    data = podsim.parse(manifest, {"node.name": "train-x.run", "workflow.uid": UID})
    argv, env = podsim.process(podsim.container(data, "main"), {"VC_TASK_INDEX": "0"})
    first = podsim.run(argv, env, bin_dir, tmp_path)
    assert first.returncode == 137 and reports(first.stdout) == {}, first.stderr
    second = podsim.run(argv, env, bin_dir, tmp_path)
    assert second.returncode == 0, second.stderr
    got = reports(second.stdout)
    digest = hashlib.sha256(b"train-x.run").hexdigest()
    assert got["resumed_at"] == 3 and got["total"] == sum(i * i for i in range(6))
    assert got["dir"] == f"{claim}/{UID}/{digest}" and got["runtime"].endswith("/" + RUNTIME_FILE)
    assert sorted(p.name for p in Path(got["dir"]).iterdir())[-1] == "step-000000000005"


def test_an_mpi_rank_gets_the_directory_through_mpiexec(tmp_path: Path) -> None:
    (tmp_path / "bin").mkdir()
    bin_dir = podsim.fakes(tmp_path / "bin")
    claim = tmp_path / "claim"
    program = hv.Program.function(userfuncs.counts_squares, args={"steps": 3})
    job = hv.mpi_job(image=IMAGE, program=program, service_account="mpi", checkpoints=hv.Checkpoints("c", str(claim)))
    data = podsim.parse(str(hv.job_template(job, name="run").manifest), {"node.name": "wf.run", "workflow.uid": UID})
    argv, env = podsim.process(podsim.container(data, "mpimaster"))
    launch = argv[2][argv[2].index("exec mpiexec") :]
    result = podsim.run(["/bin/sh", "-c", 'HOSTS="w-0:1,w-1:1"\n' + launch, *argv[3:]], env, bin_dir, tmp_path)
    assert result.returncode == 0, result.stderr
    got = reports(result.stdout)
    assert got["total"] == 5 and got["dir"].startswith(f"{claim}/{UID}/"), got
