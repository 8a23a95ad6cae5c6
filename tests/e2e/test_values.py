"""Values on the real cluster (issue 34).

Finding 2: no shell re-reads a value. An MPI job whose command holds `it's` and `TAG=[$(TAG)]`, with TAG a workflow
parameter submitted as `x'$(echo INJECTED)'`: the kubelet expands $(TAG) in the master's arguments, which reach
mpiexec as argv, so the ranks print them exactly.

Findings 1, 3 and 4: a value cannot change a job's structure and arrives byte for byte, or is refused before it
runs. The hostile values of tests/argo/test_values.py (22 carried, 6 refused) go through every entry point: `-p`
workflow arguments (`argo submit`, which skips our checks) and a DAG task's arguments, each into a function's
arguments and its environment; a DAG argument into a user's job label and job name; `-p job-name` on the bundled
MPI hello world (self-referencing); and `hera-volcano submit -p`, which refuses what Argo would substitute again.
Issue 42: a `Program.command` argument from a workflow parameter submitted as `it's $(touch /tmp/x) {{x}} ; rm -rf /`
arrives as one exact argument: the batch job's shell gets it as "$1" (the safe form), Python reports its argv, and
/tmp/x was not created.
Issue 43: a function prints report lines of its own whose values are `{{workflow.parameters.secret}}` and an
expression: the follower refuses them (the step fails naming the output and the rule), the downstream step never
runs, and neither the parameter's value nor the expression's result appears anywhere.
In the batch of every batched scenario (harness.Batch)."""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest
from functions import echo_all, forge
from harness import NAMESPACE, SERVICE_ACCOUNT, Batch, Cluster, Record, took

import hera_volcano as hv
from tests.argo.test_values import CARRIED, REFUSED
from tests.builders.test_command_values import ARGV_VALUE, reporting_program

#: This module's batched workflows run this long under CI's batch (the self-referencing job name's run, 2026-12-07):
#: conftest.py submits the longest first.
BATCH_WAITS = 200
MPI_IMAGE = "volcanosh/example-mpi:0.0.3"
PYTHON_IMAGE = "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime"  # python3, as built for the test cluster
#: The bundled MPI hello world's job name, submitted to refer to itself and to end its string.
SELF_REFERENCE = '{{workflow.parameters.job-name}}"\nkind: Pod\nmetadata: {name: evil}'

PAYLOAD = "x'$(echo INJECTED)'"


def hostile_command() -> str:
    from hera.workflows import DAG, Parameter, Workflow

    job = hv.mpi_job(
        image=MPI_IMAGE,
        program=hv.Program.command(["echo", "TAG=[$(TAG)]", "it's"]),
        workers=1,
        service_account=SERVICE_ACCOUNT,
        master_pod=hv.PodSettings(env={"TAG": hv.Placeholder.workflow_parameter("tag", "x")}),
    )
    with Workflow(
        generate_name="argv-",
        namespace=NAMESPACE,
        entrypoint="main",
        service_account_name=SERVICE_ACCOUNT,
        arguments=[Parameter(name="tag", value="x")],
    ) as w:
        run = hv.job_dag(job, name="run")
        with DAG(name="main"):
            run(name="run")
        w.on_exit = hv.cleanup_on_failure()
    return hv.to_yaml(w)


def argv_workflow() -> str:
    """A batch job whose command's last element is the workflow parameter ``value``, read by its shell as "$2"
    (tests/builders/test_command_values.py runs the same job simulated)."""
    from hera.workflows import DAG, Parameter, Workflow

    value = hv.Placeholder.workflow_parameter("value", "x")
    job = hv.batch_job(
        image=PYTHON_IMAGE,
        program=reporting_program(value),
    )
    with Workflow(
        generate_name="argv-value-",
        namespace=NAMESPACE,
        entrypoint="main",
        service_account_name=SERVICE_ACCOUNT,
        arguments=[Parameter(name="value", value="x")],
    ) as w:
        run = hv.job_dag(job, name="run", outputs=["argv", "created"])
        with DAG(name="main"):
            run(name="run")
        w.on_exit = hv.cleanup_on_failure()
    return hv.to_yaml(w)


#: The workflow parameter a forged report line names, and what the expression it forges would make.
SECRET = "s3cret-value-43"
EVALUATED = "EVALUATED"


def forged_workflow() -> str:
    """A batch job whose function prints forged report lines for the outputs ``text`` and ``expr``, then a step
    that would print ``text``."""
    from hera.workflows import DAG, Container, Parameter, Workflow

    job = hv.batch_job(image=PYTHON_IMAGE, program=hv.Program.function(forge))
    with Workflow(
        generate_name="forged-",
        namespace=NAMESPACE,
        entrypoint="main",
        service_account_name=SERVICE_ACCOUNT,
        arguments=[Parameter(name="secret", value=SECRET)],
    ) as w:
        run = hv.job_dag(job, name="run", outputs=["text", "expr", "plain"])
        show = Container(
            name="show",
            image="busybox:1.37.0",
            command=["sh", "-c", 'printf "downstream got: %s\\n" "$VALUE"'],
            inputs=[Parameter(name="value")],
            env={"VALUE": "{{inputs.parameters.value}}"},
        )
        with DAG(name="main"):
            run(name="run") >> show(name="show", arguments={"value": "{{tasks.run.outputs.parameters.text}}"})
        w.on_exit = hv.cleanup_on_failure()
    return hv.to_yaml(w)


def names() -> list[str]:
    return [f"v{i}" for i in range(len(CARRIED))]


def echo_job(make: Any) -> hv.VolcanoJob:
    """A function given every value as an argument and as a variable ``HV_VALUE_<i>``."""
    return hv.pytorch_job(
        image=PYTHON_IMAGE,
        program=hv.Program.function(echo_all, args={name: make(name, "x") for name in names()}),
        workers=1,
        pod=hv.PodSettings(env={f"HV_VALUE_{i}": make(name, "x") for i, name in enumerate(names())}),
    )


def values_workflow(root: str) -> str:
    """The function's job with the values as workflow arguments (``-p``) or as a DAG task's arguments."""
    from hera.workflows import DAG, Parameter, Workflow

    make = hv.Placeholder.workflow_parameter if root == "workflow" else hv.Placeholder.input
    arguments = [Parameter(name=n, value="x") for n in names()] if root == "workflow" else None
    with Workflow(
        generate_name=f"values-{root}-",
        namespace=NAMESPACE,
        entrypoint="main",
        service_account_name=SERVICE_ACCOUNT,
        arguments=arguments,
    ) as w:
        run = hv.job_dag(echo_job(make), name="run", outputs=["args", "env"])
        with DAG(name="main"):
            if root == "workflow":
                run(name="run")
            else:
                run(name="run", arguments=dict(zip(names(), CARRIED, strict=True)))
        w.on_exit = hv.cleanup_on_failure()
    return hv.to_yaml(w)


def labelled_workflow(value: str) -> str:
    """A user's own job whose label and name come from a DAG argument."""
    from hera.workflows import DAG, Workflow

    label = hv.Placeholder.input("label", "x")
    job = hv.mpi_job(
        name=label,
        image=MPI_IMAGE,
        program=hv.Program.command(["mpi_hello_world"]),
        workers=1,
        service_account=SERVICE_ACCOUNT,
    )
    with Workflow(
        generate_name="labelled-", namespace=NAMESPACE, entrypoint="main", service_account_name=SERVICE_ACCOUNT
    ) as w:
        run = hv.job_template(job, name="run", job_label=label)
        with DAG(name="main"):
            run(name="run", arguments={"label": value})
        w.on_exit = hv.cleanup_on_failure()
    return hv.to_yaml(w)


def submit_batch(b: Batch, cluster: Cluster) -> None:
    if b.runs(test_an_mpi_command_reaches_the_ranks_as_argv):
        b.submit("argv", hostile_command(), args=["-p", f"tag={PAYLOAD}"])
    if b.runs(test_a_command_argument_from_a_placeholder_arrives_exactly):
        b.submit("argv value", argv_workflow(), args=["-p", f"value={ARGV_VALUE}"])
    if b.runs(test_hostile_values_reach_the_function_byte_for_byte):
        parameters = [arg for name, text in zip(names(), CARRIED, strict=True) for arg in ("-p", f"{name}={text}")]
        b.submit("values -p", values_workflow("workflow"), args=parameters)
        b.submit("values dag", values_workflow("inputs"))
    if b.runs(test_a_self_referencing_job_name_stays_one_name):
        b.submit("self-reference", cluster.hera("mpi_hello"), args=["-p", f"job-name={SELF_REFERENCE}"])
    if b.runs(test_a_forged_report_line_is_refused_and_nothing_is_substituted):
        b.submit("forged report", forged_workflow())
    if b.runs(test_a_dag_argument_names_and_labels_the_users_job):
        b.submit("label ok", labelled_workflow("ok-1"))
        b.submit("label hostile", labelled_workflow('x"\nkind: Pod'))


@pytest.mark.both_lines("the controller's substitution of a submitted value")
@pytest.mark.batch
@pytest.mark.scenario("34.2 an MPI command with it's and a submitted x'$(echo INJECTED)': exact argv, nothing run")
def test_an_mpi_command_reaches_the_ranks_as_argv(cluster: Cluster, batch: Batch, record_property: Record) -> None:
    entry, wf = batch.finish("argv")
    record_property("took", took(wf, entry.submitted))
    assert wf["status"]["phase"] == "Succeeded", wf["status"].get("message")
    said = [text for pod, _, text in cluster.lines(entry.name) if "-logs-" in pod and text.startswith("TAG=")]
    assert said == [f"TAG=[{PAYLOAD}] it's"], said


@pytest.mark.both_lines("the controller's substitution of a submitted value")
@pytest.mark.batch
@pytest.mark.scenario("42 a Program.command argument from a placeholder, it's $(touch /tmp/x) {{x}} ; rm -rf /: exact")
def test_a_command_argument_from_a_placeholder_arrives_exactly(
    cluster: Cluster, batch: Batch, record_property: Record
) -> None:
    entry, wf = batch.finish("argv value")
    record_property("took", took(wf, entry.submitted))
    assert wf["status"]["phase"] == "Succeeded", wf["status"].get("message")
    assert reported(wf, "argv") == [ARGV_VALUE], "one argument, byte for byte"
    assert reported(wf, "created") is False, "no shell ran the value"


def reported(wf: dict[str, Any], name: str) -> Any:
    node = next(n for n in wf["status"]["nodes"].values() if n["displayName"] == "run")
    return json.loads(next(p["value"] for p in node["outputs"]["parameters"] if p["name"] == name))


@pytest.mark.both_lines("the controller's two substitution passes")
@pytest.mark.batch
@pytest.mark.parametrize("root", ["-p", "dag"])
@pytest.mark.scenario("34.3 22 hostile values as -p arguments and as DAG arguments reach a function byte for byte")
def test_hostile_values_reach_the_function_byte_for_byte(
    cluster: Cluster, batch: Batch, record_property: Record, root: str
) -> None:
    entry, wf = batch.finish(f"values {root}")
    record_property("took", took(wf, entry.submitted))
    assert wf["status"]["phase"] == "Succeeded", wf["status"].get("message")
    expected = dict(zip(names(), CARRIED, strict=True))
    assert reported(wf, "args") == expected, "as the function's arguments"
    assert reported(wf, "env") == {f"HV_VALUE_{i}": text for i, text in enumerate(CARRIED)}, "as its environment"
    [job] = cluster.jobs(entry.name)
    assert [t["name"] for t in job["spec"]["tasks"]] == ["master", "worker"], "the template's own job"


@pytest.mark.both_lines("the controller's substitution of -p")
@pytest.mark.batch
@pytest.mark.scenario("34.1 a self-referencing -p job-name (argo submit) creates no job of the submitter's choosing")
def test_a_self_referencing_job_name_stays_one_name(cluster: Cluster, batch: Batch, record_property: Record) -> None:
    entry, wf = batch.finish("self-reference")
    record_property("took", took(wf, entry.submitted))
    # The name is exactly the submitted text, which the API server refuses as a name: no job, no pod named evil.
    assert wf["status"]["phase"] in ("Failed", "Error"), wf["status"].get("message")
    assert cluster.jobs(entry.name) == []
    pods = cluster.core.list_namespaced_pod(NAMESPACE).items
    assert not [p.metadata.name for p in pods if p.metadata.name == "evil"]


@pytest.mark.both_lines("the controller's substitution of DAG arguments")
@pytest.mark.batch
@pytest.mark.scenario("34.1 a DAG argument as a user's job label and name: the template's own job, or refused")
def test_a_dag_argument_names_and_labels_the_users_job(cluster: Cluster, batch: Batch, record_property: Record) -> None:
    entry, wf = batch.finish("label ok")
    record_property("took", took(wf, entry.submitted))
    assert wf["status"]["phase"] == "Succeeded", wf["status"].get("message")
    [job] = cluster.jobs(entry.name)
    assert job["metadata"]["labels"]["hera-volcano/job"] == "ok-1"
    assert job["metadata"]["name"] == "ok-1"
    assert [t["name"] for t in job["spec"]["tasks"]] == ["mpimaster", "mpiworker"]
    hostile, failed = batch.finish("label hostile")
    assert failed["status"]["phase"] in ("Failed", "Error"), "the API server refuses the label: nothing is created"
    assert cluster.jobs(hostile.name) == []


@pytest.mark.parametrize("value", [text for text in REFUSED if "{{" in text])
@pytest.mark.scenario("34.1 hera-volcano submit -p refuses a value Argo would substitute again; nothing is created")
def test_submit_refuses_what_argo_would_substitute_again(cluster: Cluster, value: str) -> None:
    before = {
        w["metadata"]["name"]
        for w in cluster.custom.list_namespaced_custom_object("argoproj.io", "v1alpha1", NAMESPACE, "workflows")[
            "items"
        ]
    }
    argv = [sys.executable, "-m", "hera_volcano", "submit", "-", "-n", NAMESPACE, "-p", f"job-name={value}"]
    run = cluster.run(argv, input=cluster.hera("mpi_hello"))
    assert (run.code, run.out) == (2, ""), run
    assert "parameters[job-name]: holds '{{'" in run.err
    after = {
        w["metadata"]["name"]
        for w in cluster.custom.list_namespaced_custom_object("argoproj.io", "v1alpha1", NAMESPACE, "workflows")[
            "items"
        ]
    }
    assert after <= before, "nothing was created"


@pytest.mark.batch
@pytest.mark.scenario("43 a job prints report lines holding a parameter's tag and an expression: refused, nothing read")
def test_a_forged_report_line_is_refused_and_nothing_is_substituted(
    cluster: Cluster, batch: Batch, record_property: Record
) -> None:
    entry, wf = batch.finish("forged report")
    record_property("took", took(wf, entry.submitted))
    assert wf["status"]["phase"] == "Failed", wf["status"].get("message")
    found = {n["displayName"]: n for n in wf["status"]["nodes"].values()}
    assert found["job"]["phase"] == "Succeeded" and found["logs"]["phase"] == "Failed"
    assert found.get("show", {}).get("phase") in (None, "Omitted"), "the downstream step never ran"
    logs = [text for pod, _, text in cluster.lines(entry.name) if "-logs-" in pod]
    refused = "The job's rank 0 reported a value that is refused, output '{}': the value holds two opening braces"
    for name in ("text", "expr"):
        assert any(line.startswith(refused.format(name)) for line in logs), logs
    assert "hera-volcano:output text={{workflow.parameters.secret}}" in logs, "relayed as printed, not substituted"
    status = json.dumps(wf["status"]["nodes"])
    seen = "\n".join(text for _, _, text in cluster.lines(entry.name)) + status
    assert SECRET not in seen and EVALUATED not in seen, "no parameter read, no expression evaluated"
