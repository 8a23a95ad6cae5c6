"""What an account needs: one rule, with why and where, before the rules are gathered into Roles."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, TypeAlias

#: An object as the API server takes it (plain JSON data), as ``rbac_for`` and ``program_for`` return them.
Manifest: TypeAlias = dict[str, Any]
#: (API group, resource): what a rule is about.
Rule: TypeAlias = tuple[str, str]
#: (API group, resource, verbs): one call's rule, as the pods' program declares its calls.
Call: TypeAlias = tuple[str, str, tuple[str, ...]]

RBAC_API = "rbac.authorization.k8s.io/v1"
#: Verbs in the order a Role lists them (others follow, sorted).
VERB_ORDER = ("get", "list", "watch", "create", "update", "patch", "delete")


@dataclass(frozen=True)
class Need:
    """A rule an account needs. ``namespace``: where (the manifest's), ``account_namespace``: the account's (a
    Volcano pod's is its job's); None for the workflow's. ``pod_accounts``: the accounts a Volcano Job it creates
    names for its pods (for the admission policy)."""

    service_account: str
    group: str
    resource: str
    verbs: tuple[str, ...]
    why: str
    namespace: str | None = None
    account_namespace: str | None = None
    pod_accounts: tuple[str, ...] = ()
    #: Argo's containers run as this account from a token Secret: the pod mounts no token of its own.
    executor_token: bool = False


def order(verbs: Iterable[str]) -> list[str]:
    """The verbs once each, in :data:`VERB_ORDER`."""
    unique = set(verbs)
    return [v for v in VERB_ORDER if v in unique] + sorted(unique - set(VERB_ORDER))
