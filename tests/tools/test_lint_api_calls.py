"""Lint and ``rbac`` read a pod's API calls the same way (issue 43): from its declaration, never from the words of a
script. A script that runs ``kubectl`` in a pod template that declares nothing is a warning with the declaration to
add (an Argo template, a Volcano Job's task in a resource step or in a job file); a declaration that does not read is
an error."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml

from hera_volcano import ValidationError, rbac_for
from hera_volcano.tools.lint import lint_document
from hera_volcano.tools.rbac import CALLS_ANNOTATION
from tests.tools.test_lint import JOB, M, workflow

SCRIPT = ["sh", "-c", "kubectl logs -l app=x --tail=5"]


def findings(doc: Any) -> dict[str, tuple[str, str]]:
    return {f.path: (f.severity, f.message) for f in lint_document(doc) if "kubectl" in f.message or "calls" in f.path}


def container_template(command: list[str], **extra: Any) -> dict[str, Any]:
    doc = workflow()
    doc["spec"]["serviceAccountName"] = "runner"
    doc["spec"]["templates"].append({"name": "probe", "container": {"image": "k", "command": command}, **extra})
    return doc


def job_with(command: list[str], annotations: dict[str, str] | None = None) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(JOB)
    template = data["spec"]["tasks"][0]["template"]
    template["spec"]["containers"][0]["command"] = command
    if annotations is not None:
        template["metadata"] = {"annotations": annotations}
    return data


def test_a_script_running_kubectl_undeclared_is_warned_with_the_declaration_to_add() -> None:
    doc = container_template(SCRIPT)
    [(path, (severity, message))] = findings(doc).items()
    assert (path, severity) == ("spec.templates[3].container", "warning")
    assert f"{CALLS_ANNOTATION}: 'list pods, get pods/log'" in message
    assert "on the template" in message
    # What it warns of: rbac grants the script nothing.
    assert {r["resources"][0] for o in rbac_for(doc) if o["kind"] == "Role" for r in o["rules"]} == {
        "jobs",
        "workflowtaskresults",
    }


@pytest.mark.parametrize(
    "command",
    [
        ["sh", "-c", "echo done"],
        ["kubectl", "logs", "-l", "app=x"],  # the exec form is its own declaration
        ["sh", "-c", "source kubectl_prelude.sh"],
    ],
)
def test_no_warning_without_kubectl_in_a_script(command: list[str]) -> None:
    assert findings(container_template(command)) == {}


@pytest.mark.parametrize("declared", ["list pods, get pods/log", ""])
def test_a_declaration_silences_the_warning_and_is_what_rbac_grants(declared: str) -> None:
    doc = container_template(SCRIPT, metadata={"annotations": {CALLS_ANNOTATION: declared}})
    assert findings(doc) == {}
    rules = {(r["resources"][0], tuple(r["verbs"])) for o in rbac_for(doc) if o["kind"] == "Role" for r in o["rules"]}
    assert (("pods", ("list",)) in rules) == bool(declared)


def test_a_malformed_declaration_is_an_error_as_rbac_refuses_it() -> None:
    doc = container_template(SCRIPT, metadata={"annotations": {CALLS_ANNOTATION: "read pods"}})
    path = f"spec.templates[3].metadata.annotations[{CALLS_ANNOTATION}]"
    severity, message = findings(doc)[path]
    assert severity == "error" and "'read pods'" in message
    with pytest.raises(ValidationError, match="'read pods'"):
        rbac_for(doc)


def test_a_volcano_task_in_a_resource_step_and_in_a_job_file() -> None:
    job = job_with(SCRIPT)
    doc = workflow()
    doc["spec"]["templates"][1]["resource"]["manifest"] = yaml.safe_dump(job, sort_keys=False)
    path = "spec.tasks[0].template.spec.containers[0]"
    in_step = findings(doc)
    assert list(in_step) == [f"{M}{path}"]
    assert "on the task's pod template" in in_step[f"{M}{path}"][1]
    assert list(findings(job)) == [path]
    declared = job_with(SCRIPT, {CALLS_ANNOTATION: "list pods, get pods/log"})
    assert findings(declared) == {}
    bad = copy.deepcopy(declared)
    bad["spec"]["tasks"][0]["template"]["metadata"]["annotations"][CALLS_ANNOTATION] = "get Pods"
    assert [s for s, _ in findings(bad).values()] == ["error"]
