"""`hera-volcano lint`: start from a clean workflow, break one rule at a time, and check the finding's path and words.

Every rule has a passing variant (no finding of that kind) and a failing one (an error or a warning at the field).
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from hera_volcano.kube import loading
from hera_volcano.kube.names import ARGO_NAME_MESSAGE
from hera_volcano.shared.findings import Finding
from hera_volcano.tools import lint
from hera_volcano.tools.lint import LintFinding, lint_document, lint_text, parse_depends
from tests.commands import run
from tests.conftest import ROOT

SUCCESS = "status.state.phase == Completed"
FAILURE = "status.state.phase in (Failed, Terminated, Aborted)"
JOB = """\
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata:
  generateName: hello-
spec:
  schedulerName: volcano
  minAvailable: 1
  tasks:
  - name: main
    replicas: 1
    template:
      spec:
        containers:
        - name: main
          image: busybox:1.36
          command: [echo, hello]
        restartPolicy: Never
"""
R = "spec.templates[1].resource"  # the resource template's body
M = f"{R}.manifest::"  # fields inside its Volcano Job


def workflow(kind: str = "Workflow") -> dict[str, Any]:
    """A clean workflow: a DAG running one bounded resource step that creates a Volcano Job."""
    return {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": kind,
        "metadata": {"generateName": "hello-", "namespace": "argo"},
        "spec": {
            "entrypoint": "main",
            "templates": [
                {"name": "main", "dag": {"tasks": [{"name": "submit", "template": "submit"}]}},
                {
                    "name": "submit",
                    "activeDeadlineSeconds": 600,
                    "resource": {
                        "action": "create",
                        "setOwnerReference": True,
                        "successCondition": SUCCESS,
                        "failureCondition": FAILURE,
                        "manifest": JOB,
                    },
                },
                {"name": "echo", "container": {"image": "busybox:1.36", "command": ["echo"]}},
            ],
        },
    }


def job(**metadata: Any) -> str:
    """The clean job's YAML with extra metadata fields."""
    data = yaml.safe_load(JOB)
    data["metadata"].update(metadata)
    return yaml.safe_dump(data, sort_keys=False)


def findings(doc: Any) -> list[Finding]:
    return lint_document(doc)


def errors(doc: Any) -> dict[str, str]:
    """``{path: message}`` of the errors (several at one path are joined)."""
    out: dict[str, str] = {}
    for f in findings(doc):
        if f.severity == "error":
            out[f.path] = f"{out[f.path]} | {f.message}" if f.path in out else f.message
    return out


def warnings(doc: Any) -> dict[str, str]:
    out: dict[str, str] = {}
    for f in findings(doc):
        if f.severity == "warning":
            out[f.path] = f"{out[f.path]} | {f.message}" if f.path in out else f.message
    return out


def changed(edit: Callable[[dict[str, Any]], None], kind: str = "Workflow") -> dict[str, Any]:
    doc = workflow(kind)
    edit(doc)
    return doc


def spec(doc: dict[str, Any]) -> dict[str, Any]:
    s: dict[str, Any] = doc["spec"]
    return s


def template(doc: dict[str, Any], i: int) -> dict[str, Any]:
    t: dict[str, Any] = doc["spec"]["templates"][i]
    return t


def resource(doc: dict[str, Any]) -> dict[str, Any]:
    r: dict[str, Any] = template(doc, 1)["resource"]
    return r


def tasks(doc: dict[str, Any]) -> list[dict[str, Any]]:
    t: list[dict[str, Any]] = template(doc, 0)["dag"]["tasks"]
    return t


def set_tasks(*items: dict[str, Any]) -> Callable[[dict[str, Any]], None]:
    def edit(doc: dict[str, Any]) -> None:
        template(doc, 0)["dag"]["tasks"] = [{"template": "echo", **item} for item in items]

    return edit


@pytest.mark.parametrize("kind", ["Workflow", "WorkflowTemplate", "ClusterWorkflowTemplate"])
def test_the_clean_workflow_has_no_findings(kind: str) -> None:
    assert findings(workflow(kind)) == []


# ---- names -----------------------------------------------------------------------------------------------------------


def test_workflow_name_at_most_63_characters() -> None:
    def named(name: str) -> Callable[[dict[str, Any]], None]:
        return lambda d: d.__setitem__("metadata", {"name": name})

    assert errors(changed(named("a" * 63))) == {}
    assert "at most 63 characters" in errors(changed(named("a" * 64)))["metadata.name"]
    assert "at most 63 characters" in errors(changed(named("a" * 64), "WorkflowTemplate"))["metadata.name"]


def test_cron_workflow_name_at_most_52_characters() -> None:
    def cron(name: str) -> dict[str, Any]:
        wf = workflow()
        return {
            "apiVersion": "argoproj.io/v1alpha1",
            "kind": "CronWorkflow",
            "metadata": {"name": name, "namespace": "argo"},
            "spec": {"schedules": ["0 * * * *"], "workflowSpec": wf["spec"]},
        }

    assert findings(cron("a" * 52)) == []
    assert "at most 52 characters" in errors(cron("a" * 53))["metadata.name"]


def test_cron_workflow_spec_is_linted() -> None:
    doc = {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "CronWorkflow",
        "metadata": {"name": "nightly"},
        "spec": {"schedules": ["0 * * * *"], "workflowSpec": {"entrypoint": "nope", "templates": []}},
    }
    assert "no template 'nope'" in errors(doc)["spec.workflowSpec.entrypoint"]


def test_workflow_name_must_be_a_dns_subdomain_or_generate_name() -> None:
    assert (
        "DNS-1123 subdomain"
        in errors(changed(lambda d: d.__setitem__("metadata", {"name": "Hello_World"})))["metadata.name"]
    )
    assert (
        "DNS-1123 subdomain"
        in errors(changed(lambda d: d.__setitem__("metadata", {"generateName": "Bad_-"})))["metadata.generateName"]
    )
    assert errors(changed(lambda d: d.__setitem__("metadata", {"generateName": "good-"}))) == {}
    assert "is required" in errors(changed(lambda d: d.__setitem__("metadata", {})))["metadata.name"]


def test_template_names_follow_argo_rule_and_are_unique() -> None:
    assert (
        "Argo template/step/task name"
        in errors(changed(lambda d: template(d, 2).__setitem__("name", "bad.name")))["spec.templates[2].name"]
    )
    assert errors(changed(lambda d: template(d, 2).__setitem__("name", "Echo-2"))) == {}
    assert "spec.templates[2].name" in errors(changed(lambda d: template(d, 2).__setitem__("name", "e" * 129)))
    assert errors(changed(lambda d: template(d, 2).__setitem__("name", "e" * 128))) == {}
    duplicate = errors(changed(lambda d: template(d, 2).__setitem__("name", "main")))
    assert "duplicate template name 'main': also spec.templates[0]" in duplicate["spec.templates[2].name"]


def test_step_names_follow_argo_rule_and_are_unique() -> None:
    def steps(*names: str) -> Callable[[dict[str, Any]], None]:
        def edit(doc: dict[str, Any]) -> None:
            template(doc, 0).pop("dag")
            template(doc, 0)["steps"] = [[{"name": n, "template": "echo"}] for n in names]

        return edit

    assert errors(changed(steps("a", "b-2"))) == {}
    assert "Argo template/step/task name" in errors(changed(steps("a", "b_2")))["spec.templates[0].steps[1][0].name"]
    assert "duplicate step name 'a'" in errors(changed(steps("a", "a")))["spec.templates[0].steps[1][0].name"]
    assert "Argo template/step/task name" in errors(changed(steps("{{item}}")))["spec.templates[0].steps[0][0].name"]


def test_task_names_follow_argo_rule_and_are_unique() -> None:
    assert errors(changed(set_tasks({"name": "a"}, {"name": "B"}))) == {}
    assert (
        "Argo template/step/task name"
        in errors(changed(set_tasks({"name": "a b"})))["spec.templates[0].dag.tasks[0].name"]
    )
    assert (
        "duplicate task name 'a'"
        in errors(changed(set_tasks({"name": "a"}, {"name": "a"})))["spec.templates[0].dag.tasks[1].name"]
    )


def test_task_names_may_not_start_with_a_digit_when_the_dag_has_dependencies() -> None:
    assert errors(changed(set_tasks({"name": "1st"}, {"name": "b"}))) == {}
    with_depends = errors(changed(set_tasks({"name": "1st"}, {"name": "b", "depends": "1st"})))
    assert "must not begin with a digit" in with_depends["spec.templates[0].dag.tasks[0].name"]
    with_dependencies = errors(changed(set_tasks({"name": "a"}, {"name": "2nd", "dependencies": ["a"]})))
    assert "must not begin with a digit" in with_dependencies["spec.templates[0].dag.tasks[1].name"]


# ---- templates -------------------------------------------------------------------------------------------------------


def test_exactly_one_template_type() -> None:
    none = errors(changed(lambda d: template(d, 2).pop("container")))
    assert "must set one template type" in none["spec.templates[2]"]
    two = errors(changed(lambda d: template(d, 2).__setitem__("suspend", {})))
    assert "sets container, suspend" in two["spec.templates[2]"]


def test_entrypoint_required_in_workflows_only_and_must_name_a_template() -> None:
    assert "is required in a Workflow" in errors(changed(lambda d: spec(d).pop("entrypoint")))["spec.entrypoint"]
    assert errors(changed(lambda d: spec(d).pop("entrypoint"), "WorkflowTemplate")) == {}
    unknown = errors(changed(lambda d: spec(d).__setitem__("entrypoint", "mian"), "WorkflowTemplate"))
    assert "there is no template 'mian'" in unknown["spec.entrypoint"]
    assert errors(changed(lambda d: spec(d).__setitem__("onExit", "echo"))) == {}
    assert "spec.onExit" in errors(changed(lambda d: spec(d).__setitem__("onExit", "cleanup")))


def test_workflow_template_ref_needs_no_entrypoint() -> None:
    doc: dict[str, Any] = {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Workflow",
        "metadata": {"generateName": "run-"},
        "spec": {"workflowTemplateRef": {"name": "hello"}, "arguments": {"parameters": [{"name": "x", "value": "1"}]}},
    }
    assert findings(doc) == []
    doc["spec"]["templates"] = workflow()["spec"]["templates"]
    assert "must be left out with workflowTemplateRef" in errors(doc)["spec.templates"]


def test_step_and_task_templates_must_exist_but_template_refs_are_not_followed() -> None:
    assert (
        "there is no 'submitt'"
        in errors(changed(set_tasks({"name": "a", "template": "submitt"})))["spec.templates[0].dag.tasks[0].template"]
    )
    ref = {"name": "a", "template": None, "templateRef": {"name": "other", "template": "x"}}
    assert errors(changed(set_tasks(ref))) == {}
    assert (
        "is required"
        in errors(changed(set_tasks({"name": "a", "template": None})))["spec.templates[0].dag.tasks[0].template"]
    )

    def step_to(name: str) -> Callable[[dict[str, Any]], None]:
        def edit(doc: dict[str, Any]) -> None:
            template(doc, 0).pop("dag")
            template(doc, 0)["steps"] = [[{"name": "a", "template": name}]]

        return edit

    assert errors(changed(step_to("echo"))) == {}
    assert "there is no 'ech'" in errors(changed(step_to("ech")))["spec.templates[0].steps[0][0].template"]


def test_container_and_script_need_an_image_unless_template_defaults_set_one() -> None:
    no_image = changed(lambda d: template(d, 2)["container"].pop("image"))
    assert "is required" in errors(no_image)["spec.templates[2].container.image"]
    spec(no_image)["templateDefaults"] = {"container": {"image": "busybox"}}
    assert errors(no_image) == {}

    def script(doc: dict[str, Any]) -> None:
        template(doc, 2).pop("container")
        template(doc, 2)["script"] = {"source": "echo hi"}

    assert "is required" in errors(changed(script))["spec.templates[2].script.image"]


def test_active_deadline_seconds_non_negative_int_or_argo_variable_on_leaves_only() -> None:
    def deadline(value: Any, i: int = 1) -> Callable[[dict[str, Any]], None]:
        def edit(doc: dict[str, Any]) -> None:
            template(doc, i)["activeDeadlineSeconds"] = value
            template(doc, i)["inputs"] = {"parameters": [{"name": "deadline", "value": "60"}]}
            spec(doc)["arguments"] = {"parameters": [{"name": "d", "value": "60"}]}

        return edit

    for ok in (0, 600, "600", "{{inputs.parameters.deadline}}", "{{=asInt(workflow.parameters.d)}}"):
        assert errors(changed(deadline(ok))) == {}, ok
    assert "must not be negative" in errors(changed(deadline(-1)))["spec.templates[1].activeDeadlineSeconds"]
    assert "must not be negative" in errors(changed(deadline("-5")))["spec.templates[1].activeDeadlineSeconds"]
    assert "non-negative integer" in errors(changed(deadline("10m")))["spec.templates[1].activeDeadlineSeconds"]
    assert "non-negative integer" in errors(changed(deadline(1.5)))["spec.templates[1].activeDeadlineSeconds"]
    assert "only valid on leaf templates" in errors(changed(deadline(60, 0)))["spec.templates[0].activeDeadlineSeconds"]


def test_timeout_is_a_duration_string_on_leaves_only() -> None:
    def timeout(value: Any, i: int = 1) -> Callable[[dict[str, Any]], None]:
        def edit(doc: dict[str, Any]) -> None:
            template(doc, i)["timeout"] = value
            template(doc, i)["inputs"] = {"parameters": [{"name": "timeout", "value": "5m"}]}

        return edit

    for ok in ("300s", "1h30m", "{{inputs.parameters.timeout}}"):
        assert errors(changed(timeout(ok))) == {}, ok
    assert "bare integer" in errors(changed(timeout(300)))["spec.templates[1].timeout"]
    assert "bare integer" in errors(changed(timeout("300")))["spec.templates[1].timeout"]
    assert "duration string" in errors(changed(timeout("five minutes")))["spec.templates[1].timeout"]
    assert "only valid on leaf templates" in errors(changed(timeout("5m", 0)))["spec.templates[0].timeout"]


def test_at_most_200_templates_and_200_tasks_in_a_dag() -> None:
    def many_templates(n: int) -> Callable[[dict[str, Any]], None]:
        def edit(doc: dict[str, Any]) -> None:
            spec(doc)["templates"] += [{"name": f"t{i}", "suspend": {}} for i in range(n - 3)]

        return edit

    assert errors(changed(many_templates(200))) == {}
    assert "at most 200" in errors(changed(many_templates(201)))["spec.templates"]
    assert errors(changed(set_tasks(*({"name": f"t{i}"} for i in range(200))))) == {}
    assert (
        "at most 200"
        in errors(changed(set_tasks(*({"name": f"t{i}"} for i in range(201)))))["spec.templates[0].dag.tasks"]
    )


# ---- DAGs ------------------------------------------------------------------------------------------------------------


def test_dag_needs_a_task() -> None:
    assert "at least one task" in errors(changed(set_tasks()))["spec.templates[0].dag.tasks"]


def test_dag_cycles_are_errors() -> None:
    acyclic = set_tasks({"name": "a"}, {"name": "b", "depends": "a"}, {"name": "c", "depends": "a && b"})
    assert errors(changed(acyclic)) == {}
    cycle = set_tasks({"name": "a", "depends": "c"}, {"name": "b", "depends": "a"}, {"name": "c", "depends": "b"})
    assert "cycle: a -> c -> b -> a" in errors(changed(cycle))["spec.templates[0].dag.tasks[0]"]
    assert (
        "cycle: a -> a"
        in errors(changed(set_tasks({"name": "a", "dependencies": ["a"]})))["spec.templates[0].dag.tasks[0]"]
    )


def test_unknown_dependencies_are_errors() -> None:
    unknown = errors(changed(set_tasks({"name": "a"}, {"name": "b", "dependencies": ["a", "c"]})))
    assert "unknown task 'c'" in unknown["spec.templates[0].dag.tasks[1].dependencies[1]"]
    unknown = errors(changed(set_tasks({"name": "a"}, {"name": "b", "depends": "a.Succeeded || (c && !a.Failed)"})))
    assert "unknown task 'c'" in unknown["spec.templates[0].dag.tasks[1].depends"]


def test_depends_expressions_parse() -> None:
    assert parse_depends("A") == [("A", None)]
    assert parse_depends("(A.Succeeded || B-2.Failed) && !c.AnySucceeded") == [
        ("A", "Succeeded"),
        ("B-2", "Failed"),
        ("c", "AnySucceeded"),
    ]
    for bad, words in (
        ("A &&", "expected a task"),
        ("(A || B", "expected ')'"),
        ("A B", "expected '&&', '||' or the end"),
        ("A.Bogus", "task result 'Bogus' for task 'A' is invalid"),
        ("A & B", "unexpected '&'"),
        ("A == B", "unexpected '='"),
    ):
        with pytest.raises(ValueError, match=words.replace("(", r"\(").replace(")", r"\)").replace("|", r"\|")):
            parse_depends(bad)
    bad_result = errors(changed(set_tasks({"name": "a"}, {"name": "b", "depends": "a.Succeded"})))
    assert "task result 'Succeded'" in bad_result["spec.templates[0].dag.tasks[1].depends"]


def test_items_based_results_need_a_looping_task() -> None:
    looping = {"name": "a", "withItems": [1, 2]}
    assert errors(changed(set_tasks(looping, {"name": "b", "depends": "a.AnySucceeded || a.AllFailed"}))) == {}
    no_items = errors(changed(set_tasks({"name": "a"}, {"name": "b", "depends": "a.AllFailed"})))
    assert "a.AllFailed needs 'a' to loop" in no_items["spec.templates[0].dag.tasks[1].depends"]


def test_depends_and_dependencies_not_mixed_and_continue_on_only_without_depends() -> None:
    mixed = errors(
        changed(set_tasks({"name": "a"}, {"name": "b", "depends": "a"}, {"name": "c", "dependencies": ["a"]}))
    )
    assert "cannot be mixed with depends" in mixed["spec.templates[0].dag.tasks[2].dependencies"]
    continue_on = {"name": "b", "depends": "a", "continueOn": {"failed": True}}
    assert (
        "cannot be used in a DAG whose tasks use depends"
        in errors(changed(set_tasks({"name": "a", "continueOn": {"failed": True}}, continue_on)))[
            "spec.templates[0].dag.tasks[1].continueOn"
        ]
    )
    fine = set_tasks({"name": "a", "continueOn": {"failed": True}}, {"name": "b", "dependencies": ["a"]})
    assert errors(changed(fine)) == {}


# ---- resource templates ----------------------------------------------------------------------------------------------


def test_resource_action_enum() -> None:
    for action in ("get", "create", "apply", "delete", "replace", "patch"):
        doc = workflow()
        resource(doc)["action"] = action
        assert "must be one of" not in errors(doc).get(f"{R}.action", ""), action
    assert (
        "must be one of get, create"
        in errors(changed(lambda d: resource(d).__setitem__("action", "Create")))[f"{R}.action"]
    )
    parameterised = errors(changed(lambda d: resource(d).__setitem__("action", "{{inputs.parameters.action}}")))
    assert "cannot be a parameter" in parameterised[f"{R}.action"]
    assert "is required" in errors(changed(lambda d: resource(d).pop("action")))[f"{R}.action"]


def test_manifest_xor_manifest_from() -> None:
    both = errors(changed(lambda d: resource(d).__setitem__("manifestFrom", {"artifact": {"name": "m"}})))
    assert "exactly one of manifest and manifestFrom" in both[R]
    assert "exactly one of manifest and manifestFrom" in errors(changed(lambda d: resource(d).pop("manifest")))[R]

    def from_artifact(doc: dict[str, Any]) -> None:
        resource(doc).pop("manifest")
        resource(doc).pop("setOwnerReference")
        resource(doc)["manifestFrom"] = {"artifact": {"name": "m"}}

    assert errors(changed(from_artifact)) == {}


def test_manifest_parses_after_substitution_and_holds_one_object() -> None:
    unquoted = JOB.replace("generateName: hello-", "name: {{inputs.parameters.name}}")

    def with_manifest(text: str) -> Callable[[dict[str, Any]], None]:
        def edit(doc: dict[str, Any]) -> None:
            resource(doc)["manifest"] = text
            template(doc, 1)["inputs"] = {"parameters": [{"name": "name", "value": "hello"}]}

        return edit

    # A bare placeholder substituted by its sample is fine; the job's own checks then run on the sample.
    assert f"{R}.manifest" not in errors(changed(with_manifest(unquoted)))
    assert "not valid YAML" in errors(changed(with_manifest("a: [1\n")))[f"{R}.manifest"]
    assert "exactly one object, not 2" in errors(changed(with_manifest(JOB + "---\n" + JOB)))[f"{R}.manifest"]
    assert "exactly one object, not 0" in errors(changed(with_manifest("# nothing\n")))[f"{R}.manifest"]
    assert "a mapping" in errors(changed(with_manifest("- a\n")))[f"{R}.manifest"]
    assert errors(changed(with_manifest("---\n" + JOB + "---\n"))) == {}


def test_manifest_sample_values_come_from_the_call_site() -> None:
    def parameterised(doc: dict[str, Any]) -> None:
        template(doc, 1)["inputs"] = {"parameters": [{"name": "replicas"}]}
        resource(doc)["manifest"] = JOB.replace("replicas: 1", "replicas: {{inputs.parameters.replicas}}")
        tasks(doc)[0]["arguments"] = {"parameters": [{"name": "replicas", "value": "-1"}]}

    assert "must be at least 0" in errors(changed(parameterised))[f"{M}spec.tasks[0].replicas"]


def test_conditions_parse_as_label_selectors() -> None:
    bad = errors(changed(lambda d: resource(d).__setitem__("successCondition", 'status.phase == "Done"')))
    assert "the step fails when it runs" in bad[f"{R}.successCondition"]
    gjson = errors(changed(lambda d: resource(d).__setitem__("failureCondition", 'status.conditions.#(type=="x")')))
    assert f"{R}.failureCondition" in gjson
    spaced = errors(changed(lambda d: resource(d).__setitem__("successCondition", "status.state.phase = Completed ")))
    assert spaced == {}


def test_conditions_with_placeholders_are_parsed_with_sample_values() -> None:
    def parameterised(doc: dict[str, Any]) -> None:
        template(doc, 1)["inputs"] = {"parameters": [{"name": "phase", "value": "Completed"}]}
        resource(doc)["successCondition"] = "status.state.phase == {{inputs.parameters.phase}}"

    assert findings(changed(parameterised)) == []


def test_volcano_jobs_inside_manifests_get_volcano_rules_with_prefixed_paths() -> None:
    bad = changed(
        lambda d: resource(d).__setitem__(
            "manifest", JOB.replace("name: main\n    replicas", "name: Main\n    replicas")
        )
    )
    assert "spec.tasks[0].name" in "".join(errors(bad))
    assert f"{M}spec.tasks[0].name" in errors(bad)
    no_image = changed(lambda d: resource(d).__setitem__("manifest", JOB.replace("image: busybox:1.36", "image: ''")))
    assert "is required" in errors(no_image)[f"{M}spec.tasks[0].template.spec.containers[0].image"]


def test_patch_and_get_manifests_are_not_admitted_as_whole_jobs() -> None:
    partial = "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata:\n  name: hello\nspec:\n  minAvailable: 2\n"
    for action in ("patch", "get", "delete"):

        def edit(doc: dict[str, Any], a: str = action) -> None:
            resource(doc)["action"] = a
            resource(doc)["manifest"] = partial

        assert not any(p.startswith(M) for p in errors(changed(edit))), action


def test_jobs_are_still_checked_when_the_action_is_misspelt() -> None:
    def edit(doc: dict[str, Any]) -> None:
        resource(doc)["action"] = "Create"
        resource(doc)["manifest"] = JOB.replace("image: busybox:1.36", "image: ''")

    found = errors(changed(edit))
    assert f"{R}.action" in found
    assert f"{M}spec.tasks[0].template.spec.containers[0].image" in found


def test_bare_volcano_jobs_are_checked() -> None:
    out = lint_text(JOB.replace("schedulerName: volcano", "queue: 5"), "job.yaml")
    assert [(f.path, f.severity) for f in out] == [("[0].spec.queue", "error")]
    assert lint_text(JOB, "job.yaml") == []


def test_the_kinds_the_project_renders_are_known_and_pass() -> None:
    text = """\
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: x}
rules: []
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: x}
---
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources: [a.yaml]
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: q}
spec: {weight: 1}
---
"""
    assert lint_text(text, "x.yaml") == []


# ---- owner references ------------------------------------------------------------------------------------------------


def test_job_namespace_must_be_the_workflows_with_set_owner_reference() -> None:
    other = changed(lambda d: resource(d).__setitem__("manifest", job(namespace="batch")))
    assert "must be the Workflow's namespace 'argo'" in errors(other)[f"{M}metadata.namespace"]
    resource(other)["setOwnerReference"] = False
    assert errors(other) == {}
    assert errors(changed(lambda d: resource(d).__setitem__("manifest", job(namespace="argo")))) == {}
    via_variable = changed(lambda d: resource(d).__setitem__("manifest", job(namespace="{{workflow.namespace}}")))
    assert findings(via_variable) == []


def test_job_namespace_without_a_workflow_namespace_is_a_warning() -> None:
    def edit(doc: dict[str, Any]) -> None:
        doc["metadata"].pop("namespace")
        resource(doc)["manifest"] = job(namespace="batch")

    assert "only holds when the workflow runs in 'batch'" in warnings(changed(edit))[f"{M}metadata.namespace"]


def test_no_hand_written_controller_owner_reference_with_set_owner_reference() -> None:
    ref = {"apiVersion": "argoproj.io/v1alpha1", "kind": "Workflow", "name": "{{workflow.name}}"}
    controller = changed(
        lambda d: resource(d).__setitem__(
            "manifest", job(ownerReferences=[{**ref, "uid": "{{workflow.uid}}", "controller": True}])
        )
    )
    assert "at most one" in errors(controller)[f"{M}metadata.ownerReferences[0].controller"]
    resource(controller)["setOwnerReference"] = False
    assert errors(controller) == {}
    plain = changed(
        lambda d: resource(d).__setitem__("manifest", job(ownerReferences=[{**ref, "uid": "{{workflow.uid}}"}]))
    )
    assert errors(plain) == {}


# ---- workflow parameters ---------------------------------------------------------------------------------------------


def test_undeclared_workflow_parameters_are_errors_in_workflows_only() -> None:
    def use(doc: dict[str, Any]) -> None:
        template(doc, 2)["container"]["args"] = ["{{workflow.parameters.message}}", "{{ workflow.parameters.other }}"]

    found = errors(changed(use))
    assert "{{workflow.parameters.message}} is not declared" in found["spec.templates[2].container.args[0]"]
    assert "{{workflow.parameters.other}} is not declared" in found["spec.templates[2].container.args[1]"]
    assert errors(changed(use, "WorkflowTemplate")) == {}

    def declare(doc: dict[str, Any]) -> None:
        use(doc)
        spec(doc)["arguments"] = {"parameters": [{"name": "message", "value": "hi"}, {"name": "other", "value": ""}]}

    assert errors(changed(declare)) == {}


@pytest.mark.parametrize("value", ["{{workflow.name}}", "{{=sprig.fail(}}", "a\x00b"])
@pytest.mark.parametrize("kind", ["Workflow", "WorkflowTemplate"])
def test_a_workflow_argument_argo_would_substitute_again_is_an_error(value: str, kind: str) -> None:
    def give(doc: dict[str, Any]) -> None:
        spec(doc)["arguments"] = {"parameters": [{"name": "message", "value": value}]}

    found = errors(changed(give, kind))
    assert "a submitted value must be plain text" in found["spec.arguments.parameters[0].value"]


def test_a_task_argument_may_reference_what_argo_gives() -> None:
    def call(doc: dict[str, Any]) -> None:
        spec(doc)["arguments"] = {"parameters": [{"name": "message", "value": "it's $(plain) }}"}]}

    assert errors(changed(call)) == {}


def test_undeclared_workflow_parameters_inside_manifests_are_errors() -> None:
    manifest = changed(lambda d: resource(d).__setitem__("manifest", job(name="{{workflow.parameters.job}}")))
    assert "{{workflow.parameters.job}} is not declared" in errors(manifest)[f"{R}.manifest"]


def test_undeclared_input_parameters_are_errors_in_every_kind() -> None:
    def use(doc: dict[str, Any]) -> None:
        template(doc, 2)["container"]["args"] = ["{{inputs.parameters.message}}"]

    for kind in ("Workflow", "WorkflowTemplate"):
        found = errors(changed(use, kind))
        assert "{{inputs.parameters.message}} is not an input" in found["spec.templates[2].container.args[0]"]

    def declare(doc: dict[str, Any]) -> None:
        use(doc)
        template(doc, 2)["inputs"] = {"parameters": [{"name": "message"}]}

    assert errors(changed(declare)) == {}

    def pass_through(doc: dict[str, Any]) -> None:
        declare(doc)
        template(doc, 0)["inputs"] = {"parameters": [{"name": "message", "value": "hi"}]}
        arguments = {"parameters": [{"name": "message", "value": "{{inputs.parameters.message}}"}]}
        template(doc, 0)["dag"]["tasks"].append({"name": "say", "template": "echo", "arguments": arguments})
        inline = {
            "inputs": {"parameters": [{"name": "x"}]},
            "container": {"image": "a", "args": ["{{inputs.parameters.x}}"]},
        }
        template(doc, 0)["dag"]["tasks"].append({"name": "inline", "inline": inline})

    assert errors(changed(pass_through)) == {}
    unknown = changed(lambda d: resource(d).__setitem__("manifest", job(name="{{inputs.parameters.name}}")))
    assert "{{inputs.parameters.name}} is not an input" in errors(unknown)[f"{R}.manifest"]


# ---- warnings --------------------------------------------------------------------------------------------------------


def test_failure_condition_missing_terminated_or_aborted_is_a_warning() -> None:
    only_failed = changed(lambda d: resource(d).__setitem__("failureCondition", "status.state.phase = Failed"))
    assert "ends Terminated or Aborted" in warnings(only_failed)[f"{R}.failureCondition"]
    assert errors(only_failed) == {}
    no_aborted = changed(
        lambda d: resource(d).__setitem__("failureCondition", "status.state.phase in (Failed, Terminated)")
    )
    assert "ends Aborted:" in warnings(no_aborted)[f"{R}.failureCondition"]
    assert warnings(workflow()) == {}


def test_conditions_that_hold_too_early_are_errors_and_those_that_never_hold_for_completed_warnings() -> None:
    early = changed(lambda d: resource(d).__setitem__("failureCondition", "status.state.phase != Running"))
    assert "holds before Volcano writes the job's status" in errors(early)[f"{R}.failureCondition"]
    never = changed(lambda d: resource(d).__setitem__("successCondition", "status.state.phase = Running"))
    assert "does not hold for a Completed job" in warnings(never)[f"{R}.successCondition"]
    assert "holds while the job is Running" in warnings(never)[f"{R}.successCondition"]
    assert errors(never) == {}
    at_once = changed(lambda d: resource(d).__setitem__("successCondition", "!status.state.phase"))
    assert "as soon as the job is created" in errors(at_once)[f"{R}.successCondition"]


def test_missing_conditions_are_warnings() -> None:
    no_success = changed(lambda d: resource(d).pop("successCondition"))
    assert "has no successCondition" in warnings(no_success)[R]
    no_failure = changed(lambda d: resource(d).pop("failureCondition"))
    assert "has no failureCondition" in warnings(no_failure)[R]
    assert errors(no_success) == errors(no_failure) == {}


def test_resource_step_without_deadline_is_a_warning() -> None:
    unbounded = changed(lambda d: template(d, 1).pop("activeDeadlineSeconds"))
    assert "no time limit" in warnings(unbounded)["spec.templates[1]"]
    template(unbounded, 1)["timeout"] = "1h"
    assert warnings(unbounded) == {}
    defaults = changed(lambda d: template(d, 1).pop("activeDeadlineSeconds"))
    spec(defaults)["templateDefaults"] = {"activeDeadlineSeconds": 600}
    assert warnings(defaults) == {}


def test_fixed_job_name_in_a_workflow_is_a_warning() -> None:
    fixed = changed(lambda d: resource(d).__setitem__("manifest", JOB.replace("generateName: hello-", "name: hello")))
    assert "fixed name 'hello'" in warnings(fixed)[f"{M}metadata.name"]
    assert errors(fixed) == {}
    in_template = changed(
        lambda d: resource(d).__setitem__("manifest", JOB.replace("generateName: hello-", "name: hello")),
        "WorkflowTemplate",
    )
    assert warnings(in_template) == {}

    def from_parameter(doc: dict[str, Any]) -> None:
        spec(doc)["arguments"] = {"parameters": [{"name": "job", "value": "hello"}]}
        resource(doc)["manifest"] = JOB.replace("generateName: hello-", "name: '{{workflow.parameters.job}}'")

    assert warnings(changed(from_parameter)) == {}


def test_upstream_style_workflow_lints_with_warnings_only() -> None:
    text = """\
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: step-
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - name: one
        template: job
  - name: job
    resource:
      action: create
      successCondition: status.state.phase = Completed
      failureCondition: status.state.phase = Failed
      manifest: |
        apiVersion: batch.volcano.sh/v1alpha1
        kind: Job
        metadata:
          name: fixed
        spec:
          tasks:
          - name: t
            replicas: 1
            template:
              spec:
                containers: [{name: c, image: busybox}]
                restartPolicy: Never
"""
    out = lint_text(text, "up.yaml")
    assert {f.severity for f in out} == {"warning"}
    assert {f.path for f in out} == {
        "[0].spec.templates[1].resource.failureCondition",
        "[0].spec.templates[1]",
        "[0].spec.templates[1].resource.manifest::metadata.name",
    }


# ---- parsing ---------------------------------------------------------------------------------------------------------


def test_unparsable_yaml_is_an_error_finding() -> None:
    text = "apiVersion: v1\nkind: ServiceAccount\n---\nkey: [unclosed\n"
    out = lint_text(text, "bad.yaml")
    assert len(out) == 1
    assert out[0].path == "[1]" and out[0].severity == "error" and out[0].line == 5
    assert "not valid YAML" in out[0].message and "line 5" in out[0].message


def test_documents_before_a_parse_error_are_still_linted() -> None:
    doc = changed(lambda d: template(d, 2).__setitem__("name", "bad.name"))
    out = lint_text(yaml.safe_dump(doc) + "---\n: : :\n  - [\n", "x.yaml")
    assert [f.path for f in out] == ["[0].spec.templates[2].name", "[1]"]


def test_non_utf8_is_an_error_finding() -> None:
    out = lint.lint_bytes(b"kind: \xff\n", "latin.yaml")
    assert [(f.path, f.severity) for f in out] == [("[0]", "error")]


@pytest.mark.parametrize(
    "text",
    [
        "a: 1\nb: [1, 2.5, true, null, ~, 0o17, 017, 1_000, .inf, '1', 0x1f, 1e3, yes]\n",
        "base: &b {x: 1, y: 2}\nmerged: {<<: *b, y: 3}\nlist: [*b, *b]\n",
        "? [1, 2]\n: unhashable\n",
        "a: !!binary aGVsbG8=\nb: !!set {x, y}\nc: !!omap [k: 1]\n",
        "=: value-key\n",
        "a: !custom x\n",
        "---\n---\na: 1\n...\n",
        "a: 'quoted: yes'\nb: \"1\"\nc: |\n  block\nd: >\n  folded\n",
        "!!str 1: !!int '2'\n",
    ],
)
def test_fast_loader_gives_what_safe_load_gives(text: str) -> None:
    def load(fn: Callable[[], list[Any]]) -> tuple[str, str]:
        try:
            return "ok", repr(fn())
        except yaml.YAMLError as e:
            return "error", type(e).__name__

    assert load(lambda: list(loading.load_all(text))) == load(lambda: list(yaml.safe_load_all(text)))


def test_dates_and_base_60_numbers_stay_strings_as_in_go() -> None:
    text = "a: 2024-01-01\nb: 2024-01-01T10:00:00Z\nc: 1:30\nd: 1:30.5\ne: 90\nf: 1.5\n"
    assert list(loading.load_all(text)) == [
        {"a": "2024-01-01", "b": "2024-01-01T10:00:00Z", "c": "1:30", "d": "1:30.5", "e": 90, "f": 1.5}
    ]
    # So an env value or a command argument written that way is a string, as the API server sees it.
    env = "kind: x\nspec: {env: [{name: D, value: 2024-01-01}], command: [sleep, 1:30]}\n"
    assert next(iter(loading.load_all(env)))["spec"] == {
        "env": [{"name": "D", "value": "2024-01-01"}],
        "command": ["sleep", "1:30"],
    }


def test_weird_documents_do_not_crash() -> None:
    weird: list[Any] = [
        {"apiVersion": "argoproj.io/v1alpha1", "kind": "Workflow"},
        {"apiVersion": "argoproj.io/v1alpha1", "kind": "Workflow", "metadata": [], "spec": []},
        {"apiVersion": "argoproj.io/v1alpha1", "kind": "Workflow", "metadata": {"name": 5}, "spec": {"templates": {}}},
        {
            "apiVersion": "argoproj.io/v1alpha1",
            "kind": "Workflow",
            "metadata": {"name": "x"},
            "spec": {
                "entrypoint": ["x"],
                "onExit": 3,
                "templates": [
                    None,
                    {
                        "name": ["x"],
                        "steps": [None, [None, {"name": 1, "template": 2}], {"name": "m", "template": "x"}],
                    },
                    {"name": "d", "dag": {"tasks": [None, {"name": "a", "depends": 5, "dependencies": "a"}]}},
                    {"name": "e", "dag": []},
                    {"name": "r", "resource": []},
                    {"name": "s", "resource": {"action": ["x"], "manifest": 5, "successCondition": 1}},
                    {"name": "c", "container": "busybox", "activeDeadlineSeconds": True, "timeout": None},
                ],
            },
        },
        {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "spec": None},
        {"apiVersion": 1, "kind": "Workflow"},
    ]
    for doc in weird:
        assert all(isinstance(f, Finding) for f in findings(doc))
    assert "is required" in errors(weird[0])["spec"]


def test_importing_lint_does_not_import_hera_workflows() -> None:
    code = "import hera_volcano.tools.lint, hera_volcano.cli.lint, sys; print('hera.workflows' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    assert out.strip() == "False"


# ---- the CLI ---------------------------------------------------------------------------------------------------------

CLEAN = yaml.safe_dump(workflow(), sort_keys=False)
BROKEN = yaml.safe_dump(changed(lambda d: template(d, 2).__setitem__("name", "bad.name")), sort_keys=False)
WARNED = yaml.safe_dump(changed(lambda d: template(d, 1).pop("activeDeadlineSeconds")), sort_keys=False)


def line_of(text: str, needle: str) -> int:
    """The 1-based line of the first line of ``text`` holding ``needle``."""
    return next(n for n, line in enumerate(text.splitlines(), 1) if needle in line)


BROKEN_LINE = line_of(BROKEN, "bad.name")


def test_cli_clean_file_prints_nothing_on_stdout_and_the_summary_on_stderr(tmp_path: Path) -> None:
    (tmp_path / "wf.yaml").write_text(CLEAN)
    r = run("hera_volcano.lint", str(tmp_path / "wf.yaml"))
    assert (r.code, r.out, r.err) == (0, "", "no problems in 1 file\n")


def test_cli_errors_exit_1_one_line_each_with_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "wf.yaml"
    path.write_text(BROKEN)
    r = run("hera_volcano.lint", str(path))
    assert r.code == 1
    assert r.out.splitlines() == [f"{path}:{BROKEN_LINE}: [0].spec.templates[2].name: error: {ARGO_NAME_MESSAGE}"]
    assert r.err == "1 error, 0 warnings in 1 of 1 file\n"


def test_cli_warnings_only_exit_0(tmp_path: Path) -> None:
    (tmp_path / "wf.yaml").write_text(WARNED)
    r = run("hera_volcano.lint", str(tmp_path / "wf.yaml"))
    assert r.code == 0
    assert r.out.startswith(
        f"{tmp_path / 'wf.yaml'}:{line_of(WARNED, 'resource:') - 1}: [0].spec.templates[1]: warning: "
    )
    assert r.err == "0 errors, 1 warning in 1 of 1 file\n"


def test_cli_reads_stdin_for_dash() -> None:
    r = run("hera_volcano.lint", "-", stdin=BROKEN)
    assert r.code == 1
    assert r.out.startswith(f"<stdin>:{BROKEN_LINE}: [0].spec.templates[2].name: error: ")
    assert run("hera_volcano.lint", "-", stdin=CLEAN).code == 0


def test_cli_json_output_is_one_document_with_findings_and_summary(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(BROKEN)
    (tmp_path / "b.yaml").write_text(WARNED)
    (tmp_path / "c.yaml").write_text(CLEAN)
    paths = [str(tmp_path / name) for name in ("a.yaml", "b.yaml", "c.yaml")]
    r = run("hera_volcano.lint", "--format", "json", *paths)
    assert (r.code, r.err) == (1, "")
    data = json.loads(r.out)
    assert data["findings"][0] == {
        "file": str(tmp_path / "a.yaml"),
        "line": BROKEN_LINE,
        "path": "[0].spec.templates[2].name",
        "severity": "error",
        "message": ARGO_NAME_MESSAGE,
    }
    assert {d["severity"] for d in data["findings"]} == {"error", "warning"}
    assert {tuple(d) for d in data["findings"]} == {("file", "line", "path", "severity", "message")}
    assert data["summary"] == {"errors": 1, "warnings": 1, "files": 3, "files_with_findings": 2}
    clean = run("hera_volcano.lint", "--format", "json", "-", stdin=CLEAN)
    assert clean.code == 0
    assert json.loads(clean.out) == {
        "findings": [],
        "summary": {"errors": 0, "warnings": 0, "files": 1, "files_with_findings": 0},
    }


def test_cli_recurses_into_directories(tmp_path: Path) -> None:
    (tmp_path / "sub" / "deeper").mkdir(parents=True)
    (tmp_path / "sub" / "deeper" / "broken.yml").write_text(BROKEN)
    (tmp_path / "sub" / "clean.yaml").write_text(CLEAN)
    (tmp_path / "sub" / "notes.txt").write_text(": not yaml [")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "hidden.yaml").write_text(BROKEN)
    r = run("hera_volcano.lint", str(tmp_path))
    assert r.code == 1
    assert [line.split(": ")[0] for line in r.out.splitlines()] == [
        f"{tmp_path / 'sub' / 'deeper' / 'broken.yml'}:{BROKEN_LINE}"
    ]
    assert r.err == "1 error, 0 warnings in 1 of 2 files\n"


def test_cli_unparsable_yaml_exits_1(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text("a: [1\n")
    r = run("hera_volcano.lint", str(tmp_path / "bad.yaml"))
    assert r.code == 1
    assert ":2: [0]: error: not valid YAML" in r.out


def test_cli_usage_errors_exit_2_with_one_line(tmp_path: Path) -> None:
    missing = run("hera_volcano.lint", str(tmp_path / "nope.yaml"))
    assert missing.code == 2
    assert missing.err == f"hera-volcano lint: error: {tmp_path / 'nope.yaml'}: no such file or directory\n"
    assert missing.out == ""
    for argv in ((), ("--format", "xml", "-"), ("--bogus", "-")):
        r = run("hera_volcano.lint", *argv)
        assert r.code == 2 and len(r.err.splitlines()) == 1 and r.err.startswith("hera-volcano lint: error: "), argv


def test_cli_through_the_dispatcher() -> None:
    r = run("hera_volcano", "lint", "-", stdin=BROKEN)
    assert r.code == 1 and "[0].spec.templates[2].name: error:" in r.out


def test_cli_help_shows_examples() -> None:
    r = run("hera_volcano.lint", "--help")
    assert r.code == 0 and "examples:" in r.out and "--allow-unknown" in r.out and "--format json" in r.out


@pytest.mark.parametrize(
    "command",
    [
        ("hera_volcano.mpi_hello",),
        ("hera_volcano.mpi_hello", "--template"),
        ("hera_volcano.mpi_hello", "--mpi-plugin", "--job-name", "my-mpi-job"),
        ("hera_volcano.steps",),
        ("hera_volcano.dag",),
        ("hera_volcano.pytorch_hello",),
        ("hera_volcano.pytorch_hello", "--template", "--workers", "3"),
    ],
)
def test_bundled_commands_lint_clean(command: tuple[str, ...]) -> None:
    rendered = run(*command)
    assert rendered.code == 0, rendered.err
    r = run("hera_volcano.lint", "-", stdin=rendered.out)
    assert (r.code, r.out) == (0, ""), r.out


def test_rendered_gitops_folders_lint_clean() -> None:
    folders = [str(ROOT / name) for name in ("workflows", "rbac") if (ROOT / name).is_dir()]
    if not folders:
        pytest.skip("no rendered workflows/ or rbac/ folder in this checkout")
    r = run("hera_volcano.lint", *folders)
    assert (r.code, r.out) == (0, ""), r.out


def test_upstream_examples_lint_with_warnings_and_their_raw_tags(upstream: Path) -> None:
    """Volcano's examples paste submitted values raw into their jobs (issue 43: errors, with the safe form); the
    rest of what lint says of them are warnings."""
    r = run("hera_volcano.lint", "--format", "json", str(upstream))
    assert r.code == 1, r.out
    found = [LintFinding(**d) for d in json.loads(r.out)["findings"]]
    assert found, "the upstream examples have known weaknesses the linter should warn about"
    errors = [f for f in found if f.severity == "error"]
    assert errors and all("a value the submitter sets, which Argo pastes raw" in f.message for f in errors), errors
    assert {f.severity for f in found} == {"warning", "error"}
    assert any(f.path.endswith("resource.failureCondition") and "Terminated" in f.message for f in found)


def test_pre_commit_hooks_are_declared() -> None:
    hooks = {h["id"]: h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    assert hooks["hera-volcano-render-check"]["entry"] == "hera-volcano render --check"
    assert hooks["hera-volcano-render-check"]["pass_filenames"] is False
    assert hooks["hera-volcano-lint"]["entry"] == "hera-volcano lint"
    assert hooks["hera-volcano-lint"]["args"] == ["--allow-unknown"]  # a repository's other YAML files
    assert hooks["hera-volcano-lint"]["files"] == r"\.ya?ml$"
    assert {h["language"] for h in hooks.values()} == {"python"}


def test_lint_document_does_not_change_its_input() -> None:
    doc = workflow()
    before = copy.deepcopy(doc)
    lint_document(doc)
    assert doc == before


WF = "apiVersion: argoproj.io/v1alpha1\nkind: Workflow\nmetadata: {generateName: w-}\n"
MALFORMED = [
    WF + "spec: {entrypoint: a, templates: [{name: a, steps: 5}]}\n",
    WF + "spec: {entrypoint: a, templates: [{name: a, dag: {tasks: 5}}]}\n",
    WF + "spec: {entrypoint: a, templates: [{name: a, resource: {action: [create], manifest: 'kind: Job'}}]}\n",
    "a: !!int\n",
    WF
    + "spec: {entrypoint: a, templates: [{name: a, dag: {tasks: [{name: b, template: a, depends: '"
    + "(" * 3000
    + "a"
    + ")" * 3000
    + "'}]}}]}\n",
]


@pytest.mark.parametrize("text", MALFORMED, ids=range(len(MALFORMED)))
def test_malformed_documents_are_findings_not_crashes(text: str) -> None:
    findings = lint_text(text, "f.yaml")
    assert any(f.severity == "error" for f in findings)


def test_odd_shapes_elsewhere_are_findings_not_crashes() -> None:
    text = WF + "spec: {entrypoint: a, arguments: {parameters: 5}, templates: [{name: a, container: {image: x}}]}\n"
    assert [(f.path, f.severity) for f in lint_text(text, "f.yaml")] == [("[0].spec.arguments.parameters", "error")]


def test_alias_bombs_are_refused_quickly() -> None:
    lines = ['a0: &a0 ["x","x","x","x","x","x","x","x","x","x"]']
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 9)]
    findings = lint_text("\n".join(lines) + "\nkind: Workflow\n", "bomb.yaml")
    assert [f.message for f in findings if "aliases and merge keys (<<) expand" in f.message]


def test_a_dangling_symlink_in_a_folder_is_a_finding(tmp_path: Path) -> None:
    (tmp_path / "ok.yaml").write_text("apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: a}\n")
    (tmp_path / "gone.yaml").symlink_to(tmp_path / "nowhere.yaml")
    r = run("hera_volcano", "lint", str(tmp_path))
    assert r.code == 1 and r.out.startswith(f"{tmp_path / 'gone.yaml'}: [0]: error: cannot read")
    assert len(r.out.splitlines()) == 1 and r.err == "1 error, 0 warnings in 1 of 2 files\n"


def test_a_short_ttl_on_a_waited_on_job_is_a_warning() -> None:
    def ttl(seconds: int, keep_conditions: bool = True) -> dict[str, Any]:
        def edit(doc: dict[str, Any]) -> None:
            data = yaml.safe_load(JOB)
            data["spec"]["ttlSecondsAfterFinished"] = seconds
            resource(doc)["manifest"] = yaml.safe_dump(data, sort_keys=False)
            if not keep_conditions:
                del resource(doc)["successCondition"], resource(doc)["failureCondition"]

        return changed(edit)

    at = f"{M}spec.ttlSecondsAfterFinished"
    assert "fails (NotFound)" in warnings(ttl(10))[at]
    assert at not in warnings(ttl(60))
    assert at not in warnings(ttl(0, keep_conditions=False)), "a step that does not wait cannot lose the job"
    assert errors(ttl(10)) == {}


@pytest.mark.parametrize("action", ["delete", "get"])
def test_delete_and_get_may_name_their_object_in_flags(action: str) -> None:
    def edit(doc: dict[str, Any]) -> None:
        template(doc, 1)["resource"] = {"action": action, "flags": ["configmap", "my-cm"]}

    assert not any(p.startswith(R) for p in errors(changed(edit)))


def test_other_actions_still_need_a_manifest() -> None:
    def edit(doc: dict[str, Any]) -> None:
        template(doc, 1)["resource"] = {"action": "create", "flags": ["configmap", "my-cm"]}

    assert "exactly one of manifest and manifestFrom" in errors(changed(edit))[R]


# ---- what Argo and Volcano accept is not an error (found by running Argo's validators on the same input) ----------


def with_job(edit: Callable[[dict[str, Any]], None], kind: str = "Workflow") -> dict[str, Any]:
    """The clean workflow whose Volcano Job (as data) ``edit`` changed."""

    def change(doc: dict[str, Any]) -> None:
        data = yaml.safe_load(JOB)
        edit(data)
        resource(doc)["manifest"] = yaml.safe_dump(data, sort_keys=False)

    return changed(change, kind)


def test_names_behind_a_workflow_template_ref_are_not_judged() -> None:
    doc = workflow()
    doc["spec"] = {"workflowTemplateRef": {"name": "elsewhere"}, "entrypoint": "other", "onExit": "exit"}
    assert errors(doc) == {}


def test_workflow_parameters_json_is_declared_with_any_parameter() -> None:
    def use(doc: dict[str, Any]) -> None:
        spec(doc)["arguments"] = {"parameters": [{"name": "a", "value": "1"}]}
        template(doc, 2)["container"]["args"] = ["{{workflow.parameters.json}}"]

    assert errors(changed(use)) == {}


def test_json_patches_and_whole_manifest_placeholders_are_not_objects_to_judge() -> None:
    def patch(doc: dict[str, Any]) -> None:
        resource(doc).update(action="patch", mergeStrategy="json", manifest="- op: add\n  path: /x\n  value: 1\n")
        resource(doc)["flags"] = ["jobs.batch.volcano.sh", "j"]

    def whole(doc: dict[str, Any]) -> None:
        template(doc, 1)["inputs"] = {"parameters": [{"name": "manifest"}]}
        resource(doc)["manifest"] = "{{inputs.parameters.manifest}}"

    assert not [p for p in errors(changed(patch)) if p.startswith(R)]
    assert not [p for p in errors(changed(whole, "WorkflowTemplate")) if p.startswith(R)]


def test_values_only_known_at_run_time_are_not_type_checked() -> None:
    def replicas(doc: dict[str, Any]) -> None:
        data = yaml.safe_load(JOB)
        data["spec"]["minAvailable"] = "{{inputs.parameters.n}}"
        data["spec"]["tasks"][0]["replicas"] = "{{inputs.parameters.n}}"
        template(doc, 1)["inputs"] = {"parameters": [{"name": "n"}]}
        # Known only when the workflow is submitted.
        tasks(doc)[0]["arguments"] = {"parameters": [{"name": "n", "value": "{{workflow.parameters.n}}"}]}
        resource(doc)["manifest"] = yaml.safe_dump(data, sort_keys=False).replace("'{{", "{{").replace("}}'", "}}")
        resource(doc)["successCondition"] = (
            "status.state.phase == Completed, status.minAvailable > {{inputs.parameters.n}}"
        )

    found = errors(changed(replicas, "WorkflowTemplate"))
    # Only the raw tags themselves (tests/tools/test_lint_raw_tags.py): no rule judges the value's type.
    assert found.keys() == {f"{M}spec.minAvailable", f"{M}spec.tasks[0].replicas"}
    assert all("pastes raw" in m and "asInt" in m for m in found.values())


def test_kubernetes_leniencies_are_not_errors() -> None:
    def edit(job: dict[str, Any]) -> None:
        job["spec"]["queue"] = ""  # Volcano's webhook makes it "default"
        job["metadata"]["annotations"] = {"Example.COM/owner": "me"}  # annotation keys are checked in lower case
        container = job["spec"]["tasks"][0]["template"]["spec"]["containers"][0]
        container["readinessProbe"] = {"httpGet": {"port": "http", "path": "/"}}  # a named port

    assert errors(with_job(edit)) == {}


def test_pod_names_are_judged_by_the_webhook_and_by_svc_hostnames() -> None:
    def long_job(svc: bool) -> Callable[[dict[str, Any]], None]:
        def edit(job: dict[str, Any]) -> None:
            job["metadata"] = {"name": "j" * 56}
            job["spec"]["tasks"][0]["replicas"] = 16  # j...j-main-0 has 63 characters, j...j-main-15 64
            job["spec"]["minAvailable"] = 1
            if svc:
                job["spec"]["plugins"] = {"svc": []}

        return edit

    at = f"{M}spec.tasks[0].name"
    assert at not in errors(with_job(long_job(svc=False)))
    assert "its hostname" in errors(with_job(long_job(svc=True)))[at]


@pytest.mark.parametrize("action", [{"verb": "create"}, ["create"]])
def test_an_action_of_the_wrong_type_is_a_finding_about_the_action(action: Any) -> None:
    found = errors(changed(lambda d: resource(d).__setitem__("action", action)))
    assert f"{R}.action" in found and not any("malformed" in m for m in found.values())


def test_name_lengths_built_from_placeholders_are_warnings() -> None:
    def edit(job: dict[str, Any]) -> None:
        job["metadata"] = {"name": "{{workflow.name}}-" + "j" * 50}  # the sample's length is only a guess
        job["spec"]["plugins"] = {"svc": []}

    literal = with_job(lambda job: job.update(metadata={"name": "j" * 64}))
    assert "metadata.name" in " ".join(errors(literal)), "a literal name that is too long stays an error"
    found = with_job(edit)
    assert not [p for p in errors(found) if p.startswith(M)]
    assert any("holds a placeholder" in m for m in warnings(found).values())
