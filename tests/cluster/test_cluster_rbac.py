"""RBAC for the workflows' service accounts, applied to a real API server and checked with SubjectAccessReviews.

A workflow's service account must be able to do what its pods do (FACTS.md, "RBAC a workflow's service account
needs") and no more of the listed dangerous things.
"""

from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import Any

import pytest
import yaml
from cluster_sources import WORKFLOW_COMMANDS, cli_sources, namespace_of, service_accounts, workflow_view
from controlplane import ControlPlane
from kubernetes import client

# (verb, API group, resource, subresource)
Permission = tuple[str, str, str, str]
ALLOWED: tuple[Permission, ...] = (
    ("create", "argoproj.io", "workflowtaskresults", ""),  # every workflow pod reports its outputs
    ("patch", "argoproj.io", "workflowtaskresults", ""),
    ("create", "batch.volcano.sh", "jobs", ""),  # the resource step (action: create)
    ("get", "batch.volcano.sh", "jobs", ""),  # its success/failure condition polling
    ("list", "batch.volcano.sh", "jobs", ""),  # the log follower finds its job by labels, the exit handler too
    ("watch", "batch.volcano.sh", "jobs", ""),  # the log follower waits on its job with a watch, not by polling
    ("delete", "batch.volcano.sh", "jobs", ""),  # the exit handler of a workflow that did not succeed
    ("get", "", "pods", ""),  # the log follower (kubectl get/wait/logs -f)
    ("list", "", "pods", ""),
    ("watch", "", "pods", ""),
    ("get", "", "pods", "log"),
)
DENIED: tuple[Permission, ...] = (
    ("list", "argoproj.io", "workflowtaskresults", ""),
    ("create", "", "pods", ""),
    ("get", "", "secrets", ""),
    ("list", "argoproj.io", "workflows", ""),
)
UPSTREAM_ENV = "HERA_VOLCANO_UPSTREAM"
UPSTREAM_RBAC = Path("integrations/argo/mpi/rbac.yaml")


def _name(p: Permission) -> str:
    verb, group, resource, sub = p
    return f"{verb} {resource}{'/' + sub if sub else ''}{' (' + group + ')' if group else ''}"


def permission_problems(
    cp: ControlPlane,
    namespace: str,
    service_account: str,
    allowed: tuple[Permission, ...] = ALLOWED,
    denied: tuple[Permission, ...] = DENIED,
    expect: list[str] | None = None,
) -> list[str]:
    """What system:serviceaccount:NAMESPACE:SA may do that it should not, or may not do that it needs.

    Asked again for a few seconds while the answer differs from ``expect`` (default: no problem), since the
    RBAC authorizer's cache can lag behind RoleBindings just written.
    """
    user = f"system:serviceaccount:{namespace}:{service_account}"

    def problems() -> list[str]:
        found = []
        for expected, permissions in ((True, allowed), (False, denied)):
            for p in permissions:
                verb, group, resource, sub = p
                ok, _ = cp.can_i(user, verb, resource, namespace=namespace, group=group, subresource=sub)
                if ok != expected:
                    found.append(f"{user} {'cannot' if expected else 'can'} {_name(p)} in {namespace}")
        return found

    return cp.settle(problems, [] if expect is None else expect)


def apply_all(cp: ControlPlane, objects: list[dict[str, Any]], namespace: str) -> None:
    for obj in objects:
        ns = namespace_of(obj, namespace)
        cp.ensure_namespace(ns)
        try:
            cp.apply(obj, ns)
        except client.ApiException as e:
            pytest.fail(f"{obj.get('kind')} {(obj.get('metadata') or {}).get('name')}: {e.status} {e.body}")


def bound_service_accounts(objects: list[dict[str, Any]], default_namespace: str) -> set[tuple[str, str]]:
    found = set()
    for obj in objects:
        if obj.get("kind") in ("RoleBinding", "ClusterRoleBinding"):
            for subject in obj.get("subjects") or []:
                if subject.get("kind") == "ServiceAccount":
                    found.add((subject.get("namespace") or namespace_of(obj, default_namespace), subject["name"]))
    return found


def bundled_workflow_documents() -> list[dict[str, Any]]:
    return [doc for source in cli_sources(WORKFLOW_COMMANDS) for doc in source.documents()]


# ---------------------------------------------------------------- the project's RBAC


def test_rbac_for_grants_what_the_bundled_workflows_need(control_plane: ControlPlane, namespace: str) -> None:
    from hera.workflows import Workflow, WorkflowTemplate

    import hera_volcano

    rbac_for = getattr(hera_volcano, "rbac_for", None)
    assert rbac_for is not None, "hera_volcano.rbac_for does not exist yet"
    kinds = {"Workflow": Workflow, "WorkflowTemplate": WorkflowTemplate}
    workflows = [kinds[d["kind"]].from_dict(d) for d in bundled_workflow_documents() if d["kind"] in kinds]
    assert workflows, "the bundled CLI modules printed no Workflow or WorkflowTemplate"

    objects = rbac_for(*workflows, namespace=namespace, service_account="hv-runner")
    assert isinstance(objects, list) and all(isinstance(o, dict) for o in objects), objects
    assert {"Role", "RoleBinding"} <= {o.get("kind") for o in objects}
    apply_all(control_plane, objects, namespace)
    assert (namespace, "hv-runner") in bound_service_accounts(objects, namespace)
    assert permission_problems(control_plane, namespace, "hv-runner") == []
    # Nobody else gains anything.
    assert permission_problems(control_plane, namespace, "someone-else", allowed=(), denied=ALLOWED) == []


def test_rbac_cli_covers_the_bundled_workflows(control_plane: ControlPlane) -> None:
    (source,) = cli_sources((("hera_volcano.rbac",),))
    objects = source.documents()
    assert {"Role", "RoleBinding"} <= {o.get("kind") for o in objects}, f"{source.label}: no Role and RoleBinding"
    apply_all(control_plane, objects, "argo")

    accounts = bound_service_accounts(objects, "argo")
    for doc in bundled_workflow_documents():
        accounts |= {(namespace_of(doc), sa) for sa in service_accounts(doc)}
    problems = [p for ns, sa in sorted(accounts) for p in permission_problems(control_plane, ns, sa)]
    assert not problems, "\n".join(problems)


# ---------------------------------------------------------------- the machinery, on the upstream example


def _upstream_rbac() -> list[dict[str, Any]]:
    root = os.environ.get(UPSTREAM_ENV)
    if not root:
        pytest.skip(
            f"{UPSTREAM_ENV} is not set: set it to the upstream volcano folder (the one holding "
            f"{UPSTREAM_RBAC}) to check the SubjectAccessReview machinery on upstream's rbac.yaml"
        )
    path = Path(root)
    if path.is_dir():
        path = path / UPSTREAM_RBAC
    assert path.is_file(), f"{UPSTREAM_ENV}={root}: no {UPSTREAM_RBAC} there"
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


def test_upstream_rbac_yaml(control_plane: ControlPlane, namespace: str) -> None:
    """Upstream's rbac.yaml (namespace argo moved to a test namespace) grants what a workflow needs, and more:
    the checks catch exactly its over-grant (reading task results) and nothing else."""
    objects = copy.deepcopy(_upstream_rbac())
    for obj in objects:
        obj["metadata"]["namespace"] = namespace
        for subject in obj.get("subjects") or []:
            subject["namespace"] = namespace
    apply_all(control_plane, objects, namespace)
    assert bound_service_accounts(objects, namespace) == {(namespace, "argo")}

    over_grant = [
        f"system:serviceaccount:{namespace}:argo can {what} in {namespace}"
        for what in ("list workflowtaskresults (argoproj.io)",)
    ]
    assert permission_problems(control_plane, namespace, "argo", expect=over_grant) == over_grant
    # Bound only there: the same account in another namespace, and another account, get nothing.
    elsewhere = f"{namespace}-unbound"  # a SubjectAccessReview needs no namespace to exist
    for ns, sa in ((elsewhere, "argo"), (namespace, "default")):
        assert permission_problems(control_plane, ns, sa, allowed=(), denied=ALLOWED) == []


# ---------------------------------------------------------------- the admission policy beside the Role


def _volcano_job(name: str, **pod: Any) -> dict[str, Any]:
    """A Volcano Job of one task whose pod spec is a busybox container plus ``pod`` (``container`` merges into the
    container)."""
    container = {"name": "main", "image": "busybox:1.37.0", "command": ["true"], **pod.pop("container", {})}
    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": name},
        "spec": {
            "schedulerName": "volcano",
            "minAvailable": 1,
            "tasks": [{"name": "work", "replicas": 1, "template": {"spec": {"containers": [container], **pod}}}],
        },
    }


#: (job name, pod spec, what the refusal says): each rule of the policy, and the ways around it one might try.
REFUSED: tuple[tuple[str, dict[str, Any], str], ...] = (
    ("other-account", {"serviceAccountName": "argo-server"}, "service account other than"),
    ("deprecated-field", {"serviceAccount": "argo-server"}, "service account other than"),
    (
        "privileged",
        {"container": {"securityContext": {"privileged": True}}},
        "privileged or Windows HostProcess container",
    ),
    (
        "privileged-init",
        {"initContainers": [{"name": "i", "image": "busybox:1.37.0", "securityContext": {"privileged": True}}]},
        "privileged or Windows HostProcess container",
    ),
    ("host-path", {"volumes": [{"name": "root", "hostPath": {"path": "/"}}]}, "hostPath volume"),
    ("host-network", {"hostNetwork": True}, "network, PID or IPC namespace"),
    ("host-pid", {"hostPID": True}, "network, PID or IPC namespace"),
    ("secret-volume", {"volumes": [{"name": "s", "secret": {"secretName": "argo-server-token"}}]}, "Secret"),
    (
        "secret-env",
        {"container": {"env": [{"name": "T", "valueFrom": {"secretKeyRef": {"name": "x", "key": "token"}}}]}},
        "Secret",
    ),
    ("secret-env-from", {"container": {"envFrom": [{"secretRef": {"name": "x"}}]}}, "Secret"),
    ("no-account-token", {}, "default account of the namespace with its token"),
    ("capabilities", {"container": {"securityContext": {"capabilities": {"add": ["ALL"]}}}}, "capability"),
    ("node-name", {"nodeName": "n"}, "nodeName"),
)


def _create_as(api: Any, namespace: str, job: dict[str, Any]) -> tuple[int, str]:
    """Create ``job`` with ``api`` (an account's client); (HTTP status, message)."""
    objects = client.CustomObjectsApi(api)
    try:
        objects.create_namespaced_custom_object("batch.volcano.sh", "v1alpha1", namespace, "jobs", job)
    except client.ApiException as e:
        return e.status, str(e.body)
    return 201, ""


def test_the_admission_policy_refuses_jobs_the_role_alone_would_let_the_account_create(
    control_plane: ControlPlane, namespace: str
) -> None:
    """RBAC lets an account that may create Volcano Jobs run their pods as any account of the namespace; the policy
    rendered beside its Role, enforced by the API server itself, refuses that (and the rest it pins) for that
    account only."""
    import hera_volcano

    workflows = [d for d in bundled_workflow_documents() if d["kind"] in ("Workflow", "WorkflowTemplate")]
    objects = hera_volcano.rbac_for(*workflows, namespace=namespace, service_account="hv-runner")
    assert {"ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"} <= {o["kind"] for o in objects}
    apply_all(control_plane, objects, namespace)
    runner = control_plane.service_account_client(namespace, "hv-runner")
    assert permission_problems(control_plane, namespace, "hv-runner") == []

    # The policy is enforced once the API server's informer has it: wait for the first refusal.
    def probe() -> int:
        job = _volcano_job("probe", serviceAccountName="argo-server")
        job["metadata"] = {"generateName": "probe-"}
        return _create_as(runner, namespace, job)[0]

    assert control_plane.settle(probe, 403, timeout=30) == 403, "a job naming another account was not refused"
    failures = []
    for name, pod, words in REFUSED:
        # No token of the namespace's default account, but in the case of it: one rule refuses each.
        pod = {**({} if name == "no-account-token" else {"automountServiceAccountToken": False}), **pod}
        status, said = _create_as(runner, namespace, _volcano_job(f"refused-{name}", **copy.deepcopy(pod)))
        if status != 403 or words not in said or "task work" not in said:
            failures.append(f"{name}: {status} {said[:400]}")
    assert not failures, "the account created (or was refused without saying why):\n" + "\n".join(failures)

    # What the account itself runs as, a pod that names none and mounts no token, and the bundled workflows' own
    # jobs: accepted.
    no_token = {"automountServiceAccountToken": False}
    for name, pod in (("own-account", {"serviceAccountName": "hv-runner"}), ("no-account", no_token)):
        assert _create_as(runner, namespace, _volcano_job(name, **pod)) == (201, ""), name
    from hera_volcano.argo.samples import resolved_manifests

    created = 0
    for doc in workflows:
        for _, template, text in resolved_manifests(workflow_view(doc) or {}):
            for job in yaml.safe_load_all(text):
                if job and (job.get("apiVersion"), job.get("kind")) == ("batch.volcano.sh/v1alpha1", "Job"):
                    job["metadata"] = {**job["metadata"], "generateName": "bundled-"}  # the same job comes twice
                    for key in ("name", "namespace"):
                        job["metadata"].pop(key, None)
                    status, said = _create_as(runner, namespace, job)
                    assert status == 201, f"{doc['metadata']}: {template}: {status} {said[:400]}"
                    created += 1
    assert created, "the bundled workflows created no Volcano Job"

    # The policy binds that account only: the cluster admin (and Volcano's controller, and other users) are
    # not touched by it.
    other = _volcano_job("by-the-admin", serviceAccountName="argo-server", hostNetwork=True)
    control_plane.create(other, namespace)
