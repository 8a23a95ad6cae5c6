"""Least-privilege RBAC derived from what a workflow's pods actually do.

Each service account that runs pods gets one Role and one RoleBinding with exactly the rules those pods need: the
executor's task results; each resource step's verbs on its manifest's resource plus ``get`` for polling; for our log
follower, the calls it declares (:data:`hera_volcano.pods.run.CALLS`); for users' own pods running ``kubectl``,
what each call in their scripts needs (reads of pods and logs, and what they do to any ``RESOURCE.GROUP``). Every
rule is annotated with the templates that need it.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hera_volcano.argo.defaults import EXECUTOR_ACCOUNT
from hera_volcano.argo.limits import WORKFLOW_KINDS
from hera_volcano.client.resources import CLUSTER_READS, CRONS, SUBMITTER, TEMPLATES, Permission
from hera_volcano.kube import names
from hera_volcano.kube.emit import plain
from hera_volcano.kube.loading import describe_error, load_all
from hera_volcano.pods import program as follower_program
from hera_volcano.pods.program import MARKER
from hera_volcano.pods.run import CALLS
from hera_volcano.pods.workers import WAIT_CALLS, WAIT_COMMAND
from hera_volcano.shared import checks
from hera_volcano.shared.errors import ValidationError
from hera_volcano.shared.findings import as_list, as_map
from hera_volcano.shared.placeholders import substitute_text
from hera_volcano.tools import job_policy as policies
from hera_volcano.tools.job_policy import JobPolicy

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
#: ``kubectl`` as a word of a script (``/usr/bin/kubectl`` too; not ``kubectl_prelude.sh`` or ``$KUBECTL_ERR``).
_KUBECTL = re.compile(r"(?<![\w.-])kubectl(?![\w.-])")
#: Where a shell command ends: the words after ``kubectl`` up to here are its arguments.
_COMMAND_END = re.compile(r"[|;&)`]")
#: kubectl flags whose value is the next word (``-n NS``); ``--flag=value`` needs no table. ``-f`` is a file
#: everywhere but in ``logs`` (follow).
_VALUE_FLAGS = frozenset(
    """-n --namespace -l --selector --field-selector -c --container -o --output --context --cluster --user
    --kubeconfig --request-timeout -s --server --since --since-time --tail --for --timeout --token --as --as-group
    -f --filename --template --sort-by --chunk-size --max-log-requests -L --label-columns""".split()  # noqa: SIM905
)
_SELECTING_FLAGS = ("-l", "--selector", "--field-selector")
_WATCH_FLAGS = ("-w", "--watch", "--watch-only")
_POD_NAMES = ("pods", "pod", "po")
_VERSION = re.compile(r"v\d+(?:(?:alpha|beta)\d+)?")


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


def _scripts(container: Mapping[str, Any]) -> str:
    """The text a container runs: its command, args and script source (a string where a list belongs counts too)."""
    parts: list[Any] = []
    for key in ("command", "args", "source"):
        value = container.get(key)
        parts.extend([value] if isinstance(value, str) else as_list(value))
    return "\n".join(p for p in parts if isinstance(p, str))


def _kubectl_calls(container: Mapping[str, Any]) -> list[list[str]]:
    """The arguments of each ``kubectl`` call a container makes: its exec form (``command: [kubectl, get, ...]``),
    and every ``kubectl`` word of its scripts, up to the end of that shell command (comment lines are skipped)."""
    words = [w for key in ("command", "args") for w in as_list(container.get(key)) if isinstance(w, str)]
    calls = []
    if words and words[0].rsplit("/", 1)[-1] == "kubectl":
        calls.append(words[1:])
    for line in _scripts(container).replace("\\\n", " ").splitlines():
        if line.lstrip().startswith("#"):
            continue
        for match in _KUBECTL.finditer(line):
            rest = _COMMAND_END.split(line[match.end() :], maxsplit=1)[0]
            calls.append([w.strip("\"'") for w in rest.split()])
    return calls


def qualified_resource(token: str) -> tuple[str, str] | None:
    """(group, resource) of ``RESOURCE[.VERSION].GROUP`` as kubectl takes it (RBAC names no version), else None."""
    match = _QUALIFIED.fullmatch(token)
    if match is None:
        return None
    resource, group = match.group(1), match.group(3)
    version, _, rest = group.partition(".")
    if _VERSION.fullmatch(version) and "." in rest:
        group = rest
    return group, resource


def _call_needs(args: Sequence[str]) -> list[tuple[str, str, tuple[str, ...]]]:
    """(group, resource, verbs) one ``kubectl ARGS`` call needs: ``get`` of a named object gets it, of a selector
    (or of all) lists it, ``--watch`` lists and watches; ``wait`` gets, lists and watches; ``logs`` gets (or with a
    selector lists) the pod and gets its log; ``delete`` deletes, lists for a selector, and gets and watches a
    deletion it waits for. Pods are read by their short names, other resources only fully qualified
    (``jobs.batch.volcano.sh``); any other call (``api-resources``, ``version``, a word in a message) needs nothing."""
    positional: list[str] = []
    selects = watches = no_wait = False
    i = 0
    while i < len(args):
        word = args[i]
        flag = word.split("=", 1)[0]
        if word.startswith("-"):
            selects = selects or flag in _SELECTING_FLAGS or (word.startswith("-l") and not word.startswith("--"))
            watches = watches or flag in _WATCH_FLAGS
            no_wait = no_wait or word == "--wait=false"
            takes_value = flag in _VALUE_FLAGS and not (flag == "-f" and positional[:1] == ["logs"])
            i += 2 if takes_value and "=" not in word and len(word) == len(flag) else 1
            continue
        positional.append(word)
        i += 1
    if not positional or positional[0] not in ("get", "wait", "logs", "delete"):
        return []
    verb = positional[0]
    target = positional[1] if len(positional) > 1 else ""
    if verb == "logs":
        pod_verbs = ("list",) if selects else ("get",)
        return [("", "pods", pod_verbs), ("", "pods/log", ("get",))]
    kind, _, name = target.partition("/")
    named = bool(name) or len(positional) > 2
    found = ("", "pods") if kind in _POD_NAMES else qualified_resource(kind)
    if found is None:
        return []
    if verb == "wait":
        verbs: set[str] = {"get", "list", "watch"}
    elif verb == "get":
        verbs = {"get" if named and not selects else "list"} | ({"list", "watch"} if watches else set())
    else:
        verbs = {"delete", "list" if selects else "get"} | (set() if no_wait else {"get", "watch"})
        if named and no_wait and not selects:
            verbs = {"delete"}
    return [(found[0], found[1], tuple(v for v in _VERB_ORDER if v in verbs))]


def _program_calls(container: Mapping[str, Any]) -> tuple[tuple[str, str, tuple[str, ...]], ...] | None:
    """The calls the container declares when it runs our pods' program: the MPI master's wait for its workers
    (:data:`WAIT_CALLS`), else the log follower (:data:`CALLS`); None for any other container."""
    if not any(part.startswith(MARKER) for part in _scripts(container).split("\n")):
        return None
    words = [w for key in ("command", "args") for w in as_list(container.get(key)) if isinstance(w, str)]
    return WAIT_CALLS if words[-1:] == [WAIT_COMMAND] else CALLS


def _kubectl_needs(
    sa: str, containers: Iterable[Mapping[str, Any]], why: str, namespace: str | None = None
) -> list[_Need]:
    """What the containers' API calls need: our pods' program's, the calls it declares (:func:`_program_calls`); any
    other container's, its ``kubectl`` calls, each read for itself (:func:`_call_needs`). ``namespace``: a Volcano
    pod's (its job's), where its account lives and its calls go."""
    needs = []
    for container in containers:
        declared = _program_calls(container)
        if declared is not None:
            needs += [
                _Need(sa, group, resource, verbs, why, namespace, namespace) for group, resource, verbs in declared
            ]
            continue
        for args in _kubectl_calls(container):
            needs += [
                _Need(sa, group, resource, verbs, why, namespace, namespace)
                for group, resource, verbs in _call_needs(args)
            ]
    return needs


_BY_HAND = "so the resource it acts on is unknown here: leave this workflow out and write its rule by hand"
#: What a manifest's placeholders read as here: ``{{workflow.namespace}}`` as the workflow's namespace, any other
#: as a value known only at run time. Neither is a Kubernetes name, so neither is granted anything by mistake.
_WORKFLOW_NAMESPACE = "WORKFLOW_NAMESPACE"
_RUN_TIME = "RUN_TIME_VALUE"
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
    kind = qualified_resource(positional[0].split("/")[0])
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
    return kind[0], kind[1], tuple(verbs)


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
        text = substitute_text(manifest, {"workflow.namespace": _WORKFLOW_NAMESPACE}, _RUN_TIME)
        docs = [d for d in load_all(text) if d is not None]
    except Exception as e:  # yaml.YAMLError and friends: report, don't trace
        raise ValidationError(field, f"manifest is not YAML: {describe_error(e)}") from None
    if not all(isinstance(d, Mapping) for d in docs):
        raise ValidationError(field, f"is not an object (a JSON patch names its object in flags), {by_hand}")
    return docs


#: Why a pod without a named service account is refused: the rights would go to every pod of the namespace.
_DEFAULT_ACCOUNT = "would run as the namespace's `default` account, which is not granted rights silently"


def _template_needs(
    wf_name: str,
    template: Mapping[str, Any],
    spec: Mapping[str, Any],
    default_sa: str | None,
    owner_permissions: bool,
    i: int,
    j: int,
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
    executor = _executor_account(template, spec, default_sa, why)
    reports = ("argoproj.io", "workflowtaskresults", ("create", "patch"))
    needs = [_Need(executor or sa, *reports, why, executor_token=executor is not None)]
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
            where = _manifest_namespace(obj, f"{why}.resource.manifest")
            accounts = _job_accounts(obj) if _is_volcano_job(obj) else ()
            needs.append(_Need(sa, group, plural(kind), (*ACTION_VERBS[action], "get"), why, where, None, accounts))
            if owner_permissions and resource.get("setOwnerReference"):
                needs.append(_Need(sa, "argoproj.io", "workflows/finalizers", ("update",), why))
            needs += _volcano_pod_needs(obj, why, where)
    return needs


def _program_namespaces(template: Mapping[str, Any], why: str) -> set[str | None]:
    """Where the template's pods, and the pods of the Volcano Jobs it creates, mount the pods' program (the follower,
    the MPI wait, the launcher of function jobs): the namespaces that need its ConfigMap (None: the workflow's)."""
    found: set[str | None] = {None} if _mounts_program(template, why) else set()
    resource = template.get("resource")
    if not isinstance(resource, Mapping) or not isinstance(resource.get("manifest"), str):
        return found
    for obj in _manifest_objects(resource, f"{why}.resource.manifest"):
        if not _is_volcano_job(obj):
            continue
        for task in as_list(as_map(obj.get("spec")).get("tasks")):
            spec = as_map(as_map(as_map(task).get("template")).get("spec"))
            if _mounts_program(spec, f"{why} (Volcano task {as_map(task).get('name', '?')})"):
                found.add(_manifest_namespace(obj, f"{why}.resource.manifest"))
    return found


def _mounts_program(pod: Mapping[str, Any], why: str) -> bool:
    """The pod (a template's, a Volcano task's) mounts this version's program; another version's is refused, as its
    ConfigMap is not what this version renders."""
    mounted = False
    for volume in as_list(pod.get("volumes")):
        name = as_map(as_map(volume).get("configMap")).get("name")
        if not follower_program.is_config_map_name(name):
            continue
        if name != follower_program.config_map_name():
            raise ValidationError(
                f"{why}.volumes",
                f"mounts the follower program {name}, of another hera-volcano version (this one installs"
                f" {follower_program.config_map_name()}): render the workflow again with this version, or its RBAC"
                " with that one",
            )
        mounted = True
    return mounted


def _executor_account(
    template: Mapping[str, Any], spec: Mapping[str, Any], default_sa: str | None, why: str
) -> str | None:
    """The account Argo's own containers of the template's pod run as, when not the pod's: its executor's, or the
    workflow's (``{{workflow.serviceAccountName}}``). A pod without a token of its own must name one, as Argo
    requires before it makes the pod."""
    for where, holder in ((f"{why}.executor", template), ("spec.executor", spec)):
        value = as_map(holder.get("executor")).get("serviceAccountName")
        if value == EXECUTOR_ACCOUNT:
            return default_sa
        account = _service_account(value, f"{where}.serviceAccountName")
        if account is not None:
            return account
    automount = template.get("automountServiceAccountToken", spec.get("automountServiceAccountToken"))
    if automount is False:
        raise ValidationError(
            f"{why}.executor.serviceAccountName",
            "must be set when automountServiceAccountToken is false: Argo refuses to make the pod otherwise",
        )
    return None


def _token_secret(namespace: str, account: str) -> dict[str, Any]:
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


def _manifest_namespace(obj: Mapping[str, Any], field: str) -> str | None:
    """The namespace a manifest names (its object goes there, and so must the rule), or None for the workflow's."""
    namespace = as_map(obj.get("metadata")).get("namespace")
    if namespace is None or namespace in ("", _WORKFLOW_NAMESPACE):
        return None
    if isinstance(namespace, str) and _RUN_TIME in namespace:
        raise ValidationError(f"{field}.metadata.namespace", f"is only known at run time, {_BY_HAND}")
    names.check(f"{field}.metadata.namespace", namespace, names.dns1123_label)
    return str(namespace)


def _is_volcano_job(obj: Mapping[str, Any]) -> bool:
    return str(obj.get("apiVersion", "")).startswith("batch.volcano.sh/") and obj.get("kind") == "Job"


def _job_accounts(obj: Mapping[str, Any]) -> tuple[str, ...]:
    """The service accounts a Volcano Job's pod templates name (one given at run time, a placeholder, is not
    known here: the admission policy refuses it unless it is allowed by name)."""
    found = set()
    for task in as_list(as_map(obj.get("spec")).get("tasks")):
        spec = as_map(as_map(as_map(task).get("template")).get("spec"))
        for key in ("serviceAccountName", "serviceAccount"):
            value = spec.get(key)
            if isinstance(value, str) and names.dns1123_subdomain(value) is None:
                found.add(value)
    return tuple(sorted(found))


def _volcano_pod_needs(obj: Mapping[str, Any], why: str, namespace: str | None) -> list[_Need]:
    """Pods of a Volcano Job that call the API (the MPI master's wait for its workers) need pod reads too."""
    if not str(obj.get("apiVersion", "")).startswith("batch.volcano.sh/"):
        return []
    needs = []
    for task in as_list(as_map(obj.get("spec")).get("tasks")):
        task = as_map(task)
        spec = as_map(as_map(task.get("template")).get("spec"))
        where = f"{why} (Volcano task {task.get('name', '?')})"
        containers = [
            c for c in as_list(spec.get("initContainers")) + as_list(spec.get("containers")) if isinstance(c, Mapping)
        ]
        if not _kubectl_needs("default", containers, where, namespace):
            continue  # its account needs nothing (the admission policy says which it may be)
        sa = _service_account(spec.get("serviceAccountName") or spec.get("serviceAccount"), where)
        if sa is None:
            raise ValidationError(
                f"{where}.serviceAccountName",
                f"is not set, so its pods, which call the API, {_DEFAULT_ACCOUNT}: name one"
                " (service_account= of mpi_job)",
            )
        needs += _kubectl_needs(sa, containers, where, namespace)
    return needs


def _service_account(value: object, field: str) -> str | None:
    if value is None or value == "":
        return None
    if isinstance(value, str) and _RUN_TIME in value:
        raise ValidationError(field, "is only known at run time, so the account to grant rights to is unknown here")
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
    job_policy: JobPolicy | None = JobPolicy(),  # noqa: B008 (frozen: one shared default is safe)
) -> list[dict[str, Any]]:
    """A Role and RoleBinding for every service account the workflows run pods as, with exactly the rules needed.

    ``namespace`` and ``service_account`` override the workflows' own (the latter replaces the workflow-level
    ``serviceAccountName``; template-level ones stay). ``owner_reference_permissions`` adds ``update`` on
    ``workflows/finalizers`` for resource steps owned by the Workflow, which clusters enforcing owner-reference
    permissions (OpenShift) require; ``service_accounts`` also emits the ServiceAccounts. A pod whose account is named
    nowhere (not on its template, not on the workflow, no ``service_account``) is a ValidationError: it would run as
    the namespace's ``default`` account, and rights granted to that go to every pod that names no account. A rule
    for a manifest that names its namespace goes to a Role in that namespace, bound to the workflow's account.

    Each account that may create (or change) Volcano Jobs also gets, unless ``job_policy`` is None, a
    ValidatingAdmissionPolicy and its binding (see :class:`JobPolicy`): RBAC's ``create`` would let it run its
    jobs' pods as any account of the namespace, privileged or on the host.

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
    job_policy = policies.checked(job_policy)
    #: (the rules' namespace, the account's namespace, the account): what it needs there.
    by_scope: dict[tuple[str, str, str], list[_Need]] = {}
    namespaces: set[str] = set()
    templates_used = crons_used = False
    programs: set[str] = set()  # the namespaces where pods mount the pods' program
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
        crons_used = crons_used or kind == "CronWorkflow"
        default_sa = service_account or _service_account(
            spec.get("serviceAccountName"), f"workflows[{i}].spec.serviceAccountName"
        )
        templates = spec.get("templates")
        if not isinstance(templates, list) or not templates:
            raise ValidationError(f"workflows[{i}].spec.templates", "must be a non-empty list of templates")
        for j, template in enumerate(templates):
            if not isinstance(template, Mapping):
                raise ValidationError(f"workflows[{i}].spec.templates[{j}]", "must be a mapping: a template")
            for need in _template_needs(wf_name, template, spec, default_sa, owner_reference_permissions, i, j):
                scope = (need.namespace or ns, need.account_namespace or ns, need.service_account)
                by_scope.setdefault(scope, []).append(need)
            why = f"{wf_name}/{template.get('name', j)}"
            programs |= {where or ns for where in _program_namespaces(template, why)}
    objects: list[dict[str, Any]] = []
    for (ns, account_ns, sa), needs in sorted(by_scope.items()):
        names.check("serviceAccountName", sa, names.dns1123_subdomain)
        for obj in _role_and_binding(ns, account_ns, sa, needs, service_accounts):
            if obj not in objects:  # an account's ServiceAccount, once for all the namespaces it has rules in
                objects.append(obj)
        if any(need.executor_token for need in needs) and _token_secret(account_ns, sa) not in objects:
            objects.append(_token_secret(account_ns, sa))
        if job_policy is not None and _creates_jobs(needs):
            accounts = {a for need in needs for a in need.pod_accounts} | ({sa} if ns == account_ns else set())
            objects += policies.job_policy(ns, sa, account_ns, accounts, job_policy)
    objects += [follower_program.config_map(ns) for ns in sorted(programs)]
    if subjects:
        extra = [*(TEMPLATES if templates_used else ()), *(CRONS if crons_used else ())]
        objects += _submitter_objects(subjects, sorted(namespaces), extra, cluster_reads, service_accounts)
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
    subjects: Sequence[Subject],
    namespaces: Sequence[str],
    extra: Sequence[Permission],
    cluster_reads: bool,
    with_sa: bool,
) -> list[dict[str, Any]]:
    """Per namespace and submitter a Role and RoleBinding for the client; the explain ClusterRole and a
    ClusterRoleBinding per submitter (unless ``cluster_reads`` is false). ``extra``: for the WorkflowTemplates and
    CronWorkflows among the workflows."""
    permissions = [*SUBMITTER, *extra]
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


def _creates_jobs(needs: Iterable[_Need]) -> bool:
    """Whether the needs let the account create or change Volcano Jobs (and so choose what their pods do)."""
    return any(
        n.group == "batch.volcano.sh" and n.resource == "jobs" and {"create", "update", "patch"} & set(n.verbs)
        for n in needs
    )


def _role_name(sa: str) -> str:
    """``SA-hera-volcano``; a service account too long for that is cut and told apart by a hash of its full name."""
    suffix = "-hera-volcano"
    if len(sa) + len(suffix) <= names.DNS1123_SUBDOMAIN_MAX:
        return sa + suffix
    digest = hashlib.sha256(sa.encode()).hexdigest()[:8]
    keep = names.DNS1123_SUBDOMAIN_MAX - len(suffix) - len(digest) - 1
    return f"{sa[:keep].rstrip('-.')}-{digest}{suffix}"


def _role_and_binding(ns: str, account_ns: str, sa: str, needs: list[_Need], with_sa: bool) -> list[dict[str, Any]]:
    """The Role in ``ns`` and its binding to the account of ``account_ns`` (named after both when they differ)."""
    rules: dict[tuple[str, str], tuple[set[str], set[str]]] = {}
    for need in needs:
        verbs, why = rules.setdefault((need.group, need.resource), (set(), set()))
        verbs.update(need.verbs)
        why.add(need.why)
    ordered = sorted(rules.items())
    name = _role_name(sa if ns == account_ns else f"{account_ns}.{sa}")
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
        "subjects": [{"kind": "ServiceAccount", "name": sa, "namespace": account_ns}],
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
    }
    account = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": sa, "namespace": account_ns}}
    return [account, role, binding] if with_sa else [role, binding]
