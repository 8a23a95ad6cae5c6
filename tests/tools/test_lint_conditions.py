"""`hera-volcano lint` on the conditions and actions of resource steps that create Volcano Jobs: the mistakes that
make a step hang until its deadline, or end it at the wrong time. Argo checks none of this before the step runs."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from hera_volcano.argo.selectors import parse_selector
from tests.tools.test_lint import FAILURE, JOB, SUCCESS, M, R, changed, errors, job, resource, warnings, workflow


def with_conditions(success: str | None = SUCCESS, failure: str | None = FAILURE) -> dict[str, Any]:
    def edit(doc: dict[str, Any]) -> None:
        for key, value in (("successCondition", success), ("failureCondition", failure)):
            if value is None:
                resource(doc).pop(key)
            else:
                resource(doc)[key] = value

    return changed(edit)


def test_the_suggested_conditions_pass() -> None:
    assert errors(with_conditions()) == warnings(with_conditions()) == {}
    assert errors(with_conditions(failure="status.state.phase in (Failed, Terminated, Aborted)")) == {}


@pytest.mark.parametrize(
    ("success", "words"),
    [
        ("status.phase == Completed", "a Volcano Job has no status.phase"),
        ("status.phase = Succeeded", "a Volcano Job has no status.phase"),
        ("status.state == Completed", "status.state is an object"),
        ("status.succeeded > 0", "tests status.succeeded, not the job's phase"),
        ("status.state.status == Completed", "no status.state.status"),
        ("metadata.name", "tests metadata.name, not the job's phase"),
    ],
)
def test_a_success_condition_that_does_not_test_the_phase_is_an_error_saying_the_step_hangs(
    success: str, words: str
) -> None:
    message = errors(with_conditions(success=success))[f"{R}.successCondition"]
    assert words in message
    assert "polls until its deadline" in message and SUCCESS in message


@pytest.mark.parametrize(
    ("failure", "words"),
    [
        ("status.phase == Failed", "a Volcano Job has no status.phase"),
        ("status.state in (Failed, Terminated)", "status.state is an object"),
        ("status.failed > 0", "tests status.failed, not the job's phase"),
    ],
)
def test_a_failure_condition_that_does_not_test_the_phase_is_an_error(failure: str, words: str) -> None:
    message = errors(with_conditions(failure=failure))[f"{R}.failureCondition"]
    assert words in message and "polls until its deadline" in message and FAILURE in message


@pytest.mark.parametrize(
    ("condition", "words"),
    [
        (
            "status.state.phase == Succeeded",
            "'Succeeded' is not a Volcano Job phase (a Volcano Job that ends so is Completed)",
        ),
        ("status.state.phase = Complete", "'Complete' is not a Volcano Job phase"),
        ("status.state.phase in (Completed, Done)", "'Done' is not a Volcano Job phase"),
        ("status.state.phase > 3", "compares integers"),
    ],
)
def test_phases_that_volcano_never_reports_are_errors(condition: str, words: str) -> None:
    assert words in errors(with_conditions(success=condition))[f"{R}.successCondition"]
    assert words in errors(with_conditions(failure=condition.replace("Completed", "Failed")))[f"{R}.failureCondition"]


def test_phases_from_a_parameter_are_not_judged_by_their_sample() -> None:
    def edit(doc: dict[str, Any]) -> None:
        doc["spec"]["templates"][1]["inputs"] = {"parameters": [{"name": "phase"}]}
        resource(doc)["successCondition"] = "status.state.phase == {{inputs.parameters.phase}}"

    assert f"{R}.successCondition" not in errors(changed(edit, "WorkflowTemplate"))


def test_negative_conditions_fire_before_volcano_writes_the_status() -> None:
    early_failure = errors(with_conditions(failure="status.state.phase != Running"))[f"{R}.failureCondition"]
    assert "holds before Volcano writes the job's status" in early_failure and "fails at once" in early_failure
    assert (
        "holds before"
        in errors(with_conditions(failure="status.state.phase notin (Running, Pending)"))[f"{R}.failureCondition"]
    )
    early_success = errors(with_conditions(success="status.state.phase != Failed"))[f"{R}.successCondition"]
    assert "as soon as the job is created" in early_success


def test_a_failure_condition_that_holds_for_a_running_or_completed_job_is_an_error() -> None:
    running = errors(with_conditions(failure="status.state.phase in (Running, Failed, Terminated, Aborted)"))
    assert "holds for a Running job" in running[f"{R}.failureCondition"]
    completed = errors(with_conditions(failure="status.state.phase in (Completed, Failed, Terminated, Aborted)"))
    assert "holds for a Completed job" in completed[f"{R}.failureCondition"]


def test_extra_requirements_in_a_failure_condition_fire_on_their_own() -> None:
    doc = with_conditions(failure=f"{FAILURE}, status.failed > 2")
    assert errors(doc) == {}
    assert "status.failed > 2 fails it on its own" in warnings(doc)[f"{R}.failureCondition"]


def test_a_success_condition_that_holds_while_the_job_runs_is_a_warning() -> None:
    doc = with_conditions(success="status.state.phase in (Running, Completed)")
    assert errors(doc) == {}
    assert "holds while the job is Running" in warnings(doc)[f"{R}.successCondition"]


def test_condition_rules_agree_with_how_argoexec_evaluates_them() -> None:
    """The phases the rules try are what a live job reports: the suggested conditions match exactly the right ones."""
    success, failure = parse_selector(SUCCESS), parse_selector(FAILURE)
    for phase, succeeds, fails in (("Completed", True, False), ("Failed", False, True), ("Running", False, False)):
        live = {"status": {"state": {"phase": phase}}}
        assert all(r.matches(live) for r in success) is succeeds
        assert any(r.matches(live) for r in failure) is fails


def test_conditions_on_other_kinds_are_not_judged() -> None:
    def config_map(doc: dict[str, Any]) -> None:
        resource(doc)["manifest"] = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n"
        resource(doc)["successCondition"] = "status.phase == Ready"

    assert not [p for p in errors(changed(config_map)) if p.startswith(R)]


# ---- actions ---------------------------------------------------------------------------------------------------------


def test_apply_with_generate_name_is_an_error() -> None:
    for action in ("apply", "replace"):
        found = errors(changed(lambda d, a=action: resource(d).__setitem__("action", a)))
        assert f"{action} cannot create an object from generateName" in found[f"{R}.action"]


def test_apply_to_a_named_volcano_job_is_a_warning_about_updates() -> None:
    def edit(doc: dict[str, Any]) -> None:
        resource(doc)["action"] = "apply"
        resource(doc)["manifest"] = JOB.replace("generateName: hello-", "name: hello")

    doc = changed(edit)
    assert f"{R}.action" not in errors(doc)
    message = warnings(doc)[f"{R}.action"]
    assert "Volcano lets only minAvailable, tasks[].replicas" in message and "use action: create" in message


def test_create_is_not_warned_about() -> None:
    assert f"{R}.action" not in warnings(workflow())


# ---- the job's kind inside a manifest --------------------------------------------------------------------------------


def test_a_batch_v1_job_with_volcano_fields_in_a_manifest_is_an_error() -> None:
    def edit(doc: dict[str, Any]) -> None:
        resource(doc)["manifest"] = JOB.replace("batch.volcano.sh/v1alpha1", "batch/v1")

    message = errors(changed(edit))[f"{M}apiVersion"]
    assert "spec.tasks" in message and "batch.volcano.sh/v1alpha1" in message


def test_a_plain_batch_v1_job_in_a_manifest_is_not_judged() -> None:
    plain = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"generateName": "j-"}, "spec": {"template": {}}}

    def edit(doc: dict[str, Any]) -> None:
        resource(doc)["manifest"] = yaml.safe_dump(plain)

    assert not [p for p in errors(changed(edit)) if p.startswith(R)]


def test_a_volcano_job_of_another_version_in_a_manifest_gets_volcanos_rules() -> None:
    def edit(doc: dict[str, Any]) -> None:
        resource(doc)["manifest"] = JOB.replace("v1alpha1", "v1beta1")

    assert "must be batch.volcano.sh/v1alpha1" in errors(changed(edit))[f"{M}apiVersion"]


def test_a_key_written_twice_in_a_manifest_is_an_error_at_the_repeated_key() -> None:
    def edit(doc: dict[str, Any]) -> None:
        resource(doc)["manifest"] = JOB.replace("    replicas: 1\n", "    replicas: 1\n    replicas: 2\n")

    message = errors(changed(edit))[f"{M}spec.tasks[0].replicas"]
    assert "duplicate key 'replicas'" in message and "of the manifest" in message


def test_hand_written_controller_reference_with_set_owner_reference_stays_an_error() -> None:
    ref = {"apiVersion": "argoproj.io/v1alpha1", "kind": "Workflow", "name": "w", "uid": "u", "controller": True}
    doc = changed(lambda d: resource(d).__setitem__("manifest", job(ownerReferences=[ref])))
    assert "Argo adds the Workflow as controller" in errors(doc)[f"{M}metadata.ownerReferences[0].controller"]
