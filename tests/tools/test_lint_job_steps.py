"""Lint across a workflow's job steps: what a job's pods need (an account), what its queue admits, how a loop names
its jobs, and what the outputs and parameters it references are."""

from __future__ import annotations

from typing import Any

import yaml

import hera_volcano as hv
from tests.tools.test_lint import JOB, M, changed, errors, resource


def _mpi_manifest(**kwargs: Any) -> str:
    job = hv.mpi_job(image="x:1", program=hv.Program.command(["a"]), generate_name="mpi-", **kwargs)
    return yaml.safe_dump(job.to_dict())


def test_an_mpi_master_without_an_account_is_an_error() -> None:
    bare = changed(lambda d: resource(d).__setitem__("manifest", _mpi_manifest()))
    message = errors(bare)[f"{M}spec.tasks[0].template.spec.serviceAccountName"]
    assert "'default' account" in message and "service_account=" in message
    named = changed(lambda d: resource(d).__setitem__("manifest", _mpi_manifest(service_account="mpi")))
    assert not [p for p in errors(named) if "serviceAccountName" in p]


def _looped(manifest: str, kind: str = "Workflow", through_dag: bool = False) -> dict[str, Any]:
    """The clean workflow with its job step in a withItems loop (directly, or through a DAG that runs it)."""

    def edit(d: dict[str, Any]) -> None:
        resource(d)["manifest"] = manifest
        task = d["spec"]["templates"][0]["dag"]["tasks"][0]
        task["withItems"] = [1, 2]
        if through_dag:
            d["spec"]["templates"].append({"name": "one", "dag": {"tasks": [{"name": "job", "template": "submit"}]}})
            task["template"] = "one"

    return changed(edit, kind)


def test_a_fixed_job_name_in_a_loop_is_an_error() -> None:
    fixed = JOB.replace("generateName: hello-", "name: hello")
    for doc in (_looped(fixed), _looped(fixed, "WorkflowTemplate"), _looped(fixed, through_dag=True)):
        message = errors(doc)[f"{M}metadata.name"]
        assert "'hello' in every iteration" in message and "withItems of main's step 'submit'" in message
    per_run = JOB.replace("generateName: hello-", "name: '{{workflow.name}}-hello'")
    assert "every iteration" in errors(_looped(per_run)).get(f"{M}metadata.name", "")
    per_item = JOB.replace("generateName: hello-", "name: 'hello-{{inputs.parameters.i}}'")
    assert f"{M}metadata.name" not in errors(_looped(per_item))
    assert f"{M}metadata.name" not in errors(_looped(JOB))
    assert f"{M}metadata.name" not in errors(changed(lambda d: resource(d).__setitem__("manifest", fixed)))
