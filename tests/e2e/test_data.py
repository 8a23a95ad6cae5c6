"""Data pipelines on the real cluster (issue 20): the bundled prep -> train -> evaluate pipeline with a workspace on
a real PersistentVolume; an mpi4py function whose reported sum reaches a downstream step of a hand-composed DAG; a
function that raises; a job that reports nothing (a value arriving byte for byte is 34.3's, tests/e2e/test_values.py).
All in the batch of every batched scenario (harness.Batch)."""

from __future__ import annotations

import re
from typing import Any

import pytest
import welcome
from functions import boom, rank_sum, silent
from harness import NAMESPACE, SERVICE_ACCOUNT, Batch, Cluster, Record, took

import hera_volcano as hv

#: This module's batched workflows run this long under CI's batch (the data pipeline's three steps, 2026-12-07):
#: conftest.py submits the longest first.
BATCH_WAITS = 190
MPI_IMAGE = "volcanosh/example-mpi:0.0.3"
PYTHON_IMAGE = "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime"  # python3, as built for the test cluster
CLAIM = "hera-volcano-workspace"


def claim(cluster: Cluster) -> None:
    """The workspace the bundled data pipeline mounts, as `make cluster-up` creates it (welcome.workspace: a claim
    bound to a hostPath volume under the cluster's state folder), bound."""
    welcome.apply_workspace(cluster.node)
    cluster.wait_for(
        lambda: cluster.kubectl("-n", NAMESPACE, "get", "pvc", CLAIM, "-o", "jsonpath={.status.phase}").out == "Bound",
        "the workspace claim bound",
        60,
    )


def with_downstream(job: hv.VolcanoJob, outputs: list[str], name: str, value: str, *arguments: str) -> str:
    """A DAG composed by hand: the job's task (job_dag) then a step that prints ``value`` (say, an output of it);
    ``arguments`` are the Workflow's parameters."""
    from hera.workflows import DAG, Container, Parameter, Workflow

    with Workflow(
        generate_name=f"{name}-",
        namespace=NAMESPACE,
        entrypoint="main",
        service_account_name=SERVICE_ACCOUNT,
        arguments=[Parameter(name=a, value="x") for a in arguments] or None,
    ) as w:
        run = hv.job_dag(job, name="run", outputs=outputs)
        show = Container(
            name="show",
            image="busybox:1.37.0",
            command=["sh", "-c", 'printf "downstream got: %s\\n" "$VALUE"'],
            inputs=[Parameter(name="value")],
            env={"VALUE": "{{inputs.parameters.value}}"},
        )
        with DAG(name="main"):
            run(name="ranks") >> show(name="show", arguments={"value": value})
        w.on_exit = hv.cleanup_on_failure()
    return hv.to_yaml(w)


def submit_batch(b: Batch, cluster: Cluster) -> None:
    if b.runs(test_the_data_pipeline_flows):
        claim(cluster)
        b.submit("data pipeline", cluster.hera("data_pipeline"))
    if b.runs(test_an_mpi4py_function_reports_to_a_downstream_step):
        mpi = hv.mpi_job(
            image=MPI_IMAGE, program=hv.Program.function(rank_sum), workers=3, service_account=SERVICE_ACCOUNT
        )
        b.submit("mpi4py", with_downstream(mpi, ["sum"], "mpi4py", "{{tasks.ranks.outputs.parameters.sum}}"))
    if b.runs(test_a_function_that_raises_fails_the_workflow):
        raising = hv.PipelineJob(
            "boom",
            hv.batch_job(image=PYTHON_IMAGE, program=hv.Program.function(boom, args={"message": "the function broke"})),
            follow_logs=True,
        )
        b.submit("raises", hv.to_yaml(hv.Pipeline([raising]).workflow("raises", service_account=SERVICE_ACCOUNT)))
    if b.runs(test_a_job_that_reports_nothing_stops_the_downstream_step):
        quiet = hv.batch_job(image=PYTHON_IMAGE, program=hv.Program.function(silent))
        downstream = "{{tasks.ranks.outputs.parameters.loss}}"
        b.submit("reports nothing", with_downstream(quiet, ["loss"], "quiet", downstream))
    if b.runs(test_pipeline_steps_get_no_api_token_unless_they_ask):
        b.submit("tokens", hv.to_yaml(token_pipeline()))


#: Where the kubelet mounts a pod's API token.
TOKEN = "/var/run/secrets/kubernetes.io/serviceaccount/token"


def token_pipeline() -> Any:
    """A user's pipeline of two ordinary steps: one passes a value on as an output (which Argo's own containers
    report without the pod's token), the other asks for the API token (``api_token=True``)."""
    from hera.workflows import Container, Parameter
    from hera.workflows.models import ValueFrom

    says = f'if [ -e {TOKEN} ]; then echo "api token: yes"; else echo "api token: no"; fi'
    sealed = Container(
        name="sealed",
        image="busybox:1.37.0",
        command=["sh", "-c", f"{says}; echo 'passed on' > /tmp/out"],
        outputs=[Parameter(name="out", value_from=ValueFrom(path="/tmp/out"))],
    )
    caller = Container(name="caller", image="busybox:1.37.0", command=["sh", "-c", says])
    steps = [hv.PipelineStep("sealed", sealed), hv.PipelineStep("caller", caller, api_token=True)]
    return hv.Pipeline(steps).workflow("tokens", service_account=SERVICE_ACCOUNT)


def nodes(wf: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {n["displayName"]: n for n in wf["status"]["nodes"].values()}


def output(node: dict[str, Any], name: str) -> str:
    return str(next(p["value"] for p in node["outputs"]["parameters"] if p["name"] == name))


def log_of(cluster: Cluster, workflow: str, step: str) -> list[str]:
    return [text for pod, _, text in cluster.lines(workflow) if f"-{step}-" in pod]


@pytest.mark.both_lines("smoke: the bundled data pipeline; the executor carries outputs and artifacts")
@pytest.mark.batch
@pytest.mark.scenario(
    "20.6 the data pipeline: prep, a function trained on a PyTorch gang, evaluate; values and a file flow"
)
def test_the_data_pipeline_flows(cluster: Cluster, batch: Batch, record_property: Record) -> None:
    entry, wf = batch.finish("data pipeline", timeout=900)
    record_property("took", took(wf, entry.submitted))
    assert wf["status"]["phase"] == "Succeeded", wf["status"].get("message")
    reported = output(nodes(wf)["train"], "loss")
    model = output(nodes(wf)["train"], "model")
    assert re.fullmatch(r"\d+\.\d+", reported) and model == "/workspace/model.pt"
    evaluated = log_of(cluster, entry.name, "evaluate")
    assert f"loss reported by rank 0: {reported}" in evaluated, evaluated
    assert f"model: {model}" in evaluated
    assert (cluster.node.paths.state / "workspace" / "model.pt").is_file(), "the model is on the volume"
    [job] = cluster.recorder.jobs_of(entry.name)
    pods = cluster.recorder.select(**{"volcano.sh/job-name": job})
    assert len(pods) == 3 and all(p.scheduler == "volcano" for p in pods), "one gang of 1 master + 2 workers"


@pytest.mark.both_lines("the executor reports outputs with or without the pod's token")
@pytest.mark.batch
@pytest.mark.scenario("34.6 a pipeline's own steps get no API token unless they ask; their outputs still flow")
def test_pipeline_steps_get_no_api_token_unless_they_ask(cluster: Cluster, batch: Batch) -> None:
    entry, wf = batch.finish("tokens", timeout=600)
    assert wf["status"]["phase"] == "Succeeded", wf["status"].get("message")
    assert output(nodes(wf)["sealed"], "out").strip() == "passed on", "Argo's containers reported it without the token"
    assert "api token: no" in log_of(cluster, entry.name, "sealed")
    assert "api token: yes" in log_of(cluster, entry.name, "caller")


@pytest.mark.both_lines("a job's outputs reach the next step through the executor")
@pytest.mark.batch
@pytest.mark.scenario("20.6 an mpi4py function on 3 ranks reports their sum to a downstream step")
def test_an_mpi4py_function_reports_to_a_downstream_step(
    cluster: Cluster, batch: Batch, record_property: Record
) -> None:
    entry, wf = batch.finish("mpi4py")
    record_property("took", took(wf, entry.submitted))
    assert wf["status"]["phase"] == "Succeeded", wf["status"].get("message")
    assert output(nodes(wf)["ranks"], "sum") == "3"
    assert "downstream got: 3" in log_of(cluster, entry.name, "show")


@pytest.mark.batch
@pytest.mark.scenario("20.6 a function that raises fails the workflow, its exception in argo logs")
def test_a_function_that_raises_fails_the_workflow(cluster: Cluster, batch: Batch, record_property: Record) -> None:
    entry, wf = batch.finish("raises")
    record_property("took", took(wf, entry.submitted))
    assert wf["status"]["phase"] == "Failed"
    out = cluster.logs(entry.name)
    assert "ValueError: the function broke" in out, out


@pytest.mark.batch
@pytest.mark.scenario("20.6 a job that reports nothing: its task fails saying so, the downstream step never runs")
def test_a_job_that_reports_nothing_stops_the_downstream_step(
    cluster: Cluster, batch: Batch, record_property: Record
) -> None:
    entry, wf = batch.finish("reports nothing")
    record_property("took", took(wf, entry.submitted))
    assert wf["status"]["phase"] == "Failed"
    found = nodes(wf)
    assert found["job"]["phase"] == "Succeeded" and found["logs"]["phase"] == "Failed"
    assert found.get("show", {}).get("phase") in (None, "Omitted"), "the downstream step never ran"
    out = "\n".join(log_of(cluster, entry.name, "logs"))
    assert "The job's rank 0 reported no value for: loss" in out, out
