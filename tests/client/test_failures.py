"""The API server's error answers (recorded from a real one) as one-line ClusterErrors that say what to do."""

from __future__ import annotations

import pytest

from hera_volcano.client import failures
from hera_volcano.client.resources import NODES, PODS, QUEUES, WORKFLOWS
from tests.client.recorded import error


def test_a_forbidden_create_names_the_user_verb_resource_group_namespace_and_the_grant() -> None:
    e = failures.from_answer(*error("forbidden-create-workflows"), verb="create", resource=WORKFLOWS, namespace="argo")
    assert (e.reason, e.status, e.verb, e.resource, e.group, e.namespace) == (
        "Forbidden",
        403,
        "create",
        "workflows",
        "argoproj.io",
        "argo",
    )
    assert e.user == "system:serviceaccount:argo:nobody"
    assert str(e) == (
        "forbidden: system:serviceaccount:argo:nobody may not create workflows.argoproj.io in namespace argo;"
        " `hera-volcano rbac --submitter system:serviceaccount:argo:nobody` prints a Role that grants it"
    )


def test_a_forbidden_read_at_the_cluster_scope_has_no_namespace() -> None:
    e = failures.from_answer(*error("forbidden-list-nodes"), verb="list", resource=NODES)
    assert (e.verb, e.resource, e.group, e.namespace) == ("list", "nodes", "", None)
    assert "may not list nodes at the cluster scope" in str(e)
    q = failures.from_answer(*error("forbidden-get-queue"), verb="get", resource=QUEUES, name="default")
    assert (q.verb, q.resource, q.group, q.namespace) == ("get", "queues", "scheduling.volcano.sh", None)


def test_a_forbidden_subresource_is_named_as_rbac_names_it() -> None:
    e = failures.from_answer(*error("forbidden-pods-log"), verb="get", resource=PODS, namespace="argo", name="p")
    assert (e.verb, e.resource, e.group) == ("get", "pods/log", "")
    assert "may not get pods/log in namespace argo" in str(e)


def test_a_forbidden_answer_without_the_rbac_message_names_what_was_asked() -> None:
    e = failures.from_answer(403, "", verb="watch", resource=WORKFLOWS, namespace="argo")
    assert (e.verb, e.resource, e.group, e.namespace, e.user) == ("watch", "workflows", "argoproj.io", "argo", None)
    assert str(e) == "forbidden: may not watch workflows.argoproj.io in namespace argo"


def test_a_human_user_is_granted_as_user_name() -> None:
    body = (
        '{"kind":"Status","code":403,"reason":"Forbidden","message":"workflows.argoproj.io is forbidden: User'
        ' \\"alice@example.com\\" cannot delete resource \\"workflows\\" in API group \\"argoproj.io\\" in the'
        ' namespace \\"ml\\": RBAC: role.rbac.authorization.k8s.io \\"x\\" not found"}'
    )
    e = failures.from_answer(403, body, verb="delete", resource=WORKFLOWS, namespace="ml")
    assert (e.user, e.verb, e.namespace) == ("alice@example.com", "delete", "ml")
    assert "--submitter user:alice@example.com`" in str(e)


def test_not_found_names_the_object_and_a_missing_kind_names_its_crds() -> None:
    e = failures.from_answer(*error("notfound-workflow"), verb="get", resource=WORKFLOWS, namespace="argo", name="w")
    assert (e.reason, e.status, str(e)) == ("NotFound", 404, "workflows.argoproj.io w not found in namespace argo")
    kind = failures.from_answer(*error("notfound-resource"), verb="list", resource=WORKFLOWS, namespace="argo")
    assert kind.reason == "NotFound"
    assert str(kind) == (
        "the API server does not serve workflows.argoproj.io/v1alpha1: are the Argo Workflows CRDs installed?"
    )


@pytest.mark.parametrize(
    ("fixture", "reason", "text"),
    [
        ("unauthorized", "Unauthorized", "does not accept these credentials (401 Unauthorized)"),
        ("already-exists", "AlreadyExists", 'in namespace argo: workflows.argoproj.io "fixed-name" already exists'),
        ("invalid", "Invalid", "spec.templates in body must be of type array"),
    ],
)
def test_other_answers_keep_the_servers_reason_and_message(fixture: str, reason: str, text: str) -> None:
    e = failures.from_answer(*error(fixture), verb="create", resource=WORKFLOWS, namespace="argo")
    assert e.reason == reason
    assert text in str(e)
    assert "\n" not in str(e)


def test_no_answer_is_unreachable_and_worth_retrying_as_are_busy_servers() -> None:
    e = failures.unreachable("https://10.0.0.1:6443", ConnectionRefusedError(111, "Connection refused"))
    assert e.reason == "Unreachable"
    assert str(e) == "cannot reach the API server at https://10.0.0.1:6443: [Errno 111] Connection refused"
    assert failures.transient(e)
    busy = failures.from_answer(503, "", verb="list", resource=PODS, namespace="argo")
    assert failures.transient(busy)
    forbidden = failures.from_answer(*error("forbidden-list-nodes"), verb="list", resource=NODES)
    assert not failures.transient(forbidden)
