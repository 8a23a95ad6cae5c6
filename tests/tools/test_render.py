"""``module_files``: what goes beside a module's workflows (their program, RBAC and policy), and where."""

from __future__ import annotations

import yaml

from hera_volcano.tools.render import module_files


def cron(**spec: object) -> dict[str, object]:
    workflow_spec = {"entrypoint": "c", "templates": [{"name": "c", "container": {"image": "alpine:3"}}], **spec}
    return {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "CronWorkflow",
        "metadata": {"name": "nightly"},
        "spec": {"schedule": "0 1 * * *", "workflowSpec": workflow_spec},
    }


def test_namespace_and_account_are_written_only_where_a_workflow_names_none() -> None:
    files = module_files([cron()], namespace="ml", service_account="runner")
    written = yaml.safe_load(files["nightly.yaml"])
    assert written["metadata"]["namespace"] == "ml"
    assert written["spec"]["workflowSpec"]["serviceAccountName"] == "runner"
    assert written["spec"]["schedule"] == "0 1 * * *"
    [role] = [d for d in yaml.safe_load_all(files["rbac/rbac.yaml"]) if d["kind"] == "Role"]
    assert role["metadata"] == {**role["metadata"], "name": "runner-hera-volcano", "namespace": "ml"}
    own = cron(serviceAccountName="mine")
    own["metadata"] = {"name": "nightly", "namespace": "theirs"}
    kept = yaml.safe_load(module_files([own], namespace="ml", service_account="runner")["nightly.yaml"])
    assert kept["metadata"]["namespace"] == "theirs" and kept["spec"]["workflowSpec"]["serviceAccountName"] == "mine"


def test_without_rbac_and_program_there_is_no_rbac_folder() -> None:
    files = module_files([cron()], derive=None)
    assert sorted(files) == ["kustomization.yaml", "nightly.yaml"]
    assert yaml.safe_load(files["kustomization.yaml"])["resources"] == ["nightly.yaml"]


def test_derive_gives_the_rbac_as_the_caller_wants_it() -> None:
    def nothing_but_a_note(*workflows: object) -> list[dict[str, object]]:
        return [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"seen-{len(workflows)}"}}]

    files = module_files([cron(serviceAccountName="a")], derive=nothing_but_a_note)
    assert yaml.safe_load(files["rbac/rbac.yaml"])["metadata"]["name"] == "seen-1", "each workflow, once"
    assert yaml.safe_load(files["kustomization.yaml"])["resources"] == ["nightly.yaml", "rbac"]
