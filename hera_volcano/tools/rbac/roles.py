"""The objects an account's needs become: a Role and RoleBinding per namespace (each rule annotated with the
templates that need it), the ServiceAccount, and the token Secret Argo mounts for an executor account."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping

from hera_volcano.kube import names
from hera_volcano.tools.rbac import coverage
from hera_volcano.tools.rbac.need import RBAC_API, Manifest, Need, Rule, order

ANNOTATION_PREFIX = "hera-volcano/rule-"


def role_name(sa: str) -> str:
    """``SA-hera-volcano``; a service account too long for that is cut and told apart by a hash of its full name."""
    suffix = "-hera-volcano"
    if len(sa) + len(suffix) <= names.DNS1123_SUBDOMAIN_MAX:
        return sa + suffix
    digest = hashlib.sha256(sa.encode()).hexdigest()[:8]
    keep = names.DNS1123_SUBDOMAIN_MAX - len(suffix) - len(digest) - 1
    return f"{sa[:keep].rstrip('-.')}-{digest}{suffix}"


def service_account_object(namespace: str, name: str) -> Manifest:
    return {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name, "namespace": namespace}}


def role_and_binding(
    ns: str, account_ns: str, sa: str, needs: Iterable[Need], with_sa: bool, uncovered: Mapping[Rule, str]
) -> list[Manifest]:
    """The Role in ``ns`` and its binding to the account of ``account_ns`` (named after both when they differ);
    ``uncovered``: why a rule that no admission policy checks is granted, by (group, resource)."""
    rules: dict[tuple[str, str], tuple[set[str], set[str]]] = {}
    for need in needs:
        verbs, why = rules.setdefault((need.group, need.resource), (set(), set()))
        verbs.update(need.verbs)
        why.add(need.why)
    ordered = sorted(rules.items())
    name = role_name(sa if ns == account_ns else f"{account_ns}.{sa}")
    annotations = {
        f"{ANNOTATION_PREFIX}{i}": f"{res} ({grp or 'core'}): {', '.join(sorted(why))}"
        for i, ((grp, res), (_, why)) in enumerate(ordered)
    }
    annotations.update(coverage.reason_annotations([rule for rule, _ in ordered], uncovered))
    role = {
        "apiVersion": RBAC_API,
        "kind": "Role",
        "metadata": {"name": name, "namespace": ns, "annotations": annotations},
        "rules": [
            {"apiGroups": [grp], "resources": [res], "verbs": order(verbs)} for (grp, res), (verbs, _) in ordered
        ],
    }
    binding = {
        "apiVersion": RBAC_API,
        "kind": "RoleBinding",
        "metadata": {"name": name, "namespace": ns},
        "subjects": [{"kind": "ServiceAccount", "name": sa, "namespace": account_ns}],
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
    }
    return [service_account_object(account_ns, sa), role, binding] if with_sa else [role, binding]


def token_secret(namespace: str, account: str) -> Manifest:
    """The long-lived token Argo mounts for an executor account (``ACCOUNT.service-account-token``, the name
    Argo looks for); Kubernetes fills it in once the account exists."""
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "kubernetes.io/service-account-token",
        "metadata": {
            "name": f"{account}.service-account-token",
            "namespace": namespace,
            "annotations": {"kubernetes.io/service-account.name": account},
        },
    }
