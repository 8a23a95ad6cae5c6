"""`hera-volcano render`: the committed GitOps files match the code; drift is reported; users' modules render."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from hera_volcano.tools.render import HEADER
from tests.commands import run
from tests.conftest import ROOT

USER_MODULE = """
from hera.workflows import Container, Workflow, WorkflowTemplate
from hera_volcano import Pipeline, PipelineJob, Program, batch_job

with WorkflowTemplate(name="nightly", namespace="ml", entrypoint="c") as nightly:
    Container(name="c", image="alpine:3", command=["echo", "hi"])

job = batch_job(image="python:3.12", program=Program.command(["python", "train.py"]))
train = Pipeline([PipelineJob("train", job)]).workflow(
    "train", namespace="ml", template=True
)
not_a_workflow = 3


def pipelines():
    job = batch_job(image="x:1", program=Program.command(["a"]))
    return [Pipeline([PipelineJob("a", job)]).workflow("generated", template=True)]
"""


def test_committed_files_are_in_sync_with_the_code() -> None:
    r = run("hera_volcano", "render", "--bundled", "--check", cwd=str(ROOT))
    assert r.code == 0, r.out + r.err
    assert r.out == ""


def test_render_writes_workflows_rbac_and_kustomizations(tmp_path: Path) -> None:
    r = run("hera_volcano", "render", "--bundled", "--out", str(tmp_path))
    assert r.code == 0, r.err
    from hera_volcano.examples.bundled import BUNDLED

    written = sorted(f"{name}.yaml" for name in BUNDLED)
    assert sorted(p.name for p in (tmp_path / "workflows").iterdir()) == sorted(["kustomization.yaml", *written])
    kustomization = yaml.safe_load((tmp_path / "workflows" / "kustomization.yaml").read_text())
    assert kustomization["resources"] == written
    for name in kustomization["resources"]:
        doc = yaml.safe_load((tmp_path / "workflows" / name).read_text())
        assert doc["kind"] == "WorkflowTemplate" and f"{doc['metadata']['name']}.yaml" == name
    rbac = list(yaml.safe_load_all((tmp_path / "rbac" / "rbac.yaml").read_text()))
    assert [d["kind"] for d in rbac] == [
        "Namespace",  # its Pod Security labels
        "ServiceAccount",
        "Role",
        "RoleBinding",
        "Secret",  # the data pipeline's steps have no token: Argo's containers use this one
        "ValidatingAdmissionPolicy",
        "ValidatingAdmissionPolicyBinding",
    ]
    program = list(yaml.safe_load_all((tmp_path / "rbac" / "program.yaml").read_text()))
    assert [d["kind"] for d in program] == ["ConfigMap"], "the pods' program, in a document of its own"
    resources = yaml.safe_load((tmp_path / "rbac" / "kustomization.yaml").read_text())["resources"]
    assert resources == ["program.yaml", "rbac.yaml"], "kubectl apply -k rbac/ applies both"
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
    args = ("--module", "my_pipelines", "--out", str(out), "--service-account", "runner")
    r = run("hera_volcano", "render", *args, cwd=str(tmp_path))
    assert r.code == 0, r.err
    assert sorted(p.name for p in out.iterdir()) == ["kustomization.yaml", "nightly.yaml", "rbac", "train.yaml"]
    assert run("hera_volcano", "render", *args, "--check", cwd=str(tmp_path)).code == 0
    r = run("hera_volcano", "render", *args[2:], "--module", "my_pipelines:pipelines", "--check", cwd=str(tmp_path))
    assert r.code == 1 and "missing: generated.yaml" in r.out and "extra: nightly.yaml" in r.out
    assert (
        "run hera-volcano render --out" in r.err and "--service-account runner --module my_pipelines:pipelines" in r.err
    )


FOLLOWED_MODULE = """
from hera.workflows import WorkflowTemplate
from hera_volcano import VolcanoJob, VolcanoTask, follow_logs_template, job_template

task = VolcanoTask(name="main", template={"spec": {"containers": [{"name": "main", "image": "busybox:1"}]}})
step = job_template(VolcanoJob(generate_name="j-", tasks=[task]), name="train")
with WorkflowTemplate(name="logs", entrypoint="f") as logs:
    follow_logs_template(step, name="f")
"""


def test_a_modules_folder_holds_its_program_rbac_and_policy_in_its_kustomization(tmp_path: Path) -> None:
    """What the workflows need to run is beside them, so one kubectl apply -k (or one sync) sets a namespace up."""
    from hera_volcano.pods import program

    (tmp_path / "followed.py").write_text(FOLLOWED_MODULE)
    out = tmp_path / "deploy"
    args = ("--module", "followed", "--out", str(out), "-n", "team-a", "--service-account", "runner")
    r = run("hera_volcano", "render", *args, "--with-service-account", cwd=str(tmp_path))
    assert r.code == 0, r.err
    assert yaml.safe_load((out / "kustomization.yaml").read_text())["resources"] == ["logs.yaml", "rbac"]
    assert yaml.safe_load((out / "rbac" / "kustomization.yaml").read_text())["resources"] == [
        "program.yaml",
        "rbac.yaml",
    ]
    workflow = yaml.safe_load((out / "logs.yaml").read_text())
    assert workflow["metadata"]["namespace"] == "team-a" and workflow["spec"]["serviceAccountName"] == "runner"
    rbac = list(yaml.safe_load_all((out / "rbac" / "rbac.yaml").read_text()))
    # The follower patches the job it follows (its progress): the jobs' admission policy comes with its Role.
    assert [(d["kind"], d["metadata"].get("namespace")) for d in rbac] == [
        ("Namespace", None),
        ("ServiceAccount", "team-a"),
        ("Role", "team-a"),
        ("RoleBinding", "team-a"),
        ("ValidatingAdmissionPolicy", None),
        ("ValidatingAdmissionPolicyBinding", None),
    ]
    [config_map] = yaml.safe_load_all((out / "rbac" / "program.yaml").read_text())
    assert config_map == program.config_map("team-a")
    check = ("hera_volcano", "render", *args, "--with-service-account", "--check")
    assert run(*check, cwd=str(tmp_path)).code == 0
    stale = out / "rbac" / "program.yaml"
    stale.write_text(stale.read_text().replace(program.config_map_name(), "hera-volcano-follower-000000000000"))
    r = run(*check, cwd=str(tmp_path))
    assert r.code == 1 and "drifted: rbac/program.yaml" in r.out, "an old program fails --check"
    assert run("hera_volcano", "render", *args, "--with-service-account", cwd=str(tmp_path)).code == 0
    r = run("hera_volcano", "render", *args, "--check", cwd=str(tmp_path))
    assert r.code == 1 and "drifted: rbac/rbac.yaml" in r.out, "RBAC rendered with other options fails --check"


def test_no_rbac_writes_the_program_alone_and_a_workflow_naming_no_account_is_refused_without_it(
    tmp_path: Path,
) -> None:
    (tmp_path / "followed.py").write_text(FOLLOWED_MODULE)
    out = tmp_path / "deploy"
    refused = run("hera_volcano", "render", "--module", "followed", "--out", str(out), cwd=str(tmp_path))
    assert refused.code == 2 and "spec.serviceAccountName: is not set" in refused.err
    assert not out.exists(), "nothing written"
    r = run("hera_volcano", "render", "--module", "followed", "--out", str(out), "--no-rbac", cwd=str(tmp_path))
    assert r.code == 0, r.err
    assert sorted(p.name for p in (out / "rbac").iterdir()) == ["kustomization.yaml", "program.yaml"]
    workflow = yaml.safe_load((out / "logs.yaml").read_text())
    assert "namespace" not in workflow["metadata"], "no --namespace: the file names none, as the module's"


def test_the_module_options_are_refused_with_bundled(tmp_path: Path) -> None:
    for option in (["--no-rbac"], ["-n", "ml"], ["--submitter", "ci"], ["--allow-privileged"]):
        r = run("hera_volcano", "render", "--bundled", "--out", str(tmp_path), *option)
        assert r.code == 2 and "--bundled renders the repository's own files as they are" in r.err, option


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


RUN_ONCE_MODULE = """
from hera.workflows import Container, Workflow
from hera_volcano import Pipeline, PipelineJob, Program, batch_job

with Workflow(generate_name="backfill-", namespace="ml", entrypoint="c", labels={"team": "ml"}) as backfill:
    Container(name="c", image="alpine:3", command=["echo", "once"])

with Workflow(name="seed", namespace="ml", entrypoint="c") as seed:
    Container(name="c", image="alpine:3", command=["echo", "named"])

job = batch_job(image="python:3.12", program=Program.command(["python", "train.py"]))
train = Pipeline([PipelineJob("train", job)]).workflow(
    "train", namespace="ml"
)
"""


def test_a_run_once_workflow_is_rendered_as_a_workflow_template_with_a_line_saying_so(tmp_path: Path) -> None:
    (tmp_path / "my_jobs.py").write_text(RUN_ONCE_MODULE)
    out = tmp_path / "deploy"
    r = run("hera_volcano", "render", "--module", "my_jobs", "--out", str(out), "--no-rbac", cwd=str(tmp_path))
    assert r.code == 0, r.err
    kustomization = yaml.safe_load((out / "kustomization.yaml").read_text())
    # the pipeline's job is kept to its start limit by a quiet follower: its program comes along (rbac/program.yaml)
    assert kustomization["resources"] == ["backfill.yaml", "rbac", "seed.yaml", "train.yaml"]
    workflows = [name for name in kustomization["resources"] if name != "rbac"]
    docs = {name: yaml.safe_load((out / name).read_text()) for name in workflows}
    for doc in docs.values():  # what kubectl apply -k and Argo CD need: a name to apply by
        assert doc["metadata"].get("name") and "generateName" not in doc["metadata"], doc["metadata"]
    backfill, train = docs["backfill.yaml"], docs["train.yaml"]
    assert (backfill["kind"], backfill["metadata"]) == (
        "WorkflowTemplate",
        {"name": "backfill", "namespace": "ml", "labels": {"team": "ml"}},
    )
    assert backfill["spec"]["templates"][0]["container"]["command"] == ["echo", "once"]
    assert (train["kind"], train["metadata"]["name"]) == ("WorkflowTemplate", "train")
    assert docs["seed.yaml"]["kind"] == "Workflow", "a named Workflow applies as it is"
    notes = r.err.splitlines()
    assert len(notes) == 2 and "Traceback" not in r.err
    assert "Workflow backfill- has only a generateName" in notes[0]
    assert "submit --from workflowtemplate/backfill" in notes[0]
    assert "Workflow train- has only a generateName" in notes[1]
    check = run(
        "hera_volcano", "render", "--module", "my_jobs", "--out", str(out), "--no-rbac", "--check", cwd=str(tmp_path)
    )
    assert (check.code, check.out) == (0, ""), check


def test_a_run_once_workflow_and_a_template_of_the_same_name_are_refused_naming_both(tmp_path: Path) -> None:
    (tmp_path / "clash.py").write_text(
        "from hera.workflows import Container, Workflow, WorkflowTemplate\n"
        "with WorkflowTemplate(name='train', entrypoint='c') as a:\n"
        "    Container(name='c', image='alpine:3')\n"
        "with Workflow(generate_name='train-', entrypoint='c') as b:\n"
        "    Container(name='c', image='alpine:3')\n"
    )
    r = run("hera_volcano", "render", "--module", "clash", "--out", str(tmp_path / "o"), cwd=str(tmp_path))
    assert (r.code, r.out) == (2, "") and len(r.err.splitlines()) == 1, r
    assert "--module clash" in r.err and "train.yaml" in r.err and "WorkflowTemplate train" in r.err
    assert not (tmp_path / "o").exists()


def test_a_module_that_raises_is_reported_with_its_module_line_call_and_field(tmp_path: Path) -> None:
    (tmp_path / "pipelines").mkdir()
    (tmp_path / "pipelines" / "__init__.py").write_text("")
    (tmp_path / "pipelines" / "nightly.py").write_text(
        "from hera_volcano import Pipeline, PipelineJob, Program, batch_job, mpi_job\n"
        "\n"
        "prep = PipelineJob('prep', batch_job(image='python:3.12', program=Program.command(['python', 'prep.py'])))\n"
        "allreduce = mpi_job(\n"
        "    name='allreduce',\n"
        "    image='volcanosh/example-mpi:0.0.3',\n"
        "    workers=0,\n"
        "    program=Program.command(['mpirun', 'hello']),\n"
        ")\n"
    )
    r = run("hera_volcano", "render", "--module", "pipelines.nightly", "--out", str(tmp_path / "o"), cwd=str(tmp_path))
    [line] = _one_line(r)
    assert line.startswith("hera-volcano render: error: --module pipelines.nightly: pipelines/nightly.py line 4")
    assert "(mpi_job(name='allreduce', image=" in line and "workers=0" in line, line  # the call names the job
    assert line.endswith("workers: must be a positive integer"), line
    assert not (tmp_path / "o").exists()


def test_a_users_function_that_raises_is_reported_with_the_line_that_raised(tmp_path: Path) -> None:
    (tmp_path / "gen.py").write_text(
        "def workflows():\n"
        "    sizes = {'small': 1}\n"
        "    return [sizes['large']]\n"
    )  # fmt: skip
    r = run("hera_volcano", "render", "--module", "gen:workflows", "--out", str(tmp_path / "o"), cwd=str(tmp_path))
    [line] = _one_line(r)
    assert (
        line == "hera-volcano render: error: --module gen:workflows: gen.py line 3 (sizes['large']): KeyError: 'large'"
    )


def _one_line(r: Any) -> list[str]:
    assert (r.code, r.out) == (2, ""), r
    assert "Traceback" not in r.err
    return r.err.splitlines()


def test_an_uppercase_image_in_a_users_module_is_refused_naming_it(tmp_path: Path) -> None:
    (tmp_path / "upper.py").write_text(
        "from hera_volcano import Pipeline, PipelineJob, Program, batch_job\n"
        "job = batch_job(image='MyOrg/Trainer:1', program=Program.command(['train']))\n"
        "train = Pipeline([PipelineJob('train', job)]).workflow('train')\n"
    )
    r = run("hera_volcano", "render", "--module", "upper", "--out", str(tmp_path / "o"), cwd=str(tmp_path))
    [line] = _one_line(r)
    assert "--module upper: upper.py line 2" in line and "image: must be a lowercase repository name" in line
    assert "'MyOrg/Trainer:1'" in line and not (tmp_path / "o").exists()
