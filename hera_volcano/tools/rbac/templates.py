"""What one template's pods need: task results for Argo's executor, the calls of its containers, and for a resource
step its action on the manifest's objects (and the calls of the Volcano pods it creates)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from hera_volcano.argo.defaults import EXECUTOR_ACCOUNT
from hera_volcano.shared.errors import ValidationError
from hera_volcano.shared.findings import as_list, as_map
from hera_volcano.tools.rbac.manifests import (
    ACTION_VERBS,
    KIND,
    flag_needs,
    is_volcano_job,
    job_accounts,
    job_pod_templates,
    manifest_namespace,
    manifest_objects,
    plural,
    service_account,
)
from hera_volcano.tools.rbac.need import Need
from hera_volcano.tools.rbac.pods import declared_calls, pod_needs

#: Why a pod without a named service account is refused: the rights would go to every pod of the namespace.
DEFAULT_ACCOUNT = "would run as the namespace's `default` account, which is not granted rights silently"
_REPORTS = ("argoproj.io", "workflowtaskresults", ("create", "patch"))
_POD_KINDS = ("container", "script", "resource", "containerSet", "data")


@dataclass(frozen=True)
class Where:
    """A template in its workflow (``workflow/name`` in rule annotations and errors): ``field`` is the workflow's
    place among those given; ``spec`` the workflow's spec; ``default_sa`` the account its pods run as by default."""

    workflow: str
    name: str
    field: str
    spec: Mapping[str, object]
    default_sa: str | None
    owner_permissions: bool

    @property
    def why(self) -> str:
        return f"{self.workflow}/{self.name}"


#: Where an Argo template holds containers: a single one, or a list of them.
_SINGLE = ("container", "script")
_LISTS = (("initContainers",), ("sidecars",), ("containerSet", "containers"))


def pod_containers(template: Mapping[str, object]) -> list[tuple[str, Mapping[str, object]]]:
    """(path in the template, container) of every container of the template's pod: its main one, init containers,
    sidecars, a container set's."""
    found = [(key, template[key]) for key in _SINGLE if isinstance(template.get(key), Mapping)]
    for keys in _LISTS:
        holder: object = template
        for key in keys:
            holder = as_map(holder).get(key)
        found += [(f"{'.'.join(keys)}[{i}]", c) for i, c in enumerate(as_list(holder))]
    return [(path, c) for path, c in found if isinstance(c, Mapping)]


def task_containers(pod_template: Mapping[str, object]) -> list[tuple[str, Mapping[str, object]]]:
    """(path in the pod template, container) of every container of a Volcano task's pod template."""
    spec = as_map(pod_template.get("spec"))
    found = [
        (f"spec.{key}[{i}]", c)
        for key in ("initContainers", "containers")
        for i, c in enumerate(as_list(spec.get(key)))
    ]
    return [(path, c) for path, c in found if isinstance(c, Mapping)]


def template_needs(template: Mapping[str, object], where: Where) -> list[Need]:
    """What the template's pods need (nothing for a DAG, steps or suspend: the controller does it, no pod runs)."""
    why = where.why
    sa = service_account(template.get("serviceAccountName"), f"{why}.serviceAccountName") or where.default_sa
    if not any(k in template for k in _POD_KINDS):
        return []
    if sa is None:
        raise ValidationError(
            f"{where.field}.spec.serviceAccountName",
            f"is not set (nor on template {where.name}), so its pods {DEFAULT_ACCOUNT}: name the account"
            " on the workflow (or each template), or pass service_account= (--service-account)",
        )
    executor = _executor_account(template, where)
    needs = [Need(executor or sa, *_REPORTS, why, executor_token=executor is not None)]
    containers = [c for _, c in pod_containers(template)]
    needs += pod_needs(sa, declared_calls(template, why), containers, why)
    resource = template.get("resource")
    if resource is not None and not isinstance(resource, Mapping):
        raise ValidationError(f"{why}.resource", "must be a mapping with action and manifest")
    if isinstance(resource, Mapping):
        needs += _resource_needs(resource, sa, where)
    return needs


def _resource_needs(resource: Mapping[str, object], sa: str, where: Where) -> list[Need]:
    """A resource step's action on the objects of its manifest (or named in its flags), and what the Volcano pods
    it creates call."""
    why, field = where.why, f"{where.why}.resource.manifest"
    action = resource.get("action")
    if not isinstance(action, str) or action not in ACTION_VERBS:
        raise ValidationError(f"{why}.resource.action", f"unknown action {action!r}")
    named = flag_needs(resource, field)
    if named is not None:
        return [Need(sa, named[0], named[1], named[2], why)]
    needs = []
    for obj in manifest_objects(resource, field):
        api_version, kind = obj.get("apiVersion"), obj.get("kind")
        if not isinstance(kind, str) or not isinstance(api_version, str) or not KIND.fullmatch(kind):
            raise ValidationError(field, "needs an apiVersion and a kind (a name)")
        group = api_version.rpartition("/")[0]
        namespace = manifest_namespace(obj, field)
        accounts = job_accounts(obj) if is_volcano_job(obj) else ()
        needs.append(Need(sa, group, plural(kind), (*ACTION_VERBS[action], "get"), why, namespace, None, accounts))
        if where.owner_permissions and resource.get("setOwnerReference"):
            needs.append(Need(sa, "argoproj.io", "workflows/finalizers", ("update",), why))
        needs += _volcano_pod_needs(obj, why, namespace)
    return needs


def _executor_account(template: Mapping[str, object], where: Where) -> str | None:
    """The account Argo's own containers of the template's pod run as, when not the pod's: its executor's, or the
    workflow's (``{{workflow.serviceAccountName}}``). A pod without a token of its own must name one, as Argo
    requires before it makes the pod."""
    for field, holder in ((f"{where.why}.executor", template), ("spec.executor", where.spec)):
        value = as_map(holder.get("executor")).get("serviceAccountName")
        if value == EXECUTOR_ACCOUNT:
            return where.default_sa
        account = service_account(value, f"{field}.serviceAccountName")
        if account is not None:
            return account
    automount = template.get("automountServiceAccountToken", where.spec.get("automountServiceAccountToken"))
    if automount is False:
        raise ValidationError(
            f"{where.why}.executor.serviceAccountName",
            "must be set when automountServiceAccountToken is false: Argo refuses to make the pod otherwise",
        )
    return None


def _volcano_pod_needs(obj: Mapping[str, object], why: str, namespace: str | None) -> list[Need]:
    """Pods of a Volcano Job that call the API (the MPI master's wait for its workers) need pod reads too."""
    if not str(obj.get("apiVersion", "")).startswith("batch.volcano.sh/"):
        return []
    needs = []
    for task, template in job_pod_templates(obj):
        spec = as_map(template.get("spec"))
        where = f"{why} (Volcano task {task})"
        containers = [c for _, c in task_containers(template)]
        declared = declared_calls(template, where)
        if not pod_needs("default", declared, containers, where, namespace):
            continue  # its account needs nothing (the admission policy says which it may be)
        sa = service_account(spec.get("serviceAccountName") or spec.get("serviceAccount"), where)
        if sa is None:
            raise ValidationError(
                f"{where}.serviceAccountName",
                f"is not set, so its pods, which call the API, {DEFAULT_ACCOUNT}: name one (service_account= of"
                " mpi_job)",
            )
        needs += pod_needs(sa, declared, containers, where, namespace)
    return needs
