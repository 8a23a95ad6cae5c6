"""Who submits the workflows (``--submitter``): what the client needs in each namespace, and the read-only cluster
role ``explain`` uses."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from hera_volcano.client.resources import CLUSTER_READS, SUBMITTER, Permission
from hera_volcano.kube import names
from hera_volcano.shared.errors import ValidationError
from hera_volcano.tools.rbac.need import RBAC_API, Manifest, order
from hera_volcano.tools.rbac.roles import ANNOTATION_PREFIX, service_account_object


@dataclass(frozen=True)
class Subject:
    """Who submits: a ServiceAccount (``namespace`` None: the one of each Role), a User or a Group."""

    kind: str
    name: str
    namespace: str | None = None

    def in_namespace(self, ns: str) -> dict[str, str]:
        """The subject of a binding in namespace ``ns``."""
        if self.kind != "ServiceAccount":
            return {"apiGroup": "rbac.authorization.k8s.io", "kind": self.kind, "name": self.name}
        return {"kind": "ServiceAccount", "name": self.name, "namespace": self.namespace or ns}

    def label(self, ns: str) -> str:
        """How object names tell submitters apart: ``serviceaccount:NS:NAME``, ``user:NAME``, ``group:NAME``."""
        if self.kind == "ServiceAccount":
            return f"serviceaccount:{self.namespace or ns}:{self.name}"
        return f"{self.kind.lower()}:{self.name}"


_SERVICE_ACCOUNT_USER = "system:serviceaccount:"
_SUBMITTER_ROLE = "hera-volcano-submitter"
#: The cluster-scoped, read-only role ``explain`` uses (one for all submitters).
EXPLAIN_ROLE = "hera-volcano-explain"


def submitter(text: str, field: str = "submitter") -> Subject:
    """A submitter as ``hera-volcano rbac --submitter`` takes it: ``NAME`` (a ServiceAccount in the workflows'
    namespace), ``system:serviceaccount:NS:NAME`` (as a 403 names it), ``user:NAME`` or ``group:NAME``."""
    if not isinstance(text, str) or not text:
        raise ValidationError(field, "must name a service account, user:NAME or group:NAME")
    if text.startswith(_SERVICE_ACCOUNT_USER):
        parts = text[len(_SERVICE_ACCOUNT_USER) :].split(":")
        if len(parts) != 2:
            raise ValidationError(field, f"must be system:serviceaccount:NAMESPACE:NAME, not {text!r}")
        names.check(field, parts[0], names.dns1123_label)
        names.check(field, parts[1], names.dns1123_subdomain)
        return Subject("ServiceAccount", parts[1], parts[0])
    kind, _, name = text.partition(":")
    if name and kind in ("user", "group"):
        if name in (".", "..") or "/" in name or "%" in name:
            raise ValidationError(field, f"{name!r} cannot be part of an object name (no /, % or dots alone)")
        return Subject(kind.capitalize(), name)
    names.check(field, text, names.dns1123_subdomain)
    return Subject("ServiceAccount", text)


def _role(kind: str, permissions: Sequence[Permission], name: str, namespace: str | None) -> Manifest:
    """A Role or ClusterRole granting ``permissions``, each rule annotated with why it is there."""
    annotations = {
        f"{ANNOTATION_PREFIX}{i}": f"{p.resource} ({p.group or 'core'}): {p.why}" for i, p in enumerate(permissions)
    }
    rules = [{"apiGroups": [p.group], "resources": [p.resource], "verbs": order(p.verbs)} for p in permissions]
    where = {"namespace": namespace} if namespace is not None else {}
    return {
        "apiVersion": RBAC_API,
        "kind": kind,
        "metadata": {"name": name, **where, "annotations": annotations},
        "rules": rules,
    }


def submitter_objects(
    subjects: Sequence[Subject],
    namespaces: Sequence[str],
    extra: Sequence[Permission],
    cluster_reads: bool,
    with_sa: bool,
) -> list[Manifest]:
    """Per namespace and submitter a Role and RoleBinding for the client; the explain ClusterRole and a
    ClusterRoleBinding per submitter (unless ``cluster_reads`` is false). ``extra``: for the WorkflowTemplates and
    CronWorkflows among the workflows."""
    permissions = [*SUBMITTER, *extra]
    objects: list[Manifest] = []
    bound: dict[str, dict[str, str]] = {}
    for ns in namespaces:
        for subject in subjects:
            name = f"{_SUBMITTER_ROLE}:{subject.label(ns)}"
            if with_sa and subject.kind == "ServiceAccount":
                account = service_account_object(subject.namespace or ns, subject.name)
                if account not in objects:
                    objects.append(account)
            objects.append(_role("Role", permissions, name, ns))
            objects.append(
                {
                    "apiVersion": RBAC_API,
                    "kind": "RoleBinding",
                    "metadata": {"name": name, "namespace": ns},
                    "subjects": [subject.in_namespace(ns)],
                    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
                }
            )
            bound.setdefault(subject.label(ns), subject.in_namespace(ns))
    if not cluster_reads:
        return objects
    role = _role("ClusterRole", CLUSTER_READS, EXPLAIN_ROLE, None)
    role["metadata"]["annotations"]["hera-volcano/scope"] = (
        "cluster-scoped and read-only, for explain only; hera-volcano rbac --no-cluster-reads leaves it out"
    )
    objects.append(role)
    for label, entry in bound.items():
        objects.append(
            {
                "apiVersion": RBAC_API,
                "kind": "ClusterRoleBinding",
                "metadata": {"name": f"{EXPLAIN_ROLE}:{label}"},
                "subjects": [entry],
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": EXPLAIN_ROLE},
            }
        )
    return objects
