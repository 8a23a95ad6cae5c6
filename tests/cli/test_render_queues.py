"""`hera-volcano render --module`: the Queues a user's module defines are written to queues/, and --check notices
when they drift."""

from __future__ import annotations

from pathlib import Path

import yaml

from tests.commands import run

MODULE = """
from hera.workflows import Container, WorkflowTemplate
from hera_volcano import Queue

gpu_team = Queue("gpu-team", weight=2, capability={"cpu": "64", "nvidia.com/gpu": 8})
research = Queue("research", parent="gpu-team", capability={"nvidia.com/gpu": 4})

with WorkflowTemplate(name="nightly", entrypoint="c") as nightly:
    Container(name="c", image="alpine:3")


def build():
    return [nightly, Queue("batch")]
"""


def render(tmp_path: Path, spec: str, *args: str) -> tuple[int, str, str]:
    """Render with ``--no-rbac``: the workflows here name no service account, and the queues are the subject."""
    out = str(tmp_path / "deploy")
    r = run("hera_volcano", "render", "--module", spec, "--out", out, "--no-rbac", *args, cwd=str(tmp_path))
    return r.code, r.out, r.err


def test_module_level_queues_are_rendered_and_checked_for_drift(tmp_path: Path) -> None:
    (tmp_path / "teams.py").write_text(MODULE)
    code, out, err = render(tmp_path, "teams")
    assert code == 0, err
    queues = tmp_path / "deploy" / "queues"
    assert sorted(p.name for p in queues.iterdir()) == ["gpu-team.yaml", "kustomization.yaml", "research.yaml"]
    queue = yaml.safe_load((queues / "gpu-team.yaml").read_text())
    assert queue["spec"]["capability"] == {"cpu": "64", "nvidia.com/gpu": 8}
    assert yaml.safe_load((queues / "kustomization.yaml").read_text())["resources"] == [
        "gpu-team.yaml",
        "research.yaml",
    ]
    assert (tmp_path / "deploy" / "nightly.yaml").is_file()
    assert render(tmp_path, "teams", "--check")[0] == 0
    edited = queues / "research.yaml"
    edited.write_text(edited.read_text().replace("nvidia.com/gpu: 4", "nvidia.com/gpu: 6"))
    code, out, _ = render(tmp_path, "teams", "--check")
    assert code == 1
    assert "drifted: queues/research.yaml" in out and "+    nvidia.com/gpu: 4" in out
    code, out, _ = render(tmp_path, "teams:build", "--check")
    assert code == 1 and "missing: queues/batch.yaml" in out and "extra: queues/gpu-team.yaml" in out


def test_a_build_function_may_return_queues(tmp_path: Path) -> None:
    (tmp_path / "teams.py").write_text(MODULE)
    code, _, err = render(tmp_path, "teams:build")
    assert code == 0, err
    assert yaml.safe_load((tmp_path / "deploy" / "queues" / "batch.yaml").read_text())["metadata"]["name"] == "batch"


def test_queues_that_volcano_would_refuse_exit_2_and_write_nothing(tmp_path: Path) -> None:
    (tmp_path / "bad.py").write_text(
        "from hera_volcano import Queue\n"
        "org = Queue('org', deserved={'cpu': '4'})\n"
        "team = Queue('team', parent='org', deserved={'cpu': '8'})\n"
    )
    code, out, err = render(tmp_path, "bad")
    assert code == 2 and out == ""
    assert err.strip().endswith(
        "queues[org].spec.deserved.cpu: must cover its children's deserved of cpu together (team 8); this queue's is 4"
    )
    assert len(err.splitlines()) == 1
    assert not (tmp_path / "deploy").exists()
    (tmp_path / "worse.py").write_text("from hera_volcano import Queue\nq = Queue('q', guarantee={'cpu': '1'})\n")
    code, out, err = render(tmp_path, "worse")
    assert code == 2 and len(err.splitlines()) == 1 and "spec.deserved.cpu: is required" in err
