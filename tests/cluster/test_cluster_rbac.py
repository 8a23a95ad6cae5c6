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
from cluster_sources import WORKFLOW_COMMANDS, cli_sources, namespace_of, service_accounts
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
