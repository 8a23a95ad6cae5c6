"""Lint across a workflow's job steps: what a job's pods need (an account), what its queue admits, how a loop names
its jobs, and what the outputs and parameters it references are."""

from __future__ import annotations

from typing import Any

import yaml

import hera_volcano as hv
from hera_volcano.tools.lint import lint_text
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


QUEUE = """\
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: small}
spec: {capability: {nvidia.com/gpu: 2}}
"""


def test_a_gang_larger_than_its_queue_defined_in_the_same_stream_is_an_error() -> None:
    job = yaml.safe_load(JOB)
    job["spec"].update({"queue": "small", "minAvailable": 4})
    job["spec"]["tasks"][0].update({"replicas": 4})
    job["spec"]["tasks"][0]["template"]["spec"]["containers"][0]["resources"] = {"limits": {"nvidia.com/gpu": 2}}
    doc = changed(lambda d: resource(d).__setitem__("manifest", yaml.safe_dump(job)))
    stream = yaml.safe_dump_all([doc, job]) + "---\n" + QUEUE
    found = {(f.path, f.message) for f in lint_text(stream, "x.yaml") if "capability" in f.message}
    rule = "names queue 'small', whose capability of nvidia.com/gpu is 2, but the gang's minimum (4 pods) asks 8"
    assert {path for path, message in found if rule in message} == {f"[0].{M}spec.queue", "[1].spec.queue"}
    assert not [f for f in lint_text(yaml.safe_dump_all([doc, job]), "x.yaml") if "capability" in f.message]
    job["spec"]["minAvailable"] = 1
    assert not [f for f in lint_text(yaml.safe_dump(job) + "---\n" + QUEUE, "x.yaml") if "capability" in f.message]


def _reading(reference: str, steps: bool = False) -> dict[str, Any]:
    """A workflow whose entry runs ``train`` (outputs loss, accuracy) then ``show`` with ``reference`` as argument."""
    train = {
        "name": "train",
        "container": {"image": "busybox:1.36", "command": ["true"]},
        "outputs": {"parameters": [{"name": n, "valueFrom": {"path": f"/tmp/{n}"}} for n in ("loss", "accuracy")]},
    }
    show = {
        "name": "show",
        "inputs": {"parameters": [{"name": "x"}]},
        "container": {"image": "busybox:1.36", "command": ["echo", "{{inputs.parameters.x}}"]},
    }
    call = {"name": "show", "template": "show", "arguments": {"parameters": [{"name": "x", "value": reference}]}}
    main: dict[str, Any] = (
        {"name": "main", "steps": [[{"name": "train", "template": "train"}], [call]]}
        if steps
        else {"name": "main", "dag": {"tasks": [{"name": "train", "template": "train"}, {**call, "depends": "train"}]}}
    )
    return {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Workflow",
        "metadata": {"generateName": "w-"},
        "spec": {"entrypoint": "main", "templates": [main, train, show]},
    }


def test_a_misspelt_output_of_a_task_or_step_is_an_error_naming_what_it_has() -> None:
    for kind, steps, at in (("tasks", False, "dag.tasks[1]"), ("steps", True, "steps[1][0]")):
        found = errors(_reading(f"{{{{{kind}.train.outputs.parameters.los}}}}", steps))
        message = found[f"spec.templates[0].{at}.arguments.parameters[0].value"]
        assert f"{{{{{kind}.train.outputs.parameters.los}}}}" in message, message
        assert "'train' has no output parameter 'los'" in message and "accuracy, loss" in message
        assert "did you mean 'loss'?" in message
        assert errors(_reading(f"{{{{{kind}.train.outputs.parameters.loss}}}}", steps)) == {}


def _using(kind: str, *args: str, arguments: list[dict[str, str]] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "entrypoint": "main",
        "templates": [{"name": "main", "container": {"image": "busybox:1.36", "command": ["echo", *args]}}],
    }
    if arguments is not None:
        spec["arguments"] = {"parameters": arguments}
    name = {"generateName": "w-"} if kind == "Workflow" else {"name": "t"}
    return {"apiVersion": "argoproj.io/v1alpha1", "kind": kind, "metadata": name, "spec": spec}


def test_workflow_parameters_used_but_not_declared() -> None:
    """Argo refuses a Workflow's (at submission, or for an expression when the step runs); a WorkflowTemplate's may
    come from the Workflow that runs it, so lint judges it with that Workflow when both are in one stream."""
    expression = _using("Workflow", "{{=workflow.parameters.x}}", "{{=workflow.parameters['y']}}", arguments=[])
    found = errors(expression)
    assert "{{workflow.parameters.x}} is not declared" in found["spec.templates[0].container.command[1]"]
    assert "{{workflow.parameters.y}} is not declared" in found["spec.templates[0].container.command[2]"]
    template = _using("WorkflowTemplate", "{{workflow.parameters.x}}")
    assert errors(template) == {}
    caller = {"apiVersion": "argoproj.io/v1alpha1", "kind": "Workflow", "metadata": {"generateName": "w-"}}
    caller["spec"] = {"workflowTemplateRef": {"name": "t"}}
    stream = yaml.safe_dump_all([template, caller])
    found_in = [(f.path, f.message) for f in lint_text(stream, "x.yaml") if f.severity == "error"]
    assert len(found_in) == 1 and found_in[0][0] == "[1].spec.workflowTemplateRef", found_in
    assert "{{workflow.parameters.x}}" in found_in[0][1] and "spec.templates[0].container.command[1]" in found_in[0][1]
    caller["spec"]["arguments"] = {"parameters": [{"name": "x", "value": "1"}]}
    assert not [f for f in lint_text(yaml.safe_dump_all([template, caller]), "x.yaml") if f.severity == "error"]
