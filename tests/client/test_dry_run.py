"""Issue 43: what a server-side dry run sends for a document, and how its answer reads (hera_volcano.client.dry_run);
the calls themselves run against a stand-in API server in tests/cli/test_lint_server.py and the real one in
tests/e2e/test_lint_corpus.py."""

from __future__ import annotations

from typing import Any

import pytest

from hera_volcano.client.dry_run import MARK, Target, kinds_of, placed, targets, verdict
from hera_volcano.client.resources import JOBS
from hera_volcano.shared.errors import ClusterError

JOB_MANIFEST = """apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata:
  generateName: "{{workflow.name}}-"
spec:
  queue: "{{inputs.parameters.queue}}"
  tasks: []
"""


def workflow(action: str = "create", kind: str = "Workflow") -> dict[str, Any]:
    spec: dict[str, Any] = {
        "entrypoint": "main",
        "templates": [
            {"name": "main", "steps": [[{"name": "run", "template": "job", "arguments": {
                "parameters": [{"name": "queue", "value": "fast"}]}}]]},
            {"name": "job", "inputs": {"parameters": [{"name": "queue"}]},
             "resource": {"action": action, "manifest": JOB_MANIFEST}},
        ],
    }  # fmt: skip
    if kind == "CronWorkflow":
        spec = {"schedules": ["* * * * *"], "workflowSpec": spec}
    return {"apiVersion": "argoproj.io/v1alpha1", "kind": kind, "metadata": {"generateName": "w-"}, "spec": spec}


def test_a_workflow_is_sent_with_the_job_each_creating_step_makes_its_placeholders_sampled() -> None:
    sent = targets(workflow())
    assert [(t.path, t.step, t.body["kind"]) for t in sent] == [
        ("", False, "Workflow"),
        ("spec.templates[1].resource.manifest", True, "Job"),
    ]
    assert sent[1].body["spec"]["queue"] == "fast"  # the value the step passes, as Argo substitutes it
    assert "{{" not in str(sent[1].body)


@pytest.mark.parametrize("action", ["create", "apply", "replace"])
def test_every_creating_action_is_sent(action: str) -> None:
    assert len(targets(workflow(action))) == 2


@pytest.mark.parametrize("action", ["get", "delete", "patch"])
def test_steps_that_create_nothing_are_not_sent(action: str) -> None:
    assert [t.path for t in targets(workflow(action))] == [""]


def test_a_cron_workflows_steps_are_under_its_workflow_spec() -> None:
    assert [t.path for t in targets(workflow(kind="CronWorkflow"))][1] == (
        "spec.workflowSpec.templates[1].resource.manifest"
    )


@pytest.mark.parametrize(
    "document",
    [
        None,
        [1, 2],
        "text",
        {"kind": "Job"},
        {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": ""},
        {"apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization", "resources": ["a.yaml"]},
    ],
)
def test_what_is_no_object_is_not_sent(document: object) -> None:
    assert targets(document) == []


def test_a_manifest_that_is_not_one_object_is_left_to_offline_lint() -> None:
    doc = workflow()
    doc["spec"]["templates"][1]["resource"]["manifest"] = "a: [1\n"
    assert [t.path for t in targets(doc)] == [""]
    doc["spec"]["templates"][1]["resource"]["manifest"] = "kind: Job\n---\nkind: Job\n"
    assert [t.path for t in targets(doc)] == [""]


def test_the_document_sent_is_a_copy_in_the_namespace_chosen() -> None:
    doc: dict[str, Any] = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "mine"}}
    body = placed(targets(doc)[0].body, "other")
    assert body["metadata"] == {"name": "a", "namespace": "other"}
    assert doc["metadata"]["namespace"] == "mine"
    assert placed({"kind": "Queue", "metadata": {"name": "q"}}, None) == {"kind": "Queue", "metadata": {"name": "q"}}


def test_kinds_are_read_from_the_servers_resource_list_without_subresources() -> None:
    listed = {
        "resources": [
            {"name": "jobs", "kind": "Job", "namespaced": True},
            {"name": "jobs/status", "kind": "Job", "namespaced": True},
            {"name": "queues", "kind": "Queue", "namespaced": False},
        ]
    }
    kinds = kinds_of(listed, "batch.volcano.sh", "v1alpha1")
    assert kinds["Job"] == JOBS and not kinds["Queue"].namespaced


JOB = Target("", {"kind": "Job", "metadata": {"generateName": "train-"}})
STEP = Target("spec.templates[0].resource.manifest", {"kind": "Job", "metadata": {"name": "x"}}, step=True)


@pytest.mark.parametrize(
    ("status", "answer"), [(201, {"kind": "Job"}), (200, {}), (409, {"reason": "AlreadyExists", "message": "exists"})]
)
def test_an_object_the_server_would_store_has_no_finding(status: int, answer: dict[str, Any]) -> None:
    assert verdict(JOB, JOBS, status, answer) is None


def test_a_refusal_is_one_error_with_the_servers_words_and_the_name_it_generated_left_out() -> None:
    answer = {"message": 'Job.batch.volcano.sh "train-x7k2p" is invalid: metadata.annotations: Too long', "code": 422}
    finding = verdict(JOB, JOBS, 422, answer)
    assert finding is not None and finding.severity == "error" and finding.path == ""
    said = 'Job.batch.volcano.sh "train-*" is invalid: metadata.annotations: Too long'
    assert finding.message == f"{MARK} it (dry run): {said}"


def test_a_webhooks_or_policys_denial_is_a_refusal_of_the_object_the_step_creates() -> None:
    webhook = 'admission webhook "validatejob.volcano.sh" denied the request: spec.task[0]...expirationSeconds: bad'
    finding = verdict(STEP, JOBS, 400, {"message": webhook})
    assert finding is not None and finding.severity == "error" and finding.path == STEP.path
    assert finding.message == f"{MARK} the object this step creates (dry run): {webhook}"
    policy = "jobs.batch.volcano.sh \"x\" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'b' denied request"
    denied = verdict(STEP, JOBS, 403, {"message": policy})
    assert denied is not None and denied.severity == "error" and policy in denied.message


def test_rbac_keeping_the_server_from_judging_is_a_warning() -> None:
    rbac = (
        'jobs.batch.volcano.sh is forbidden: User "bob" cannot create resource "jobs" in API group "batch.volcano.sh"'
    )
    finding = verdict(JOB, JOBS, 403, {"message": rbac + ' in the namespace "ml"'})
    assert finding is not None and finding.severity == "warning"
    assert "not judged by the API server" in finding.message and "bob" in finding.message


@pytest.mark.parametrize(("status", "reason"), [(401, "Unauthorized"), (500, "InternalError"), (429, "TooMany")])
def test_an_answer_that_is_no_verdict_raises(status: int, reason: str) -> None:
    with pytest.raises(ClusterError):
        verdict(JOB, JOBS, status, {"kind": "Status", "reason": reason, "message": "failed calling webhook"})
