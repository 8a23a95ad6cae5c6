"""What submit and submit_from create: exactly one Workflow, from a Hera object, a dict or YAML text."""

from __future__ import annotations

import pytest
from hera.workflows import Container, Workflow, WorkflowTemplate

from hera_volcano import ValidationError
from hera_volcano.client import submission
from hera_volcano.kube.emit import to_yaml


def hera_workflow() -> Workflow:
    with Workflow(generate_name="hello-", namespace="argo", entrypoint="main") as w:
        Container(name="main", image="busybox:1.37.0", command=["echo", "hi"])
    return w


def test_a_hera_workflow_a_dict_and_yaml_text_give_the_same_body() -> None:
    w = hera_workflow()
    body = submission.workflow_body(w)
    assert body["kind"] == "Workflow" and body["metadata"] == {"generateName": "hello-", "namespace": "argo"}
    assert submission.workflow_body(w.to_dict()) == body
    assert submission.workflow_body(to_yaml(w)) == body
    assert submission.workflow_body(to_yaml(w).encode()) == body


def test_the_body_is_a_copy() -> None:
    data = hera_workflow().to_dict()
    submission.workflow_body(data)["metadata"]["namespace"] = "elsewhere"
    assert data["metadata"]["namespace"] == "argo"


@pytest.mark.parametrize(
    ("given", "field", "rule"),
    [
        ("kind: WorkflowTemplate\napiVersion: argoproj.io/v1alpha1\n", "kind", "submit_from runs a WorkflowTemplate"),
        ("kind: ConfigMap\napiVersion: v1\n", "kind", "must be Workflow, not 'ConfigMap'"),
        ("a: [1\n", "workflow", "is not YAML"),
        ("", "workflow", "exactly one document, not 0"),
        ("kind: Workflow\n---\nkind: Workflow\n", "workflow", "exactly one document, not 2"),
        ("- a\n", "workflow", "must be a Workflow object"),
        ("kind: Workflow\napiVersion: argoproj.io/v1\n", "apiVersion", "must be argoproj.io/v1alpha1"),
        ("kind: Workflow\napiVersion: argoproj.io/v1alpha1\nmetadata: {}\n", "metadata", "a name or a generateName"),
        ("kind: Workflow\napiVersion: argoproj.io/v1alpha1\nmetadata: {name: Bad_Name}\n", "metadata.name", "DNS"),
    ],
)
def test_anything_but_one_workflow_is_refused(given: str, field: str, rule: str) -> None:
    with pytest.raises(ValidationError) as e:
        submission.workflow_body(given)
    assert e.value.field == field
    assert rule in e.value.rule


def test_a_hera_workflow_template_is_refused_too() -> None:
    with WorkflowTemplate(name="t", entrypoint="main") as t:
        Container(name="main", image="busybox:1.37.0")
    with pytest.raises(ValidationError, match="submit_from"):
        submission.workflow_body(t)


def test_non_json_values_are_refused() -> None:
    data = hera_workflow().to_dict()
    data["spec"]["arguments"] = {"parameters": [{"name": "x", "value": object()}]}
    with pytest.raises(ValidationError, match="not plain data"):
        submission.workflow_body(data)


def test_the_namespace_is_the_workflows_own_unless_the_client_names_another() -> None:
    body = submission.workflow_body(hera_workflow())
    assert submission.in_namespace(body, "default", explicit=False) == "argo"
    assert submission.in_namespace(body, "argo", explicit=True) == "argo"
    del body["metadata"]["namespace"]
    assert submission.in_namespace(body, "ml", explicit=True) == "ml"
    body["metadata"]["namespace"] = "argo"
    with pytest.raises(ValidationError, match="client submits to namespace 'ml'"):
        submission.in_namespace(body, "ml", explicit=True)


def test_from_template_is_what_argo_submit_from_creates() -> None:
    body = submission.from_template("volcano-mpi-hello", {"job-name": "x", "workers": 3, "debug": True}, "argo")
    assert body == {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Workflow",
        "metadata": {
            "generateName": "volcano-mpi-hello-",
            "namespace": "argo",
            "labels": {"workflows.argoproj.io/workflow-template": "volcano-mpi-hello"},
        },
        "spec": {
            "workflowTemplateRef": {"name": "volcano-mpi-hello"},
            "arguments": {
                "parameters": [
                    {"name": "job-name", "value": "x"},
                    {"name": "workers", "value": "3"},
                    {"name": "debug", "value": "true"},
                ]
            },
        },
    }
    assert "arguments" not in submission.from_template("t", {}, "argo")["spec"]
    with pytest.raises(ValidationError, match="must be a string or a number"):
        submission.from_template("t", {"x": [1]}, "argo")


def test_parameters_the_template_does_not_declare_are_refused() -> None:
    template = {"metadata": {"name": "t"}, "spec": {"arguments": {"parameters": [{"name": "job-name", "value": ""}]}}}
    submission.check_parameters(template, {"job-name": "x"})
    with pytest.raises(ValidationError, match=r"job_name: not declared by t \(it declares job-name\)"):
        submission.check_parameters(template, {"job_name": "x"})


def test_from_cron_copies_what_argo_copies_from_a_cron_workflow() -> None:
    from datetime import datetime, timezone

    from hera.workflows import Container, CronWorkflow

    with CronWorkflow(
        name="nightly",
        namespace="ml",
        schedules=["0 2 * * *"],
        entrypoint="main",
        arguments={"size": "1"},
        labels={"workflows.argoproj.io/controller-instanceid": "ml-ctl", "team": "ml"},
    ) as cron:
        Container(name="main", image="busybox:1.37.0", command=["echo", "{{workflow.scheduledTime}}"])
    data = cron.to_dict()
    data["metadata"]["uid"] = "1234"
    data["spec"]["workflowMetadata"] = {"labels": {"run": "nightly"}, "annotations": {"why": "cron"},
                                        "finalizers": ["example.com/keep"]}  # fmt: skip
    now = datetime(2026, 12, 4, 22, 0, 5, tzinfo=timezone.utc)
    body = submission.from_cron(data, {"size": 8}, now)
    assert body["metadata"] == {
        "generateName": "nightly-",
        "namespace": "ml",
        "labels": {
            "workflows.argoproj.io/cron-workflow": "nightly",
            "workflows.argoproj.io/controller-instanceid": "ml-ctl",
            "run": "nightly",
        },
        "annotations": {"workflows.argoproj.io/scheduled-time": "2026-12-04T22:00:05Z", "why": "cron"},
        "finalizers": ["example.com/keep"],
        "ownerReferences": [
            {"apiVersion": "argoproj.io/v1alpha1", "kind": "CronWorkflow", "name": "nightly", "uid": "1234",
             "controller": True}
        ],
    }  # fmt: skip
    assert body["kind"] == "Workflow" and body["spec"]["templates"] == data["spec"]["workflowSpec"]["templates"]
    assert body["spec"]["arguments"] == {"parameters": [{"name": "size", "value": "8"}]}
    assert data["spec"]["workflowSpec"]["arguments"] == {"parameters": [{"name": "size", "value": "1"}]}, "a copy"
    with pytest.raises(ValidationError, match=r"epochs: not declared by nightly \(it declares size\)"):
        submission.from_cron(data, {"epochs": 2}, now)


def test_a_cron_workflow_is_a_body_only_where_one_is_asked_for() -> None:
    cron = (
        "apiVersion: argoproj.io/v1alpha1\nkind: CronWorkflow\nmetadata: {name: c}\nspec: {schedules: ['* * * * *']}\n"
    )
    with pytest.raises(ValidationError, match="create_cron creates a CronWorkflow"):
        submission.workflow_body(cron)
    assert submission.workflow_body(cron, ("CronWorkflow",))["metadata"] == {"name": "c"}
