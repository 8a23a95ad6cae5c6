"""`python -m hera_volcano.pytorch_hello`: output, options, bad input, determinism."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.commands import rendered_document, run
from tests.conftest import manifests


def rendered(*args: str) -> dict[str, Any]:
    return rendered_document("hera_volcano.pytorch_hello", *args)


def test_default_is_a_self_contained_workflow_for_argo_submit() -> None:
    wf = rendered()
    assert wf["kind"] == "Workflow"
    assert wf["metadata"] == {"generateName": "volcano-pytorch-hello-", "namespace": "argo"}
    assert wf["spec"]["serviceAccountName"] == "volcano-workflows"
    [job] = manifests(wf)
    assert job["spec"]["minAvailable"] == 3 and "pytorch" in job["spec"]["plugins"]


def test_template_is_the_gitops_form() -> None:
    wf = rendered("--template")
    assert wf["kind"] == "WorkflowTemplate" and wf["metadata"] == {"name": "volcano-pytorch-hello", "namespace": "argo"}


def test_options_reach_the_workflow_and_the_job(tmp_path: Path) -> None:
    out = tmp_path / "sub" / "wf.yaml"
    args = ["--namespace", "ml", "--service-account", "runner", "--workers", "4", "--image", "example.com/t:1"]
    r = run("hera_volcano.pytorch_hello", *args, "--output-file", str(out))
    assert (r.code, r.out, r.err) == (0, "", "")
    wf = yaml.safe_load(out.read_text())
    assert wf["metadata"]["namespace"] == "ml" and wf["spec"]["serviceAccountName"] == "runner"
    [job] = manifests(wf)
    master, worker = job["spec"]["tasks"]
    assert worker["replicas"] == 4 and job["spec"]["minAvailable"] == 5
    assert master["template"]["spec"]["containers"][0]["image"] == "example.com/t:1"


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (["--workers", "0"], "--workers"),
        (["--workers", "two"], "--workers"),
        (["--workers", "10001"], "--workers"),
        (["--image", ""], "--image"),
        (["--image", "x; rm -rf /"], "--image"),
        (["--namespace", "Bad NS"], "--namespace"),
        (["--service-account", "a/b"], "--service-account"),
        (["--job-name", "x"], "--job-name"),
    ],
)
def test_bad_input_exits_2_with_one_line_naming_the_option(args: list[str], option: str, tmp_path: Path) -> None:
    target = tmp_path / "never.yaml"
    r = run("hera_volcano.pytorch_hello", *args, "--output-file", str(target))
    assert r.code == 2 and r.out == ""
    assert len(r.err.splitlines()) == 1 and option in r.err and "Traceback" not in r.err, r.err
    assert r.err.startswith("hera-volcano pytorch-hello: error: ")
    assert not target.exists()


def test_same_bytes_in_processes_with_different_hash_seeds() -> None:
    outs = {run("hera_volcano.pytorch_hello", env={"PYTHONHASHSEED": s}).out for s in ("0", "1", "4242")}
    assert len(outs) == 1 and next(iter(outs))


def test_console_script_and_package_entry_point_agree() -> None:
    a = run("hera_volcano", "pytorch-hello", "--workers", "3", "--template")
    b = run("hera_volcano.pytorch_hello", "--workers", "3", "--template")
    assert a.code == b.code == 0 and a.out == b.out
