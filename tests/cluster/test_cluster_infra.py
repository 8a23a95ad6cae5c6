"""The test control plane itself: it runs, enforces RBAC and schemas, and its helpers work."""

from __future__ import annotations

import pytest
from controlplane import ControlPlane
from kubernetes import client

MINIMAL_WORKFLOW = {
    "apiVersion": "argoproj.io/v1alpha1",
    "kind": "Workflow",
    "metadata": {"generateName": "infra-"},
    "spec": {"entrypoint": "main", "templates": [{"name": "main", "container": {"image": "busybox"}}]},
}


def volcano_job(name: str, **overrides: object) -> dict:
    job = {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": name},
        "spec": {
            "minAvailable": 1,
            "schedulerName": "volcano",
            "tasks": [
                {
                    "name": "main",
                    "replicas": 1,
                    "template": {
                        "spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox"}]}
                    },
                }
            ],
        },
    }
    job["spec"].update(overrides)
    return job


def test_api_server_is_the_pinned_release(control_plane: ControlPlane) -> None:
    version = control_plane.request("GET", "/version")
    assert version["gitVersion"] == "v1.37.2"
    assert control_plane.kubeconfig.is_file()


def test_kubeconfig_gives_admin_access(control_plane: ControlPlane) -> None:
    from kubernetes import config

    api = config.new_client_from_config(config_file=str(control_plane.kubeconfig))
    try:
        names = {ns.metadata.name for ns in client.CoreV1Api(api).list_namespace().items}
    finally:
        api.close()
    assert {"argo", "default", "kube-system"} <= names


def test_crds_are_established_with_full_schemas(control_plane: ControlPlane) -> None:
    ext = client.ApiextensionsV1Api(control_plane.api_client())
    crds = {c.metadata.name: c for c in ext.list_custom_resource_definition().items}
    for name in (
        "workflows.argoproj.io",
        "workflowtemplates.argoproj.io",
        "workflowtaskresults.argoproj.io",
        "jobs.batch.volcano.sh",
        "queues.scheduling.volcano.sh",
        "podgroups.scheduling.volcano.sh",
    ):
        assert name in crds, f"CRD {name} is not installed"
        conditions = {c.type: c.status for c in crds[name].status.conditions}
        assert conditions.get("Established") == "True", name
    # The "full" Argo CRDs: the workflow spec has a schema, not x-kubernetes-preserve-unknown-fields.
    schema = crds["workflows.argoproj.io"].spec.versions[0].schema.open_apiv3_schema
    assert "templates" in schema.properties["spec"].properties


def test_strict_field_validation_rejects_unknown_fields(control_plane: ControlPlane) -> None:
    created = control_plane.create(MINIMAL_WORKFLOW, "argo", dry_run=True)
    assert created["metadata"]["name"].startswith("infra-")
    bad = {**MINIMAL_WORKFLOW, "spec": {**MINIMAL_WORKFLOW["spec"], "entrypiont": "main"}}
    with pytest.raises(client.ApiException) as e:
        control_plane.create(bad, "argo", dry_run=True)
    assert e.value.status == 400 and "entrypiont" in str(e.value.body)
    # Dry run stored nothing.
    path = "/apis/argoproj.io/v1alpha1/namespaces/argo/workflows/" + created["metadata"]["name"]
    with pytest.raises(client.ApiException) as e:
        control_plane.request("GET", path)
    assert e.value.status == 404


def test_server_side_apply_dry_run(control_plane: ControlPlane) -> None:
    template = {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "WorkflowTemplate",
        "metadata": {"name": "infra-apply"},
        "spec": {"templates": [{"name": "main", "container": {"image": "busybox"}}]},
    }
    applied = control_plane.apply(template, "argo", dry_run=True)
    assert applied["metadata"]["name"] == "infra-apply"
    with pytest.raises(client.ApiException) as e:
        control_plane.apply(
            {**template, "spec": {"templates": [{"name": "main", "containr": {}}]}}, "argo", dry_run=True
        )
    # Server-side apply rejects undeclared fields whatever fieldValidation says, with a 500 ("field not declared
    # in schema"), where create answers 400 ("strict decoding error: unknown field").
    assert e.value.status in (400, 500) and "containr" in str(e.value.body)


def test_volcano_job_crd_schema_is_enforced(control_plane: ControlPlane, namespace: str) -> None:
    job = volcano_job("infra-job")
    created = control_plane.create(job, namespace)
    assert created["metadata"]["uid"]
    control_plane.delete(job, namespace)
    for bad, word in (
        (volcano_job("infra-bad", minAvailable="3"), "minAvailable"),  # a string where the CRD wants an integer
        (volcano_job("infra-bad", tasks=[]), "tasks"),  # at least one task (Volcano >= 1.14 CRDs)
        (volcano_job("infra-bad", plugin={"mpi": []}), "plugin"),  # unknown field
    ):
        with pytest.raises(client.ApiException) as e:
            control_plane.create(bad, namespace)
        assert e.value.status in (400, 422) and word in str(e.value.body), e.value.body


def test_rbac_is_enforced_and_subject_access_reviews_work(control_plane: ControlPlane, namespace: str) -> None:
    rbac = client.RbacAuthorizationV1Api(control_plane.api_client())
    rbac.create_namespaced_role(
        namespace,
        {
            "metadata": {"name": "jobs-creator"},
            "rules": [{"apiGroups": ["batch.volcano.sh"], "resources": ["jobs"], "verbs": ["create", "get"]}],
        },
    )
    rbac.create_namespaced_role_binding(
        namespace,
        {
            "metadata": {"name": "jobs-creator"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "jobs-creator"},
            "subjects": [{"kind": "ServiceAccount", "name": "runner", "namespace": namespace}],
        },
    )
    runner = f"system:serviceaccount:{namespace}:runner"

    def allowed() -> bool:
        return control_plane.can_i(runner, "create", "jobs", group="batch.volcano.sh", namespace=namespace)[0]

    assert control_plane.settle(allowed, True)  # the authorizer's cache catches up with the new binding
    assert control_plane.can_i(runner, "get", "jobs", group="batch.volcano.sh", namespace=namespace)[0]
    assert not control_plane.can_i(runner, "delete", "jobs", group="batch.volcano.sh", namespace=namespace)[0]
    assert not control_plane.can_i(runner, "create", "jobs", group="batch.volcano.sh", namespace="argo")[0]
    other = f"system:serviceaccount:{namespace}:other"
    assert not control_plane.can_i(other, "create", "jobs", group="batch.volcano.sh", namespace=namespace)[0]

    # The same, for real, with a service-account token.
    api = control_plane.service_account_client(namespace, "runner")
    try:
        custom = client.CustomObjectsApi(api)
        custom.create_namespaced_custom_object(
            "batch.volcano.sh", "v1alpha1", namespace, "jobs", volcano_job("as-runner")
        )
        assert custom.get_namespaced_custom_object("batch.volcano.sh", "v1alpha1", namespace, "jobs", "as-runner")
        with pytest.raises(client.ApiException) as e:
            custom.delete_namespaced_custom_object("batch.volcano.sh", "v1alpha1", namespace, "jobs", "as-runner")
        assert e.value.status == 403
        with pytest.raises(client.ApiException) as e:
            client.CoreV1Api(api).list_namespaced_pod(namespace)
        assert e.value.status == 403
    finally:
        api.close()
