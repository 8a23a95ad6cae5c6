"""The admission policy beside a Role that may create Volcano Jobs: what that account may put into a job.

RBAC cannot say it. ``create`` on Volcano Jobs lets an account run pods as *any* service account of the namespace,
privileged, on the host's network or files: Volcano's controller creates the pods, and no one checks the caller's
use of what the pod template names. A ``ValidatingAdmissionPolicy`` (``admissionregistration.k8s.io/v1``,
Kubernetes >= 1.30), enforced by the API server itself, pins what the account's jobs may hold; its binding applies
it to that account's requests in that namespace only, so Volcano's controller and other users are untouched.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Final

from hera_volcano.kube import names
from hera_volcano.shared import checks
from hera_volcano.shared.errors import ValidationError

ADMISSION_API: Final = "admissionregistration.k8s.io/v1"
POLICY_PREFIX: Final = "hera-volcano-jobs"
#: (apiGroup, resource) whose writes the policy checks: ``rbac_for`` grants no other write without a reason.
COVERED: Final = frozenset({("batch.volcano.sh", "jobs")})
#: What ``hera-volcano rbac`` prints for the policy's parameters: an annotation on the policy.
PARAMETERS_ANNOTATION: Final = "hera-volcano/parameters"
#: A task's pod spec, as CEL sees it in the Volcano Job.
_POD: Final = "t.template.spec"
_CONTAINER_LISTS: Final = ("containers", "initContainers", "ephemeralContainers")


@dataclass(frozen=True)
class JobPolicy:
    """What a workflows' account may put into the Volcano Jobs it creates, beyond which ``rbac_for`` refuses them.

    The account may run its jobs' pods as itself, as any account its workflows' own job manifests name (the MPI
    master's), and as ``service_accounts``; a pod that names no account runs as the namespace's ``default``
    account, which the policy leaves alone (grant ``default`` nothing: see the security page). Its pods may mount or
    read from the environment only the Secrets in ``secrets``. ``privileged`` allows privileged containers,
    ``host_paths`` ``hostPath`` volumes, ``host_namespaces`` ``hostNetwork``, ``hostPID`` and ``hostIPC``; each is
    refused by default.

    :param service_accounts: other accounts the jobs' pods may run as.
    :param secrets: the Secrets the jobs' pods may mount or read into their environment.
    :param privileged: allow privileged containers.
    :param host_paths: allow ``hostPath`` volumes.
    :param host_namespaces: allow ``hostNetwork``, ``hostPID`` and ``hostIPC``.
    """

    service_accounts: Sequence[str] = field(default=())
    secrets: Sequence[str] = field(default=())
    privileged: bool = False
    host_paths: bool = False
    host_namespaces: bool = False

    def __post_init__(self) -> None:
        for i, account in enumerate(checks.strings("service_accounts", self.service_accounts)):
            names.check(f"service_accounts[{i}]", account, names.dns1123_subdomain)
        for i, secret in enumerate(checks.strings("secrets", self.secrets)):
            names.check(f"secrets[{i}]", secret, names.dns1123_subdomain)
        for name in ("privileged", "host_paths", "host_namespaces"):
            if not isinstance(getattr(self, name), bool):
                raise ValidationError(name, "must be True or False")
        object.__setattr__(self, "service_accounts", tuple(self.service_accounts))
        object.__setattr__(self, "secrets", tuple(self.secrets))


def _cel_list(values: Iterable[str]) -> str:
    """A CEL list of names (DNS subdomains: no quote or backslash to escape)."""
    return "[" + ", ".join(f"'{v}'" for v in sorted(set(values))) + "]"


def _any_container(predicate: str) -> str:
    """CEL: some container of the task's pod (init and ephemeral ones too) satisfies ``predicate`` (about ``c``).
    Each list separately: the three have distinct schema types, which CEL cannot concatenate."""
    return " || ".join(f"(has({_POD}.{lst}) && {_POD}.{lst}.exists(c, {predicate}))" for lst in _CONTAINER_LISTS)


def _outside(value: str, allowed: str) -> str:
    """CEL: the optional string field ``value`` is set, not empty, and not in the list variable ``allowed``."""
    *parent, leaf = value.split(".")
    return f"(has({'.'.join(parent)}.{leaf}) && {value} != '' && !({value} in variables.{allowed}))"


def _unlisted(ref: str) -> str:
    """CEL: the Secret reference ``ref`` names no Secret of ``variables.secrets`` (an unnamed one counts)."""
    return f"(!has({ref}.name) || !({ref}.name in variables.secrets))"


_ACCOUNTS: Final = (
    f"{_outside(f'{_POD}.serviceAccountName', 'accounts')} || {_outside(f'{_POD}.serviceAccount', 'accounts')}"
)
_SECRETS: Final = " || ".join(
    [
        f"(has({_POD}.volumes) && {_POD}.volumes.exists(v,"
        " (has(v.secret) && (!has(v.secret.secretName) || !(v.secret.secretName in variables.secrets)))"
        " || (has(v.projected) && has(v.projected.sources) && v.projected.sources.exists(s,"
        f" has(s.secret) && {_unlisted('s.secret')}))))",
        _any_container(
            "(has(c.env) && c.env.exists(e, has(e.valueFrom) && has(e.valueFrom.secretKeyRef)"
            f" && {_unlisted('e.valueFrom.secretKeyRef')}))"
            f" || (has(c.envFrom) && c.envFrom.exists(e, has(e.secretRef) && {_unlisted('e.secretRef')}))"
        ),
    ]
)
_PRIVILEGED: Final = _any_container(
    "has(c.securityContext) && has(c.securityContext.privileged) && c.securityContext.privileged"
)
_HOST_PATHS: Final = f"has({_POD}.volumes) && {_POD}.volumes.exists(v, has(v.hostPath))"
_HOST_NAMESPACES: Final = " || ".join(f"(has({_POD}.{f}) && {_POD}.{f})" for f in ("hostNetwork", "hostPID", "hostIPC"))


def _rules(accounts: Sequence[str], policy: JobPolicy) -> list[tuple[str, str]]:
    """(what a task's pod must not do, as CEL about ``t``; what that is, in words) for each rule in force."""
    rules = [
        (_ACCOUNTS, f"run as a service account other than {', '.join(accounts) or 'none'}"),
        (_SECRETS, "mount or read a Secret" + (f" other than {', '.join(policy.secrets)}" if policy.secrets else "")),
    ]
    if not policy.privileged:
        rules.append((_PRIVILEGED, "run a privileged container"))
    if not policy.host_paths:
        rules.append((_HOST_PATHS, "mount a hostPath volume"))
    if not policy.host_namespaces:
        rules.append((_HOST_NAMESPACES, "use the network, PID or IPC namespace of the node"))
    return rules


def _validation(offends: str, message: str) -> dict[str, str]:
    """A validation that no task's pod ``offends``, with a message naming the tasks that do. The rule is written
    out in the expressions, not in a variable: the API server type-checks expressions against the Job's schema,
    and a variable's body only as far as its type (a mistake there would surface only when a job comes)."""
    return {
        "expression": "!has(object.spec) || !has(object.spec.tasks) || object.spec.tasks.all(t,"
        f" !has(t.template) || !has(t.template.spec) || !({offends}))",
        "message": message,
        # Evaluated only when the expression is false, so the job has tasks.
        "messageExpression": f"'{message}: task ' + object.spec.tasks.filter(t, has(t.template)"
        f" && has(t.template.spec) && ({offends})).map(t, has(t.name) ? t.name : '(unnamed)').join(', ')",
        "reason": "Forbidden",
    }


def policy_name(namespace: str, service_account: str) -> str:
    """``hera-volcano-jobs.NAMESPACE.ACCOUNT`` (cluster-scoped: the namespace is part of the name), shortened with
    a hash of the full name when too long."""
    name = f"{POLICY_PREFIX}.{namespace}.{service_account}"
    if len(name) <= names.DNS1123_SUBDOMAIN_MAX:
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:8]
    return f"{name[: names.DNS1123_SUBDOMAIN_MAX - len(digest) - 1].rstrip('-.')}-{digest}"


def job_policy(
    namespace: str, service_account: str, account_namespace: str, accounts: Iterable[str], policy: JobPolicy
) -> list[dict[str, object]]:
    """The ValidatingAdmissionPolicy and its binding for Volcano Jobs that ``system:serviceaccount:
    ACCOUNT_NAMESPACE:SERVICE_ACCOUNT`` creates or changes in ``namespace``; ``accounts`` are those its pods may
    run as (``policy.service_accounts`` come on top)."""
    allowed = sorted({*accounts, *policy.service_accounts})
    user = f"system:serviceaccount:{account_namespace}:{service_account}"
    name = policy_name(namespace, service_account)
    # The parameters, first and by name: the accounts the pods may run as, the Secrets they may use.
    variables = [
        {"name": "accounts", "expression": _cel_list(allowed)},
        {"name": "secrets", "expression": _cel_list(policy.secrets)},
    ]
    validations = [
        _validation(offends, f"{user} may not create a Volcano Job whose pods {what} ({name})")
        for offends, what in _rules(allowed, policy)
    ]

    def refused(allowed_here: bool) -> str:
        return "allowed" if allowed_here else "refused"

    parameters = (
        f"service accounts: {', '.join(allowed) or 'none'}; secrets: {', '.join(policy.secrets) or 'none'};"
        f" privileged containers {refused(policy.privileged)}; hostPath volumes {refused(policy.host_paths)};"
        f" host namespaces {refused(policy.host_namespaces)}"
    )
    vap: dict[str, object] = {
        "apiVersion": ADMISSION_API,
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": name, "annotations": {PARAMETERS_ANNOTATION: parameters}},
        "spec": {
            "failurePolicy": "Fail",
            # A named version, so the API server type-checks the expressions against the Job's schema;
            # matchPolicy Equivalent still sends a request through any other version here.
            "matchConstraints": {
                "matchPolicy": "Equivalent",
                "resourceRules": [
                    {
                        "apiGroups": ["batch.volcano.sh"],
                        "apiVersions": ["v1alpha1"],
                        "operations": ["CREATE", "UPDATE"],
                        "resources": ["jobs"],
                    }
                ],
            },
            "matchConditions": [
                {"name": "the-workflows-account", "expression": f"request.userInfo.username == '{user}'"}
            ],
            "variables": variables,
            "validations": validations,
        },
    }
    binding: dict[str, object] = {
        "apiVersion": ADMISSION_API,
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": name},
        "spec": {
            "policyName": name,
            "validationActions": ["Deny"],
            "matchResources": {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": namespace}}},
        },
    }
    return [vap, binding]


def checked(policy: object) -> JobPolicy | None:
    """``job_policy=`` of ``rbac_for``: a JobPolicy, or None for no policy."""
    if policy is not None and not isinstance(policy, JobPolicy):
        raise ValidationError("job_policy", f"must be a JobPolicy or None, not {type(policy).__name__}")
    return policy
