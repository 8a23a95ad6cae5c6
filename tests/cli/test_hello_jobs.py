"""`python -m hera_volcano.steps` and `python -m hera_volcano.dag`: output, options and bad input."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.commands import run
from tests.conftest import manifests


@pytest.mark.parametrize(("module", "name"), [("steps", "volcano-step-job"), ("dag", "volcano-dag-job")])
def test_workflow_and_template(module: str, name: str) -> None:
    wf = yaml.safe_load(run(f"hera_volcano.{module}").out)
    assert wf["kind"] == "Workflow" and wf["metadata"]["generateName"] == f"{name}-"
    template = yaml.safe_load(run(f"hera_volcano.{module}", "--template").out)
    assert template["kind"] == "WorkflowTemplate" and template["metadata"]["name"] == name
    job = manifests(wf)[0]
    assert job["spec"]["tasks"][0]["replicas"] == 2


def test_options_reach_the_workflow(tmp_path: Path) -> None:
    out = tmp_path / "dag.yaml"
    r = run("hera_volcano.dag", "--namespace", "ml", "--service-account", "runner", "--output-file", str(out))
    assert r.code == 0 and r.out == ""
    wf = yaml.safe_load(out.read_text())
    assert wf["metadata"]["namespace"] == "ml" and wf["spec"]["serviceAccountName"] == "runner"


@pytest.mark.parametrize("module", ["steps", "dag"])
@pytest.mark.parametrize(
    ("args", "option"),
    [(["--namespace", "Bad"], "--namespace"), (["--service-account", "a b"], "--service-account"), (["--x"], "--x")],
)
def test_bad_input_exits_2_with_one_line(module: str, args: list[str], option: str) -> None:
    r = run(f"hera_volcano.{module}", *args)
    assert r.code == 2 and r.out == "" and len(r.err.splitlines()) == 1 and option in r.err
