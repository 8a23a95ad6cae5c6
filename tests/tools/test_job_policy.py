"""The admission policy ``rbac_for`` puts beside a Role that may create Volcano Jobs (or Pods, batch Jobs, ...): what
it pins, per parameter and per kind, and the Pod Security labels of the namespace.

Whether the API server enforces it as written (every rule, on real requests, each kind) is tests/e2e/test_policy.py
(and tests/cluster/test_cluster_rbac.py); that its expressions type-check against each kind's schema is checked on
the end-to-end cluster.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from hera.workflows import Container, Workflow

import hera_volcano as hv
from hera_volcano import JobPolicy, ValidationError, rbac_for
from hera_volcano.tools import pod_rules as rules
from hera_volcano.tools.job_policy import COVERED, policy_name
from tests import cel_model as cel
from tests.commands import run
from tests.e2e import policy_cases as cases

NS_LABEL = "kubernetes.io/metadata.name"


def training(service_account: str = "trainer", master_account: str | None = None, namespace: str = "ml") -> Any:
    """A user's workflow: an MPI job (its master's wait reads pods as ``master_account``, by default the
    workflow's own) and its follower."""
    job = hv.mpi_job(
        image="volcanosh/example-mpi:0.0.3",
        program=hv.Program.command(["mpi_hello_world"]),
        workers=2,
        service_account=master_account or service_account,
    )
    with Workflow(
        generate_name="train-", namespace=namespace, entrypoint="main", service_account_name=service_account
    ) as w:
        hv.job_dag(job, name="main")
    return w


def policies(objects: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {o["kind"]: o for o in objects if o["kind"].startswith("ValidatingAdmissionPolicy")}


def variable(vap: dict[str, Any], name: str) -> str:
    return next(str(v["expression"]) for v in vap["spec"]["variables"] if v["name"] == name)


def messages(vap: dict[str, Any]) -> list[str]:
    return [v["message"] for v in vap["spec"]["validations"]]


def test_an_account_that_creates_jobs_gets_a_policy_on_its_own_requests_in_its_namespace() -> None:
    objects = rbac_for(training())
    found = policies(objects)
    vap, binding = found["ValidatingAdmissionPolicy"], found["ValidatingAdmissionPolicyBinding"]
    assert vap["metadata"]["name"] == binding["metadata"]["name"] == binding["spec"]["policyName"]
    assert vap["metadata"]["name"] == "hera-volcano-jobs.ml.trainer"
    assert binding["spec"]["validationActions"] == ["Deny"]
    assert binding["spec"]["matchResources"] == {"namespaceSelector": {"matchLabels": {NS_LABEL: "ml"}}}
    [condition] = vap["spec"]["matchConditions"]
    assert condition["expression"] == "request.userInfo.username == 'system:serviceaccount:ml:trainer'"
    [rule] = vap["spec"]["matchConstraints"]["resourceRules"]
    assert (rule["apiGroups"], rule["resources"], rule["operations"]) == (
        ["batch.volcano.sh"],
        ["jobs"],
        ["CREATE", "UPDATE"],
    )
    assert vap["spec"]["failurePolicy"] == "Fail"
    assert vap["spec"]["matchConstraints"]["matchPolicy"] == "Equivalent"  # a request through another version too
    # Beside the Role, in that order, so one apply creates the account's rights and their limits together.
    kinds = [o["kind"] for o in objects]
    assert kinds == [
        "Namespace",
        "Role",
        "RoleBinding",
        "ValidatingAdmissionPolicy",
        "ValidatingAdmissionPolicyBinding",
    ]


#: (rule, words of its message): every rule in force by default.
DEFAULT_RULES = (
    ("accounts", "run as a service account other than trainer"),
    ("default-account", "run as the default account of the namespace with its token"),
    ("secrets", "mount or read a Secret"),
    ("driver-secrets", "give a volume driver a Secret"),
    ("pull-secrets", "pull images with a Secret"),
    ("privileged", "privileged or Windows HostProcess container"),
    ("host-paths", "hostPath volume"),
    ("host-namespaces", "network, PID or IPC namespace"),
    ("host-ports", "hostPort"),
    ("capabilities", "add a capability beyond the baseline set"),
    ("sysctls", "set a sysctl beyond the baseline set"),
    ("seccomp", "seccomp profile"),
    ("apparmor", "AppArmor profile"),
    ("selinux", "SELinux user, role or type"),
    ("proc-mount", "unmask /proc"),
    ("runtime-class", "choose a runtime class"),
    ("node-name", "nodeName"),
    ("ephemeral-claims", "ephemeral volume that picks its PersistentVolume"),
    ("job-claims", "(spec.volumes) that picks its PersistentVolume"),
    ("ssh-key-path", "ssh plugin over /var/run/secrets"),
)


def test_by_default_every_rule_is_in_force_once_with_its_words() -> None:
    vap = policies(rbac_for(training()))["ValidatingAdmissionPolicy"]
    assert variable(vap, "accounts") == "['trainer']"
    assert variable(vap, "secrets") == "[]"
    assert variable(vap, "runtimeClasses") == "[]"
    said = messages(vap)
    assert len(said) == len(DEFAULT_RULES)
    for name, words in DEFAULT_RULES:
        assert sum(words in m for m in said) == 1, (name, words, said)
    assert all(m.startswith("system:serviceaccount:ml:trainer may not create a Volcano Job") for m in said)
    assert all(v["reason"] == "Forbidden" for v in vap["spec"]["validations"])


def test_the_baseline_sets_are_the_parameters_of_capabilities_and_sysctls() -> None:
    """Pod Security baseline's own lists: a capability or sysctl it allows passes the policy too."""
    vap = policies(rbac_for(training()))["ValidatingAdmissionPolicy"]
    assert variable(vap, "capabilities") == rules.cel_list(rules.BASELINE_CAPABILITIES)
    assert "'NET_BIND_SERVICE'" in variable(vap, "capabilities") and "'SYS_ADMIN'" not in variable(vap, "capabilities")
    assert variable(vap, "sysctls") == rules.cel_list(rules.BASELINE_SYSCTLS)
    extra = policies(
        rbac_for(training(), job_policy=JobPolicy(capabilities=["IPC_LOCK"], sysctls=["net.core.somaxconn"]))
    )
    vap = extra["ValidatingAdmissionPolicy"]
    assert "'IPC_LOCK'" in variable(vap, "capabilities") and "'net.core.somaxconn'" in variable(vap, "sysctls")
    assert any("beyond the baseline set and IPC_LOCK" in m for m in messages(vap))


#: (the field a candidate of issue 43 sets, the rule that must read it).
FIELDS_READ = (
    ("capabilities.add", "capabilities"),
    ("seccompProfile.type", "seccomp"),
    ("appArmorProfile.type", "apparmor"),
    ("container.apparmor.security.beta.kubernetes.io/", "apparmor"),
    ("seLinuxOptions", "selinux"),
    ("procMount", "proc-mount"),
    ("securityContext.sysctls", "sysctls"),
    ("v.azureFile.secretName", "driver-secrets"),
    ("v.iscsi.secretRef", "driver-secrets"),
    ("v.flexVolume.secretRef", "driver-secrets"),
    ("v.csi.nodePublishSecretRef", "driver-secrets"),
    ("v.cephfs.secretRef", "driver-secrets"),
    ("v.rbd.secretRef", "driver-secrets"),
    ("v.scaleIO.secretRef", "driver-secrets"),
    ("v.storageos.secretRef", "driver-secrets"),
    ("imagePullSecrets", "pull-secrets"),
    ("q.hostPort", "host-ports"),
    ("runtimeClassName", "runtime-class"),
    ("nodeName", "node-name"),
    ("automountServiceAccountToken", "default-account"),
    ("s.serviceAccountToken", "default-account"),
    ("v.ephemeral.volumeClaimTemplate.spec.volumeName", "ephemeral-claims"),
    ("v.volumeClaim.volumeName", "job-claims"),
    ("v.volumeClaim.dataSource", "job-claims"),
    ("v.volumeClaim.dataSourceRef", "job-claims"),
    ("v.volumeClaim.selector", "job-claims"),
    ("object.spec.plugins['ssh']", "ssh-key-path"),
    ("windowsOptions.hostProcess", "privileged"),
)


@pytest.mark.parametrize(("path", "rule"), FIELDS_READ)
def test_each_rule_reads_the_field_of_its_candidate(path: str, rule: str) -> None:
    vap = policies(rbac_for(training()))["ValidatingAdmissionPolicy"]
    words = dict(DEFAULT_RULES)[rule]
    [expression] = [v["expression"] for v in vap["spec"]["validations"] if words in v["message"]]
    assert path in expression
    others = [v["expression"] for v in vap["spec"]["validations"] if words not in v["message"]]
    assert rule in ("driver-secrets", "secrets") or not any(f"{path} " in e for e in others), "one rule per field"


def test_a_pod_naming_default_counts_as_naming_none() -> None:
    """The API server writes ``default`` into a Pod that names no account: the account rule leaves it to the rule
    about the default account's token (refused unless the pod mounts none)."""
    from hera_volcano.tools.pod_rules import At, accounts, default_account

    pod = At("p", "m")
    assert "p.serviceAccountName != 'default'" in accounts(pod)
    assert "!('default' in variables.accounts)" in default_account(pod)
    listed = policies(rbac_for(training(), job_policy=JobPolicy(service_accounts=["default"])))
    assert variable(listed["ValidatingAdmissionPolicy"], "accounts") == "['default', 'trainer']"


def test_the_accounts_the_workflows_own_jobs_name_are_allowed_too() -> None:
    """The MPI master reads its workers as an account of its own: the workflow's jobs name it, so it is allowed."""
    vap = policies(rbac_for(training(master_account="mpi-reader")))["ValidatingAdmissionPolicy"]
    assert variable(vap, "accounts") == "['mpi-reader', 'trainer']"
    assert "other than mpi-reader, trainer" in messages(vap)[0]


def test_an_account_named_at_run_time_is_not_allowed_unless_listed() -> None:
    job = (
        "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata:\n  generateName: j-\nspec:\n  tasks:\n"
        "  - name: t\n    template:\n      spec:\n        serviceAccountName: '{{inputs.parameters.sa}}'\n"
        "        containers:\n        - name: c\n          image: busybox\n"
    )
    wf = {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Workflow",
        "metadata": {"name": "w", "namespace": "ml"},
        "spec": {
            "serviceAccountName": "trainer",
            "entrypoint": "r",
            "templates": [{"name": "r", "resource": {"action": "create", "manifest": job}}],
        },
    }
    vap = policies(rbac_for(wf))["ValidatingAdmissionPolicy"]
    assert variable(vap, "accounts") == "['trainer']"
    listed = policies(rbac_for(wf, job_policy=JobPolicy(service_accounts=["runner-a"])))
    assert variable(listed["ValidatingAdmissionPolicy"], "accounts") == "['runner-a', 'trainer']"


#: (a switch, the rules it drops, whether Pod Security baseline refuses what it allows).
SWITCHES = (
    ("privileged", ("privileged",), True),
    ("host_paths", ("host-paths",), True),
    ("host_namespaces", ("host-namespaces",), True),
    ("host_ports", ("host-ports",), True),
    ("unconfined", ("seccomp", "apparmor", "selinux", "proc-mount"), True),
    ("node_names", ("node-name",), False),
    ("claim_sources", ("ephemeral-claims", "job-claims"), False),
)


@pytest.mark.parametrize(("option", "gone", "beyond_baseline"), SWITCHES)
def test_each_allowance_drops_its_rules_and_only_them(
    option: str, gone: tuple[str, ...], beyond_baseline: bool
) -> None:
    objects = rbac_for(training(), job_policy=JobPolicy(**{option: True}))
    vap = policies(objects)["ValidatingAdmissionPolicy"]
    said = messages(vap)
    assert len(said) == len(DEFAULT_RULES) - len(gone)
    for name, words in DEFAULT_RULES:
        assert any(words in m for m in said) == (name not in gone), name
    assert f"allowed: {option}" in vap["metadata"]["annotations"]["hera-volcano/parameters"]
    # What baseline refuses, the namespace must not enforce, or the pods Volcano creates would be refused.
    [namespace] = [o for o in objects if o["kind"] == "Namespace"]
    labels = namespace["metadata"]["labels"]
    assert labels["pod-security.kubernetes.io/enforce"] == ("privileged" if beyond_baseline else "baseline")
    assert labels["pod-security.kubernetes.io/warn"] == labels["pod-security.kubernetes.io/audit"] == "baseline"


@pytest.mark.parametrize(
    ("option", "beyond_baseline"),
    [
        ({"capabilities": ["NET_BIND_SERVICE"]}, False),
        ({"capabilities": ["IPC_LOCK"]}, True),
        ({"sysctls": ["net.ipv4.tcp_syncookies"]}, False),
        ({"sysctls": ["net.core.somaxconn"]}, True),
        ({"runtime_classes": ["nvidia"]}, False),
        ({"secrets": ["hf-token"]}, False),
    ],
)
def test_a_list_beyond_baseline_lifts_enforcement_too(option: dict[str, list[str]], beyond_baseline: bool) -> None:
    assert JobPolicy(**option).enforced() == ("privileged" if beyond_baseline else "baseline")  # type: ignore[arg-type]


def test_the_namespace_gets_pod_security_labels_first_pinned_to_the_version_the_rules_mirror() -> None:
    objects = rbac_for(training())
    namespace = objects[0]
    assert (namespace["kind"], namespace["metadata"]["name"]) == ("Namespace", "ml")
    assert namespace["metadata"]["labels"] == {
        "pod-security.kubernetes.io/enforce": "baseline",
        "pod-security.kubernetes.io/enforce-version": rules.PSA_VERSION,
        "pod-security.kubernetes.io/warn": "baseline",
        "pod-security.kubernetes.io/warn-version": "latest",
        "pod-security.kubernetes.io/audit": "baseline",
        "pod-security.kubernetes.io/audit-version": "latest",
    }
    # GitOps tools that sync the RBAC never prune or delete the namespace (it holds Argo and the workflows).
    annotations = namespace["metadata"]["annotations"]
    assert annotations["argocd.argoproj.io/sync-options"] == "Prune=false,Delete=false"
    assert annotations["kustomize.toolkit.fluxcd.io/prune"] == "disabled"
    restricted = rbac_for(training(), job_policy=JobPolicy(pod_security="restricted"))[0]
    assert restricted["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "restricted"
    assert all(o["kind"] != "Namespace" for o in rbac_for(training(), job_policy=JobPolicy(pod_security=None)))
    assert all(o["kind"] != "Namespace" for o in rbac_for(training(), job_policy=None))


def _creating(*manifests: dict[str, Any]) -> dict[str, Any]:
    """A workflow whose resource steps create ``manifests`` as the account ``maker``."""
    templates = [
        {"name": f"t{i}", "resource": {"action": "create", "manifest": yaml.safe_dump(m)}}
        for i, m in enumerate(manifests)
    ]
    return {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Workflow",
        "metadata": {"name": "w", "namespace": "ml"},
        "spec": {"serviceAccountName": "maker", "entrypoint": "t0", "templates": templates},
    }


POD = {"containers": [{"name": "c", "image": "busybox"}]}
#: (a manifest a resource step creates, its policy's name prefix, where the pod spec is in its expressions).
KIND_CASES = (
    ({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": POD}, "hera-volcano-pods", "object.spec."),
    (
        {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"}, "spec": {"template": {"spec": POD}}},
        "hera-volcano-batch-jobs",
        "object.spec.template.spec.",
    ),
    (
        {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "c"},
         "spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": {"spec": POD}}}}},
        "hera-volcano-batch-cronjobs",
        "object.spec.jobTemplate.spec.template.spec.",
    ),
    (
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
         "spec": {"selector": {}, "template": {"spec": POD}}},
        "hera-volcano-deployments",
        "object.spec.template.spec.",
    ),
    (
        {"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobTemplate", "metadata": {"name": "t"},
         "spec": {"tasks": [{"name": "t", "template": {"spec": POD}}]}},
        "hera-volcano-jobtemplates",
        "t.template.spec.",
    ),
    (
        {"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow", "metadata": {"name": "f"},
         "spec": {"flows": [{"name": "t"}]}},
        "hera-volcano-jobflows",
        "f.patch.jobSpec.tasks",
    ),
    (
        {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "CronJob", "metadata": {"name": "c"},
         "spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"tasks": []}}}},
        "hera-volcano-cronjobs",
        "object.spec.jobTemplate.spec.tasks",
    ),
)  # fmt: skip


@pytest.mark.parametrize(("manifest", "prefix", "path"), KIND_CASES, ids=[c[1] for c in KIND_CASES])
def test_an_account_creating_another_covered_kind_gets_its_policy_at_its_pod_spec(
    manifest: dict[str, Any], prefix: str, path: str
) -> None:
    objects = rbac_for(_creating(manifest))
    [vap] = [o for o in objects if o["kind"] == "ValidatingAdmissionPolicy"]
    assert vap["metadata"]["name"] == f"{prefix}.ml.maker"
    [rule] = vap["spec"]["matchConstraints"]["resourceRules"]
    group, _, version = manifest["apiVersion"].rpartition("/")
    assert (rule["apiGroups"], rule["apiVersions"]) == ([group], [version])
    assert (group, rule["resources"][0]) in COVERED
    volcano = group.endswith("volcano.sh")
    assert len(vap["spec"]["validations"]) == len(DEFAULT_RULES) - (0 if volcano else 2), "job rules on Volcano's only"
    assert all(path in v["expression"] for v in vap["spec"]["validations"][: len(rules.POD_RULES)])
    assert objects[0]["kind"] == "Namespace"


def test_covered_is_every_kind_the_policy_renders() -> None:
    assert {("batch.volcano.sh", "jobs"), ("", "pods"), ("batch", "jobs"), ("flow.volcano.sh", "jobflows")} <= COVERED
    assert ("apps", "statefulsets") not in COVERED and ("apps", "daemonsets") not in COVERED


def test_listed_secrets_are_the_only_ones_the_pods_may_use() -> None:
    vap = policies(rbac_for(training(), job_policy=JobPolicy(secrets=["hf-token", "db"])))["ValidatingAdmissionPolicy"]
    assert variable(vap, "secrets") == "['db', 'hf-token']"
    assert any("mount or read a Secret other than db, hf-token" in m for m in messages(vap))


def test_the_rules_read_every_container_list_and_both_account_fields() -> None:
    """Init and ephemeral containers, and the deprecated serviceAccount, are ways around a rule that reads only
    containers and serviceAccountName."""
    vap = policies(rbac_for(training()))["ValidatingAdmissionPolicy"]
    by_words = {v["message"]: v["expression"] for v in vap["spec"]["validations"]}
    accounts = next(e for m, e in by_words.items() if "service account" in m)
    assert "t.template.spec.serviceAccountName" in accounts and "t.template.spec.serviceAccount)" in accounts
    for words in ("privileged", "Secret"):
        expression = next(e for m, e in by_words.items() if words in m)
        for containers in ("containers", "initContainers", "ephemeralContainers"):
            assert f"t.template.spec.{containers}.exists(c," in expression, (words, containers)
    secrets = next(e for m, e in by_words.items() if "Secret" in m)
    for reference in ("v.secret.secretName", "s.secret.name", "e.valueFrom.secretKeyRef.name", "e.secretRef.name"):
        assert reference in secrets
    hosts = next(e for m, e in by_words.items() if "network, PID or IPC namespace" in m)
    assert all(f"t.template.spec.{f}" in hosts for f in ("hostNetwork", "hostPID", "hostIPC"))


def test_every_message_expression_names_the_offending_tasks() -> None:
    """Those about the pods: a job's own rules (its claims, its plugins) are about no task."""
    vap = policies(rbac_for(training()))["ValidatingAdmissionPolicy"]
    validations = vap["spec"]["validations"]
    for v in validations[: len(rules.POD_RULES)]:
        assert v["messageExpression"].startswith("'" + v["message"] + ": task '")
        assert "t.name" in v["messageExpression"]
    assert all("messageExpression" not in v for v in validations[len(rules.POD_RULES) :])
    assert all("'" not in v["message"] for v in validations), "the message is a CEL string literal"


def test_no_policy_for_an_account_that_cannot_create_jobs_or_when_asked_for_none() -> None:
    with Workflow(generate_name="c-", namespace="ml", entrypoint="c", service_account_name="cleaner") as w:
        Container(name="c", image="busybox", command=["true"])
    assert policies(rbac_for(w)) == {}
    assert policies(rbac_for(training(), job_policy=None)) == {}


def test_each_account_that_creates_jobs_gets_its_own_policy() -> None:
    objects = rbac_for(training("a"), training("b"))
    names = [o["metadata"]["name"] for o in objects if o["kind"] == "ValidatingAdmissionPolicy"]
    assert names == ["hera-volcano-jobs.ml.a", "hera-volcano-jobs.ml.b"]


def test_long_names_give_valid_distinct_policy_names() -> None:
    from hera_volcano.kube import names

    long = {policy_name("ml", "a" * 240 + end) for end in ("x", "y")}
    assert len(long) == 2 and all(len(n) <= 253 and names.dns1123_subdomain(n) is None for n in long)


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"service_accounts": ["Not Valid"]}, "service_accounts[0]"),
        ({"service_accounts": "runner"}, "service_accounts"),
        ({"secrets": ["a/b"]}, "secrets[0]"),
        ({"privileged": "yes"}, "privileged"),
        ({"capabilities": ["ipc_lock"]}, "capabilities[0]"),
        ({"sysctls": ["net core"]}, "sysctls[0]"),
        ({"runtime_classes": ["Kata"]}, "runtime_classes[0]"),
        ({"host_ports": 1}, "host_ports"),
        ({"pod_security": "privileged"}, "pod_security"),
    ],
)
def test_bad_parameters_are_refused(kwargs: dict[str, Any], field: str) -> None:
    with pytest.raises(ValidationError) as e:
        JobPolicy(**kwargs)
    assert e.value.field == field


def test_a_policy_that_is_not_a_job_policy_is_refused() -> None:
    with pytest.raises(ValidationError) as e:
        rbac_for(training(), job_policy={"privileged": True})  # type: ignore[arg-type]
    assert e.value.field == "job_policy"


def test_cli_options_set_the_parameters() -> None:
    r = run(
        "hera_volcano", "rbac", "--allow-service-account", "reader", "--allow-secret", "hf-token",
        "--allow-host-paths",
    )  # fmt: skip
    assert r.code == 0, r.err
    [vap] = [d for d in yaml.safe_load_all(r.out) if d["kind"] == "ValidatingAdmissionPolicy"]
    assert variable(vap, "accounts") == "['reader', 'volcano-workflows']"
    assert variable(vap, "secrets") == "['hf-token']"
    assert not any("hostPath" in m for m in messages(vap))
    more = run(
        "hera_volcano", "rbac", "--allow-capability", "IPC_LOCK", "--allow-sysctl", "net.core.somaxconn",
        "--allow-runtime-class", "nvidia", "--allow-host-ports", "--allow-unconfined", "--allow-node-name",
        "--allow-claim-sources", "--pod-security", "restricted",
    )  # fmt: skip
    assert more.code == 0, more.err
    documents = list(yaml.safe_load_all(more.out))
    [vap] = [d for d in documents if d["kind"] == "ValidatingAdmissionPolicy"]
    assert "'IPC_LOCK'" in variable(vap, "capabilities") and variable(vap, "runtimeClasses") == "['nvidia']"
    assert "'net.core.somaxconn'" in variable(vap, "sysctls")
    said = messages(vap)
    assert not any(w in m for m in said for w in ("hostPort", "seccomp", "nodeName", "PersistentVolume"))
    [namespace] = [d for d in documents if d["kind"] == "Namespace"]
    assert namespace["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "privileged"
    assert namespace["metadata"]["labels"]["pod-security.kubernetes.io/warn"] == "restricted"
    bad = run("hera_volcano", "rbac", "--allow-capability", "ipc_lock")
    assert bad.code == 2 and "capabilities[0]" in bad.err and len(bad.err.splitlines()) == 1
    without = run("hera_volcano", "rbac", "--no-admission-policy")
    assert "ValidatingAdmissionPolicy" not in without.out and "kind: Namespace" not in without.out
    assert "kind: Namespace" not in run("hera_volcano", "rbac", "--pod-security", "none").out
    both = run("hera_volcano", "rbac", "--no-admission-policy", "--allow-privileged")
    assert (both.code, both.out) == (2, "") and len(both.err.splitlines()) == 1


# ---------------------------------------------------------------- the rules evaluated (a model of CEL)


def _policy_of(kind: str, account: str = "maker") -> dict[str, Any]:
    """The policy ``rbac_for`` renders for an account whose resource step creates ``kind`` (of policy_cases)."""
    manifest = yaml.safe_load(cases.document(kind, account, {}, {}))
    [vap] = [o for o in rbac_for(_creating(manifest)) if o["kind"] == "ValidatingAdmissionPolicy"]
    return vap


@pytest.mark.parametrize("kind", list(cases.KINDS))
def test_every_candidate_and_control_is_refused_by_its_rule_and_what_should_pass_passes(kind: str) -> None:
    """The tables the e2e test sends to the API server, evaluated offline: each refused by the rule of its words
    (and only by that one), the plain object and the accepted cases admitted. Gathers every disagreement."""
    vap = _policy_of(kind)
    found = []
    plain = cel.admits(vap, yaml.safe_load(cases.document(kind, "maker", {}, {})))
    if plain:
        found.append(f"plain: {plain}")
    for name, pod, job, words in cases.CANDIDATES + cases.CONTROLS + cases.ACCEPTED:
        if job and not cases.KINDS[kind][3]:
            continue
        account = None if name.startswith("no-account") else "maker"
        failed = cel.admits(vap, yaml.safe_load(cases.document(kind, account, pod, job)))
        if not words and failed:
            found.append(f"{name}: refused: {failed}")
        elif words and (len(failed) != 1 or words not in failed[0]):
            found.append(f"{name}: {failed or 'accepted'}")
    assert not found, "\n".join(found)


def test_each_switch_lets_its_candidates_through() -> None:
    """Allowed deliberately, a candidate passes: the switch reaches the rule."""
    switched = {
        "capabilities-all": JobPolicy(capabilities=["ALL"], privileged=False),
        "seccomp-unconfined": JobPolicy(unconfined=True),
        "host-port": JobPolicy(host_ports=True),
        "runtime-class": JobPolicy(runtime_classes=["privileged-runtime"]),
        "node-name": JobPolicy(node_names=True),
        "job-claim-named-pv": JobPolicy(claim_sources=True),
        "image-pull-secret": JobPolicy(secrets=["other-registry"]),
        "csi-secret": JobPolicy(secrets=["other-secret"]),
        "no-account-token": JobPolicy(service_accounts=["default"]),
        "sysctl-unsafe": JobPolicy(sysctls=["kernel.msgmax"]),
    }
    by_name = {c[0]: c for c in cases.CANDIDATES}
    manifest = yaml.safe_load(cases.document("Volcano Job", "maker", {}, {}))
    found = []
    for name, policy in switched.items():
        _, pod, job, _ = by_name[name]
        [vap] = [
            o for o in rbac_for(_creating(manifest), job_policy=policy) if o["kind"] == "ValidatingAdmissionPolicy"
        ]
        account = None if name.startswith("no-account") else "maker"
        failed = cel.admits(vap, yaml.safe_load(cases.document("Volcano Job", account, pod, job)))
        if failed:
            found.append(f"{name}: {failed}")
    assert not found, "\n".join(found)


def test_the_bundled_workflows_jobs_pass_the_policy() -> None:
    from hera_volcano.argo.samples import resolved_manifests
    from hera_volcano.examples.bundled import bundled

    workflows = [w.to_dict() if hasattr(w, "to_dict") else w for w in bundled("argo", "volcano-workflows")]
    vap = policies(rbac_for(*workflows))["ValidatingAdmissionPolicy"]
    checked, found = 0, []
    for wf in workflows:
        for _, template, text in resolved_manifests(wf):
            for job in yaml.safe_load_all(text):
                if job and job.get("kind") == "Job" and str(job.get("apiVersion")).startswith("batch.volcano.sh"):
                    checked += 1
                    failed = cel.admits(vap, job)
                    if failed:
                        found.append(f"{template}: {failed}")
    assert checked >= 5 and not found, found


def test_the_model_reports_an_error_where_the_api_server_would() -> None:
    """A field read without has() is an error on the API server (failurePolicy Fail refuses the job): the model
    says so too, and CEL's || lets a true side win over an error on the other."""
    assert cel.evaluate(cel.parse("has(object.a) && object.a.b == 1 || true"), {"object": {}}) is True
    with pytest.raises(cel.CelError):
        cel.evaluate(cel.parse("object.a == 1"), {"object": {}})
