"""Kubernetes' security and scheduling rules for a pod spec (kube/pod_security, kube/pod_scheduling): for each rule
a refused case, in the validation's words, and the accepted boundary; the same rules hold in a Volcano Job's task,
in lint and in the builders' PodSettings."""

from __future__ import annotations

from typing import Any

import pytest

from hera_volcano import PodSettings, Program, ValidationError, batch_job
from hera_volcano.kube.pod_scheduling import check_pod_scheduling
from hera_volcano.kube.pod_security import check_pod_security
from hera_volcano.volcano.rules import check_job

Spec = dict[str, Any]
MAIN = {"name": "main", "image": "busybox"}


def pod(container: Spec | None = None, **fields: object) -> Spec:
    """A pod spec with one container (``container`` added to it) and ``fields``."""
    return {"containers": [{**MAIN, **(container or {})}], **fields}


def found(spec: Spec) -> list[tuple[str, str]]:
    """(path, message) of every error both modules find in ``spec``."""
    findings = [*check_pod_security(spec, "spec"), *check_pod_scheduling(spec, "spec")]
    assert all(f.severity == "error" for f in findings)
    return [(f.path, f.message) for f in findings]


def one(spec: Spec, path: str, words: str) -> None:
    """``spec`` breaks exactly one rule, at ``path``, saying ``words``."""
    findings = found(spec)
    assert len(findings) == 1, findings
    assert findings[0][0] == path and words in findings[0][1], findings


def context(**fields: object) -> Spec:
    return {"securityContext": fields}


# ---- security contexts -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "bad", "good"),
    [
        ("fsGroupChangePolicy", "Sometimes", "OnRootMismatch"),
        ("fsGroupChangePolicy", "always", "Always"),
        ("seLinuxChangePolicy", "Never", "MountOption"),
        ("supplementalGroupsPolicy", "Union", "Strict"),
    ],
)
def test_pod_context_policies_take_only_the_values_kubernetes_knows(field: str, bad: str, good: str) -> None:
    one(pod(securityContext={field: bad}), f"spec.securityContext.{field}", f"unsupported value {bad!r}")
    assert found(pod(securityContext={field: good})) == []


def test_supplemental_groups_are_ids_from_0_to_int32_max() -> None:
    one(pod(securityContext={"supplementalGroups": [5, -1]}), "spec.securityContext.supplementalGroups[1]", "between 0")
    one(
        pod(securityContext={"supplementalGroups": [2**31]}), "spec.securityContext.supplementalGroups[0]", "2147483647"
    )
    assert found(pod(securityContext={"supplementalGroups": [0, 2**31 - 1]})) == []


@pytest.mark.parametrize("name", ["bad name", "Net.ipv4.x", "net..x", "net.", "-net.x", "x" * 254, "net.x\n"])
def test_sysctl_names_match_kubernetes_pattern(name: str) -> None:
    sysctls = [{"name": name, "value": "1"}]
    one(pod(securityContext={"sysctls": sysctls}), "spec.securityContext.sysctls[0].name", "match regex")


@pytest.mark.parametrize("name", ["kernel.shm_rmid_forced", "net/ipv4/ip_forward", "net.ipv4.conf.eth0/1.rp_filter"])
def test_sysctl_names_kubernetes_accepts(name: str) -> None:
    assert found(pod(securityContext={"sysctls": [{"name": name, "value": "1"}]})) == []


def test_sysctls_once_each_and_named() -> None:
    twice = [{"name": "kernel.msgmax", "value": "1"}, {"name": "kernel.msgmax", "value": "2"}]
    one(pod(securityContext={"sysctls": twice}), "spec.securityContext.sysctls[1].name", "duplicate sysctl")
    one(pod(securityContext={"sysctls": [{"value": "1"}]}), "spec.securityContext.sysctls[0].name", "is required")


@pytest.mark.parametrize(
    ("host", "name", "words"),
    [
        ("hostNetwork", "net.ipv4.tcp_syncookies", "'hostNetwork' is true"),
        ("hostNetwork", "net/ipv4/tcp_syncookies", "'hostNetwork' is true"),
        ("hostIPC", "kernel.shmmax", "'hostIPC' is true"),
        ("hostIPC", "kernel.sem", "'hostIPC' is true"),
        ("hostIPC", "fs.mqueue.msg_max", "'hostIPC' is true"),
    ],
)
def test_namespaced_sysctls_are_refused_where_the_pod_shares_the_hosts_namespace(
    host: str, name: str, words: str
) -> None:
    sysctls = [{"name": name, "value": "1"}]
    one(pod(securityContext={"sysctls": sysctls}, **{host: True}), "spec.securityContext.sysctls[0].name", words)
    assert found(pod(securityContext={"sysctls": sysctls}, **{host: False})) == []
    other = "hostIPC" if host == "hostNetwork" else "hostNetwork"
    assert found(pod(securityContext={"sysctls": sysctls}, **{other: True})) == []


def test_share_process_namespace_and_host_pid_cannot_both_be_enabled() -> None:
    one(pod(shareProcessNamespace=True, hostPID=True), "spec.shareProcessNamespace", "cannot both be enabled")
    assert found(pod(shareProcessNamespace=True, hostPID=False)) == []
    assert found(pod(shareProcessNamespace=False, hostPID=True)) == []


@pytest.mark.parametrize("host", ["hostNetwork", "hostPID", "hostIPC"])
def test_host_namespaces_are_forbidden_with_a_user_namespace(host: str) -> None:
    one(pod(hostUsers=False, **{host: True}), f"spec.{host}", "when `hostUsers` is false")
    assert found(pod(hostUsers=True, **{host: True})) == []
    assert found(pod(hostUsers=False)) == []


def test_privilege_escalation_off_refuses_privileged_and_cap_sys_admin() -> None:
    at = "spec.containers[0].securityContext"
    one(pod(context(allowPrivilegeEscalation=False, privileged=True)), at, "`privileged` to true")
    sys_admin = {"add": ["NET_ADMIN", "CAP_SYS_ADMIN"]}
    one(pod(context(allowPrivilegeEscalation=False, capabilities=sys_admin)), at, "`capabilities.Add` CAP_SYS_ADMIN")
    # Kubernetes compares the exact name: SYS_ADMIN (the usual spelling) passes, as escalation left on does.
    assert found(pod(context(allowPrivilegeEscalation=False, capabilities={"add": ["SYS_ADMIN"]}))) == []
    assert found(pod(context(allowPrivilegeEscalation=True, privileged=True, capabilities=sys_admin))) == []
    assert found(pod(context(allowPrivilegeEscalation=False, privileged=False))) == []


def test_init_containers_are_held_to_the_container_rules_too() -> None:
    spec = pod(initContainers=[{"name": "setup", "image": "busybox", **context(procMount="Bogus")}])
    one(spec, "spec.initContainers[0].securityContext.procMount", "unsupported value 'Bogus'")


def test_proc_mount_is_default_or_unmasked_and_unmasked_needs_a_user_namespace() -> None:
    at = "spec.containers[0].securityContext.procMount"
    one(pod(context(procMount="Bogus")), at, "unsupported value 'Bogus': supported values: Default, Unmasked")
    one(pod(context(procMount="Unmasked")), at, "`hostUsers` must be false to use `Unmasked`")
    one(pod(context(procMount="Unmasked"), hostUsers=True), at, "`hostUsers` must be false")
    assert found(pod(context(procMount="Unmasked"), hostUsers=False)) == []
    assert found(pod(context(procMount="Default"))) == []


@pytest.mark.parametrize("where", ["pod", "container"])
def test_seccomp_profiles_at_pod_and_container_level(where: str) -> None:
    def spec(profile: Spec) -> tuple[Spec, str]:
        if where == "pod":
            return pod(securityContext={"seccompProfile": profile}), "spec.securityContext.seccompProfile"
        return pod(context(seccompProfile=profile)), "spec.containers[0].securityContext.seccompProfile"

    cases = [
        ({"type": "Localhost"}, "localhostProfile", "must be set when seccomp type is Localhost"),
        ({"type": "RuntimeDefault", "localhostProfile": "a.json"}, "localhostProfile", "can only be set when"),
        ({"type": "Unconfined", "localhostProfile": ""}, "localhostProfile", "can only be set when"),
        ({"type": "Localhost", "localhostProfile": "/etc/a.json"}, "localhostProfile", "must be a relative path"),
        ({"type": "Localhost", "localhostProfile": "a/../../b.json"}, "localhostProfile", "must not contain '..'"),
        ({"type": "Default"}, "type", "unsupported value 'Default'"),
        ({"localhostProfile": "a.json"}, "type", "type is required when seccompProfile is set"),
    ]
    for profile, field, words in cases:
        doc, at = spec(profile)
        findings = found(doc)
        assert findings and all(p.startswith(at) for p, _ in findings), (profile, findings)
        assert (f"{at}.{field}", words) in [(p, m[: len(words)]) for p, m in findings], (profile, findings)
    for profile in ({"type": "Localhost", "localhostProfile": "profiles/a..b.json"}, {"type": "RuntimeDefault"}):
        assert found(spec(profile)[0]) == []


@pytest.mark.parametrize("where", ["pod", "container"])
def test_apparmor_profiles_at_pod_and_container_level(where: str) -> None:
    def spec(profile: Spec) -> tuple[Spec, str]:
        if where == "pod":
            return pod(securityContext={"appArmorProfile": profile}), "spec.securityContext.appArmorProfile"
        return pod(context(appArmorProfile=profile)), "spec.containers[0].securityContext.appArmorProfile"

    cases = [
        ({"type": "Localhost"}, "localhostProfile", "must be set when AppArmor type is Localhost"),
        ({"type": "Localhost", "localhostProfile": ""}, "localhostProfile", "must be set when AppArmor"),
        ({"type": "Localhost", "localhostProfile": " p"}, "localhostProfile", "must not be padded with whitespace"),
        ({"type": "Localhost", "localhostProfile": "p" * 4096}, "localhostProfile", "at most 4095 bytes"),
        ({"type": "Unconfined", "localhostProfile": "p"}, "localhostProfile", "can only be set when AppArmor"),
        ({"type": "Complain"}, "type", "unsupported value 'Complain'"),
        ({}, "type", "type is required when appArmorProfile is set"),
    ]
    for profile, field, words in cases:
        doc, at = spec(profile)
        one(doc, f"{at}.{field}", words)
    for profile in ({"type": "Localhost", "localhostProfile": "p" * 4095}, {"type": "RuntimeDefault"}):
        assert found(spec(profile)[0]) == []


# ---- the pod's OS ------------------------------------------------------------------------------------------------


def test_os_name_is_linux_or_windows() -> None:
    one(pod(os={"name": "plan9"}), "spec.os.name", "unsupported value 'plan9': supported values: linux, windows")
    one(pod(os={"name": ""}), "spec.os.name", "cannot be empty")
    one(pod(os={}), "spec.os.name", "cannot be empty")
    assert found(pod(os={"name": "linux"})) == found(pod(os={"name": "windows"})) == []


@pytest.mark.parametrize(
    ("fields", "at"),
    [
        ({"securityContext": {"seLinuxOptions": {"type": "t"}}}, "spec.securityContext.seLinuxOptions"),
        ({"securityContext": {"runAsUser": 1000}}, "spec.securityContext.runAsUser"),
        ({"securityContext": {"sysctls": [{"name": "kernel.msgmax", "value": "1"}]}}, "spec.securityContext.sysctls"),
        ({"hostUsers": True}, "spec.hostUsers"),
        ({"hostUsers": False}, "spec.hostUsers"),
        ({"shareProcessNamespace": False}, "spec.shareProcessNamespace"),
        ({"hostPID": True}, "spec.hostPID"),
        ({"containers": [{**MAIN, **context(privileged=False)}]}, "spec.containers[0].securityContext.privileged"),
        ({"containers": [{**MAIN, **context(capabilities={})}]}, "spec.containers[0].securityContext.capabilities"),
    ],
)
def test_a_windows_pod_sets_no_linux_security_field(fields: Spec, at: str) -> None:
    one({**pod(), "os": {"name": "windows"}, **fields}, at, "cannot be set for a windows pod")
    assert all(at not in path for path, _ in found({**pod(), **fields}))


def test_a_windows_pod_may_leave_host_namespaces_off_and_set_windows_options() -> None:
    options = {"windowsOptions": {"runAsUserName": "ContainerUser"}}
    spec = {**pod(context(**options)), "os": {"name": "windows"}, "hostPID": False, "securityContext": options}
    assert found(spec) == []


def test_a_linux_pod_sets_no_windows_options() -> None:
    options = {"runAsUserName": "ContainerUser"}
    spec = {**pod(context(windowsOptions=options)), "os": {"name": "linux"}}
    one(spec, "spec.containers[0].securityContext.windowsOptions", "windows options cannot be set for a linux pod")
    spec = {**pod(), "os": {"name": "linux"}, "securityContext": {"windowsOptions": options}}
    one(spec, "spec.securityContext.windowsOptions", "windows options cannot be set for a linux pod")
    assert found({**pod(context(windowsOptions=options))}) == []  # no OS named: not judged


# ---- affinity ----------------------------------------------------------------------------------------------------

REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"


def node_affinity(*expressions: Spec, preferred: bool = False, weight: int = 1) -> Spec:
    term = {"matchExpressions": list(expressions)}
    if preferred:
        return {"affinity": {"nodeAffinity": {PREFERRED: [{"weight": weight, "preference": term}]}}}
    return {"affinity": {"nodeAffinity": {REQUIRED: {"nodeSelectorTerms": [term]}}}}


NODE_TERM = f"spec.affinity.nodeAffinity.{REQUIRED}.nodeSelectorTerms[0].matchExpressions[0]"


@pytest.mark.parametrize(
    ("requirement", "field", "words"),
    [
        ({"operator": "In"}, "values", "must be specified when `operator` is 'In' or 'NotIn'"),
        ({"operator": "NotIn", "values": []}, "values", "must be specified when `operator` is 'In' or 'NotIn'"),
        ({"operator": "Exists", "values": ["a"]}, "values", "may not be specified when `operator` is 'Exists'"),
        ({"operator": "Gt", "values": ["4", "8"]}, "values", "must be specified single value when `operator`"),
        ({"operator": "Lt"}, "values", "must be specified single value"),
        ({"operator": "Near", "values": ["a"]}, "operator", "not a valid selector operator"),
        ({"operator": "In", "values": ["a b"]}, "values[0]", "label value"),
        ({"key": "a b", "operator": "Exists"}, "key", "label key"),
    ],
)
def test_required_node_affinity_requirements(requirement: Spec, field: str, words: str) -> None:
    one(pod(**node_affinity({"key": "zone", **requirement})), f"{NODE_TERM}.{field}", words)


@pytest.mark.parametrize(
    "requirement",
    [
        {"operator": "In", "values": ["a"]},
        {"operator": "NotIn", "values": ["a", "b"]},
        {"operator": "DoesNotExist"},
        {"operator": "Gt", "values": ["4"]},
    ],
)
def test_node_affinity_requirements_kubernetes_accepts(requirement: Spec) -> None:
    assert found(pod(**node_affinity({"key": "zone", **requirement}))) == []


def test_preferred_node_affinity_weighs_1_to_100_and_takes_any_label_value() -> None:
    at = f"spec.affinity.nodeAffinity.{PREFERRED}[0]"
    bad_value = {"key": "zone", "operator": "In", "values": ["a b"]}
    assert found(pod(**node_affinity(bad_value, preferred=True, weight=100))) == []
    one(pod(**node_affinity(bad_value, preferred=True, weight=0)), f"{at}.weight", "must be in the range 1-100")
    one(pod(**node_affinity(bad_value, preferred=True, weight=101)), f"{at}.weight", "must be in the range 1-100")
    in_without = {"key": "zone", "operator": "In"}
    one(pod(**node_affinity(in_without, preferred=True)), f"{at}.preference.matchExpressions[0].values", "'In'")


def test_required_node_affinity_needs_a_term_and_match_fields_name_a_node() -> None:
    empty = {"affinity": {"nodeAffinity": {REQUIRED: {"nodeSelectorTerms": []}}}}
    one(pod(**empty), f"spec.affinity.nodeAffinity.{REQUIRED}.nodeSelectorTerms", "at least one node selector term")
    fields = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-1", "node-2"]}]}
    spec = pod(affinity={"nodeAffinity": {REQUIRED: {"nodeSelectorTerms": [fields]}}})
    one(spec, f"spec.affinity.nodeAffinity.{REQUIRED}.nodeSelectorTerms[0].matchFields[0].values", "only one value")
    fields["matchFields"][0]["values"] = ["node-1"]
    assert found(spec) == []
    fields["matchFields"][0]["key"] = "metadata.uid"
    one(spec, f"spec.affinity.nodeAffinity.{REQUIRED}.nodeSelectorTerms[0].matchFields[0].key", "field selector key")


@pytest.mark.parametrize("kind", ["podAffinity", "podAntiAffinity"])
def test_pod_affinity_terms_need_a_topology_key_and_valid_selectors(kind: str) -> None:
    def spec(term: Spec, weight: int | None = None) -> Spec:
        if weight is None:
            return pod(affinity={kind: {REQUIRED: [term]}})
        return pod(affinity={kind: {PREFERRED: [{"weight": weight, "podAffinityTerm": term}]}})

    at = f"spec.affinity.{kind}.{REQUIRED}[0]"
    selector = {"matchLabels": {"app": "x"}}
    one(spec({"labelSelector": selector, "topologyKey": ""}), f"{at}.topologyKey", "can not be empty")
    one(spec({"labelSelector": selector}), f"{at}.topologyKey", "can not be empty")
    one(spec({"labelSelector": selector, "topologyKey": "a b"}), f"{at}.topologyKey", "label key")
    bad = {"matchExpressions": [{"key": "app", "operator": "Exists", "values": ["x"]}]}
    one(spec({"labelSelector": bad, "topologyKey": "zone"}), f"{at}.labelSelector.matchExpressions[0].values", "may")
    one(
        spec({"namespaceSelector": {"matchLabels": {"a": "b c"}}, "topologyKey": "zone"}),
        f"{at}.namespaceSelector.matchLabels.a",
        "label value",
    )
    one(spec({"namespaces": ["Argo"], "topologyKey": "zone"}), f"{at}.namespaces[0]", "DNS-1123 label")
    assert found(spec({"labelSelector": selector, "topologyKey": "kubernetes.io/hostname"})) == []
    preferred = f"spec.affinity.{kind}.{PREFERRED}[0]"
    one(spec({"topologyKey": "zone"}, weight=0), f"{preferred}.weight", "must be in the range 1-100")
    one(spec({"topologyKey": ""}, weight=1), f"{preferred}.podAffinityTerm.topologyKey", "can not be empty")


# ---- topology spread -----------------------------------------------------------------------------------------------


def spread(*constraints: Spec) -> Spec:
    """A pod spec with these topology spread constraints, each a valid one changed (a None value leaves a field out)."""
    base = {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}
    merged = [{k: v for k, v in (base | c).items() if v is not None} for c in constraints]
    return pod(topologySpreadConstraints=merged)


@pytest.mark.parametrize(
    ("constraint", "field", "words"),
    [
        ({"maxSkew": 0}, "maxSkew", "must be greater than zero"),
        ({"maxSkew": -1}, "maxSkew", "must be greater than zero"),
        ({"maxSkew": None}, "maxSkew", "must be greater than zero"),
        ({"topologyKey": ""}, "topologyKey", "can not be empty"),
        ({"whenUnsatisfiable": "Maybe"}, "whenUnsatisfiable", "unsupported value 'Maybe'"),
        ({"whenUnsatisfiable": None}, "whenUnsatisfiable", "unsupported value ''"),
        ({"minDomains": 0}, "minDomains", "must be greater than zero"),
        ({"whenUnsatisfiable": "ScheduleAnyway", "minDomains": 2}, "minDomains", "can only use minDomains if"),
        ({"nodeAffinityPolicy": "Always"}, "nodeAffinityPolicy", "unsupported value 'Always'"),
        ({"nodeTaintsPolicy": "honor"}, "nodeTaintsPolicy", "unsupported value 'honor'"),
        ({"matchLabelKeys": ["app"]}, "matchLabelKeys", "must not be specified when labelSelector is not set"),
        ({"labelSelector": {"matchLabels": {"a b": "x"}}}, "labelSelector.matchLabels[a b]", "label key"),
    ],
)
def test_topology_spread_constraints(constraint: Spec, field: str, words: str) -> None:
    one(spread(constraint), f"spec.topologySpreadConstraints[0].{field}", words)


def test_topology_spread_constraints_kubernetes_accepts() -> None:
    selector = {"matchLabels": {"app": "x"}}
    assert found(spread({"maxSkew": 1, "minDomains": 1, "labelSelector": selector, "matchLabelKeys": ["team"]})) == []
    assert found(spread({"whenUnsatisfiable": "ScheduleAnyway", "nodeAffinityPolicy": "Honor"})) == []
    assert found(spread({}, {"topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway"})) == []


def test_one_constraint_per_topology_key_and_action() -> None:
    one(spread({}, {"maxSkew": 2}), "spec.topologySpreadConstraints[0].{topologyKey, whenUnsatisfiable}", "duplicate")


# ---- where the rules hold ------------------------------------------------------------------------------------------


def test_a_volcano_jobs_tasks_are_held_to_them() -> None:
    spec = pod(securityContext={"fsGroupChangePolicy": "Sometimes"}, **node_affinity({"key": "zone", "operator": "In"}))
    job = {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": "j"},
        "spec": {"minAvailable": 1, "tasks": [{"name": "t", "replicas": 1, "template": {"spec": spec}}]},
    }
    paths = {f.path for f in check_job(job) if f.severity == "error"}
    assert paths == {
        "spec.tasks[0].template.spec.securityContext.fsGroupChangePolicy",
        f"spec.tasks[0].template.{NODE_TERM}.values",
    }


def test_the_builders_pod_settings_are_held_to_them() -> None:
    with pytest.raises(ValidationError, match="cannot set `allowPrivilegeEscalation` to false"):
        escalation = {"allowPrivilegeEscalation": False, "privileged": True}
        PodSettings(patch={"spec": {"containers": [{"name": "main", "securityContext": escalation}]}})
    with pytest.raises(ValidationError, match="maxSkew: must be greater than zero"):
        constraint = {"maxSkew": 0, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}
        PodSettings(patch={"spec": {"topologySpreadConstraints": [constraint]}})
    PodSettings(patch={"spec": {"securityContext": {"fsGroupChangePolicy": "OnRootMismatch"}}})
    settings = PodSettings(affinity=node_affinity({"key": "zone", "operator": "In"})["affinity"])
    built = batch_job(name="j", image="busybox", program=Program.command(["true"]), pod=settings)
    with pytest.raises(ValidationError, match="must be specified when `operator` is 'In' or 'NotIn'"):
        built.to_dict()
    settings = PodSettings(affinity=node_affinity({"key": "zone", "operator": "In", "values": ["a"]})["affinity"])
    batch_job(name="j", image="busybox", program=Program.command(["true"]), pod=settings).to_dict()
