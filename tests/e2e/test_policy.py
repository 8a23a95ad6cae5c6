"""The admission design `hera-volcano rbac` applies beside the workflows' Role, on the real cluster (issues 34, 43).

The cluster got it with the bundled RBAC (conftest: `python -m hera_volcano.rbac | kubectl apply -f -`): the
namespace's Pod Security labels (enforce baseline) and the policy on the workflows' Volcano Jobs, so every other
scenario runs under both: the bundled and e2e workflows' pods (Argo's too) pass baseline and their jobs the policy.
Here, each as one table that gathers every disagreement before failing, with server-side dry runs as the account:
every candidate of issue 43 and every control of issue 34 refused, each kind `rbac_for` covers (an account whose
resource steps create Pods, batch Jobs, JobFlows, ...) refused the same, and what should pass accepted;
kube-controller-manager type-checked every policy against its kind's schema without a warning.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest
import yaml
from harness import NAMESPACE, SERVICE_ACCOUNT, Cluster
from kubernetes import client
from policy_cases import ACCEPTED, CANDIDATES, CONTROLS, KINDS, disagreements, document, probe_workflow

import hera_volcano as hv
from hera_volcano.tools.job_policy import policy_name

#: How long kube-controller-manager may take to write a policy's type-checking status.
TYPE_CHECKED = 60
#: The account whose resource steps create one object of each kind the policy covers.
PROBE = "policy-probe"


def _type_check_warnings(cluster: Cluster, names: list[str]) -> list[str]:
    """Once kube-controller-manager has type-checked each policy: its warnings, one line each."""
    admission = client.AdmissionregistrationV1Api(cluster.api_client)

    def checked(name: str) -> client.V1TypeChecking | None:
        status = admission.read_validating_admission_policy(name).status
        return None if status is None else status.type_checking

    for name in names:
        cluster.wait_for(lambda n=name: checked(n) is not None, f"the type checking of {name}", TYPE_CHECKED)
    return [f"{n}: {w.field_ref}: {w.warning[:300]}" for n in names for w in checked(n).expression_warnings or []]


@pytest.mark.scenario("34/43 admission policy: type-checked; every candidate and control refused, own jobs accepted")
def test_the_policy_type_checks_and_refuses_every_candidate_for_the_workflows_account(cluster: Cluster) -> None:
    assert _type_check_warnings(cluster, [policy_name(NAMESPACE, SERVICE_ACCOUNT)]) == []
    found = disagreements(cluster.kubectl, NAMESPACE, SERVICE_ACCOUNT, ["Volcano Job"], CANDIDATES + CONTROLS)
    found += disagreements(cluster.kubectl, NAMESPACE, SERVICE_ACCOUNT, ["Volcano Job"], ACCEPTED, accepted_too=False)
    assert not found, f"{len(found)} disagreements:\n" + "\n".join(found)
    # The policy binds that account only: the cluster admin creates a job naming another account.
    create = ("create", "-n", NAMESPACE, "--dry-run=server", "-o", "name", "-f", "-")
    assert cluster.kubectl(*create, input=document("Volcano Job", "argo-server", {}, {})).code == 0


@pytest.mark.scenario("43 Pod Security baseline on the namespace: a Pod that breaks it refused, whoever creates it")
def test_the_namespace_enforces_pod_security_baseline(cluster: Cluster) -> None:
    labels = cluster.core.read_namespace(NAMESPACE).metadata.labels
    assert labels.get("pod-security.kubernetes.io/enforce") == "baseline", labels
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "pod-security-probe"},
        "spec": {
            "containers": [{"name": "c", "image": "busybox:1.37.0", "ports": [{"containerPort": 80, "hostPort": 80}]}]
        },
    }
    said = cluster.kubectl("create", "-n", NAMESPACE, "--dry-run=server", "-f", "-", input=yaml.safe_dump(pod))
    assert said.code != 0 and "violates PodSecurity" in said.err, said  # as the admin: the pods Volcano makes too


@pytest.fixture
def probe(cluster: Cluster) -> Iterator[list[str]]:
    """The RBAC and policies ``rbac_for`` renders for an account whose resource steps create each covered kind,
    applied; the policies' names. Removed afterwards (the policies are cluster-scoped)."""
    objects = hv.rbac_for(probe_workflow(NAMESPACE, PROBE), service_accounts=True)
    objects = [o for o in objects if o["kind"] != "Namespace"]  # the bundled RBAC labelled it already
    text = yaml.safe_dump_all(objects)
    cluster.kubectl("apply", "-f", "-", input=text).ok()
    try:
        yield [str(o["metadata"]["name"]) for o in objects if o["kind"] == "ValidatingAdmissionPolicy"]
    finally:
        cluster.kubectl("delete", "--ignore-not-found", "-f", "-", input=text)


@pytest.mark.scenario(
    "43 admission policy per kind: Pods, batch Jobs, JobFlows, ... created by an account refused alike"
)
def test_every_kind_rbac_for_lets_an_account_create_is_held_to_the_same_rules(
    cluster: Cluster, probe: list[str]
) -> None:
    assert len(probe) == len(KINDS), probe
    assert _type_check_warnings(cluster, probe) == []
    kinds = list(KINDS)
    # The policies are enforced once the API server's informer has them: wait for the first refusal of each kind.
    cluster.wait_for(
        lambda: not disagreements(cluster.kubectl, NAMESPACE, PROBE, kinds, CONTROLS[:1], accepted_too=False),
        "the policies enforced",
        30,
    )
    found = disagreements(cluster.kubectl, NAMESPACE, PROBE, kinds, CANDIDATES + CONTROLS)
    found += disagreements(cluster.kubectl, NAMESPACE, PROBE, kinds, ACCEPTED, accepted_too=False)
    assert not found, f"{len(found)} disagreements:\n" + "\n".join(found)


_CONTAINER = {"name": "main", "image": "busybox:1.37.0", "command": ["true"]}
#: What a workflows' account could create, were it granted: pods run as it names, the admission policy never asked.
_POD_MAKERS = {
    "pods": {"apiVersion": "v1", "kind": "Pod", "spec": {"containers": [_CONTAINER]}},
    "jobs.batch": {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [_CONTAINER]}}},
    },
    "jobflows.flow.volcano.sh": {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "JobFlow",
        "spec": {"jobRetainPolicy": "delete", "flows": [{"name": "a"}]},
    },
}


@pytest.mark.scenario(
    "43 RBAC: a Pod, a batch Job, a JobFlow Forbidden to the bundled account; an uncovered kind granted by name only"
)
def test_the_workflows_account_may_create_no_pod_batch_job_or_jobflow(cluster: Cluster) -> None:
    """The bundled Role grants no write the admission policy does not check: a server-side dry run of each, as the
    workflows' account, is refused by RBAC (and accepted as the admin: the objects are valid). ``rbac`` refuses to
    grant one for a resource step unless allowed by name, and then says why on the rule."""
    account = f"system:serviceaccount:{NAMESPACE}:{SERVICE_ACCOUNT}"
    create = ("create", "-n", NAMESPACE, "--dry-run=server", "-o", "name", "-f", "-")
    for resource, obj in _POD_MAKERS.items():
        text = yaml.safe_dump({**obj, "metadata": {"generateName": "policy-"}})
        refused = cluster.kubectl(*create, f"--as={account}", input=text)
        group = resource.partition(".")[2]
        forbidden = f'cannot create resource "{resource.partition(".")[0]}" in API group "{group}"'
        assert refused.code != 0 and "Forbidden" in refused.err and forbidden in refused.err, refused
        assert cluster.kubectl(*create, input=text).code == 0, f"the admin's dry run of {resource} failed"
    # A kind no policy covers (a StatefulSet's pods): refused unless allowed by name, then the reason on the rule.
    stateful = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "s"},
        "spec": {
            "serviceName": "s",
            "selector": {"matchLabels": {"app": "s"}},
            "template": {"metadata": {"labels": {"app": "s"}}, "spec": {"containers": [_CONTAINER]}},
        },
    }
    step = {"name": "make", "resource": {"action": "create", "manifest": yaml.safe_dump(stateful)}}
    workflow = {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Workflow",
        "metadata": {"generateName": "set-maker-"},
        "spec": {"entrypoint": "make", "serviceAccountName": SERVICE_ACCOUNT, "templates": [step]},
    }
    rbac = [sys.executable, "-m", "hera_volcano", "rbac", "-", "--no-program"]
    refused = cluster.run(rbac, input=yaml.safe_dump(workflow))
    assert refused.code == 2 and "set-maker-/make: needs create on statefulsets (apps)" in refused.err, refused
    allowed = cluster.run([*rbac, "--allow-uncovered", "statefulsets.apps"], input=yaml.safe_dump(workflow)).ok()
    [role] = [o for o in yaml.safe_load_all(allowed.out) if o["kind"] == "Role"]
    reasons = [v for k, v in role["metadata"]["annotations"].items() if k.startswith("hera-volcano/uncovered-")]
    assert reasons == ["create on statefulsets (apps): checked by no admission policy, allowed deliberately by"
                       " allow_uncovered (--allow-uncovered) statefulsets.apps"], role  # fmt: skip
