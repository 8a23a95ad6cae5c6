"""Keys and the Argo variables a submitter sets, on the real cluster (issue 43).

An annotation-fed value: a batch job reads ``{{workflow.annotations.team}}`` into a pod annotation and an
environment variable, and the Workflow is submitted with that annotation set to a value that would end a string
and add ``hostNetwork`` and another ``serviceAccountName`` to the pod spec were it pasted raw (quotes, line breaks,
braces, ``$(HOME)``). The job's pod spec has no added field and the value arrives exactly.

A mapping-key parameter is refused when the job is built (tests/argo/test_submitter_tags.py): nothing is rendered,
so nothing can be submitted, and no scenario is needed for it; this module checks the refusal comes before any
manifest exists. In the batch of every batched scenario (harness.Batch)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from harness import NAMESPACE, SERVICE_ACCOUNT, Batch, Cluster, Record, took

import hera_volcano as hv

#: This module's batched workflow runs about this long under CI's batch (one small batch job).
BATCH_WAITS = 60
PYTHON_IMAGE = "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime"  # python3, as built for the test cluster
#: Were it pasted raw into the manifest: ends the string, adds two fields to the pod spec, and holds braces and a
#: kubelet variable. (Argo itself expands a variable it knows, `{{workflow.name}}`, inside a submitted annotation as
#: it does inside a submitted parameter (seen on this cluster, docs/security.md), before any expression reads it.)
HOSTILE = "x\"'\n        hostNetwork: true\n        serviceAccountName: other\n        y: '{ not-a-tag }} $(HOME) $$"
#: Python reporting its variable TEAM ('{' escaped: a report holds no Argo tag).
REPORT_TEAM = (
    "import json, os\nprint('hera-volcano:output team=' + json.dumps(os.environ['TEAM']).replace('{', '\\\\u007b'))\n"
)


def annotated_workflow() -> str:
    from hera.workflows import DAG, Workflow

    team = "{{workflow.annotations.team}}"
    job = hv.batch_job(
        image=PYTHON_IMAGE,
        program=hv.Program.command(["python3", "-c", REPORT_TEAM]),
        pod=hv.PodSettings(env={"TEAM": hv.Placeholder("workflow.annotations.team", "x")}, annotations={"team": team}),
    )
    with Workflow(
        generate_name="annotated-",
        namespace=NAMESPACE,
        entrypoint="main",
        service_account_name=SERVICE_ACCOUNT,
        annotations={"team": HOSTILE},
    ) as w:
        run = hv.job_dag(job, name="run", outputs=["team"])
        with DAG(name="main"):
            run(name="run")
        w.on_exit = hv.cleanup_on_failure()
    return hv.to_yaml(w)


def submit_batch(b: Batch, cluster: Cluster) -> None:
    if b.runs(test_an_annotation_fed_value_changes_nothing_but_the_value):
        b.submit("annotated", annotated_workflow())


def reported(wf: dict[str, Any], name: str) -> Any:
    node = next(n for n in wf["status"]["nodes"].values() if n["displayName"] == "run")
    return json.loads(next(p["value"] for p in node["outputs"]["parameters"] if p["name"] == name))


@pytest.mark.batch
@pytest.mark.scenario("43 a submitted annotation read by a job ({{workflow.annotations.team}}): only the value changes")
def test_an_annotation_fed_value_changes_nothing_but_the_value(
    cluster: Cluster, batch: Batch, record_property: Record
) -> None:
    entry, wf = batch.finish("annotated")
    record_property("took", took(wf, entry.submitted))
    assert wf["status"]["phase"] == "Succeeded", wf["status"].get("message")
    assert reported(wf, "team") == HOSTILE, "the value arrives byte for byte"
    [job] = cluster.jobs(entry.name)
    template = job["spec"]["tasks"][0]["template"]
    assert template["metadata"]["annotations"]["team"] == HOSTILE
    spec = template["spec"]
    assert "hostNetwork" not in spec and spec.get("serviceAccountName") != "other", "no field added to the pod spec"


@pytest.mark.scenario("43 a mapping-key parameter is refused before any manifest exists (nothing to submit)")
def test_a_mapping_key_parameter_is_refused_before_anything_is_submitted() -> None:
    zone = hv.Placeholder.input("zone", "a")
    with pytest.raises(hv.ValidationError) as e:
        hv.PodSettings(patch={"spec": {"nodeSelector": {str(zone): "a"}}})
    assert "mapping key" in e.value.rule
