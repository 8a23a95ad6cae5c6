"""Least-privilege RBAC derived from what a workflow's pods actually do.

Each service account that runs pods gets one Role and one RoleBinding with exactly the rules those pods need: the
executor's task results; each resource step's verbs on its manifest's resource plus ``get`` for polling; for pods
running ``kubectl``, reads of pods (and logs, and any ``RESOURCE.GROUP`` they ``get``). Every rule is annotated
with the templates that need it.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hera_volcano.argo.limits import WORKFLOW_KINDS
from hera_volcano.client.resources import CLUSTER_READS, SUBMITTER, TEMPLATES, Permission
from hera_volcano.kube import names
from hera_volcano.kube.emit import plain
from hera_volcano.kube.loading import describe_error, load_all
from hera_volcano.shared import checks
from hera_volcano.shared.errors import ValidationError
from hera_volcano.shared.findings import as_list, as_map
from hera_volcano.shared.placeholders import substitute_text

RBAC_API = "rbac.authorization.k8s.io/v1"
ANNOTATION_PREFIX = "hera-volcano/rule-"
#: Verbs an action needs on the manifest's resource (``get`` for polling and outputs comes on top).
ACTION_VERBS: Mapping[str, tuple[str, ...]] = {
    "create": ("create",),
    "apply": ("create", "patch"),
    "patch": ("patch",),
    "replace": ("update",),
    "delete": ("delete", "list", "watch"),
    "get": (),
}
#: Plurals of kinds whose resource name is not the regular English plural of the lower-cased kind.
PLURALS: Mapping[str, str] = {"Endpoints": "endpoints"}
_KIND = re.compile(r"[A-Z][A-Za-z0-9]*")
_VERB_ORDER = ("get", "list", "watch", "create", "update", "patch", "delete")
_KUBECTL = re.compile(r"\bkubectl\b")
_KUBECTL_LOGS = re.compile(r"\bkubectl\b[^\n|;&]*\blogs\b")
#: ``kubectl ... get RESOURCE[.VERSION].GROUP ...`` (a fully qualified custom resource, such as the follower's
#: Volcano Jobs; RBAC names no version), with the rest of its command (``--watch`` or ``-w`` also watches).
_KUBECTL_GET_QUALIFIED = re.compile(
    r"\bkubectl\b[^\n|;&]*?\bget\s+([a-z0-9-]+)\.(?:v\d+(?:(?:alpha|beta)\d+)?\.)?([a-z0-9.-]+\.[a-z0-9-]+)\b([^\n|;&]*)"
)
_WATCH_FLAG = re.compile(r"(?:^|\s)(?:--watch|-w)(?:[\s=]|$)")


def plural(kind: str) -> str:
    """The resource name of ``kind``: the table above, else the lower-cased kind in regular English plural.

    (``-s/-x/-z/-ch/-sh`` take ``-es``, consonant + ``y`` becomes ``-ies``, anything else takes ``-s``.) A CRD may
    declare another plural; write the Role by hand for such a kind.
    """
    if kind in PLURALS:
        return PLURALS[kind]
    low = kind.lower()
    if low.endswith(("s", "x", "z", "ch", "sh")):
        return low + "es"
    if low.endswith("y") and len(low) > 1 and low[-2] not in "aeiou":
        return low[:-1] + "ies"
    return low + "s"


@dataclass(frozen=True)
class _Need:
    service_account: str
    group: str
    resource: str
    verbs: tuple[str, ...]
    why: str


def _scripts(container: Mapping[str, Any]) -> str:
    """The text a container runs: its command, args and script source (a string where a list belongs counts too)."""
    parts: list[Any] = []
    for key in ("command", "args", "source"):
        value = container.get(key)
        parts.extend([value] if isinstance(value, str) else as_list(value))
    return "\n".join(p for p in parts if isinstance(p, str))


def _kubectl_needs(sa: str, containers: Iterable[Mapping[str, Any]], why: str) -> list[_Need]:
    """Pods running ``kubectl`` read pods (``get``/``wait``/``logs -f`` all list and watch); ``logs`` reads logs;
    ``get RESOURCE.GROUP`` gets and lists that resource, and watches it with ``--watch``."""
    text = "\n".join(_scripts(c) for c in containers)
    needs = []
    if _KUBECTL.search(text):
        needs.append(_Need(sa, "", "pods", ("get", "list", "watch"), why))
    if _KUBECTL_LOGS.search(text):
        needs.append(_Need(sa, "", "pods/log", ("get",), why))
    verbs: dict[tuple[str, str], set[str]] = {}
    for resource, group, rest in _KUBECTL_GET_QUALIFIED.findall(text):
        verbs.setdefault((resource, group), {"get", "list"}).update(["watch"] if _WATCH_FLAG.search(rest) else [])
    for (resource, group), wanted in sorted(verbs.items()):
        needs.append(_Need(sa, group, resource, tuple(v for v in _VERB_ORDER if v in wanted), why))
    return needs


_BY_HAND = "so the resource it acts on is unknown here: leave this workflow out and write its rule by hand"
#: ``RESOURCE.GROUP`` as kubectl takes it (a plural resource name, fully qualified), optionally ``/NAME``.
_QUALIFIED = re.compile(
    r"([a-z0-9]([-a-z0-9]*[a-z0-9])?)\.([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+)"
)
_SELECTING = ("--selector", "-l", "--field-selector", "--all")


def _flag_needs(resource: Mapping[str, Any], field: str) -> tuple[str, str, tuple[str, ...]] | None:
    """(group, resource, verbs) for a ``get`` or ``delete`` step that names its objects in flags, as in
    ``flags: [jobs.batch.volcano.sh, --selector, KEY=VALUE, --wait=false]`` (kubectl lists what a selector selects,
    gets what it names, and watches a deletion it waits for). None when the step has a manifest."""
    flags = resource.get("flags")
    if resource.get("manifest") is not None or resource.get("manifestFrom") is not None or flags is None:
        return None
    action = resource.get("action")
    if action not in ("get", "delete") or not isinstance(flags, list) or not all(isinstance(f, str) for f in flags):
        raise ValidationError(field, f"is absent (the object is named in flags), {_BY_HAND}")
    positional = [
        f for i, f in enumerate(flags) if not f.startswith("-") and (i == 0 or flags[i - 1] not in _SELECTING)
    ]
    if not positional:
        raise ValidationError(f"{field[: -len('manifest')]}flags", f"name no resource, {_BY_HAND}")
    kind = _QUALIFIED.fullmatch(positional[0].split("/")[0])
    if kind is None:
        raise ValidationError(
            f"{field[: -len('manifest')]}flags",
            f"name {positional[0]!r}, not RESOURCE.GROUP (say, jobs.batch.volcano.sh), {_BY_HAND}",
        )
    selects = any(f.split("=")[0] in _SELECTING for f in flags)
    verbs: list[str] = ["list"] if selects else ["get"]
    if action == "delete":
        verbs.append("delete")
        if "--wait=false" not in flags:
            verbs += ["get", "watch"]
    return kind.group(3), kind.group(1), tuple(verbs)


def _manifest_objects(resource: Mapping[str, Any], field: str) -> list[Mapping[str, Any]]:
    """The objects a resource step acts on; anything we cannot read is an error, never a Role that grants too little."""
    manifest = resource.get("manifest")
    by_hand = _BY_HAND
    if manifest is None and resource.get("manifestFrom") is not None:
        raise ValidationError(f"{field}From", f"the manifest comes from an artifact, {by_hand}")
    if manifest is None:
        raise ValidationError(field, f"is absent (the object is named in flags), {by_hand}")
    if not isinstance(manifest, str):
        raise ValidationError(field, "must be the object's YAML, as a string")
    try:
        docs = [d for d in load_all(substitute_text(manifest, {})) if d is not None]
    except Exception as e:  # yaml.YAMLError and friends: report, don't trace
        raise ValidationError(field, f"manifest is not YAML: {describe_error(e)}") from None
    if not all(isinstance(d, Mapping) for d in docs):
        raise ValidationError(field, f"is not an object (a JSON patch names its object in flags), {by_hand}")
    return docs


#: Why a pod without a named service account is refused: the rights would go to every pod of the namespace.
_DEFAULT_ACCOUNT = "would run as the namespace's `default` account, which is not granted rights silently"


def _template_needs(
    wf_name: str, template: Mapping[str, Any], default_sa: str | None, owner_permissions: bool, i: int, j: int
) -> list[_Need]:
    name = template.get("name", f"templates[{j}]")
    why = f"{wf_name}/{name}"
    sa = _service_account(template.get("serviceAccountName"), f"{why}.serviceAccountName") or default_sa
    if not any(k in template for k in ("container", "script", "resource", "containerSet", "data")):
        return []  # a DAG, steps or suspend: the controller does it, no pod runs
    if sa is None:
        raise ValidationError(
            f"workflows[{i}].spec.serviceAccountName",
            f"is not set (nor on template {name}), so its pods {_DEFAULT_ACCOUNT}: name the account on the workflow"
            " (or each template), or pass service_account= (--service-account)",
        )
    needs = [_Need(sa, "argoproj.io", "workflowtaskresults", ("create", "patch"), why)]
    containers = [template[k] for k in ("container", "script") if isinstance(template.get(k), Mapping)]
    containers += [c for c in as_list(template.get("initContainers")) if isinstance(c, Mapping)]
    containers += [c for c in as_list(template.get("sidecars")) if isinstance(c, Mapping)]
    containers += [c for c in as_list(as_map(template.get("containerSet")).get("containers")) if isinstance(c, Mapping)]
    needs += _kubectl_needs(sa, containers, why)
    resource = template.get("resource")
    if resource is not None and not isinstance(resource, Mapping):
        raise ValidationError(f"{why}.resource", "must be a mapping with action and manifest")
    if isinstance(resource, Mapping):
        action = resource.get("action")
        if not isinstance(action, str) or action not in ACTION_VERBS:
            raise ValidationError(f"{why}.resource.action", f"unknown action {action!r}")
        named = _flag_needs(resource, f"{why}.resource.manifest")
        if named is not None:
            return [*needs, _Need(sa, named[0], named[1], named[2], why)]
        for obj in _manifest_objects(resource, f"{why}.resource.manifest"):
            api_version, kind = obj.get("apiVersion"), obj.get("kind")
            if not isinstance(kind, str) or not isinstance(api_version, str) or not _KIND.fullmatch(kind):
                raise ValidationError(f"{why}.resource.manifest", "needs an apiVersion and a kind (a name)")
            group = api_version.rpartition("/")[0]
            needs.append(_Need(sa, group, plural(kind), (*ACTION_VERBS[action], "get"), why))
            if owner_permissions and resource.get("setOwnerReference"):
                needs.append(_Need(sa, "argoproj.io", "workflows/finalizers", ("update",), why))
            needs += _volcano_pod_needs(obj, why)
    return needs


def _volcano_pod_needs(obj: Mapping[str, Any], why: str) -> list[_Need]:
    """Pods of a Volcano Job that run ``kubectl`` (the MPI master's wait for workers) need pod reads too."""
    if not str(obj.get("apiVersion", "")).startswith("batch.volcano.sh/"):
        return []
    needs = []
    for task in as_list(as_map(obj.get("spec")).get("tasks")):
        task = as_map(task)
        spec = as_map(as_map(task.get("template")).get("spec"))
        where = f"{why} (Volcano task {task.get('name', '?')})"
        sa = _service_account(spec.get("serviceAccountName") or spec.get("serviceAccount"), where)
        containers = [
            c for c in as_list(spec.get("initContainers")) + as_list(spec.get("containers")) if isinstance(c, Mapping)
        ]
        task_needs = _kubectl_needs(sa or "default", containers, where)
        if task_needs and sa is None:
            raise ValidationError(
                f"{where}.serviceAccountName",
                f"is not set, so its pods, which run kubectl, {_DEFAULT_ACCOUNT}: name one"
                " (service_account= of mpi_job)",
            )
        needs += task_needs
    return needs


def _service_account(value: object, field: str) -> str | None:
    if value is None or value == "":
        return None
    names.check(field, value, names.dns1123_subdomain)
    return str(value)


def _order(verbs: Iterable[str]) -> list[str]:
    unique = set(verbs)
    return [v for v in _VERB_ORDER if v in unique] + sorted(unique - set(_VERB_ORDER))


def rbac_for(
    *workflows: Any,
    namespace: str | None = None,
    service_account: str | None = None,
    owner_reference_permissions: bool = False,
    service_accounts: bool = False,
    submitters: Sequence[str] = (),
    cluster_reads: bool = True,
) -> list[dict[str, Any]]:
    """A Role and RoleBinding for every service account the workflows run pods as, with exactly the rules needed.

    ``namespace`` and ``service_account`` override the workflows' own (the latter replaces the workflow-level
    ``serviceAccountName``; template-level ones stay). ``owner_reference_permissions`` adds ``update`` on
    ``workflows/finalizers`` for resource steps owned by the Workflow, which clusters enforcing owner-reference
    permissions (OpenShift) require; ``service_accounts`` also emits the ServiceAccounts. A pod whose account is named
    nowhere (not on its template, not on the workflow, no ``service_account``) is a ValidationError: it would run as
    the namespace's ``default`` account, and rights granted to that go to every pod that names no account.

    Each of ``submitters`` (see :func:`submitter`) gets what the client needs to run the workflows from Python or
    ``hera-volcano submit`` (a Role and RoleBinding in each of their namespaces; reading the WorkflowTemplates when
    the workflows hold some) and, unless ``cluster_reads`` is false, the read-only ClusterRole ``explain`` uses for
    nodes and queues, with a ClusterRoleBinding.
    """
    if not workflows:
        raise ValidationError("workflows", "give at least one workflow")
    if namespace is not None:
        names.check("namespace", namespace, names.dns1123_label)
    if service_account is not None:
        names.check("service_account", service_account, names.dns1123_subdomain)
    subjects = [submitter(text, f"submitters[{i}]") for i, text in enumerate(checks.strings("submitters", submitters))]
    by_scope: dict[tuple[str, str], list[_Need]] = {}
    namespaces: set[str] = set()
    templates_used = False
    for i, workflow in enumerate(workflows):
        wf = plain(workflow, "workflow")
        kind = wf.get("kind")
        if not isinstance(kind, str) or kind not in WORKFLOW_KINDS:
            raise ValidationError(f"workflows[{i}].kind", f"must be one of {', '.join(WORKFLOW_KINDS)}, not {kind!r}")
        meta = as_map(wf.get("metadata"))
        spec = as_map(wf.get("spec"))
        if kind == "CronWorkflow":
            spec = as_map(spec.get("workflowSpec"))
        wf_name = str(meta.get("name") or meta.get("generateName") or f"workflows[{i}]")
        ns = namespace or meta.get("namespace") or "argo"
        names.check(f"workflows[{i}].metadata.namespace", ns, names.dns1123_label)
        namespaces.add(ns)
        templates_used = templates_used or kind == "WorkflowTemplate"
        default_sa = service_account or _service_account(
            spec.get("serviceAccountName"), f"workflows[{i}].spec.serviceAccountName"
        )
        templates = spec.get("templates")
        if not isinstance(templates, list) or not templates:
            raise ValidationError(f"workflows[{i}].spec.templates", "must be a non-empty list of templates")
        for j, template in enumerate(templates):
            if not isinstance(template, Mapping):
                raise ValidationError(f"workflows[{i}].spec.templates[{j}]", "must be a mapping: a template")
            for need in _template_needs(wf_name, template, default_sa, owner_reference_permissions, i, j):
                by_scope.setdefault((ns, need.service_account), []).append(need)
    objects: list[dict[str, Any]] = []
    for (ns, sa), needs in sorted(by_scope.items()):
        names.check("serviceAccountName", sa, names.dns1123_subdomain)
        objects += _role_and_binding(ns, sa, needs, service_accounts)
    if subjects:
        objects += _submitter_objects(subjects, sorted(namespaces), templates_used, cluster_reads, service_accounts)
    return objects


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


def _submitter_rules(
    permissions: Sequence[Permission], name: str, meta: dict[str, Any]
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Metadata (annotated with why each rule is there) and the rules."""
    annotations = {
        f"{ANNOTATION_PREFIX}{i}": f"{p.resource} ({p.group or 'core'}): {p.why}" for i, p in enumerate(permissions)
    }
    rules = [{"apiGroups": [p.group], "resources": [p.resource], "verbs": _order(p.verbs)} for p in permissions]
    return {"name": name, **meta, "annotations": annotations}, rules


def _submitter_objects(
    subjects: Sequence[Subject], namespaces: Sequence[str], templates: bool, cluster_reads: bool, with_sa: bool
) -> list[dict[str, Any]]:
    """Per namespace and submitter a Role and RoleBinding for the client; the explain ClusterRole and a
    ClusterRoleBinding per submitter (unless ``cluster_reads`` is false)."""
    permissions = [*SUBMITTER, *(TEMPLATES if templates else ())]
    objects: list[dict[str, Any]] = []
    bound: dict[str, dict[str, str]] = {}
    for ns in namespaces:
        for subject in subjects:
            name = f"{_SUBMITTER_ROLE}:{subject.label(ns)}"
            if with_sa and subject.kind == "ServiceAccount":
                account_ns = subject.namespace or ns
                account = {
                    "apiVersion": "v1",
                    "kind": "ServiceAccount",
                    "metadata": {"name": subject.name, "namespace": account_ns},
                }
                if account not in objects:
                    objects.append(account)
            meta, rules = _submitter_rules(permissions, name, {"namespace": ns})
            objects.append({"apiVersion": RBAC_API, "kind": "Role", "metadata": meta, "rules": rules})
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
    meta, rules = _submitter_rules(CLUSTER_READS, EXPLAIN_ROLE, {})
    meta["annotations"]["hera-volcano/scope"] = (
        "cluster-scoped and read-only, for explain only; hera-volcano rbac --no-cluster-reads leaves it out"
    )
    objects.append({"apiVersion": RBAC_API, "kind": "ClusterRole", "metadata": meta, "rules": rules})
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


def _role_name(sa: str) -> str:
    """``SA-hera-volcano``; a service account too long for that is cut and told apart by a hash of its full name."""
    suffix = "-hera-volcano"
    if len(sa) + len(suffix) <= names.DNS1123_SUBDOMAIN_MAX:
        return sa + suffix
    digest = hashlib.sha256(sa.encode()).hexdigest()[:8]
    keep = names.DNS1123_SUBDOMAIN_MAX - len(suffix) - len(digest) - 1
    return f"{sa[:keep].rstrip('-.')}-{digest}{suffix}"


def _role_and_binding(ns: str, sa: str, needs: list[_Need], with_sa: bool) -> list[dict[str, Any]]:
    rules: dict[tuple[str, str], tuple[set[str], set[str]]] = {}
    for need in needs:
        verbs, why = rules.setdefault((need.group, need.resource), (set(), set()))
        verbs.update(need.verbs)
        why.add(need.why)
    ordered = sorted(rules.items())
    name = _role_name(sa)
    annotations = {
        f"{ANNOTATION_PREFIX}{i}": f"{res} ({grp or 'core'}): {', '.join(sorted(why))}"
        for i, ((grp, res), (_, why)) in enumerate(ordered)
    }
    role = {
        "apiVersion": RBAC_API,
        "kind": "Role",
        "metadata": {"name": name, "namespace": ns, "annotations": annotations},
        "rules": [
            {"apiGroups": [grp], "resources": [res], "verbs": _order(verbs)} for (grp, res), (verbs, _) in ordered
        ],
    }
    binding = {
        "apiVersion": RBAC_API,
        "kind": "RoleBinding",
        "metadata": {"name": name, "namespace": ns},
        "subjects": [{"kind": "ServiceAccount", "name": sa, "namespace": ns}],
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
    }
    account = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": sa, "namespace": ns}}
    return [account, role, binding] if with_sa else [role, binding]
