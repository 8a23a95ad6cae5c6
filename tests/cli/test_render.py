"""`hera-volcano render`: the committed GitOps files match the code; drift is reported; users' modules render."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from hera_volcano.tools.render import HEADER
from tests.commands import run
from tests.conftest import ROOT

USER_MODULE = """
from hera.workflows import Container, Workflow, WorkflowTemplate
from hera_volcano import Pipeline, batch_job

with WorkflowTemplate(name="nightly", namespace="ml", entrypoint="c") as nightly:
    Container(name="c", image="alpine:3", command=["echo", "hi"])

train = Pipeline([batch_job("train", image="python:3.12", command=["python", "train.py"])]).workflow(
    "train", namespace="ml", template=True
)
not_a_workflow = 3


def pipelines():
    return [Pipeline([batch_job("a", image="x:1", command=["a"])]).workflow("generated", template=True)]
"""


def test_committed_files_are_in_sync_with_the_code() -> None:
    r = run("hera_volcano", "render", "--bundled", "--check", cwd=str(ROOT))
    assert r.code == 0, r.out + r.err
    assert r.out == ""


def test_render_writes_workflows_rbac_and_kustomizations(tmp_path: Path) -> None:
    r = run("hera_volcano", "render", "--bundled", "--out", str(tmp_path))
    assert r.code == 0, r.err
    assert sorted(p.name for p in (tmp_path / "workflows").iterdir()) == [
        "kustomization.yaml",
        "volcano-dag-job.yaml",
        "volcano-mpi-hello.yaml",
        "volcano-pytorch-hello.yaml",
        "volcano-step-job.yaml",
    ]
    kustomization = yaml.safe_load((tmp_path / "workflows" / "kustomization.yaml").read_text())
    assert kustomization["resources"] == [
        "volcano-dag-job.yaml",
        "volcano-mpi-hello.yaml",
        "volcano-pytorch-hello.yaml",
        "volcano-step-job.yaml",
    ]
    for name in kustomization["resources"]:
        doc = yaml.safe_load((tmp_path / "workflows" / name).read_text())
        assert doc["kind"] == "WorkflowTemplate" and f"{doc['metadata']['name']}.yaml" == name
    rbac = list(yaml.safe_load_all((tmp_path / "rbac" / "rbac.yaml").read_text()))
    assert [d["kind"] for d in rbac] == ["ServiceAccount", "Role", "RoleBinding"]
    assert yaml.safe_load((tmp_path / "rbac" / "kustomization.yaml").read_text())["resources"] == ["rbac.yaml"]
    again = run("hera_volcano", "render", "--bundled", "--out", str(tmp_path))
    assert again.code == 0 and again.out == "", "a second render changes nothing"


def test_check_reports_drifted_missing_and_extra_files_and_writes_nothing(tmp_path: Path) -> None:
    assert run("hera_volcano", "render", "--bundled", "--out", str(tmp_path)).code == 0
    dag = tmp_path / "workflows" / "volcano-dag-job.yaml"
    dag.write_text(dag.read_text().replace("minAvailable: 1", "minAvailable: 2"))
    (tmp_path / "rbac" / "rbac.yaml").unlink()
    (tmp_path / "workflows" / "stale.yaml").write_text(HEADER + "kind: x\n")  # rendered once, gone from the code
    (tmp_path / "workflows" / "mine.yaml").write_text("kind: x\n")  # the user's own file: never touched
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    r = run("hera_volcano", "render", "--bundled", "--check", "--out", str(tmp_path))
    assert r.code == 1
    assert "drifted: workflows/volcano-dag-job.yaml" in r.out
    assert "-          minAvailable: 2\n" in r.out and "+          minAvailable: 1\n" in r.out
    assert "missing: rbac/rbac.yaml" in r.out
    assert "extra: workflows/stale.yaml" in r.out
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before
    assert "mine.yaml" not in r.out
    fixed = run("hera_volcano", "render", "--bundled", "--out", str(tmp_path))
    assert fixed.code == 0 and "removed workflows/stale.yaml" in fixed.out
    assert (tmp_path / "workflows" / "mine.yaml").read_text() == "kind: x\n"
    assert run("hera_volcano", "render", "--bundled", "--check", "--out", str(tmp_path)).code == 0


def test_render_never_overwrites_or_removes_files_it_did_not_write(tmp_path: Path) -> None:
    (tmp_path / "workflows").mkdir()
    theirs = tmp_path / "workflows" / "volcano-dag-job.yaml"
    theirs.write_text("# hand-written\n")
    (tmp_path / ".pre-commit-config.yaml").write_text("repos: []\n")
    r = run("hera_volcano", "render", "--bundled", "--out", str(tmp_path))
    assert r.code == 2 and r.out == "" and "refusing to overwrite" in r.err and len(r.err.splitlines()) == 1
    assert theirs.read_text() == "# hand-written\n"
    assert sorted(p.name for p in tmp_path.rglob("*")) == [
        ".pre-commit-config.yaml",
        "volcano-dag-job.yaml",
        "workflows",
    ]
    check = run("hera_volcano", "render", "--bundled", "--check", "--out", str(tmp_path))
    assert check.code == 1 and "conflict: workflows/volcano-dag-job.yaml" in check.out


def test_a_blocked_folder_fails_before_anything_is_written(tmp_path: Path) -> None:
    (tmp_path / "workflows").write_text("a file where a folder belongs\n")
    r = run("hera_volcano", "render", "--bundled", "--out", str(tmp_path))
    assert r.code == 2 and len(r.err.splitlines()) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["workflows"], "nothing written, not even rbac/"


def test_written_files_keep_the_umask_mode(tmp_path: Path) -> None:
    assert run("hera_volcano", "render", "--bundled", "--out", str(tmp_path)).code == 0
    mode = (tmp_path / "rbac" / "rbac.yaml").stat().st_mode & 0o777
    assert mode == 0o666 & ~_umask()


def _umask() -> int:
    import os

    current = os.umask(0)
    os.umask(current)
    return current


def test_users_module_renders_with_drift_check(tmp_path: Path) -> None:
    (tmp_path / "my_pipelines.py").write_text(USER_MODULE)
    out = tmp_path / "deploy"
    r = run("hera_volcano", "render", "--module", "my_pipelines", "--out", str(out), cwd=str(tmp_path))
    assert r.code == 0, r.err
    assert sorted(p.name for p in out.iterdir()) == ["kustomization.yaml", "nightly.yaml", "train.yaml"]
    assert (
        run("hera_volcano", "render", "--module", "my_pipelines", "--out", str(out), "--check", cwd=str(tmp_path)).code
        == 0
    )
    r = run(
        "hera_volcano", "render", "--module", "my_pipelines:pipelines", "--out", str(out), "--check", cwd=str(tmp_path)
    )
    assert r.code == 1 and "missing: generated.yaml" in r.out and "extra: nightly.yaml" in r.out


def test_render_is_byte_identical_across_hash_seeds(tmp_path: Path) -> None:
    for seed in ("0", "99"):
        assert (
            run("hera_volcano", "render", "--bundled", "--out", str(tmp_path / seed), env={"PYTHONHASHSEED": seed}).code
            == 0
        )
    a = {p.relative_to(tmp_path / "0"): p.read_bytes() for p in (tmp_path / "0").rglob("*.yaml")}
    b = {p.relative_to(tmp_path / "99"): p.read_bytes() for p in (tmp_path / "99").rglob("*.yaml")}
    assert a == b


def test_bad_module_and_unwritable_output_exit_2(tmp_path: Path) -> None:
    for args in (["--module", "no_such_module_xyz"], ["--module", "json:nope"]):
        r = run("hera_volcano", "render", *args, "--out", str(tmp_path / "o"), cwd=str(tmp_path))
        assert r.code == 2 and r.out == "" and len(r.err.splitlines()) == 1, r.err
    assert not (tmp_path / "o").exists()
    blocker = tmp_path / "file"
    blocker.write_text("x")
    r = run("hera_volcano", "render", "--bundled", "--out", str(blocker))
    assert r.code == 2 and len(r.err.splitlines()) == 1


def test_committed_tree_has_no_leftover_temporary_files() -> None:
    for folder in ("workflows", "rbac"):
        assert not [p for p in (ROOT / folder).iterdir() if p.name.startswith(".")]


BROKEN_MODULES = {
    "raises": "raise RuntimeError('boom')",
    "syntax": "def (",
    "exits": "import sys\nsys.exit(3)",
    "fn": "def build():\n    raise ValueError('bad')\n\n\ndef needs(x):\n    return x\n",
}


@pytest.mark.parametrize(
    "spec", ["raises", "syntax", "exits", "fn:build", "fn:needs", "fn:missing", "", ":", ":build", "../x", "json"]
)
def test_broken_user_modules_exit_2_with_one_line(spec: str, tmp_path: Path) -> None:
    for name, code in BROKEN_MODULES.items():
        (tmp_path / f"{name}.py").write_text(code)
    r = run("hera_volcano", "render", "--module", spec, "--out", str(tmp_path / "o"), cwd=str(tmp_path))
    assert r.code == 2 and r.out == "" and len(r.err.splitlines()) == 1, r.err
    assert "Traceback" not in r.err
    assert not (tmp_path / "o").exists()


def test_a_workflow_named_kustomization_is_refused(tmp_path: Path) -> None:
    (tmp_path / "kz.py").write_text(
        "from hera.workflows import Container, WorkflowTemplate\n"
        "with WorkflowTemplate(name='kustomization', entrypoint='c') as w:\n"
        "    Container(name='c', image='alpine:3')\n"
    )
    r = run("hera_volcano", "render", "--module", "kz", "--out", str(tmp_path / "o"), cwd=str(tmp_path))
    assert r.code == 2 and "kustomization" in r.err and not (tmp_path / "o").exists()


def test_render_renders_nothing_bundled_unless_asked(tmp_path: Path) -> None:
    nothing = run("hera_volcano", "render", "--out", str(tmp_path), cwd=str(tmp_path))
    assert (nothing.code, nothing.out) == (2, "") and len(nothing.err.splitlines()) == 1
    assert "--module" in nothing.err and "--bundled" in nothing.err
    both = run("hera_volcano", "render", "--bundled", "--module", "x", "--out", str(tmp_path))
    assert (both.code, both.out) == (2, "") and "not allowed with" in both.err
    assert list(tmp_path.iterdir()) == [], "no file written"
