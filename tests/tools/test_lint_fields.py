"""`hera-volcano lint` checks a workflow's field names as strictly as `argo lint` decodes them: an unknown field at
any level is an error with a "did you mean", and fields of one Argo line only get a warning saying which."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.tools.test_lint import changed, errors, resource, spec, tasks, template, warnings, workflow

Edit = Callable[[dict[str, Any]], None]


def put(path: Callable[[dict[str, Any]], dict[str, Any]], key: str, value: Any) -> Edit:
    return lambda doc: path(doc).__setitem__(key, value)


@pytest.mark.parametrize(
    ("edit", "at", "words"),
    [
        (
            put(spec, "entrypiont", "main"),
            "spec.entrypiont",
            "not a field of an Argo WorkflowSpec (did you mean 'entrypoint'?)",
        ),
        (put(spec, "serviceaccountname", "argo"), "spec.serviceaccountname", "did you mean 'serviceAccountName'?"),
        (
            put(lambda d: d["metadata"], "label", {}),
            "metadata.label",
            "a Kubernetes ObjectMeta (did you mean 'labels'?)",
        ),
        (
            put(lambda d: template(d, 2), "retryStrategi", {}),
            "spec.templates[2].retryStrategi",
            "did you mean 'retryStrategy'?",
        ),
        (
            put(lambda d: template(d, 2), "activeDeadline", 5),
            "spec.templates[2].activeDeadline",
            "did you mean 'activeDeadlineSeconds'?",
        ),
        (
            put(lambda d: tasks(d)[0], "dependecies", []),
            "spec.templates[0].dag.tasks[0].dependecies",
            "an Argo DAGTask (did you mean 'dependencies'?)",
        ),
        (
            put(lambda d: template(d, 2)["container"], "imagePullPolicyy", "Always"),
            "spec.templates[2].container.imagePullPolicyy",
            "a Kubernetes Container (did you mean 'imagePullPolicy'?)",
        ),
        (
            put(lambda d: template(d, 2)["container"], "resources", {"limit": {}}),
            "spec.templates[2].container.resources.limit",
            "did you mean 'limits'?",
        ),
        (
            put(resource, "successCondtion", "x"),
            "spec.templates[1].resource.successCondtion",
            "an Argo ResourceTemplate (did you mean 'successCondition'?)",
        ),
        (
            put(lambda d: template(d, 2), "inputs", {"parameter": []}),
            "spec.templates[2].inputs.parameter",
            "an Argo Inputs (did you mean 'parameters'?)",
        ),
        (
            put(lambda d: template(d, 2), "outputs", {"parameters": [{"name": "o", "valueFrom": {"pth": "/x"}}]}),
            "spec.templates[2].outputs.parameters[0].valueFrom.pth",
            "an Argo ValueFrom (did you mean 'path'?)",
        ),
        (
            put(spec, "retryStrategy", {"limit": 1, "backof": {}}),
            "spec.retryStrategy.backof",
            "did you mean 'backoff'?",
        ),
        (put(spec, "whatever", 1), "spec.whatever", "not a field of an Argo WorkflowSpec"),
    ],
)
def test_unknown_fields_are_errors_with_a_suggestion(edit: Edit, at: str, words: str) -> None:
    found = errors(changed(edit))
    assert f"unknown field '{at.rpartition('.')[2]}'" in found[at]
    assert words in found[at]


def test_no_suggestion_when_nothing_is_close() -> None:
    assert "did you mean" not in errors(changed(put(spec, "zzzz", 1)))["spec.zzzz"]


def test_fields_inside_steps_and_inline_templates_are_checked_too() -> None:
    def steps(doc: dict[str, Any]) -> None:
        template(doc, 0).pop("dag")
        template(doc, 0)["steps"] = [[{"name": "a", "template": "echo", "when": "true", "arguemnts": {}}]]

    assert "did you mean 'arguments'?" in errors(changed(steps))["spec.templates[0].steps[0][0].arguemnts"]
    inline = {"name": "i", "inline": {"container": {"image": "x", "comand": ["echo"]}}}
    found = errors(changed(lambda d: tasks(d).append(inline)))
    assert "did you mean 'command'?" in found["spec.templates[0].dag.tasks[1].inline.container.comand"]


def test_every_workflow_kind_is_checked() -> None:
    for kind in ("WorkflowTemplate", "ClusterWorkflowTemplate"):
        assert "spec.entrypiont" in errors(changed(put(spec, "entrypiont", "main"), kind))
    cron = {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "CronWorkflow",
        "metadata": {"name": "nightly"},
        "spec": {"schedules": ["0 * * * *"], "workflowSpec": workflow()["spec"], "concurencyPolicy": "Forbid"},
    }
    assert "did you mean 'concurrencyPolicy'?" in errors(cron)["spec.concurencyPolicy"]


def test_the_clean_workflow_and_a_status_pass() -> None:
    doc = workflow()
    doc["status"] = {"phase": "Succeeded", "nodes": {"x": {"id": "x", "name": "x", "type": "Pod"}}}
    assert errors(doc) == {} and warnings(doc) == {}


def test_pod_spec_patch_is_text_not_yaml() -> None:
    assert errors(changed(put(lambda d: template(d, 2), "podSpecPatch", '{"containers": []}'))) == {}
    found = errors(changed(put(lambda d: template(d, 2), "podSpecPatch", {"containers": []})))
    assert (
        "must be a string, not a mapping: podSpecPatch is a patch written as text"
        in found["spec.templates[2].podSpecPatch"]
    )


def test_a_container_where_a_scalar_belongs_is_an_error_unless_another_rule_said_more() -> None:
    found = errors(changed(put(lambda d: template(d, 2), "serviceAccountName", ["argo"])))
    assert found["spec.templates[2].serviceAccountName"] == "must be a string, not a list"
    # The entrypoint rule says what an entrypoint must be; the field check adds nothing at that path.
    entry = errors(changed(put(spec, "entrypoint", {"name": "main"})))
    assert entry["spec.entrypoint"] == "must be a string: the name of a template"


def test_a_scalar_where_a_mapping_or_list_belongs_is_an_error() -> None:
    assert errors(changed(put(lambda d: template(d, 2), "retryStrategy", 3)))["spec.templates[2].retryStrategy"] == (
        "must be a mapping: an Argo RetryStrategy"
    )
    assert errors(changed(put(lambda d: template(d, 2), "volumes", "data")))["spec.templates[2].volumes"] == (
        "must be a list"
    )


@pytest.mark.parametrize(
    ("edit", "at", "words"),
    [
        (
            put(lambda d: template(d, 2), "synchronization", {"mutex": {"name": "m"}}),
            "spec.templates[2].synchronization.mutex",
            "use mutexes (a list)",
        ),
        (
            put(spec, "synchronization", {"semaphore": {"configMapKeyRef": {"name": "c", "key": "k"}}}),
            "spec.synchronization.semaphore",
            "use semaphores (a list)",
        ),
    ],
)
def test_fields_argo_4_removed_are_warnings_saying_so(edit: Edit, at: str, words: str) -> None:
    doc = changed(edit)
    assert at not in errors(doc)
    assert "is known to Argo 3.7 only: Argo 4 removed it" in warnings(doc)[at] and words in warnings(doc)[at]


def test_a_cron_schedule_is_a_warning_too() -> None:
    cron = {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "CronWorkflow",
        "metadata": {"name": "nightly"},
        "spec": {"schedule": "0 * * * *", "workflowSpec": workflow()["spec"]},
    }
    assert "use schedules (a list)" in warnings(cron)["spec.schedule"]


@pytest.mark.parametrize(
    ("edit", "at"),
    [
        (put(lambda d: template(d, 2), "podResources", {}), "spec.templates[2].podResources"),
        (put(lambda d: template(d, 2), "pendingTimeout", "5m"), "spec.templates[2].pendingTimeout"),
        (
            put(lambda d: template(d, 2)["container"], "restartPolicyRules", []),
            "spec.templates[2].container.restartPolicyRules",
        ),
        (put(spec, "executorPlugins", []), "spec.executorPlugins"),
    ],
)
def test_fields_argo_37_does_not_know_are_warnings_saying_so(edit: Edit, at: str) -> None:
    doc = changed(edit)
    assert at not in errors(doc)
    assert warnings(doc)[at] == "is new in Argo 4: Argo 3.7 refuses it as an unknown field"


def test_odd_keys_do_not_crash_the_field_check() -> None:
    found = errors(changed(put(spec, 5, "x")))  # type: ignore[arg-type]
    assert any("unknown field 5" in m for m in found.values())
