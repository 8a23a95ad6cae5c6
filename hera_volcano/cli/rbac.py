"""``hera-volcano rbac [FILE...]``: RBAC for the bundled workflows, or derived from workflow files, and for the people
or pipelines that submit them (``--submitter``)."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from hera_volcano.argo.defaults import NAMESPACE, SERVICE_ACCOUNT
from hera_volcano.cli import common as c

if TYPE_CHECKING:
    from hera_volcano.tools.job_policy import JobPolicy
    from hera_volcano.tools.rbac.need import Manifest


def _files(paths: Sequence[str]) -> list[str]:
    """The files to read: each path, or the YAML files under a directory (as ``lint`` finds them)."""
    from hera_volcano.cli.lint import directory_files

    found: list[str] = []
    for path in paths:
        if path != "-" and os.path.isdir(path):
            for item in directory_files(path):
                if not isinstance(item, str):
                    raise c.UsageError(f"{item.file}: {item.message}")
                found.append(item)
        else:
            found.append(path)
    return found


def read_workflows(paths: Sequence[str]) -> list[dict[str, object]]:
    """Workflow-like documents from files and directories (``-`` is stdin); other kinds are skipped, unreadable input
    is an error."""
    from hera_volcano.argo.limits import WORKFLOW_KINDS
    from hera_volcano.kube.loading import describe_error, load_all

    found: list[dict[str, object]] = []
    for path in _files(paths):
        text = c.read_text(path)
        try:
            docs = [d for d in load_all(text) if d is not None]
        except Exception as e:  # yaml.YAMLError: one line, no traceback
            raise c.UsageError(f"{path}: not valid YAML: {describe_error(e)}") from None
        for doc in docs:
            if isinstance(doc, dict) and isinstance(doc.get("kind"), str) and doc["kind"] in WORKFLOW_KINDS:
                found.append(doc)
    if not found:
        raise c.UsageError(f"no Workflow or WorkflowTemplate in {', '.join(paths)}")
    return found


def add_rbac_options(p: argparse._ActionsContainer) -> list[str]:
    """The options that say what the RBAC grants beyond what the workflows' pods do (``rbac`` and ``render``); their
    ``dest`` names."""
    added: list[argparse.Action] = []

    def add(*flags: str, **options: object) -> None:
        added.append(p.add_argument(*flags, **options))  # type: ignore[arg-type]

    add("--openshift", action="store_true", help="add update on workflows/finalizers (owner references)")
    add("--with-service-account", action="store_true", help="also emit the ServiceAccounts (always for bundled ones)")
    add(
        "--submitter",
        action="append",
        default=[],
        metavar="NAME",
        help="also what the hera-volcano client needs for NAME: a service account, system:serviceaccount:NS:NAME,"
        " user:NAME or group:NAME (repeatable)",
    )
    _add_policy_options(add)
    add(
        "--allow-uncovered",
        action="append",
        default=[],
        metavar="RESOURCE[.GROUP]",
        help="grant writes of RESOURCE (statefulsets.apps, daemonsets.apps) though no admission policy checks what"
        " those objects hold; the Role says so on its rule (repeatable; default: such a write is refused)",
    )
    add(
        "--no-admission-policy",
        action="store_true",
        help="leave out the ValidatingAdmissionPolicy that pins what the workflows' Volcano Jobs may hold"
        " (Kubernetes < 1.30, or a policy of your own)",
    )
    add(
        "--no-cluster-reads",
        action="store_true",
        help="leave out the read-only ClusterRole for nodes and queues that explain uses (--submitter)",
    )
    return [action.dest for action in added]


def _add_policy_options(add: Callable[..., None]) -> None:
    """What the admission policy and Pod Security allow beyond their defaults (:class:`JobPolicy`)."""
    add(
        "--allow-service-account",
        action="append",
        default=[],
        type=c.service_account_name,
        metavar="NAME",
        help="the admission policy: an account the workflows' Volcano Jobs may also run their pods as (beyond their own"
        " and those their jobs name; repeatable)",
    )
    add(
        "--allow-secret",
        action="append",
        default=[],
        type=c.service_account_name,
        metavar="NAME",
        help="the admission policy: a Secret the jobs' pods may mount or read (repeatable; default: none)",
    )
    add("--allow-privileged", action="store_true", help="the admission policy: allow privileged containers")
    add("--allow-host-paths", action="store_true", help="the admission policy: allow hostPath volumes")
    add(
        "--allow-host-namespaces",
        action="store_true",
        help="the admission policy: allow hostNetwork, hostPID and hostIPC",
    )
    add("--allow-host-ports", action="store_true", help="the admission policy: allow hostPort")
    for flag, what in (
        ("--allow-capability", "a capability the containers may add beyond Pod Security baseline's (IPC_LOCK, say)"),
        ("--allow-sysctl", "a sysctl the pods may set beyond baseline's safe ones"),
        ("--allow-runtime-class", "a runtime class the pods may name"),
    ):
        add(flag, action="append", default=[], metavar="NAME", help=f"the admission policy: {what} (repeatable)")
    add(
        "--allow-unconfined",
        action="store_true",
        help="the admission policy: allow unconfined seccomp and AppArmor, any SELinux type, an unmasked /proc",
    )
    add("--allow-node-name", action="store_true", help="the admission policy: allow nodeName (past the scheduler)")
    add(
        "--allow-claim-sources",
        action="store_true",
        help="the admission policy: allow claims that pick their PersistentVolume or copy a volume",
    )
    add(
        "--pod-security",
        choices=("baseline", "restricted", "none"),
        default="baseline",
        help="the Pod Security level the namespace enforces (default baseline; none: no Namespace object)",
    )


def _job_policy(args: argparse.Namespace) -> JobPolicy | None:
    """The admission policy the options ask for, or None (``--no-admission-policy``)."""
    from hera_volcano.tools.job_policy import JobPolicy

    allowances = (
        "allow_service_account", "allow_secret", "allow_privileged", "allow_host_paths", "allow_host_namespaces",
        "allow_host_ports", "allow_capability", "allow_sysctl", "allow_runtime_class", "allow_unconfined",
        "allow_node_name", "allow_claim_sources",
    )  # fmt: skip
    if args.no_admission_policy and (
        any(getattr(args, name) for name in allowances) or args.pod_security != "baseline"
    ):
        raise c.UsageError(
            "--no-admission-policy: the --allow-... and --pod-security options set that policy; give one or the other"
        )
    if args.no_admission_policy:
        return None
    return JobPolicy(
        service_accounts=args.allow_service_account,
        secrets=args.allow_secret,
        privileged=args.allow_privileged,
        host_paths=args.allow_host_paths,
        host_namespaces=args.allow_host_namespaces,
        host_ports=args.allow_host_ports,
        capabilities=args.allow_capability,
        sysctls=args.allow_sysctl,
        unconfined=args.allow_unconfined,
        runtime_classes=args.allow_runtime_class,
        node_names=args.allow_node_name,
        claim_sources=args.allow_claim_sources,
        pod_security=None if args.pod_security == "none" else args.pod_security,
    )


def rbac_objects(
    workflows: Sequence[object],
    args: argparse.Namespace,
    *,
    namespace: str | None = None,
    service_account: str | None = None,
    service_accounts: bool = False,
) -> list[Manifest]:
    """``rbac_for`` of the workflows, as the options of :func:`add_rbac_options` ask for it."""
    from hera_volcano.tools.rbac import rbac_for

    return rbac_for(
        *workflows,
        namespace=namespace,
        service_account=service_account,
        owner_reference_permissions=args.openshift,
        service_accounts=service_accounts or args.with_service_account,
        submitters=args.submitter,
        cluster_reads=not args.no_cluster_reads,
        job_policy=_job_policy(args),
        allow_uncovered=args.allow_uncovered,
    )


def main(argv: Sequence[str]) -> int:
    from hera_volcano.tools.program import program_for

    p = c.parser(
        "hera-volcano rbac",
        "Print least-privilege Roles and RoleBindings for workflows: for the bundled ones (with the ServiceAccount"
        " they run as), or derived from workflow files. A workflow that names no service account is refused rather"
        " than granting rights to the namespace's default account: give --service-account. An account that creates"
        " Volcano Jobs (or Pods, batch Jobs, ...) also gets a ValidatingAdmissionPolicy per kind (Kubernetes >= 1.30)"
        " pinning what their pods may do: run as itself and the accounts its jobs name, no Secrets, nothing Pod"
        " Security baseline refuses, no runtime class or node, unless the --allow-... options say otherwise; and"
        " the namespace gets the Pod Security labels (enforce baseline). After the RBAC comes the ConfigMap holding"
        " the program our pods run (the log follower, the MPI wait, the launcher of function jobs), for each"
        " namespace whose pods mount it: so what it prints is all a namespace needs (--no-program: the RBAC alone).",
    )
    p.add_argument("files", nargs="*", metavar="FILE", help="workflow files (- for stdin); default: bundled workflows")
    p.add_argument(
        "-n",
        "--namespace",
        type=c.namespace_name,
        default=None,
        help=f"namespace (default: the workflows', {NAMESPACE})",
    )
    p.add_argument(
        "--service-account",
        type=c.service_account_name,
        default=None,
        metavar="NAME",
        help=f"the workflows' service account (default: their own; bundled: {SERVICE_ACCOUNT})",
    )
    add_rbac_options(p)
    p.add_argument(
        "--no-program",
        action="store_true",
        help="leave out the ConfigMap of the pods' program: print only RBAC and admission objects",
    )
    c.add_document_output(p)
    args = p.parse_args(argv)
    workflows: Sequence[object]
    if args.files:
        workflows = read_workflows(args.files)
    else:
        from hera_volcano.examples.bundled import bundled

        workflows = bundled(args.namespace or NAMESPACE, args.service_account or SERVICE_ACCOUNT)
    objects = rbac_objects(
        workflows,
        args,
        namespace=args.namespace,
        service_account=args.service_account,
        service_accounts=not args.files,  # the bundled workflows' account is ours
    )
    if not args.no_program:
        objects += program_for(*workflows, namespace=args.namespace)
    c.emit(c.documents(args.output, *objects), args.output_file)
    return 0
