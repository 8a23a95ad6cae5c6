"""RBAC derived from what workflows do: rule by rule, bundled output vs upstream, files, bad input."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from hera_volcano import ValidationError, rbac_for
from hera_volcano.argo.defaults import SERVICE_ACCOUNT
from hera_volcano.argo.follow_logs import follow_logs_template
from hera_volcano.examples.bundled import bundled
from hera_volcano.kube import names
from hera_volcano.pods.run import CALLS
from hera_volcano.pods.sweep import PICK_CALLS
from hera_volcano.pods.workers import WAIT_CALLS
from hera_volcano.tools.rbac import CALLS_ANNOTATION, plural
from hera_volcano.tools.rbac.pods import parse_calls, undeclared_scripts
from tests.commands import run
from tests.job_steps import job_step


def wf(templates: list[dict[str, Any]], sa: str | None = "runner", kind: str = "Workflow") -> dict[str, Any]:
    spec: dict[str, Any] = {"entrypoint": templates[0]["name"], "templates": templates}
    if sa:
        spec["serviceAccountName"] = sa
    return {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": kind,
        "metadata": {"name": "w", "namespace": "ns"},
        "spec": spec,
    }


def resource(action: str, manifest: str, name: str = "r", **extra: Any) -> dict[str, Any]:
    return {"name": name, "resource": {"action": action, "manifest": manifest, **extra}}


NS_LABEL = "kubernetes.io/metadata.name"
VOLCANO_JOB = "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata:\n  generateName: j-\n"


def resource_of(template: Any) -> dict[str, Any]:
    """A Hera template as the rendered workflow holds it."""
    data: dict[str, Any] = template._build_template().model_dump(by_alias=True, exclude_none=True)
    return data


def rules(objects: list[dict[str, Any]], sa: str = "runner") -> dict[tuple[str, str], list[str]]:
    role = next(o for o in objects if o["kind"] == "Role" and o["metadata"]["name"] == f"{sa}-hera-volcano")
    return {(r["apiGroups"][0], r["resources"][0]): r["verbs"] for r in role["rules"]}


def test_every_pod_gets_task_results_only() -> None:
    got = rules(rbac_for(wf([{"name": "c", "container": {"image": "alpine", "command": ["echo"]}}])))
    assert got == {("argoproj.io", "workflowtaskresults"): ["create", "patch"]}


def test_a_pod_without_a_token_gets_its_executors_token_secret_and_task_results_for_that_account() -> None:
    sealed = {"name": "c", "container": {"image": "alpine"}, "automountServiceAccountToken": False}
    objects = rbac_for(wf([{**sealed, "executor": {"serviceAccountName": "{{workflow.serviceAccountName}}"}}]))
    [secret] = [o for o in objects if o["kind"] == "Secret"]
    assert secret["type"] == "kubernetes.io/service-account-token"
    assert secret["metadata"] == {
        "name": "runner.service-account-token",  # the name Argo looks for
        "namespace": "ns",
        "annotations": {"kubernetes.io/service-account.name": "runner"},
    }
    assert rules(objects) == {("argoproj.io", "workflowtaskresults"): ["create", "patch"]}
    other = rbac_for(wf([{**sealed, "executor": {"serviceAccountName": "reporter"}}]))
    assert rules(other, "reporter") == {("argoproj.io", "workflowtaskresults"): ["create", "patch"]}
    assert [o["metadata"]["name"] for o in other if o["kind"] == "Secret"] == ["reporter.service-account-token"]
    assert not [o for o in rbac_for(wf([{"name": "c", "container": {"image": "a"}}])) if o["kind"] == "Secret"]


def test_a_pod_without_a_token_and_no_executor_account_is_refused_as_argo_would() -> None:
    sealed = {"name": "c", "container": {"image": "alpine"}, "automountServiceAccountToken": False}
    with pytest.raises(ValidationError, match=r"w/c\.executor\.serviceAccountName: must be set"):
        rbac_for(wf([sealed]))


def test_dag_and_steps_templates_run_no_pod() -> None:
    objects = rbac_for(wf([{"name": "d", "dag": {"tasks": [{"name": "a", "template": "c"}]}},
                           {"name": "c", "container": {"image": "alpine"}}]))  # fmt: skip
    assert rules(objects) == {("argoproj.io", "workflowtaskresults"): ["create", "patch"]}


@pytest.mark.parametrize(
    ("action", "verbs"),
    [
        ("create", ["get", "create"]),
        ("apply", ["get", "create", "patch"]),
        ("patch", ["get", "patch"]),
        ("replace", ["get", "update"]),
        ("delete", ["get", "list", "watch", "delete"]),
        ("get", ["get"]),
    ],
)
def test_resource_actions_need_their_verbs_plus_get(action: str, verbs: list[str]) -> None:
    got = rules(rbac_for(wf([resource(action, VOLCANO_JOB)])))
    assert got[("batch.volcano.sh", "jobs")] == verbs


def test_core_group_and_kinds_become_resources() -> None:
    manifest = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n"
    got = rules(rbac_for(wf([resource("create", manifest)]), allow_uncovered=["configmaps"]))
    assert got[("", "configmaps")] == ["get", "create"]


@pytest.mark.parametrize(
    ("kind", "resource"),
    [("Job", "jobs"), ("PodGroup", "podgroups"), ("Policy", "policies"), ("NetworkPolicy", "networkpolicies"),
     ("Ingress", "ingresses"), ("Endpoints", "endpoints"), ("Queue", "queues"), ("Mesh", "meshes"),
     ("Proxy", "proxies"), ("Gateway", "gateways"), ("Box", "boxes"), ("Batch", "batches")],
)  # fmt: skip
def test_plural_of_kind(kind: str, resource: str) -> None:
    assert plural(kind) == resource


def test_kubectl_followers_read_pods_and_logs() -> None:
    follower = {
        "name": "f",
        "metadata": {"annotations": {CALLS_ANNOTATION: "get pods, get pods/log"}},
        "container": {"image": "k", "command": ["bash", "-c"], "args": ["kubectl logs -f x"]},
    }
    waiter = {"name": "g", "container": {"image": "k", "command": ["kubectl", "wait", "pod", "x"]}}
    got = rules(rbac_for(wf([follower, waiter])))
    assert got[("", "pods")] == ["get", "list", "watch"]
    assert got[("", "pods/log")] == ["get"]
    only_wait = rules(rbac_for(wf([waiter])))
    assert ("", "pods/log") not in only_wait


def test_our_log_follower_gets_exactly_the_calls_it_declares() -> None:
    """The follower's program declares what it calls (pods/run.py CALLS): its Role is that, not a reading of its
    code; a user's own template beside it gets the calls it declares."""
    follower = resource_of(follow_logs_template(job_step("train"), name="f"))
    got = rules(rbac_for(wf([follower])))
    declared = {(group, name): list(verbs) for group, name, verbs in CALLS}
    assert got == {**declared, ("argoproj.io", "workflowtaskresults"): ["create", "patch"]}
    # get: the start limit reads it again; patch: the latest progress and metrics go on it (pods/progress).
    assert got[("batch.volcano.sh", "jobs")] == ["get", "list", "watch", "patch", "delete"]
    users = {
        "name": "u",
        "metadata": {"annotations": {CALLS_ANNOTATION: "get pods, get pods/log"}},
        "container": {"image": "k", "command": ["bash", "-c"], "args": ["kubectl logs -f x"]},
    }
    both = rules(rbac_for(wf([follower, users])))
    assert both[("", "pods/log")] == ["get"] and both[("", "pods")] == ["get", "list", "watch"]


def test_our_pods_are_known_by_their_annotation_not_by_a_comment_in_a_script() -> None:
    """A user's template whose script holds the program's old first line (the comment that once marked our pods)
    gains nothing; a pod template annotated with a part of the program gets that part's calls; an unknown part is
    refused, naming the annotation."""
    from hera_volcano.pods import program

    bootstrap = program.bootstrap()
    assert bootstrap.startswith("# hera-volcano log follower: hera_volcano/pods"), "the old marker text is still there"
    impostor = {"name": "u", "container": {"image": "python", "command": ["python3", "-c"], "args": [bootstrap]}}
    assert rules(rbac_for(wf([impostor]))) == {("argoproj.io", "workflowtaskresults"): ["create", "patch"]}
    waiting = {**impostor, "container": {**impostor["container"], "args": [bootstrap, "wait-for-workers"]}}
    assert ("", "pods") not in rules(rbac_for(wf([waiting])))
    for part, calls in ((program.FOLLOWER, CALLS), (program.WAIT, WAIT_CALLS), (program.PICK, PICK_CALLS)):
        annotated = {
            "name": "a",
            "metadata": {"annotations": program.pod_annotations(part)},
            "container": {"image": "x"},
        }
        got = rules(rbac_for(wf([annotated])))
        assert got == {
            **{(g, r): list(v) for g, r, v in calls},
            ("argoproj.io", "workflowtaskresults"): ["create", "patch"],
        }
    unknown = {"name": "a", "metadata": {"annotations": {program.PROGRAM_ANNOTATION: "all"}}, "container": {}}
    with pytest.raises(ValidationError, match=r"w/a\.metadata\.annotations\[hera-volcano/program\]: must be one of"):
        rbac_for(wf([unknown]))
    with pytest.raises(ValueError, match="part must be one of follower, wait, pick"):
        program.pod_annotations("all")  # type: ignore[arg-type]


def test_the_follower_template_and_the_mpi_master_carry_their_parts_annotation() -> None:
    from hera_volcano import Program, mpi_job
    from hera_volcano.pods import program

    follower = resource_of(follow_logs_template(job_step("train"), name="f"))
    assert follower["metadata"]["annotations"] == {program.PROGRAM_ANNOTATION: program.FOLLOWER}
    job = mpi_job(image="x:1", program=Program.command(["a"]), service_account="mpi", name="j").to_dict()
    master, worker = (task["template"] for task in job["spec"]["tasks"])
    assert master["metadata"]["annotations"] == {program.PROGRAM_ANNOTATION: program.WAIT}
    assert program.PROGRAM_ANNOTATION not in worker.get("metadata", {}).get("annotations", {})


def test_rbac_holds_no_program_only_permissions() -> None:
    """The pods' program is code, not permissions: it is ``program_for``'s (tests/tools/test_program.py)."""
    follower = resource_of(follow_logs_template(job_step("train"), name="f"))
    kinds = {o["kind"] for o in rbac_for(wf([follower]), service_accounts=True)}
    # The follower patches the job it follows (its progress annotation): the admission policy of Volcano Jobs
    # checks that account's updates as it checks a create, and its namespace's Pod Security level comes with it.
    policy = {"Namespace", "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"}
    assert kinds == {"ServiceAccount", "Role", "RoleBinding", *policy}, "no ConfigMap: the program is not RBAC"


@pytest.mark.parametrize("kind", ["jobs.batch.volcano.sh", "jobs.v1alpha1.batch.volcano.sh"])
def test_kubectl_get_of_a_qualified_resource_lists_what_it_selects_and_gets_what_it_names(kind: str) -> None:
    call = ["kubectl", "--request-timeout=30s", "get", kind, "-l", "x=y", "-o", "name"]
    got = rules(rbac_for(wf([{"name": "f", "container": {"image": "k", "command": call}}])))
    assert got[("batch.volcano.sh", "jobs")] == ["list"]
    assert [g for g, _ in got if "volcano" in g] == ["batch.volcano.sh"], "a version is no part of the group"
    watching = rules(rbac_for(wf([{"name": "f", "container": {"image": "k", "command": [*call, "--watch"]}}])))
    assert watching[("batch.volcano.sh", "jobs")] == ["list", "watch"]
    get_named = ["kubectl", "get", kind, "my-job"]
    named = rules(rbac_for(wf([{"name": "f", "container": {"image": "k", "command": get_named}}])))
    assert named[("batch.volcano.sh", "jobs")] == ["get"]


def test_volcano_pods_running_kubectl_get_rules_for_their_own_service_account() -> None:
    objects = rbac_for(*bundled(template=False, service_account="argo"), service_account="argo")
    assert {o["metadata"]["name"] for o in objects if o["kind"] == "Role"} == {"argo-hera-volcano"}
    job = (
        "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata:\n  name: j\nspec:\n  tasks:\n  - name: m\n"
        "    template:\n      spec:\n        serviceAccountName: mpi\n        initContainers:\n"
        "        - name: w\n          image: k\n          command: [kubectl, wait, pods, -l, a=b]\n"
    )
    objects = rbac_for(wf([resource("create", job)]))
    assert rules(objects, "mpi") == {("", "pods"): ["get", "list", "watch"]}
    assert ("", "pods") not in rules(objects, "runner")


def test_the_mpi_masters_wait_gets_its_declared_calls_in_its_jobs_namespace() -> None:
    """Our wait for the workers runs the pods' program (hera_volcano/pods/workers.py): its account gets the calls it
    declares, not the follower's."""
    import yaml

    from hera_volcano import Program, mpi_job

    job = mpi_job(image="x:1", program=Program.command(["a"]), service_account="mpi", name="j").to_dict()
    job["metadata"]["namespace"] = "team-b"
    objects = rbac_for(wf([resource("create", yaml.safe_dump(job))]))
    assert rules(objects, "mpi") == {(g, r): list(v) for g, r, v in WAIT_CALLS}
    role = next(o for o in objects if o["kind"] == "Role" and o["metadata"]["name"] == "mpi-hera-volcano")
    assert role["metadata"]["namespace"] == "team-b"


def test_a_function_jobs_pods_get_no_rights() -> None:
    """A function job's pods run the launcher from the pods' ConfigMap, which makes no API call."""
    import json

    from hera_volcano import Program, pytorch_job
    from tests.builders import userfuncs

    job = pytorch_job(image="x:1", program=Program.function(userfuncs.echo), service_account="trainer", name="j")
    objects = rbac_for(wf([resource("create", json.dumps(job.to_dict()))]))  # JSON is YAML
    assert not [o for o in objects if o["kind"] == "Role" and o["metadata"]["name"] == "trainer-hera-volcano"]


def test_several_service_accounts_get_several_bindings() -> None:
    objects = rbac_for(
        wf(
            [
                {"name": "a", "container": {"image": "x"}},
                {"name": "b", "serviceAccountName": "other", **resource("create", VOLCANO_JOB, name="b")},
            ]
        )
    )
    bindings = [o for o in objects if o["kind"] == "RoleBinding"]
    assert sorted(b["subjects"][0]["name"] for b in bindings) == ["other", "runner"]
    assert ("batch.volcano.sh", "jobs") in rules(objects, "other")
    assert ("batch.volcano.sh", "jobs") not in rules(objects, "runner")
    for b in bindings:
        assert b["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": b["metadata"]["name"]}


def test_no_service_account_is_refused_rather_than_binding_default() -> None:
    nameless = wf([{"name": "d", "dag": {"tasks": [{"name": "a", "template": "a"}]}}, {"name": "a", "container": {}}])
    nameless["spec"].pop("serviceAccountName", None)
    with pytest.raises(ValidationError) as e:
        rbac_for(nameless)
    assert e.value.field == "workflows[0].spec.serviceAccountName"
    assert "`default`" in e.value.rule and "template a" in e.value.rule
    # Named by the caller, or by every template that runs a pod: no refusal, and nothing bound to default.
    for objects in (
        rbac_for(nameless, service_account="runner"),
        rbac_for(wf([{"name": "d", "dag": {"tasks": []}}, {"name": "a", "serviceAccountName": "own", "container": {}}],
                    sa=None)),
    ):  # fmt: skip
        subjects = [s for o in objects if o["kind"] == "RoleBinding" for s in o["subjects"]]
        assert subjects and all(s["name"] != "default" for s in subjects)


def test_a_volcano_pod_running_kubectl_without_an_account_is_refused() -> None:
    job = (
        "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata:\n  name: j\nspec:\n  tasks:\n  - name: m\n"
        "    template:\n      spec:\n        containers:\n        - name: w\n          image: k\n"
        "          command: [kubectl, wait, pods, -l, a=b]\n"
    )
    with pytest.raises(ValidationError) as e:
        rbac_for(wf([resource("create", job)]))
    assert e.value.field == "w/r (Volcano task m).serviceAccountName" and "`default`" in e.value.rule


def test_a_string_where_submitters_belong_is_refused_not_read_letter_by_letter() -> None:
    with pytest.raises(ValidationError) as e:
        rbac_for(wf([{"name": "a", "container": {}}]), submitters="alice")  # type: ignore[arg-type]
    assert e.value.field == "submitters"


def test_every_rule_says_which_templates_need_it() -> None:
    objects = rbac_for(wf([resource("create", VOLCANO_JOB, name="make"), {"name": "c", "container": {"image": "x"}}]))
    role = next(o for o in objects if o["kind"] == "Role")  # after the Namespace's Pod Security labels
    notes = role["metadata"]["annotations"]
    assert len(notes) == len(role["rules"])
    jobs_note = next(v for v in notes.values() if v.startswith("jobs"))
    assert "w/make" in jobs_note and "w/c" not in jobs_note


def test_options_owner_reference_permissions_and_service_account_objects() -> None:
    w = wf([resource("create", VOLCANO_JOB, setOwnerReference=True)])
    assert ("argoproj.io", "workflows/finalizers") not in rules(rbac_for(w))
    assert rules(rbac_for(w, owner_reference_permissions=True))[("argoproj.io", "workflows/finalizers")] == ["update"]
    kinds = [o["kind"] for o in rbac_for(w, service_accounts=True, job_policy=None)]
    assert kinds == ["ServiceAccount", "Role", "RoleBinding"]


def test_overrides_and_no_wildcards() -> None:
    objects = rbac_for(*bundled(template=True), namespace="ml", service_account="runner")
    for o in objects:
        if o["kind"].startswith("ValidatingAdmissionPolicy"):  # cluster-scoped; its binding selects the namespace
            assert o["spec"].get("matchResources", {"namespaceSelector": {"matchLabels": {NS_LABEL: "ml"}}}) == {
                "namespaceSelector": {"matchLabels": {NS_LABEL: "ml"}}
            }
            continue
        assert o["metadata"].get("namespace", o["metadata"]["name"]) == "ml"  # a Namespace names itself
        for rule in o.get("rules", []):
            assert "*" not in rule["verbs"] + rule["resources"] + rule["apiGroups"]
    subjects = {o["subjects"][0]["name"] for o in objects if o["kind"] == "RoleBinding"}
    # The override replaces the workflow's service account; the MPI master's pod names its own in the job.
    assert subjects == {"runner", SERVICE_ACCOUNT}
    # The master's wait for its workers: exactly the calls it declares.
    assert (
        rules(objects, SERVICE_ACCOUNT)
        == {(g, r): list(v) for g, r, v in WAIT_CALLS}
        == {("", "pods"): ["list", "watch"]}
    )


@pytest.mark.parametrize(
    ("workflows", "kwargs", "field"),
    [
        ((), {}, "workflows"),
        (({"kind": "Pod"},), {}, "workflows[0].kind"),
        (("text",), {}, "workflow"),
        ((wf([{"name": "c", "container": {"image": "x"}}]),), {"namespace": "Bad"}, "namespace"),
        ((wf([resource("explode", VOLCANO_JOB)]),), {}, "w/r.resource.action"),
    ],
)
def test_bad_input(workflows: tuple[Any, ...], kwargs: dict[str, Any], field: str) -> None:
    with pytest.raises(ValidationError) as e:
        rbac_for(*workflows, **kwargs)
    assert e.value.field == field


def _grants(objects: list[dict[str, Any]]) -> set[tuple[str, str, str]]:
    return {
        (g, r, v)
        for o in objects
        if o["kind"] == "Role"
        for rule in o["rules"]
        for g in rule["apiGroups"]
        for r in rule["resources"]
        for v in rule["verbs"]
    }


def test_bundled_rbac_is_within_upstream_and_covers_every_action(upstream: Path) -> None:
    theirs = _grants(list(yaml.safe_load_all((upstream / "integrations/argo/mpi/rbac.yaml").read_text())))
    r = run("hera_volcano.rbac")
    assert r.code == 0, r.err
    mine = _grants(list(yaml.safe_load_all(r.out)))
    # Beyond upstream, only what a feature of ours needs: the start limit reads the PodGroup to say why a job
    # never started before it deletes the job; the follower puts rank 0's progress and metrics on the job.
    beyond_upstream = {("scheduling.volcano.sh", "podgroups", "get"), ("batch.volcano.sh", "jobs", "patch")}
    assert mine - theirs == beyond_upstream
    needed = {
        ("batch.volcano.sh", "jobs", "delete"),  # the exit handler deletes the jobs of a workflow that failed
        ("argoproj.io", "workflowtaskresults", "create"),
        ("argoproj.io", "workflowtaskresults", "patch"),
        ("batch.volcano.sh", "jobs", "create"),
        ("batch.volcano.sh", "jobs", "get"),
        ("batch.volcano.sh", "jobs", "list"),  # the log follower stops when the job is finished
        ("batch.volcano.sh", "jobs", "watch"),  # ... and waits for it on a watch, not by polling
        ("batch.volcano.sh", "jobs", "patch"),  # ... and puts rank 0's progress and metrics on it
        ("", "pods", "get"),
        ("", "pods", "list"),
        ("", "pods", "watch"),
        ("", "pods/log", "get"),
        ("scheduling.volcano.sh", "podgroups", "get"),  # the start limit says why a job never started (by name)
    }
    assert mine == needed


def test_cli_derives_rbac_from_files_and_stdin(tmp_path: Path) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(yaml.safe_dump(wf([resource("delete", VOLCANO_JOB)])))
    r = run("hera_volcano", "rbac", str(path))
    assert r.code == 0, r.err
    assert rules(list(yaml.safe_load_all(r.out)))[("batch.volcano.sh", "jobs")] == ["get", "list", "watch", "delete"]
    r2 = run("hera_volcano", "rbac", "-", stdin=path.read_text())
    assert r2.out == r.out


def test_cli_refuses_a_workflow_without_service_account_unless_one_is_given(tmp_path: Path) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(yaml.safe_dump(wf([resource("create", VOLCANO_JOB)], sa=None)))
    refused = run("hera_volcano", "rbac", str(path))
    assert (refused.code, refused.out) == (2, "") and len(refused.err.splitlines()) == 1
    assert "serviceAccountName: is not set" in refused.err and "--service-account" in refused.err
    given = run("hera_volcano", "rbac", str(path), "--service-account", "runner")
    assert given.code == 0, given.err
    assert ("batch.volcano.sh", "jobs") in rules(list(yaml.safe_load_all(given.out)))


BAD_ACTION = "kind: Workflow\nspec:\n  templates:\n  - name: r\n    resource: {action: x}\n"


@pytest.mark.parametrize(
    "content",
    [
        None,
        "a: [unclosed",
        "kind: ConfigMap\n",
        BAD_ACTION,
    ],
)
def test_cli_bad_files_exit_2_with_one_line(tmp_path: Path, content: str | None) -> None:
    path = tmp_path / "w.yaml"
    if content is not None:
        path.write_text(content)
    r = run("hera_volcano", "rbac", str(path))
    assert r.code == 2 and r.out == "" and len(r.err.splitlines()) == 1, r.err


@pytest.mark.parametrize(
    "doc",
    [
        {"kind": "Workflow", "spec": [1]},
        {"kind": "Workflow", "spec": {"templates": "abc"}},
        {"kind": "Workflow", "metadata": {"namespace": "BAD NS"}, "spec": {"templates": [{"name": "a"}]}},
        {"kind": "Workflow", "spec": {"serviceAccountName": [1], "templates": [{"name": "a"}]}},
        {"kind": "Workflow", "spec": {"templates": [resource("create", "apiVersion: v1\nkind: [Pod]\n")]}},
        {"kind": ["Workflow"]},
    ],
)
def test_malformed_workflows_raise_validation_errors(doc: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        rbac_for(doc)


def test_a_string_where_the_command_list_belongs_declares_nothing() -> None:
    got = rules(rbac_for(wf([{"name": "f", "container": {"image": "k", "command": "kubectl logs -f x"}}])))
    assert got == REPORTS


def test_long_service_account_names_give_valid_distinct_role_names() -> None:
    def role(sa: str) -> str:
        name: str = rbac_for(wf([{"name": "a", "container": {"image": "x"}}], sa=sa))[0]["metadata"]["name"]
        assert names.dns1123_subdomain(name) is None and name.endswith("-hera-volcano")
        return name

    assert role("a" * 240) == "a" * 240 + "-hera-volcano"
    long = {role("a" * 250 + end) for end in ("x", "y")} | {role("a" * 253)}
    assert len(long) == 3, "service accounts that share a long prefix must not share a Role"


@pytest.mark.parametrize(
    ("resource", "field"),
    [
        ({"action": "create", "manifestFrom": {"artifact": {"name": "m"}}}, "manifestFrom"),
        ({"action": "create", "manifest": "- a\n- b\n"}, "manifest"),
        ({"action": "delete", "flags": ["configmap", "my-cm"]}, "flags"),
        ({"action": "delete", "flags": ["--selector", "a=b"]}, "flags"),
        ({"action": "create", "flags": ["jobs.batch.volcano.sh"]}, "manifest"),
        ({"action": "patch", "mergeStrategy": "json", "flags": ["cm", "x"], "manifest": "- op: add\n"}, "manifest"),
        ({"action": "create", "manifest": 5}, "manifest"),
        (5, "resource"),
    ],
)
def test_resources_whose_objects_cannot_be_known_are_errors_not_gaps(resource: Any, field: str) -> None:
    with pytest.raises(ValidationError) as e:
        rbac_for(wf([{"name": "r", "resource": resource}]))
    assert e.value.field.endswith(field)
    if isinstance(resource, dict) and "flags" in resource:
        assert "by hand" in e.value.rule


def test_a_template_that_is_not_a_mapping_is_an_error() -> None:
    doc = wf([{"name": "a", "container": {"image": "x"}}])
    doc["spec"]["templates"].append(5)
    with pytest.raises(ValidationError) as e:
        rbac_for(doc)
    assert e.value.field.endswith("spec.templates[1]")


@pytest.mark.parametrize(
    ("flags", "verbs"),
    [
        (["jobs.batch.volcano.sh", "--selector", "a=b", "--wait=false"], ["list", "delete"]),
        (["jobs.batch.volcano.sh", "-l", "a=b"], ["get", "list", "watch", "delete"]),
        (["jobs.batch.volcano.sh/my-job", "--wait=false"], ["get", "delete"]),
        (["jobs.batch.volcano.sh", "my-job", "--wait=false"], ["get", "delete"]),
    ],
)
def test_a_delete_that_names_its_objects_in_flags_gets_what_kubectl_does(flags: list[str], verbs: list[str]) -> None:
    """kubectl lists what a selector selects, gets what it names, and watches a deletion it waits for."""
    docs = rbac_for(wf([{"name": "d", "resource": {"action": "delete", "flags": flags}}]))
    rules = {tuple(r["resources"]): r for r in docs[0]["rules"]}
    assert rules[("jobs",)]["apiGroups"] == ["batch.volcano.sh"]
    assert rules[("jobs",)]["verbs"] == verbs


# ------------------------------------------------------------------------------------------- submitters


def _submitter_grants(objects: list[dict[str, Any]], kind: str) -> set[tuple[str, str, str]]:
    return {
        (g, r, v)
        for o in objects
        if o["kind"] == kind
        for rule in o["rules"]
        for g in rule["apiGroups"]
        for r in rule["resources"]
        for v in rule["verbs"]
    }


def test_a_submitter_gets_exactly_what_the_client_calls_and_a_binding_per_subject() -> None:
    from hera_volcano.client.resources import CLUSTER_READS, SUBMITTER

    objects = rbac_for(*bundled(), submitters=["ci", "system:serviceaccount:pipelines:runner", "user:alice@x.io"])
    submitter_roles = [o for o in objects if o["kind"] == "Role" and o["metadata"]["name"].startswith("hera-volcano-")]
    assert {o["metadata"]["name"] for o in submitter_roles} == {
        "hera-volcano-submitter:serviceaccount:argo:ci",
        "hera-volcano-submitter:serviceaccount:pipelines:runner",
        "hera-volcano-submitter:user:alice@x.io",
    }
    expected = {(p.group, p.resource, v) for p in SUBMITTER for v in p.verbs}
    for role in submitter_roles:
        assert role["metadata"]["namespace"] == "argo"  # where the workflows run, whoever submits them
        assert _submitter_grants([role], "Role") - expected <= {("argoproj.io", "workflowtemplates", "get"), (
            "argoproj.io", "workflowtemplates", "list")}  # fmt: skip
        assert expected <= _submitter_grants([role], "Role")
        assert all("*" not in r["verbs"] and "*" not in r["resources"] for r in role["rules"])
    subjects = [
        o["subjects"][0] for o in objects if o["kind"] == "RoleBinding" and "submitter" in o["metadata"]["name"]
    ]
    assert {"kind": "ServiceAccount", "name": "runner", "namespace": "pipelines"} in subjects
    assert {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "alice@x.io"} in subjects
    [cluster_role] = [o for o in objects if o["kind"] == "ClusterRole"]
    assert _submitter_grants([cluster_role], "ClusterRole") == {
        (p.group, p.resource, v) for p in CLUSTER_READS for v in p.verbs
    }
    assert all(v in ("get", "list") for _, _, v in _submitter_grants([cluster_role], "ClusterRole")), "read-only"
    assert len([o for o in objects if o["kind"] == "ClusterRoleBinding"]) == 3
    for o in objects:
        assert not names.dns1123_subdomain(o["metadata"]["name"].replace(":", "-").replace("@", "-")), o


def test_submitters_without_cluster_reads_and_templates_only_when_used() -> None:
    plain_wf = wf([{"name": "main", "container": {"image": "busybox:1.37.0"}}])
    objects = rbac_for(plain_wf, submitters=["ci"], cluster_reads=False)
    assert not [o for o in objects if o["kind"].startswith("Cluster")]
    [role] = [o for o in objects if o["kind"] == "Role" and "submitter" in o["metadata"]["name"]]
    assert ("argoproj.io", "workflowtemplates", "get") not in _submitter_grants([role], "Role")
    template = rbac_for(wf(plain_wf["spec"]["templates"], kind="WorkflowTemplate"), submitters=["ci"])
    [role] = [o for o in template if o["kind"] == "Role" and "submitter" in o["metadata"]["name"]]
    assert ("argoproj.io", "workflowtemplates", "get") in _submitter_grants([role], "Role")
    assert rbac_for(plain_wf) == rbac_for(plain_wf, submitters=[]), "no submitter: nothing added"
    assert ("argoproj.io", "cronworkflows", "create") not in _submitter_grants(template, "Role")
    cron = wf(plain_wf["spec"]["templates"])
    cron.update(kind="CronWorkflow", spec={"schedules": ["0 2 * * *"], "workflowSpec": cron["spec"]})
    [role] = [
        o for o in rbac_for(cron, submitters=["ci"]) if o["kind"] == "Role" and "submitter" in o["metadata"]["name"]
    ]
    assert {("argoproj.io", "cronworkflows", "create"), ("argoproj.io", "cronworkflows", "get")} <= _submitter_grants(
        [role], "Role"
    ), "submit creates the CronWorkflow and --from cronworkflow/NAME reads it"


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        ("", "must name"),
        ("Not_A_Name", "DNS-1123 subdomain"),
        ("system:serviceaccount:argo", "system:serviceaccount:NAMESPACE:NAME"),
        ("system:serviceaccount:Bad:x", "DNS-1123 label"),
        ("user:a/b", "cannot be part of an object name"),
    ],
)
def test_bad_submitters_are_validation_errors(text: str, rule: str) -> None:
    with pytest.raises(ValidationError) as e:
        rbac_for(*bundled(), submitters=["ok", text])
    assert e.value.field == "submitters[1]" and rule in e.value.rule, e.value


def test_cli_submitter_and_its_errors() -> None:
    r = run("hera_volcano", "rbac", "--submitter", "ci", "--no-cluster-reads")
    assert r.code == 0, r.err
    kinds = [d["kind"] for d in yaml.safe_load_all(r.out) if d]
    assert kinds.count("Role") == 2 and "ClusterRole" not in kinds
    bad = run("hera_volcano", "rbac", "--submitter", "user:a/b")
    assert (bad.code, bad.out, len(bad.err.splitlines())) == (2, "", 1), bad
    assert "submitters[0]" in bad.err


# --------------------------------------------------------------------------- declared calls, not words in scripts

REPORTS = {("argoproj.io", "workflowtaskresults"): ["create", "patch"]}


def _script(script: str, **template: Any) -> dict[str, Any]:
    return {"name": "c", "container": {"image": "k", "command": ["bash", "-c", script]}, **template}


def _suggested(script: str) -> dict[tuple[str, str], list[str]]:
    """What lint suggests to declare for a script: the calls its kubectl words read as."""
    [(path, text)] = undeclared_scripts({}, [("c", {"command": ["bash", "-c", script]})])
    assert path == "c"
    return {(g, r): list(v) for g, r, v in parse_calls(text, "suggestion")}


@pytest.mark.parametrize(
    "script",
    [
        'echo "kubectl is not installed here"',  # the word in a message
        "echo kubectl get pods -l app=x",  # a whole call in an echo
        'echo "to see it: kubectl logs -f x"',
        "# kubectl get pods would be nice\necho done",  # a comment
        "kubectl get pods -l app=x",  # a real call, undeclared
        "kubectl version --client",
        "source kubectl_prelude.sh; echo $KUBECTL_ERR",
    ],
)
def test_a_script_is_granted_nothing_for_its_kubectl_words(script: str) -> None:
    """A script is not read for words: ``kubectl`` in an echo used to grant pod and log reads."""
    assert rules(rbac_for(wf([_script(script)]))) == REPORTS


@pytest.mark.parametrize(
    ("script", "expected"),
    [
        ('kubectl -n "$NS" get pod "$POD" -o name', {("", "pods"): ["get"]}),
        ("kubectl get pods -l app=x -o name", {("", "pods"): ["list"]}),
        ("kubectl get po -l app=x --watch", {("", "pods"): ["list", "watch"]}),
        ("kubectl wait pods -l app=x --for=condition=Ready", {("", "pods"): ["get", "list", "watch"]}),
        ("exec kubectl logs -f -n ns x -c main", {("", "pods"): ["get"], ("", "pods/log"): ["get"]}),
        ("kubectl logs -l app=x --tail=20", {("", "pods"): ["list"], ("", "pods/log"): ["get"]}),
        ("/usr/bin/kubectl get pod/x | tail -1", {("", "pods"): ["get"]}),
        ("kubectl delete jobs.v1alpha1.batch.volcano.sh -n ns my-job --wait=false",
         {("batch.volcano.sh", "jobs"): ["delete"]}),
        ("kubectl get pods \\\n  -l app=x", {("", "pods"): ["list"]}),  # a continued line is one command
        ('echo "kubectl is not installed here"', {}),
        ("kubectl api-resources", {}),
        ("kubectl get configmaps", {}),  # an unqualified resource other than pods is not read as one
    ],
)  # fmt: skip
def test_lint_suggests_what_a_scripts_kubectl_words_read_as(
    script: str, expected: dict[tuple[str, str], list[str]]
) -> None:
    assert _suggested(script) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("get pods, get pods/log", {("", "pods"): ["get"], ("", "pods/log"): ["get"]}),
        ("list watch jobs.batch.volcano.sh", {("batch.volcano.sh", "jobs"): ["list", "watch"]}),
        (" get  pods ,list pods", {("", "pods"): ["get", "list"]}),
        ("", {}),
    ],
)
def test_a_template_declares_its_calls_in_an_annotation(text: str, expected: dict[tuple[str, str], list[str]]) -> None:
    declared = _script("kubectl get pods; kubectl logs x", metadata={"annotations": {CALLS_ANNOTATION: text}})
    assert rules(rbac_for(wf([declared]))) == {**expected, **REPORTS}


def test_a_volcano_task_declares_its_calls_in_its_pod_templates_annotation() -> None:
    job = (
        "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata:\n  name: j\nspec:\n  tasks:\n  - name: m\n"
        "    template:\n      metadata:\n        annotations:\n          hera-volcano/calls: list watch pods\n"
        "      spec:\n        serviceAccountName: reader\n        containers:\n        - name: w\n          image: k\n"
        "          command: [sh, -c, 'kubectl wait pods -l a=b']\n"
    )
    assert rules(rbac_for(wf([resource("create", job)])), "reader") == {("", "pods"): ["list", "watch"]}
    undeclared = rbac_for(wf([resource("create", job.replace(CALLS_ANNOTATION, "other"))]))
    assert {o["metadata"]["name"] for o in undeclared if o["kind"] == "Role"} == {"runner-hera-volcano"}


@pytest.mark.parametrize(
    "text", ["get", "pods", "get Pods", "read pods", "* pods", "get pods,", "get pods.v1", "get pods get", 5]
)
def test_a_malformed_declaration_is_refused_naming_the_annotation(text: object) -> None:
    with pytest.raises(ValidationError) as e:
        rbac_for(wf([_script("true", metadata={"annotations": {CALLS_ANNOTATION: text}})]))
    assert e.value.field == f"w/c.metadata.annotations[{CALLS_ANNOTATION}]"


def test_a_declared_write_no_policy_checks_is_refused_like_a_resource_steps() -> None:
    calls = {CALLS_ANNOTATION: "create statefulsets.apps"}
    creating = _script("kubectl apply -f set.yaml", metadata={"annotations": calls})
    with pytest.raises(ValidationError, match=r"^w/c: needs create on statefulsets \(apps\)"):
        rbac_for(wf([creating]))
    got = rules(rbac_for(wf([creating]), allow_uncovered=["statefulsets.apps"]))
    assert got[("apps", "statefulsets")] == ["create"]


def test_the_exec_form_of_kubectl_is_its_own_declaration() -> None:
    waiter = {"name": "g", "container": {"image": "k", "command": ["kubectl"], "args": ["get", "pods", "-w"]}}
    assert rules(rbac_for(wf([waiter])))[("", "pods")] == ["list", "watch"]
    named = {"name": "g", "container": {"image": "k", "command": ["/usr/local/bin/kubectl", "logs", "x"]}}
    assert rules(rbac_for(wf([named]))) == {("", "pods"): ["get"], ("", "pods/log"): ["get"], **REPORTS}


def test_the_bundled_follower_gets_exactly_what_its_calls_need() -> None:
    objects = rbac_for(*bundled(template=True), job_policy=None)
    got = rules(objects, SERVICE_ACCOUNT)
    assert got[("scheduling.volcano.sh", "podgroups")] == ["get"]  # by name, to say why a job never started
    assert got[("", "pods")] == ["get", "list", "watch"]
    assert got[("", "pods/log")] == ["get"]


# ------------------------------------------------------------------------------- the namespace a manifest names


def test_a_manifest_aimed_at_another_namespace_gets_its_rule_there_bound_to_the_workflows_account() -> None:
    secret = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n  namespace: vault\n"
    objects = rbac_for(
        wf([resource("create", secret), {"name": "c", "container": {"image": "x"}}]), allow_uncovered=["secrets"]
    )
    roles = {(o["metadata"]["namespace"], o["metadata"]["name"]): o for o in objects if o["kind"] == "Role"}
    assert set(roles) == {("ns", "runner-hera-volcano"), ("vault", "ns.runner-hera-volcano")}
    assert ("", "secrets") not in {
        (r["apiGroups"][0], r["resources"][0]) for r in roles["ns", "runner-hera-volcano"]["rules"]
    }
    assert roles["vault", "ns.runner-hera-volcano"]["rules"] == [
        {"apiGroups": [""], "resources": ["secrets"], "verbs": ["get", "create"]}
    ]
    [binding] = [o for o in objects if o["kind"] == "RoleBinding" and o["metadata"]["namespace"] == "vault"]
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "runner", "namespace": "ns"}]


def test_a_manifest_in_the_workflows_own_namespace_by_placeholder_stays_there() -> None:
    job = VOLCANO_JOB + "  namespace: '{{workflow.namespace}}'\n"
    objects = rbac_for(wf([resource("create", job)]), namespace="ml")
    assert {o["metadata"]["namespace"] for o in objects if o["kind"] == "Role"} == {"ml"}


def test_a_manifest_whose_namespace_is_known_only_at_run_time_is_an_error() -> None:
    job = VOLCANO_JOB + "  namespace: '{{inputs.parameters.ns}}'\n"
    with pytest.raises(ValidationError) as e:
        rbac_for(wf([resource("create", job)]))
    assert e.value.field.endswith("metadata.namespace") and "by hand" in e.value.rule


def test_a_volcano_pod_whose_account_is_known_only_at_run_time_is_an_error_not_a_guess() -> None:
    job = (
        "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata:\n  name: j\nspec:\n  tasks:\n  - name: m\n"
        "    template:\n      spec:\n        serviceAccountName: '{{inputs.parameters.sa}}'\n        containers:\n"
        "        - name: w\n          image: k\n          command: [kubectl, get, pods, -l, a=b]\n"
    )
    with pytest.raises(ValidationError) as e:
        rbac_for(wf([resource("create", job)]))
    assert "run time" in e.value.rule


# ------------------------------------------------------------------------ writes no admission policy checks

#: Kinds whose objects make pods, none of which hera-volcano's admission policy checks: (manifest head, resource).
POD_MAKERS = [
    ("apiVersion: v1\nkind: ReplicationController\n", "replicationcontrollers", ""),
    ("apiVersion: apps/v1\nkind: StatefulSet\n", "statefulsets", "apps"),
    ("apiVersion: apps/v1\nkind: DaemonSet\n", "daemonsets", "apps"),
    ("apiVersion: apps/v1\nkind: ReplicaSet\n", "replicasets", "apps"),
    ("apiVersion: argoproj.io/v1alpha1\nkind: Workflow\n", "workflows", "argoproj.io"),
]
#: Kinds whose objects make pods and that the admission policy checks: granted, each with its kind's policy.
POLICED = [
    ("apiVersion: v1\nkind: Pod\n", "pods", ""),
    ("apiVersion: batch/v1\nkind: Job\n", "jobs", "batch"),
    ("apiVersion: batch/v1\nkind: CronJob\n", "cronjobs", "batch"),
    ("apiVersion: apps/v1\nkind: Deployment\n", "deployments", "apps"),
    ("apiVersion: flow.volcano.sh/v1alpha1\nkind: JobFlow\n", "jobflows", "flow.volcano.sh"),
    ("apiVersion: batch.volcano.sh/v1alpha1\nkind: CronJob\n", "cronjobs", "batch.volcano.sh"),
]


@pytest.mark.parametrize(("head", "plural_name", "group"), POLICED)
def test_a_write_of_a_kind_the_policy_checks_is_granted_with_that_kinds_policy(
    head: str, plural_name: str, group: str
) -> None:
    objects = rbac_for(wf([resource("create", head + "metadata:\n  name: x\n")]))
    [role] = [o for o in objects if o["kind"] == "Role"]
    assert {"apiGroups": [group], "resources": [plural_name], "verbs": ["get", "create"]} in role["rules"]
    assert not [k for k in role["metadata"].get("annotations", {}) if "uncovered" in k]
    policies = [o for o in objects if o["kind"] == "ValidatingAdmissionPolicy"]
    matched = [r for p in policies for r in p["spec"]["matchConstraints"]["resourceRules"]]
    assert {"group": group, "resource": plural_name} in [
        {"group": g, "resource": res} for r in matched for g in r["apiGroups"] for res in r["resources"]
    ], matched
    # Without a policy (job_policy=None) the grant stays, and the Role says why on the rule.
    [role, _] = rbac_for(wf([resource("create", head + "metadata:\n  name: x\n")]), job_policy=None)
    reasons = [v for k, v in role["metadata"]["annotations"].items() if k.startswith("hera-volcano/uncovered-")]
    assert len(reasons) == 1 and "job_policy=None" in reasons[0], reasons


@pytest.mark.parametrize("action", ["create", "apply", "replace", "patch"])
@pytest.mark.parametrize(("head", "plural_name", "group"), POD_MAKERS)
def test_a_write_of_a_kind_no_policy_checks_is_refused_naming_the_template_and_the_kind(
    head: str, plural_name: str, group: str, action: str
) -> None:
    """``create`` on StatefulSets, DaemonSets, ReplicaSets, Workflows... would let the account run pods as any
    account of the namespace, privileged, with any Secret: refused, with the way to allow it, with or without a
    policy."""
    text = f"{plural_name}.{group}" if group else plural_name
    for kwargs in ({}, {"job_policy": None}):
        with pytest.raises(ValidationError) as e:
            rbac_for(wf([resource(action, head + "metadata:\n  name: x\n")]), **kwargs)  # type: ignore[arg-type]
        assert e.value.field == "w/r"
        assert f"on {plural_name} ({group or 'core'})" in e.value.rule
        assert f"--allow-uncovered) {text} " in e.value.rule


@pytest.mark.parametrize(("head", "plural_name", "group"), POD_MAKERS)
def test_a_kind_allowed_uncovered_is_granted_with_the_reason_on_its_rule(
    head: str, plural_name: str, group: str
) -> None:
    text = f"{plural_name}.{group}" if group else plural_name
    objects = rbac_for(wf([resource("create", head + "metadata:\n  name: x\n")]), allow_uncovered=[text])
    [role] = [o for o in objects if o["kind"] == "Role"]
    index = next(i for i, r in enumerate(role["rules"]) if r["resources"] == [plural_name])
    assert role["rules"][index] == {"apiGroups": [group], "resources": [plural_name], "verbs": ["get", "create"]}
    reason = role["metadata"]["annotations"][f"hera-volcano/uncovered-{index}"]
    assert reason.startswith(f"create on {plural_name} ({group or 'core'}): checked by no admission policy")
    assert f"--allow-uncovered) {text}" in reason
    assert [k for k in role["metadata"]["annotations"] if "uncovered" in k] == [f"hera-volcano/uncovered-{index}"]
    assert not [o for o in objects if o["kind"].startswith("ValidatingAdmission")], "no policy checks these"


def test_reading_or_deleting_an_uncovered_kind_needs_no_allowance() -> None:
    sets = "apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: x\n"
    got = rules(rbac_for(wf([resource("delete", sets, "d"), resource("get", sets, "g")])))
    assert got[("apps", "statefulsets")] == ["get", "list", "watch", "delete"]


def test_volcano_jobs_without_a_policy_are_granted_with_the_reason_on_their_rule() -> None:
    [role, _] = rbac_for(wf([resource("create", VOLCANO_JOB)]), job_policy=None)
    index = role["rules"].index({"apiGroups": ["batch.volcano.sh"], "resources": ["jobs"], "verbs": ["get", "create"]})
    reason = role["metadata"]["annotations"][f"hera-volcano/uncovered-{index}"]
    assert "job_policy=None" in reason
    with_policy = rbac_for(wf([resource("create", VOLCANO_JOB)]))
    assert not [k for o in with_policy for k in o["metadata"].get("annotations", {}) if "uncovered" in k]


def test_the_bundled_rbac_needs_no_allowance() -> None:
    objects = rbac_for(*bundled(template=True))
    assert not [k for o in objects for k in o["metadata"].get("annotations", {}) if "uncovered" in k]


@pytest.mark.parametrize("text", ["Pod", "pods.v1", "jobs.v1alpha1.batch.volcano.sh", "*", "pods/", ""])
def test_allow_uncovered_takes_resources_as_rbac_names_them(text: str) -> None:
    with pytest.raises(ValidationError) as e:
        rbac_for(wf([{"name": "c", "container": {"image": "x"}}]), allow_uncovered=[text])
    assert e.value.field == "allow_uncovered[0]" and "RESOURCE[/SUBRESOURCE][.GROUP]" in e.value.rule


def test_cli_allow_uncovered(tmp_path: Path) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(yaml.safe_dump(wf([resource("create", "apiVersion: apps/v1\nkind: DaemonSet\n")])))
    refused = run("hera_volcano", "rbac", str(path), "--no-program")
    assert refused.code == 2 and len(refused.err.splitlines()) == 1, refused.err
    assert "w/r: needs create on daemonsets (apps)" in refused.err and "--allow-uncovered" in refused.err
    allowed = run("hera_volcano", "rbac", str(path), "--no-program", "--allow-uncovered", "daemonsets.apps")
    assert allowed.code == 0, allowed.err
    [role] = [o for o in yaml.safe_load_all(allowed.out) if o["kind"] == "Role"]
    assert any(k.startswith("hera-volcano/uncovered-") for k in role["metadata"]["annotations"])


@pytest.mark.parametrize(
    ("allowance", "rule"),
    [
        ("daemonsets.apps", "daemonsets.apps: no workflow given writes it"),  # the workflow writes StatefulSets
        ("statefulset.apps", "statefulset.apps: no workflow given writes it"),  # a typo of the plural
        ("pods", "pods: hera-volcano's admission policy checks it"),  # covered: needs no allowance
    ],
)
def test_an_allowance_that_allows_nothing_is_refused_not_kept(allowance: str, rule: str) -> None:
    sets = "apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: x\n"
    with pytest.raises(ValidationError) as e:
        rbac_for(wf([resource("create", sets)]), allow_uncovered=["statefulsets.apps", allowance])
    assert e.value.field == "allow_uncovered[1]" and e.value.rule.startswith(rule), e.value
