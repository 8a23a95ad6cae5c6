"""``rbac_for``: the Roles, RoleBindings and admission policies a set of workflows needs, from what their pods do."""

from __future__ import annotations

from collections.abc import Sequence

from hera_volcano.client.resources import CRONS, TEMPLATES
from hera_volcano.kube import names
from hera_volcano.shared import checks
from hera_volcano.tools import job_policy as policies
from hera_volcano.tools.job_policy import JobPolicy
from hera_volcano.tools.rbac import coverage
from hera_volcano.tools.rbac.manifests import service_account as checked_account
from hera_volcano.tools.rbac.need import Manifest, Need, Rule
from hera_volcano.tools.rbac.roles import role_and_binding, token_secret
from hera_volcano.tools.rbac.submitters import submitter, submitter_objects
from hera_volcano.tools.rbac.templates import Where, template_needs
from hera_volcano.tools.rbac.workflows import WorkflowView, read

#: (the rules' namespace, the account's namespace, the account): what it needs there.
_Scope = tuple[str, str, str]


def rbac_for(
    *workflows: object,
    namespace: str | None = None,
    service_account: str | None = None,
    owner_reference_permissions: bool = False,
    service_accounts: bool = False,
    submitters: Sequence[str] = (),
    cluster_reads: bool = True,
    job_policy: JobPolicy | None = JobPolicy(),  # noqa: B008 (frozen: one shared default is safe)
    allow_uncovered: Sequence[str] = (),
) -> list[Manifest]:
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
    jobs' pods as any account of the namespace, privileged or on the host. A write (``create``, ``update``,
    ``patch``) of any kind that policy does not check (Pods, batch Jobs, Deployments, JobFlows, Workflows, ...:
    :data:`hera_volcano.tools.job_policy.COVERED` are those it does) is a ValidationError naming the template and
    the resource, unless ``allow_uncovered`` names that resource: then the Role grants it and says why in an
    annotation on its rule (``hera-volcano/uncovered-N``), as it does for Volcano Jobs when ``job_policy`` is None.

    Each of ``submitters`` (see :func:`submitter`) gets what the client needs to run the workflows from Python or
    ``hera-volcano submit`` (a Role and RoleBinding in each of their namespaces; reading the WorkflowTemplates when
    the workflows hold some) and, unless ``cluster_reads`` is false, the read-only ClusterRole ``explain`` uses for
    nodes and queues, with a ClusterRoleBinding.

    The program the pods run is not here: :func:`hera_volcano.tools.program.program_for` gives its ConfigMaps.

    :param workflows: the workflows (Hera objects or dicts: Workflow, WorkflowTemplate, CronWorkflow).
    :param namespace: the namespace the workflows run in, over their own.
    :param service_account: the workflows' account, over the workflow-level ``serviceAccountName``.
    :param owner_reference_permissions: add ``update`` on ``workflows/finalizers`` (OpenShift requires it).
    :param service_accounts: also emit the ServiceAccounts.
    :param submitters: who submits the workflows: ``NAME``, ``system:serviceaccount:NS:NAME``, ``user:NAME`` or
        ``group:NAME``.
    :param cluster_reads: grant the submitters the read-only ClusterRole for nodes and queues.
    :param job_policy: what the accounts may put into their Volcano Jobs (None: no admission policy).
    :param allow_uncovered: resources the accounts may write though no admission policy checks them, as
        ``RESOURCE[.GROUP]`` (``pods``, ``deployments.apps``, ``jobflows.flow.volcano.sh``).
    """
    views = list(read(workflows, namespace))
    if service_account is not None:
        names.check("service_account", service_account, names.dns1123_subdomain)
    subjects = [submitter(text, f"submitters[{i}]") for i, text in enumerate(checks.strings("submitters", submitters))]
    job_policy = policies.checked(job_policy)
    allowed = coverage.allowed_uncovered(allow_uncovered)
    by_scope: dict[_Scope, list[Need]] = {}
    for view in views:
        for need in _workflow_needs(view, service_account, owner_reference_permissions):
            scope = (need.namespace or view.namespace, need.account_namespace or view.namespace, need.service_account)
            by_scope.setdefault(scope, []).append(need)
    objects: list[Manifest] = []
    granted: set[Rule] = set()
    for (ns, account_ns, sa), needs in sorted(by_scope.items()):
        reasons = coverage.uncovered(needs, job_policy is not None, allowed)
        granted.update(reasons)
        objects += _account_objects(ns, account_ns, sa, needs, service_accounts, job_policy, objects, reasons)
    coverage.check_used(allow_uncovered, granted, job_policy is not None)
    # The Pod Security labels of each namespace a policy binds in, first: one apply labels it before its pods come.
    objects[:0] = policies.namespaces([ns for (ns, _, _), needs in by_scope.items() if _policed(needs)], job_policy)
    if subjects:
        kinds = {view.kind for view in views}
        extra = [*(TEMPLATES if "WorkflowTemplate" in kinds else ()), *(CRONS if "CronWorkflow" in kinds else ())]
        namespaces = sorted({view.namespace for view in views})
        objects += submitter_objects(subjects, namespaces, extra, cluster_reads, service_accounts)
    return objects


def _workflow_needs(view: WorkflowView, service_account: str | None, owner_permissions: bool) -> list[Need]:
    """What every template of the workflow needs, its pods running as ``service_account`` unless they name one."""
    default_sa = service_account or checked_account(
        view.spec.get("serviceAccountName"), f"{view.field}.spec.serviceAccountName"
    )
    needs = []
    for j, template in view.templates:
        name = str(template.get("name", f"templates[{j}]"))
        where = Where(view.name, name, view.field, view.spec, default_sa, owner_permissions)
        needs += template_needs(template, where)
    return needs


def _account_objects(
    ns: str,
    account_ns: str,
    sa: str,
    needs: list[Need],
    with_sa: bool,
    job_policy: JobPolicy | None,
    earlier: list[Manifest],
    uncovered: dict[Rule, str],
) -> list[Manifest]:
    """The account's Role and binding in ``ns`` (its ServiceAccount and token Secret once, whatever ``earlier``
    holds; ``uncovered``: why a rule no policy checks is granted), and the admission policy when it may create or
    change what that policy checks."""
    names.check("serviceAccountName", sa, names.dns1123_subdomain)
    role = role_and_binding(ns, account_ns, sa, needs, with_sa, uncovered)
    objects = [obj for obj in role if obj not in earlier]
    if any(need.executor_token for need in needs) and token_secret(account_ns, sa) not in earlier:
        objects.append(token_secret(account_ns, sa))
    if job_policy is not None and _policed(needs):
        accounts = {a for need in needs for a in need.pod_accounts} | ({sa} if ns == account_ns else set())
        objects += policies.job_policy(ns, sa, account_ns, accounts, job_policy, _policed(needs))
    return objects


def _policed(needs: list[Need]) -> set[tuple[str, str]]:
    """The kinds the policy covers that the needs let the account create or change (and so choose what pods do)."""
    changes = {(n.group, n.resource) for n in needs if {"create", "update", "patch"} & set(n.verbs)}
    return changes & policies.COVERED
