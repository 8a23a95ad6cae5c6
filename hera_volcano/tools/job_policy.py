"""The admission policy beside a Role that may create Volcano Jobs (or Pods, batch Jobs, ...): what that account may
put into them, and the Pod Security level of their namespace.

RBAC cannot say it. ``create`` on Volcano Jobs lets an account run pods as *any* service account of the namespace,
privileged, on the host's network or files: Volcano's controller creates the pods, and no one checks the caller's
use of what the pod template names. Two layers pin it:

- Pod Security Admission ``baseline`` on the namespace (a label the API server enforces on every pod, whoever
  creates it: the pods Volcano's controller makes too). ``restricted`` would refuse most images (it wants a
  non-root user and every capability dropped); ``baseline`` refuses what reaches the node.
- A ``ValidatingAdmissionPolicy`` (``admissionregistration.k8s.io/v1``, Kubernetes >= 1.30) per kind the account
  may create, bound to that account's requests in that namespace only: it refuses the baseline rules at the job
  already (Pod Security does not read a Volcano Job, so a server-side dry run of the job sees it), and what Pod
  Security cannot see: the account the pods run as, Secrets, claims, the runtime class, the node, and what Volcano's
  controller does for the job (its claims, the ssh plugin's Secret).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Final

from hera_volcano.kube import names
from hera_volcano.shared import checks
from hera_volcano.shared.errors import ValidationError
from hera_volcano.tools import pod_rules as rules
from hera_volcano.tools.pod_rules import At, Rule

ADMISSION_API: Final = "admissionregistration.k8s.io/v1"
POLICY_PREFIX: Final = "hera-volcano-jobs"
#: What ``hera-volcano rbac`` prints for the policy's parameters: an annotation on the policy.
PARAMETERS_ANNOTATION: Final = "hera-volcano/parameters"
PSA_LABEL: Final = "pod-security.kubernetes.io/"
#: The Pod Security levels ``JobPolicy.pod_security`` may name.
PSA_LEVELS: Final = ("baseline", "restricted")
VOLCANO_JOBS: Final = ("batch.volcano.sh", "jobs")
_CAPABILITY: Final = re.compile(r"[A-Z][A-Z0-9_]*")
_SYSCTL: Final = re.compile(r"[a-z0-9]([-_a-z0-9]*[a-z0-9])?([./][a-z0-9]([-_a-z0-9]*[a-z0-9])?)*")
#: The switches that allow what Pod Security ``baseline`` refuses: with one on, the namespace enforces nothing.
_BEYOND_BASELINE: Final = ("privileged", "host_paths", "host_namespaces", "host_ports", "unconfined")


@dataclass(frozen=True)
class JobPolicy:
    """What a workflows' account may put into the Volcano Jobs (and Pods, batch Jobs, ...) it creates, and the Pod
    Security level of their namespace.

    By default the jobs' pods run as the account itself or an account the workflows' own job manifests name (the
    MPI master's); a pod that names none must mount no token (``automountServiceAccountToken: false``: it would run
    as the namespace's ``default``). They use no Secret (volume, environment, image pull, volume driver), nothing
    Pod Security ``baseline`` refuses (privileged, the node's paths, namespaces and ports, capabilities and sysctls
    beyond baseline's, unconfined seccomp, AppArmor, SELinux or /proc), no runtime class, no ``nodeName``, no claim
    that picks its PersistentVolume or copies a volume, and the ssh plugin's Secret is not mounted over
    ``/var/run/secrets``. Each switch allows one of these deliberately; one that allows what baseline refuses makes
    the namespace enforce no level (it still warns and audits at ``pod_security``).

    :param service_accounts: other accounts the jobs' pods may run as (``default``: pods that name none may mount
        its token).
    :param secrets: the Secrets the jobs' pods may mount, read into their environment, pull images with or give a
        volume driver.
    :param privileged: allow privileged (and Windows HostProcess) containers.
    :param host_paths: allow ``hostPath`` volumes.
    :param host_namespaces: allow ``hostNetwork``, ``hostPID`` and ``hostIPC``.
    :param host_ports: allow ``hostPort`` (a port on the node).
    :param capabilities: capabilities the containers may add beyond baseline's (``IPC_LOCK`` for RDMA, say).
    :param sysctls: sysctls the pods may set beyond baseline's safe ones.
    :param unconfined: allow unconfined seccomp and AppArmor profiles, any SELinux type, user or role, and an
        unmasked ``/proc``.
    :param runtime_classes: runtime classes the pods may name (``nvidia``, say).
    :param node_names: allow ``nodeName`` (a pod placed past the scheduler, its queues and its gangs).
    :param claim_sources: allow claims (ephemeral ones and a Volcano Job's ``spec.volumes``) that pick their
        PersistentVolume (``volumeName``, ``selector``) or copy another volume (``dataSource``, ``dataSourceRef``).
    :param pod_security: the Pod Security level the namespace enforces (``baseline`` or ``restricted``; None: no
        Namespace object, its labels are yours).
    """

    service_accounts: Sequence[str] = field(default=())
    secrets: Sequence[str] = field(default=())
    privileged: bool = False
    host_paths: bool = False
    host_namespaces: bool = False
    host_ports: bool = False
    capabilities: Sequence[str] = field(default=())
    sysctls: Sequence[str] = field(default=())
    unconfined: bool = False
    runtime_classes: Sequence[str] = field(default=())
    node_names: bool = False
    claim_sources: bool = False
    pod_security: str | None = "baseline"

    def __post_init__(self) -> None:
        for name, check in (
            ("service_accounts", names.dns1123_subdomain),
            ("secrets", names.dns1123_subdomain),
            ("runtime_classes", names.dns1123_subdomain),
            ("capabilities", _named(_CAPABILITY, "must be a capability in capitals, such as IPC_LOCK")),
            ("sysctls", _named(_SYSCTL, "must be a sysctl name, such as net.core.somaxconn")),
        ):
            for i, value in enumerate(checks.strings(name, getattr(self, name))):
                names.check(f"{name}[{i}]", value, check)
            object.__setattr__(self, name, tuple(getattr(self, name)))
        for name in (*_BEYOND_BASELINE, "node_names", "claim_sources"):
            if not isinstance(getattr(self, name), bool):
                raise ValidationError(name, "must be True or False")
        if self.pod_security is not None and self.pod_security not in PSA_LEVELS:
            raise ValidationError("pod_security", f"must be one of {', '.join(PSA_LEVELS)} or None")

    def enforced(self) -> str:
        """The level the namespace enforces: ``pod_security``, or ``privileged`` when a switch allows what
        baseline refuses (the pods would be refused otherwise)."""
        beyond = any(getattr(self, name) for name in _BEYOND_BASELINE) or not (
            set(self.capabilities) <= set(rules.BASELINE_CAPABILITIES)
            and set(self.sysctls) <= set(rules.BASELINE_SYSCTLS)
        )
        return "privileged" if beyond else str(self.pod_security)


def _named(pattern: re.Pattern[str], message: str) -> Callable[[object], str | None]:
    def check(value: object) -> str | None:
        return None if isinstance(value, str) and pattern.fullmatch(value) else message

    return check


@dataclass(frozen=True)
class Kind:
    """A kind the policy covers: its API, the prefix of its policy's name, how a refusal names it, and where its pod
    specs are (``ok`` gives the CEL that no pod offends; ``volcano``: a Volcano job spec, whose own rules apply)."""

    group: str
    version: str
    resource: str
    prefix: str
    noun: str
    ok: Callable[[Callable[[At], str], bool], str]
    volcano: bool = False
    #: The Volcano job spec whose offending tasks a refusal names (None: it names none).
    tasks: str | None = None


def _guarded(path: str, then: str) -> str:
    """CEL: ``then`` when every field of the dotted ``object.PATH`` is set (true when one is not)."""
    parts = path.split(".")
    guards = [f"!has(object.{'.'.join(parts[: i + 1])})" for i in range(len(parts))]
    return " || ".join([*guards, f"({then})"])


def _job_spec(spec: str, offends: Callable[[At], str], job_rule: bool) -> str:
    """CEL: no task of the Volcano job spec at ``spec`` offends (or the job itself, for a job rule)."""
    if job_rule:
        return f"!({offends(At(spec))})"
    pod = At("t.template.spec", "t.template")
    return f"!has({spec}.tasks) || {spec}.tasks.all(t, !has(t.template) || !has(t.template.spec) || !({offends(pod)}))"


def _volcano(path: str) -> Callable[[Callable[[At], str], bool], str]:
    return lambda offends, job_rule: _guarded(path, _job_spec(f"object.{path}", offends, job_rule))


def _template(path: str) -> Callable[[Callable[[At], str], bool], str]:
    """Pod specs at ``object.PATH.spec`` (a pod template, or a Pod itself when ``path`` is empty)."""
    holder = f"object.{path}" if path else "object"
    return lambda offends, _: _guarded(
        f"{path}.spec" if path else "spec", f"!({offends(At(f'{holder}.spec', holder))})"
    )


def _flows(offends: Callable[[At], str], job_rule: bool) -> str:
    patched = _job_spec("f.patch.jobSpec", offends, job_rule)
    return _guarded("spec.flows", f"object.spec.flows.all(f, !has(f.patch) || !has(f.patch.jobSpec) || ({patched}))")


#: The kinds the policy covers, each with its pod specs: ``rbac_for`` grants creating no other kind with a pod in it.
KINDS: Final = (
    Kind("batch.volcano.sh", "v1alpha1", "jobs", POLICY_PREFIX, "a Volcano Job", _volcano("spec"), True, "object.spec"),
    Kind("flow.volcano.sh", "v1alpha1", "jobtemplates", "hera-volcano-jobtemplates", "a Volcano JobTemplate",
         _volcano("spec"), True, "object.spec"),
    Kind("flow.volcano.sh", "v1alpha1", "jobflows", "hera-volcano-jobflows", "a Volcano JobFlow", _flows, True),
    Kind("batch.volcano.sh", "v1alpha1", "cronjobs", "hera-volcano-cronjobs", "a Volcano CronJob",
         _volcano("spec.jobTemplate.spec"), True),
    Kind("", "v1", "pods", "hera-volcano-pods", "a Pod", _template("")),
    Kind("batch", "v1", "jobs", "hera-volcano-batch-jobs", "a Job (batch)", _template("spec.template")),
    Kind("batch", "v1", "cronjobs", "hera-volcano-batch-cronjobs", "a CronJob (batch)",
         _template("spec.jobTemplate.spec.template")),
    Kind("apps", "v1", "deployments", "hera-volcano-deployments", "a Deployment", _template("spec.template")),
)  # fmt: skip
#: (API group, resource) of every kind the policy covers: ``rbac_for`` may grant ``create`` on these only.
COVERED: Final = frozenset((kind.group, kind.resource) for kind in KINDS)


def _words(rule: Rule, accounts: Sequence[str], policy: JobPolicy) -> str:
    """What the rule refuses, in words, with the policy's parameters (no ``'``: a CEL string literal)."""

    def other(values: Sequence[str], baseline: Sequence[str] = ()) -> str:
        extra = sorted(set(values) - set(baseline))
        if baseline:
            return " beyond the baseline set" + (f" and {', '.join(extra)}" if extra else "")
        return f" other than {', '.join(extra)}" if extra else ""

    return rule.words.format(
        accounts=", ".join(accounts) or "none",
        other_secrets=other(policy.secrets),
        capabilities=other(policy.capabilities, rules.BASELINE_CAPABILITIES),
        sysctls=other(policy.sysctls, rules.BASELINE_SYSCTLS),
        runtime_classes=other(policy.runtime_classes),
    )


def _validation(kind: Kind, rule: Rule, job_rule: bool, message: str) -> dict[str, str]:
    """A validation that no pod of the kind (no Volcano job spec, for a job rule) offends, with a message naming the
    tasks that do. The rule is written out in the expressions, not in a variable: the API server type-checks
    expressions against the kind's schema, and a variable's body only as far as its type."""
    validation = {"expression": kind.ok(rule.offends, job_rule), "message": message}
    if kind.tasks is not None and not job_rule:
        # Evaluated only when the expression is false, so the job has tasks.
        pod = At("t.template.spec", "t.template")
        validation["messageExpression"] = (
            f"'{message}: task ' + {kind.tasks}.tasks.filter(t, has(t.template) && has(t.template.spec)"
            f" && ({rule.offends(pod)})).map(t, has(t.name) ? t.name : '(unnamed)').join(', ')"
        )
    validation["reason"] = "Forbidden"
    return validation


def policy_name(namespace: str, service_account: str, resource: tuple[str, str] = VOLCANO_JOBS) -> str:
    """``PREFIX.NAMESPACE.ACCOUNT`` (cluster-scoped: the namespace is part of the name; the prefix names the kind,
    ``hera-volcano-jobs`` for Volcano Jobs), shortened with a hash of the full name when too long."""
    prefix = next(kind.prefix for kind in KINDS if (kind.group, kind.resource) == resource)
    name = f"{prefix}.{namespace}.{service_account}"
    if len(name) <= names.DNS1123_SUBDOMAIN_MAX:
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:8]
    return f"{name[: names.DNS1123_SUBDOMAIN_MAX - len(digest) - 1].rstrip('-.')}-{digest}"


def _parameters(allowed: Sequence[str], policy: JobPolicy) -> str:
    """The policy's parameters in one line (its annotation)."""

    def listed(values: Sequence[str]) -> str:
        return ", ".join(sorted(values)) or "none"

    allowances = [name for name in (*_BEYOND_BASELINE, "node_names", "claim_sources") if getattr(policy, name)]
    return (
        f"service accounts: {listed(allowed)}; secrets: {listed(policy.secrets)}; extra capabilities:"
        f" {listed(policy.capabilities)}; extra sysctls: {listed(policy.sysctls)}; runtime classes:"
        f" {listed(policy.runtime_classes)}; allowed: {listed(allowances)}"
    )


def _variables(allowed: Sequence[str], policy: JobPolicy) -> list[dict[str, str]]:
    """The parameters, first and by name: the accounts, Secrets, capabilities, sysctls and runtime classes."""
    return [
        {"name": "accounts", "expression": rules.cel_list(allowed)},
        {"name": "secrets", "expression": rules.cel_list(policy.secrets)},
        {"name": "capabilities", "expression": rules.cel_list([*rules.BASELINE_CAPABILITIES, *policy.capabilities])},
        {"name": "sysctls", "expression": rules.cel_list([*rules.BASELINE_SYSCTLS, *policy.sysctls])},
        {"name": "runtimeClasses", "expression": rules.cel_list(policy.runtime_classes)},
    ]


def _kind_policy(
    kind: Kind, namespace: str, user: str, allowed: Sequence[str], policy: JobPolicy, name: str
) -> dict[str, object]:
    """The ValidatingAdmissionPolicy for one kind."""
    in_force = [(rule, False) for rule in rules.POD_RULES] + [(rule, True) for rule in rules.JOB_RULES if kind.volcano]
    validations = []
    for rule, job_rule in in_force:
        if rule.allowed_by is not None and getattr(policy, rule.allowed_by):
            continue
        whose = "that would" if job_rule else ("that would" if kind.resource == "pods" else "whose pods")
        message = f"{user} may not create {kind.noun} {whose} {_words(rule, allowed, policy)} ({name})"
        validations.append(_validation(kind, rule, job_rule, message))
    return {
        "apiVersion": ADMISSION_API,
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": name, "annotations": {PARAMETERS_ANNOTATION: _parameters(allowed, policy)}},
        "spec": {
            "failurePolicy": "Fail",
            # A named version, so the API server type-checks the expressions against the kind's schema;
            # matchPolicy Equivalent still sends a request through any other version here.
            "matchConstraints": {
                "matchPolicy": "Equivalent",
                "resourceRules": [
                    {
                        "apiGroups": [kind.group],
                        "apiVersions": [kind.version],
                        "operations": ["CREATE", "UPDATE"],
                        "resources": [kind.resource],
                    }
                ],
            },
            "matchConditions": [
                {"name": "the-workflows-account", "expression": f"request.userInfo.username == '{user}'"}
            ],
            "variables": _variables(allowed, policy),
            "validations": validations,
        },
    }


def job_policy(
    namespace: str,
    service_account: str,
    account_namespace: str,
    accounts: Iterable[str],
    policy: JobPolicy,
    resources: Iterable[tuple[str, str]] = (VOLCANO_JOBS,),
) -> list[dict[str, object]]:
    """A ValidatingAdmissionPolicy and its binding for each kind of ``resources`` (of :data:`COVERED`) that
    ``system:serviceaccount:ACCOUNT_NAMESPACE:SERVICE_ACCOUNT`` creates or changes in ``namespace``; ``accounts``
    are those its pods may run as (``policy.service_accounts`` come on top)."""
    allowed = sorted({*accounts, *policy.service_accounts})
    user = f"system:serviceaccount:{account_namespace}:{service_account}"
    wanted = set(resources)
    objects: list[dict[str, object]] = []
    for kind in KINDS:
        if (kind.group, kind.resource) not in wanted:
            continue
        name = policy_name(namespace, service_account, (kind.group, kind.resource))
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
        objects += [_kind_policy(kind, namespace, user, allowed, policy, name), binding]
    return objects


#: The namespace holds more than these objects (Argo, the workflows, their data): GitOps tools that sync ``rbac/``
#: must never prune or delete it with them (Argo CD's and Flux's own annotations; ``kubectl delete -f`` obeys none).
_KEEP_NAMESPACE: Final = {
    "argocd.argoproj.io/sync-options": "Prune=false,Delete=false",
    "kustomize.toolkit.fluxcd.io/prune": "disabled",
}


def pod_security(namespace: str, policy: JobPolicy) -> dict[str, object]:
    """The Namespace with the Pod Security labels: enforce ``policy.enforced()`` at :data:`rules.PSA_VERSION` (the
    version the policy's rules mirror), warn and audit at ``policy.pod_security`` of the newest version (so what an
    upgrade would refuse shows before it does)."""
    level = str(policy.pod_security)
    labels = {
        f"{PSA_LABEL}enforce": policy.enforced(),
        f"{PSA_LABEL}enforce-version": rules.PSA_VERSION,
        f"{PSA_LABEL}warn": level,
        f"{PSA_LABEL}warn-version": "latest",
        f"{PSA_LABEL}audit": level,
        f"{PSA_LABEL}audit-version": "latest",
    }
    metadata = {"name": namespace, "labels": labels, "annotations": dict(_KEEP_NAMESPACE)}
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": metadata}


def namespaces(policed: Iterable[str], policy: JobPolicy | None) -> list[dict[str, object]]:
    """The Namespaces (with their Pod Security labels) where the policy binds, unless it leaves their labels alone."""
    if policy is None or policy.pod_security is None:
        return []
    return [pod_security(ns, policy) for ns in sorted(set(policed))]


def checked(policy: object) -> JobPolicy | None:
    """``job_policy=`` of ``rbac_for``: a JobPolicy, or None for no policy."""
    if policy is not None and not isinstance(policy, JobPolicy):
        raise ValidationError("job_policy", f"must be a JobPolicy or None, not {type(policy).__name__}")
    return policy
