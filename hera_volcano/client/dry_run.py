"""The API server's verdict on creating a document, asked as ``kubectl create --dry-run=server`` asks it: the kind's
schema and metadata rules, then every admission webhook and policy (Volcano's ``validatejob`` runs Kubernetes'
pod-template validation on each task). Nothing is stored.

Argo has no webhook: a Workflow's own rules are the offline ones, and the Volcano Job a resource step creates is
judged only when the step runs. So for Argo's workflow kinds each object a creating resource step makes (``create``,
``apply``, ``replace``) is asked too, after the placeholder samples lint uses (:mod:`hera_volcano.argo.samples`).

What to send and how an answer reads are pure functions; :class:`DryRun` makes the calls (through
:class:`~hera_volcano.client.kubeapi.KubeApi`), :meth:`Client.dry_run` is the public call.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Final, TypeVar

from hera_volcano.argo import samples
from hera_volcano.argo.limits import WORKFLOW_KINDS
from hera_volcano.client import failures
from hera_volcano.client.kubeapi import KubeApi
from hera_volcano.client.patience import Patience, retrying
from hera_volcano.client.resources import Resource
from hera_volcano.kube.loading import load_all
from hera_volcano.shared.findings import Finding, as_list, as_map, error, warning

T = TypeVar("T")
ARGO_API_VERSION: Final = "argoproj.io/v1alpha1"
#: Resource-step actions that create the object of their manifest (the others read, patch or delete one).
CREATING_ACTIONS: Final = frozenset({"create", "apply", "replace"})
#: Groups of files a tool reads, which are no API objects (a kustomization).
LOCAL_GROUPS: Final = frozenset({"kustomize.config.k8s.io"})
#: How every finding of the server starts: the server's words follow.
MARK: Final = "the API server refuses"


@dataclass(frozen=True)
class Target:
    """An object to create in a dry run: ``path`` is where its findings go (relative to the document; a resource
    step's ``...resource.manifest``), ``step`` whether a resource step creates it."""

    path: str
    body: dict[str, object]
    step: bool = False


def _plain(value: object) -> dict[str, object]:
    """A JSON copy (what the API server is sent); a YAML value JSON lacks is sent as its text."""
    copied: dict[str, object] = json.loads(json.dumps(value, default=str))
    return copied


def is_object(document: object) -> bool:
    """Whether ``document`` is something to create: a mapping with an apiVersion and a kind, not a tool's file."""
    if not isinstance(document, Mapping):
        return False
    api_version, kind = document.get("apiVersion"), document.get("kind")
    return (
        isinstance(api_version, str)
        and isinstance(kind, str)
        and bool(api_version and kind)
        and api_version.rpartition("/")[0] not in LOCAL_GROUPS
    )


def targets(document: object) -> list[Target]:
    """What a dry run of ``document`` sends: the document, and for Argo's workflow kinds the object of each creating
    resource step (samples in place of placeholders). None for what is no object (offline lint says why)."""
    if not is_object(document):
        return []
    assert isinstance(document, Mapping)
    try:
        found = [Target("", _plain(document))]
    except (ValueError, TypeError, RecursionError):  # not JSON (a key JSON cannot hold, nesting too deep): lint says
        return []
    if document.get("apiVersion") == ARGO_API_VERSION and document.get("kind") in WORKFLOW_KINDS:
        found.extend(step_targets(document))
    return found


def step_targets(workflow: Mapping[str, object]) -> list[Target]:
    """The objects a workflow's creating resource steps make, each parsed from its manifest after sample
    substitution; a manifest that is not one object is left to offline lint."""
    spec, spec_path = as_map(workflow.get("spec")), "spec"
    if workflow.get("kind") == "CronWorkflow":
        spec, spec_path = as_map(spec.get("workflowSpec")), "spec.workflowSpec"
    templates = as_list(spec.get("templates"))
    found = []
    for index, _, text in samples.resolved_manifests({"metadata": workflow.get("metadata"), "spec": spec}):
        if as_map(as_map(templates[index]).get("resource")).get("action") not in CREATING_ACTIONS:
            continue
        try:
            docs = [d for d in load_all(text) if d is not None]
        except Exception:  # untrusted text: offline lint reports why it does not parse
            continue
        if len(docs) == 1 and is_object(docs[0]):
            found.append(Target(f"{spec_path}.templates[{index}].resource.manifest", _plain(docs[0]), step=True))
    return found


def placed(body: Mapping[str, object], namespace: str | None) -> dict[str, object]:
    """``body`` in ``namespace`` (None: a cluster-scoped kind, sent as it is)."""
    out = dict(body)
    if namespace is not None:
        meta = out.get("metadata")
        out["metadata"] = {**meta, "namespace": namespace} if isinstance(meta, Mapping) else {"namespace": namespace}
    return out


def kinds_of(resources: Mapping[str, object], group: str, version: str) -> dict[str, Resource]:
    """The kinds an ``APIResourceList`` serves, each with its resource (subresources left out)."""
    found: dict[str, Resource] = {}
    for r in as_list(resources.get("resources")):
        name, kind = as_map(r).get("name"), as_map(r).get("kind")
        if isinstance(name, str) and isinstance(kind, str) and "/" not in name:
            found.setdefault(kind, Resource(group, version, name, namespaced=bool(as_map(r).get("namespaced"))))
    return found


def _readable(message: str, sent: Mapping[str, object]) -> str:
    """The server's message with the name it generated for a ``generateName`` written as ``PREFIX*``, so that the
    same document gives the same finding each time."""
    meta = as_map(sent.get("metadata"))
    prefix = meta.get("generateName")
    if isinstance(prefix, str) and prefix and not meta.get("name"):
        message = re.sub(re.escape(prefix) + r"[a-z0-9]{5}\b", prefix + "*", message)
    return " ".join(message.split())


def verdict(target: Target, resource: Resource, status: int, answer: Mapping[str, object]) -> Finding | None:
    """What an answer to a dry run says: None when the server accepted the object (a 2xx, or ``AlreadyExists``,
    which it answers only once validation and admission passed), an error finding with its words when it refused
    it, a warning when RBAC kept it from judging. An answer that is no verdict (credentials refused, the server
    failing or busy) raises ClusterError."""
    if 200 <= status < 300 or (status == 409 and answer.get("reason") == "AlreadyExists"):
        return None
    message = str(answer.get("message") or "").strip() or f"HTTP {status}"
    if status == 401 or status == 429 or status >= 500 or not status:
        raise failures.from_answer(status, json.dumps(answer), verb="create", resource=resource)
    it = "the object this step creates" if target.step else "it"
    if status == 403 and failures.rbac_refusal(message):
        refused = failures.forbidden(message, verb="create", resource=resource, namespace=None)
        return warning(target.path, f"not judged by the API server, which may not create {it} for you: {refused}")
    return error(target.path, f"{MARK} {it} (dry run): {_readable(message, target.body)}")


def not_served(target: Target) -> Finding:
    """A kind the server has no resource for (``kubectl`` says: no matches for kind)."""
    kind, api_version = target.body.get("kind"), target.body.get("apiVersion")
    it = "the object this step creates" if target.step else "it"
    return error(
        target.path,
        f"{MARK} {it}: it serves no kind {kind!r} in {api_version!r}"
        " (are its CRDs installed? kinds are case-sensitive)",
    )


class DryRun:
    """Dry runs on one API server: the kinds it serves are read once per group and version. The first call that
    cannot reach the server fails at once (no cluster is no reason to wait); later ones ride out what may pass."""

    def __init__(self, api: KubeApi, patience: Patience) -> None:
        self._api = api
        self._patience = patience
        self._served: dict[tuple[str, str], dict[str, Resource]] = {}
        self._reached = False

    def _ask(self, call: Callable[[], T]) -> T:
        if self._reached:
            return retrying(call, self._patience)
        answer = call()
        self._reached = True
        return answer

    def _resource(self, body: Mapping[str, object]) -> Resource | None:
        group, _, version = str(body.get("apiVersion")).rpartition("/")
        if (group, version) not in self._served:
            listed = self._ask(lambda: self._api.discover(group, version))
            self._served[(group, version)] = {} if listed is None else kinds_of(listed, group, version)
        return self._served[(group, version)].get(str(body.get("kind")))

    def judge(self, document: object, namespace: str) -> list[Finding]:
        """The server's findings on creating ``document`` in ``namespace`` (cluster-scoped kinds in none), and on
        the objects its resource steps create; [] when it accepts them all."""
        found: list[Finding] = []
        for target in targets(document):
            resource = self._resource(target.body)
            if resource is None:
                found.append(not_served(target))
                continue
            where = namespace if resource.namespaced else None
            body = placed(target.body, where)
            finding = self._ask(lambda: verdict(target, resource, *self._api.dry_run(resource, where, body)))  # noqa: B023
            if finding is not None:
                found.append(finding)
        return found
