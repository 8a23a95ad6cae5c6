"""`python -m hera_volcano.mpi_hello`: output, options, bad input, determinism."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.builders import podsim
from tests.commands import rendered_document, run
from tests.conftest import manifests


def rendered(*args: str) -> dict[str, Any]:
    return rendered_document("hera_volcano.mpi_hello", *args)


def test_default_is_a_self_contained_workflow_for_argo_submit() -> None:
    wf = rendered()
    assert wf["kind"] == "Workflow"
    assert wf["metadata"] == {"generateName": "volcano-mpi-hello-", "namespace": "argo"}
    assert wf["spec"]["serviceAccountName"] == "volcano-workflows"
    assert "workflowTemplateRef" not in wf["spec"]
    job = manifests(wf)[0]
    assert job["spec"]["minAvailable"] == 3
    assert (job["metadata"]["name"], job["metadata"]["generateName"]) == ("", "mpi-hello-")
    assert job["metadata"]["labels"] == {
        "workflows.argoproj.io/workflow": "sample-workflow",
        "hera-volcano/job": "mpi-hello",
    }


def test_template_keeps_the_job_name_parameter() -> None:
    wf = rendered("--template")
    assert wf["kind"] == "WorkflowTemplate"
    assert wf["metadata"] == {"name": "volcano-mpi-hello", "namespace": "argo"}
    assert wf["spec"]["arguments"]["parameters"] == [{"name": "job-name", "value": ""}]
    submit = next(t for t in wf["spec"]["templates"] if "resource" in t)
    assert (
        "{{=" in submit["resource"]["manifest"] and "workflow.parameters['job-name']" in submit["resource"]["manifest"]
    )


def test_the_hello_world_s_job_step_saves_no_outputs() -> None:
    """Nothing in it reads job-name or job-phase, and each would cost the step's pod a kubectl call with discovery."""
    wf = rendered()
    submit = next(t for t in wf["spec"]["templates"] if "resource" in t and t["resource"]["action"] == "create")
    assert "outputs" not in submit
    assert "outputs.parameters" not in json.dumps(wf)


@pytest.mark.parametrize("value", ["my-job", "", 'x"\nnamespace: kube-system\nspec: {}', "a: b", "{{workflow.uid}}"])
def test_a_submitted_job_name_stays_one_string(value: str) -> None:
    """`-p job-name=...` reaches the manifest as one quoted text, through Argo's two substitutions (simulated as Argo
    runs them, tests/builders/podsim.py): it cannot add fields."""
    wf = rendered("--template")
    manifest = next(t for t in wf["spec"]["templates"] if "resource" in t)["resource"]["manifest"]
    job = podsim.parse(manifest, {"workflow.parameters.job-name": value, "workflow.name": "wf", "pod.name": "p"})
    assert job["metadata"]["name"] == value
    assert set(job["metadata"]) == {"name", "generateName", "labels", "annotations"}
    assert job["spec"]["minAvailable"] == 3


def test_job_name_fixes_the_name() -> None:
    wf = rendered("--job-name", "my-job")
    assert manifests(wf)[0]["metadata"]["name"] == "my-job"


def test_options_reach_the_job() -> None:
    wf = rendered(
        "--namespace", "ml", "--service-account", "runner", "--workers", "4", "--slots-per-worker", "2",
        "--gpus-per-worker", "1", "--rdma-per-worker", "1", "--image", "example.com/mpi:1", "--mpi-plugin",
    )  # fmt: skip
    assert wf["metadata"]["namespace"] == "ml" and wf["spec"]["serviceAccountName"] == "runner"
    job = manifests(wf)[0]
    assert job["spec"]["minAvailable"] == 5
    assert "mpi" in job["spec"]["plugins"]
    master, worker = job["spec"]["tasks"]
    assert master["template"]["spec"]["serviceAccountName"] == "runner"
    assert worker["replicas"] == 4
    assert worker["template"]["spec"]["containers"][0]["image"] == "example.com/mpi:1"
    assert worker["template"]["spec"]["containers"][0]["resources"]["limits"] == {"nvidia.com/gpu": 1, "rdma/ib": 1}
    assert "-np 8 " in master["template"]["spec"]["containers"][0]["command"][2]


def test_output_file_is_written_and_stdout_stays_empty(tmp_path: Path) -> None:
    target = tmp_path / "out" / "wf.yaml"
    r = run("hera_volcano.mpi_hello", "--output-file", str(target))
    assert r.code == 0 and r.out == "" and r.err == ""
    assert yaml.safe_load(target.read_text())["kind"] == "Workflow"


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (["--workers", "0"], "--workers"),
        (["--workers", "two"], "--workers"),
        (["--workers", "-1"], "--workers"),
        (["--slots-per-worker", "0"], "--slots-per-worker"),
        (["--gpus-per-worker", "-1"], "--gpus-per-worker"),
        (["--rdma-per-worker", "-2"], "--rdma-per-worker"),
        (["--job-name", "Bad_Name"], "--job-name"),
        (["--job-name", "1job"], "--job-name"),
        (["--job-name", "a" * 52], "--job-name"),
        (["--job-name", "{{workflow.name}}"], "--job-name"),
        (["--image", ""], "--image"),
        (["--image", "x; rm -rf /"], "--image"),
        (["--image", "{{workflow.uid}}"], "--image"),
        (["--namespace", "Bad NS"], "--namespace"),
        (["--service-account", "a/b"], "--service-account"),
        (["--no-such-option"], "--no-such-option"),
    ],
)
def test_bad_input_exits_2_with_one_line_naming_the_option(args: list[str], option: str, tmp_path: Path) -> None:
    target = tmp_path / "never.yaml"
    r = run("hera_volcano.mpi_hello", *args, "--output-file", str(target))
    assert r.code == 2
    assert r.out == ""
    assert len(r.err.splitlines()) == 1, r.err
    assert option in r.err
    assert "Traceback" not in r.err
    assert not target.exists()


def test_unwritable_output_is_a_usage_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    r = run("hera_volcano.mpi_hello", "--output-file", str(blocker / "wf.yaml"))
    assert r.code == 2 and r.out == "" and len(r.err.splitlines()) == 1


def test_same_bytes_in_processes_with_different_hash_seeds() -> None:
    outs = {run("hera_volcano.mpi_hello", "--template", env={"PYTHONHASHSEED": s}).out for s in ("0", "1", "4242")}
    assert len(outs) == 1 and next(iter(outs))


def test_console_script_and_package_entry_point_agree() -> None:
    a = run("hera_volcano", "mpi-hello", "--workers", "3")
    b = run("hera_volcano.mpi_hello", "--workers", "3")
    assert a.code == b.code == 0 and a.out == b.out


def test_unknown_command_is_a_usage_error() -> None:
    r = run("hera_volcano", "nope")
    assert r.code == 2 and r.out == "" and len(r.err.splitlines()) == 1


def test_output_through_a_symlink_replaces_the_target_and_keeps_its_mode(tmp_path: Path) -> None:
    target = tmp_path / "real.yaml"
    target.write_text("old\n")
    target.chmod(0o644)
    link = tmp_path / "link.yaml"
    link.symlink_to(target)
    assert run("hera_volcano.mpi_hello", "--output-file", str(link)).code == 0
    assert link.is_symlink() and yaml.safe_load(target.read_text())["kind"] == "Workflow"
    assert target.stat().st_mode & 0o777 == 0o644


@pytest.mark.parametrize(
    "args", [["--output-file", ""], ["--workers", "+3"], ["--workers", "3_0"], ["--workers", " 3"]]
)
def test_odd_values_are_usage_errors(args: list[str]) -> None:
    r = run("hera_volcano.mpi_hello", *args)
    assert r.code == 2 and r.out == "" and len(r.err.splitlines()) == 1


def test_a_closed_stdout_is_one_line_not_a_traceback() -> None:
    import subprocess
    import sys

    with open("/dev/full", "w") as full:
        p = subprocess.run(
            [sys.executable, "-m", "hera_volcano.mpi_hello"], stdout=full, stderr=subprocess.PIPE, text=True
        )
    assert p.returncode == 2 and len(p.stderr.splitlines()) == 1 and "Traceback" not in p.stderr
