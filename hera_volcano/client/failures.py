"""The API server's error answers as one line for a person: a 403 names the verb and resource RBAC refused (and how
to grant it), a 404 the object or the kind the cluster does not serve, a failed connection the server it tried."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from hera_volcano.client.resources import Resource
from hera_volcano.shared.errors import ClusterError
from hera_volcano.shared.findings import as_map

# What Kubernetes' RBAC authorizer writes (k8s.io/apiserver responsewriters.forbiddenMessage), possibly followed by
# the authorizer's reason.
_FORBIDDEN = re.compile(
    r'User "(?P<user>[^"]*)" cannot (?P<verb>[a-z]+) resource "(?P<resource>[^"]*)" in API group "(?P<group>[^"]*)"'
    r'(?: in the namespace "(?P<namespace>[^"]*)"| at the cluster scope)'
)
_SERVICE_ACCOUNT = re.compile(r"system:serviceaccount:[^:]+:[^:]+")
#: Status codes worth another try: the server is busy or restarting, not saying no.
TRANSIENT_STATUSES = frozenset({429, 500, 502, 503, 504})


def status_body(body: str | bytes | None) -> Mapping[str, Any]:
    """The ``Status`` object of an error answer, or an empty one when the body is not one (``404 page not found``)."""
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    try:
        data = json.loads(body or "")
    except ValueError:
        return {}
    return as_map(data) if as_map(data).get("kind") == "Status" else {}


def _where(resource: Resource, namespace: str | None) -> str:
    return f" in namespace {namespace}" if resource.namespaced and namespace else ""


def submitter_of(user: str) -> str:
    """How ``hera-volcano rbac --submitter`` names the user a 403 names."""
    return user if _SERVICE_ACCOUNT.fullmatch(user) else f"user:{user}"


def from_answer(
    status: int | None,
    body: str | bytes | None,
    *,
    verb: str,
    resource: Resource,
    namespace: str | None = None,
    name: str | None = None,
) -> ClusterError:
    """The error for an answer with HTTP ``status`` and ``body`` to ``verb`` on ``resource`` (``name``, if one)."""
    data = status_body(body)
    message = str(data.get("message") or "").strip()
    reason = str(data.get("reason") or "")
    code = int(data["code"]) if isinstance(data.get("code"), int) else status
    target = f"{resource.qualified} {name}" if name else resource.qualified
    if code == 403:
        return forbidden(message, verb=verb, resource=resource, namespace=namespace)
    if code == 401:
        return ClusterError(
            "the API server does not accept these credentials (401 Unauthorized): the token or certificate is"
            " missing, wrong or expired; check the kubeconfig (or the pod's service account token)",
            reason="Unauthorized",
            status=401,
        )
    if code == 404 and not data:
        return ClusterError(
            f"the API server does not serve {resource.qualified}/{resource.version}: are the"
            f" {_PROVIDERS.get(resource.group, resource.group or 'core')} CRDs installed?",
            reason="NotFound",
            status=404,
            resource=resource.plural,
            group=resource.group,
        )
    if code == 404:
        return not_found(target, resource, namespace)
    text = message or (str(body or "").strip().splitlines() or [""])[0] or f"HTTP {code}"
    return ClusterError(
        f"cannot {verb} {target}{_where(resource, namespace)}: {text}",
        reason=reason or f"HTTP{code}",
        status=code,
        resource=resource.plural,
        group=resource.group,
        namespace=namespace if resource.namespaced else None,
    )


def not_found(target: str, resource: Resource, namespace: str | None) -> ClusterError:
    """``target`` (say ``workflows.argoproj.io hello-x``) is not there, or no longer."""
    return ClusterError(
        f"{target} not found{_where(resource, namespace)}",
        reason="NotFound",
        status=404,
        resource=resource.plural,
        group=resource.group,
        namespace=namespace if resource.namespaced else None,
    )


_PROVIDERS = {"argoproj.io": "Argo Workflows", "batch.volcano.sh": "Volcano", "scheduling.volcano.sh": "Volcano"}


def rbac_refusal(message: str) -> bool:
    """Whether a 403's message is RBAC's (who may not do what), rather than an admission webhook's or policy's."""
    return _FORBIDDEN.search(message) is not None


def forbidden(message: str, *, verb: str, resource: Resource, namespace: str | None) -> ClusterError:
    """A 403: who may not do what, from the API's message (what we asked for when the message does not say)."""
    found = _FORBIDDEN.search(message)
    user = found["user"] if found else None
    verb = found["verb"] if found else verb
    plural = found["resource"] if found else resource.plural
    group = found["group"] if found else resource.group
    scope = found["namespace"] if found else (namespace if resource.namespaced else None)
    who = f"{user} " if user else ""
    where = f"in namespace {scope}" if scope else "at the cluster scope"
    qualified = f"{plural}.{group}" if group else plural
    grant = f"; `hera-volcano rbac --submitter {submitter_of(user)}` prints a Role that grants it" if user else ""
    return ClusterError(
        f"forbidden: {who}may not {verb} {qualified} {where}{grant}",
        reason="Forbidden",
        status=403,
        verb=verb,
        resource=plural,
        group=group,
        namespace=scope,
        user=user,
    )


def unreachable(host: str, cause: BaseException) -> ClusterError:
    """No answer at all: the connection failed or timed out (the cause's own words, first line only)."""
    text = str(getattr(cause, "reason", None) or cause).strip().splitlines()
    return ClusterError(
        f"cannot reach the API server at {host}: {text[0] if text else type(cause).__name__}", reason="Unreachable"
    )


def transient(error: ClusterError) -> bool:
    """Whether trying again may help (unreachable, overloaded, restarting), rather than the server saying no."""
    return error.reason == "Unreachable" or (error.status is not None and error.status in TRANSIENT_STATUSES)
