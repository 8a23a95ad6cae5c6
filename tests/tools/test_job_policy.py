"""The admission policy ``rbac_for`` puts beside a Role that may create Volcano Jobs: what it pins, per parameter.

Whether the API server enforces it as written (every rule, on real requests) is tests/cluster/test_cluster_rbac.py;
that its expressions type-check against the Job CRD's schema is checked on the end-to-end cluster.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from hera.workflows import Container, Workflow

import hera_volcano as hv
from hera_volcano import JobPolicy, ValidationError, rbac_for
from hera_volcano.tools.job_policy import policy_name
from tests.commands import run

NS_LABEL = "kubernetes.io/metadata.name"


def training(service_account: str = "trainer", master_account: str | None = None, namespace: str = "ml") -> Any:
    """A user's workflow: an MPI job (its master's wait reads pods as ``master_account``, by default the
    workflow's own) and its follower."""
    job = hv.mpi_job(
        image="volcanosh/example-mpi:0.0.3",
        program=hv.Program.command(["mpi_hello_world"]),
        workers=2,
        service_account=master_account or service_account,
    )
    with Workflow(
        generate_name="train-", namespace=namespace, entrypoint="main", service_account_name=service_account
    ) as w:
        hv.job_dag(job, name="main")
    return w


def policies(objects: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {o["kind"]: o for o in objects if o["kind"].startswith("ValidatingAdmissionPolicy")}


def variable(vap: dict[str, Any], name: str) -> str:
    return next(str(v["expression"]) for v in vap["spec"]["variables"] if v["name"] == name)


def messages(vap: dict[str, Any]) -> list[str]:
    return [v["message"] for v in vap["spec"]["validations"]]


def test_an_account_that_creates_jobs_gets_a_policy_on_its_own_requests_in_its_namespace() -> None:
    objects = rbac_for(training())
    found = policies(objects)
    vap, binding = found["ValidatingAdmissionPolicy"], found["ValidatingAdmissionPolicyBinding"]
    assert vap["metadata"]["name"] == binding["metadata"]["name"] == binding["spec"]["policyName"]
    assert vap["metadata"]["name"] == "hera-volcano-jobs.ml.trainer"
    assert binding["spec"]["validationActions"] == ["Deny"]
    assert binding["spec"]["matchResources"] == {"namespaceSelector": {"matchLabels": {NS_LABEL: "ml"}}}
    [condition] = vap["spec"]["matchConditions"]
    assert condition["expression"] == "request.userInfo.username == 'system:serviceaccount:ml:trainer'"
    [rule] = vap["spec"]["matchConstraints"]["resourceRules"]
    assert (rule["apiGroups"], rule["resources"], rule["operations"]) == (
        ["batch.volcano.sh"],
        ["jobs"],
        ["CREATE", "UPDATE"],
    )
    assert vap["spec"]["failurePolicy"] == "Fail"
    assert vap["spec"]["matchConstraints"]["matchPolicy"] == "Equivalent"  # a request through another version too
    # Beside the Role, in that order, so one apply creates the account's rights and their limits together.
    kinds = [o["kind"] for o in objects]
    assert kinds[:4] == ["Role", "RoleBinding", "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"]
    assert kinds[4:] == [], "nothing else: the pods' program is program_for's"


def test_by_default_pods_run_as_the_account_itself_and_nothing_else_is_allowed() -> None:
    vap = policies(rbac_for(training()))["ValidatingAdmissionPolicy"]
    assert variable(vap, "accounts") == "['trainer']"
    assert variable(vap, "secrets") == "[]"
    said = messages(vap)
    assert len(said) == 5
    for words in (
        "service account other than trainer",
        "mount or read a Secret",
        "privileged container",
        "hostPath volume",
        "network, PID or IPC namespace",
    ):
        assert sum(words in m for m in said) == 1, (words, said)
    assert all(m.startswith("system:serviceaccount:ml:trainer may not create a Volcano Job") for m in said)
    assert all(v["reason"] == "Forbidden" for v in vap["spec"]["validations"])


def test_the_accounts_the_workflows_own_jobs_name_are_allowed_too() -> None:
    """The MPI master reads its workers as an account of its own: the workflow's jobs name it, so it is allowed."""
    vap = policies(rbac_for(training(master_account="mpi-reader")))["ValidatingAdmissionPolicy"]
    assert variable(vap, "accounts") == "['mpi-reader', 'trainer']"
    assert "other than mpi-reader, trainer" in messages(vap)[0]


def test_an_account_named_at_run_time_is_not_allowed_unless_listed() -> None:
    job = (
        "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata:\n  generateName: j-\nspec:\n  tasks:\n"
        "  - name: t\n    template:\n      spec:\n        serviceAccountName: '{{inputs.parameters.sa}}'\n"
        "        containers:\n        - name: c\n          image: busybox\n"
    )
    wf = {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Workflow",
        "metadata": {"name": "w", "namespace": "ml"},
        "spec": {
            "serviceAccountName": "trainer",
            "entrypoint": "r",
            "templates": [{"name": "r", "resource": {"action": "create", "manifest": job}}],
        },
    }
    vap = policies(rbac_for(wf))["ValidatingAdmissionPolicy"]
    assert variable(vap, "accounts") == "['trainer']"
    listed = policies(rbac_for(wf, job_policy=JobPolicy(service_accounts=["runner-a"])))
    assert variable(listed["ValidatingAdmissionPolicy"], "accounts") == "['runner-a', 'trainer']"


@pytest.mark.parametrize(
    ("option", "gone"),
    [
        ({"privileged": True}, "privileged container"),
        ({"host_paths": True}, "hostPath volume"),
        ({"host_namespaces": True}, "network, PID or IPC namespace"),
    ],
)
def test_each_allowance_drops_its_rule_and_only_it(option: dict[str, bool], gone: str) -> None:
    vap = policies(rbac_for(training(), job_policy=JobPolicy(**option)))["ValidatingAdmissionPolicy"]
    said = messages(vap)
    assert len(said) == 4 and not any(gone in m for m in said)
    assert vap["metadata"]["annotations"]["hera-volcano/parameters"].count("allowed") == 1


def test_listed_secrets_are_the_only_ones_the_pods_may_use() -> None:
    vap = policies(rbac_for(training(), job_policy=JobPolicy(secrets=["hf-token", "db"])))["ValidatingAdmissionPolicy"]
    assert variable(vap, "secrets") == "['db', 'hf-token']"
    assert any("mount or read a Secret other than hf-token, db" in m for m in messages(vap))


def test_the_rules_read_every_container_list_and_both_account_fields() -> None:
    """Init and ephemeral containers, and the deprecated serviceAccount, are ways around a rule that reads only
    containers and serviceAccountName."""
    vap = policies(rbac_for(training()))["ValidatingAdmissionPolicy"]
    by_words = {v["message"]: v["expression"] for v in vap["spec"]["validations"]}
    accounts = next(e for m, e in by_words.items() if "service account" in m)
    assert "t.template.spec.serviceAccountName" in accounts and "t.template.spec.serviceAccount)" in accounts
    for words in ("privileged", "Secret"):
        expression = next(e for m, e in by_words.items() if words in m)
        for containers in ("containers", "initContainers", "ephemeralContainers"):
            assert f"t.template.spec.{containers}.exists(c," in expression, (words, containers)
    secrets = next(e for m, e in by_words.items() if "Secret" in m)
    for reference in ("v.secret.secretName", "s.secret.name", "e.valueFrom.secretKeyRef.name", "e.secretRef.name"):
        assert reference in secrets
    hosts = next(e for m, e in by_words.items() if "namespace" in m)
    assert all(f"t.template.spec.{f}" in hosts for f in ("hostNetwork", "hostPID", "hostIPC"))


def test_every_message_expression_names_the_offending_tasks() -> None:
    vap = policies(rbac_for(training()))["ValidatingAdmissionPolicy"]
    for v in vap["spec"]["validations"]:
        assert v["messageExpression"].startswith("'" + v["message"] + ": task '")
        assert "t.name" in v["messageExpression"]
        assert "'" not in v["message"], "the message is a CEL string literal in messageExpression"


def test_no_policy_for_an_account_that_cannot_create_jobs_or_when_asked_for_none() -> None:
    with Workflow(generate_name="c-", namespace="ml", entrypoint="c", service_account_name="cleaner") as w:
        Container(name="c", image="busybox", command=["true"])
    assert policies(rbac_for(w)) == {}
    assert policies(rbac_for(training(), job_policy=None)) == {}


def test_each_account_that_creates_jobs_gets_its_own_policy() -> None:
    objects = rbac_for(training("a"), training("b"))
    names = [o["metadata"]["name"] for o in objects if o["kind"] == "ValidatingAdmissionPolicy"]
    assert names == ["hera-volcano-jobs.ml.a", "hera-volcano-jobs.ml.b"]


def test_long_names_give_valid_distinct_policy_names() -> None:
    from hera_volcano.kube import names

    long = {policy_name("ml", "a" * 240 + end) for end in ("x", "y")}
    assert len(long) == 2 and all(len(n) <= 253 and names.dns1123_subdomain(n) is None for n in long)


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"service_accounts": ["Not Valid"]}, "service_accounts[0]"),
        ({"service_accounts": "runner"}, "service_accounts"),
        ({"secrets": ["a/b"]}, "secrets[0]"),
        ({"privileged": "yes"}, "privileged"),
    ],
)
def test_bad_parameters_are_refused(kwargs: dict[str, Any], field: str) -> None:
    with pytest.raises(ValidationError) as e:
        JobPolicy(**kwargs)
    assert e.value.field == field


def test_a_policy_that_is_not_a_job_policy_is_refused() -> None:
    with pytest.raises(ValidationError) as e:
        rbac_for(training(), job_policy={"privileged": True})  # type: ignore[arg-type]
    assert e.value.field == "job_policy"


def test_cli_options_set_the_parameters() -> None:
    r = run(
        "hera_volcano", "rbac", "--allow-service-account", "reader", "--allow-secret", "hf-token",
        "--allow-host-paths",
    )  # fmt: skip
    assert r.code == 0, r.err
    [vap] = [d for d in yaml.safe_load_all(r.out) if d["kind"] == "ValidatingAdmissionPolicy"]
    assert variable(vap, "accounts") == "['reader', 'volcano-workflows']"
    assert variable(vap, "secrets") == "['hf-token']"
    assert not any("hostPath" in m for m in messages(vap))
    without = run("hera_volcano", "rbac", "--no-admission-policy")
    assert "ValidatingAdmissionPolicy" not in without.out
    both = run("hera_volcano", "rbac", "--no-admission-policy", "--allow-privileged")
    assert (both.code, both.out) == (2, "") and len(both.err.splitlines()) == 1
