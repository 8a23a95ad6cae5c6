"""Pod settings: each one reaches its place in the pod template, passes Volcano's rules, and bad values are refused
naming the setting; the patch merges as documented."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from hera_volcano import (
    Placeholder,
    PodSettings,
    PodVolume,
    Toleration,
    ValidationError,
    VolcanoJob,
    VolcanoTask,
    mpi_job,
    pytorch_job,
    tensorflow_job,
)
from hera_volcano.builders.pod import apply_settings, merge_pod_template
from hera_volcano.builders.program import Program
from hera_volcano.kube import values

IMAGE = "example.com/train:1"
_ZONE_TERM = {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}
_ZONE_AFFINITY = {
    "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [_ZONE_TERM]}}
}
EVERYTHING = PodSettings(
    cpu="250m",
    memory="512Mi",
    cpu_limit="1",
    memory_limit="1Gi",
    gpus=1,
    extended_resources={"rdma/ib": 2},
    env={"LOG_LEVEL": "debug", "TOKEN": {"secretKeyRef": {"name": "token", "key": "value"}}},
    volumes=[PodVolume.empty_dir("scratch", "/scratch", size_limit="1Gi"), PodVolume.config_map("cfg", "/etc/cfg")],
    image_pull_secrets=["regcred"],
    node_selector={"kubernetes.io/os": "linux"},
    tolerations=[Toleration(key="nvidia.com/gpu", operator="Exists", effect="NoSchedule")],
    affinity=_ZONE_AFFINITY,
    labels={"team": "ml"},
    annotations={"example.com/owner": "platform"},
)


def template(*containers: str) -> dict[str, Any]:
    return {"spec": {"containers": [{"name": c, "image": IMAGE} for c in containers], "restartPolicy": "Never"}}


def checked(pod: dict[str, Any]) -> dict[str, Any]:
    """The pod template after Volcano's rules checked it inside a job."""
    data: dict[str, Any] = VolcanoJob(generate_name="j-", tasks=[VolcanoTask(name="t", template=pod)]).to_dict()
    return data["spec"]["tasks"][0]["template"]


def test_every_setting_reaches_its_place_and_passes_volcanos_rules() -> None:
    pod = checked(EVERYTHING.apply(template("main", "sidecar"), container="main"))
    main, sidecar = pod["spec"]["containers"]
    assert main["resources"] == {
        "requests": {"cpu": "250m", "memory": "512Mi", "nvidia.com/gpu": 1, "rdma/ib": 2},
        "limits": {"cpu": "1", "memory": "1Gi", "nvidia.com/gpu": 1, "rdma/ib": 2},
    }
    assert main["env"] == [
        {"name": "LOG_LEVEL", "value": "debug"},
        {"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "token", "key": "value"}}},
    ]
    assert main["volumeMounts"] == [
        {"name": "scratch", "mountPath": "/scratch"},
        {"name": "cfg", "mountPath": "/etc/cfg", "readOnly": True},
    ]
    assert sidecar == {"name": "sidecar", "image": IMAGE}, "only the role's main container gets container settings"
    spec = pod["spec"]
    assert spec["volumes"] == [
        {"name": "scratch", "emptyDir": {"sizeLimit": "1Gi"}},
        {"name": "cfg", "configMap": {"name": "cfg"}},
    ]
    assert spec["imagePullSecrets"] == [{"name": "regcred"}]
    assert spec["nodeSelector"] == {"kubernetes.io/os": "linux"}
    assert spec["tolerations"] == [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    assert spec["affinity"] == _ZONE_AFFINITY
    assert pod["metadata"] == {"labels": {"team": "ml"}, "annotations": {"example.com/owner": "platform"}}


def test_no_settings_change_nothing() -> None:
    pod = template("main")
    assert PodSettings().apply(pod, container="main") == pod
    assert apply_settings(pod, "main", None, None) == pod
    assert (
        mpi_job(image=IMAGE, program=Program.command(["a"])).to_dict()
        == mpi_job(image=IMAGE, program=Program.command(["a"]), pod=PodSettings()).to_dict()
    )


def test_later_settings_win_per_variable_resource_and_selector_key() -> None:
    shared = PodSettings(cpu="1", env={"A": "shared", "B": "b"}, node_selector={"pool": "cpu", "zone": "a"})
    role = PodSettings(cpu="2", env={"A": "role"}, node_selector={"pool": "gpu"})
    main = apply_settings(template("main"), "main", shared, role)
    container = main["spec"]["containers"][0]
    assert container["resources"] == {"requests": {"cpu": "2"}}
    assert container["env"] == [{"name": "A", "value": "role"}, {"name": "B", "value": "b"}]
    assert main["spec"]["nodeSelector"] == {"pool": "gpu", "zone": "a"}


def test_volume_helpers() -> None:
    assert PodVolume.secret("keys", "/keys").volume() == {"name": "keys", "secret": {"secretName": "keys"}}
    claim = PodVolume.claim("data", "/data", claim="datasets", read_only=True)
    assert claim.volume() == {"name": "data", "persistentVolumeClaim": {"claimName": "datasets"}}
    assert claim.mount() == {"name": "data", "mountPath": "/data", "readOnly": True}
    shm = PodVolume.empty_dir("shm", "/dev/shm", memory=True)
    assert shm.volume() == {"name": "shm", "emptyDir": {"medium": "Memory"}}
    sub = PodVolume("cfg", "/etc/app.yaml", {"configMap": {"name": "app"}}, sub_path="app.yaml")
    assert sub.mount() == {"name": "cfg", "mountPath": "/etc/app.yaml", "subPath": "app.yaml"}


def test_tolerations_render_as_kubernetes_reads_them() -> None:
    assert Toleration(operator="Exists").to_dict() == {"operator": "Exists"}
    spot = Toleration(key="spot", value="true", effect="NoExecute", seconds=30)
    assert spot.to_dict() == {
        "key": "spot",
        "operator": "Equal",
        "value": "true",
        "effect": "NoExecute",
        "tolerationSeconds": 30,
    }


def test_settings_equal_when_they_render_the_same() -> None:
    a = PodSettings(cpu="1", env={"A": "1"}, labels={"x": "y"})
    b = PodSettings(labels={"x": "y"}, env={"A": "1"}, cpu="1")
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    assert a != PodSettings(cpu="2", env={"A": "1"}, labels={"x": "y"})


def test_given_mappings_are_copied() -> None:
    env = {"A": "1"}
    settings = PodSettings(env=env)
    env["A"] = "2"
    assert settings.env == {"A": "1"}


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"cpu": "lots"}, "cpu"),
        ({"cpu": 0.5}, "cpu"),
        ({"cpu": True}, "cpu"),
        ({"memory": "-1Gi"}, "memory"),
        ({"cpu": "2", "cpu_limit": "1"}, "cpu"),
        ({"memory": "2Gi", "memory_limit": "1Gi"}, "memory"),
        ({"memory_limit": "1 Gi"}, "memory_limit"),
        ({"gpus": -1}, "gpus"),
        ({"gpus": 1, "extended_resources": {"nvidia.com/gpu": 1}}, "extended_resources['nvidia.com/gpu']"),
        ({"extended_resources": {"gpu": 1}}, "extended_resources['gpu']"),
        ({"extended_resources": {"example.kubernetes.io/x": 1}}, "extended_resources['example.kubernetes.io/x']"),
        ({"extended_resources": {"rdma/ib": "0.5"}}, "extended_resources['rdma/ib']"),
        ({"extended_resources": {"rdma/ib": -1}}, "extended_resources['rdma/ib']"),
        ({"extended_resources": {"rdma/ib": "x"}}, "extended_resources['rdma/ib']"),
        ({"env": {"1X": "a"}}, "env['1X']"),
        ({"env": {"A=B": "a"}}, "env['A=B']"),
        ({"env": {"A": 1}}, "env['A']"),
        ({"env": {"A": {"value": "x"}}}, "env['A']"),
        ({"env": ["A"]}, "env"),
        ({"volumes": PodVolume.empty_dir("a", "/a")}, "volumes"),
        ({"volumes": [{"name": "a"}]}, "volumes[0]"),
        ({"volumes": [PodVolume.empty_dir("a", "/a"), PodVolume.empty_dir("a", "/b")]}, "volumes[1]"),
        ({"volumes": [PodVolume.empty_dir("a", "/a"), PodVolume.empty_dir("b", "/a")]}, "volumes[1]"),
        ({"image_pull_secrets": "regcred"}, "image_pull_secrets"),
        ({"image_pull_secrets": ["Reg Cred"]}, "image_pull_secrets[0]"),
        ({"node_selector": {"bad key!": "x"}}, "node_selector['bad key!']"),
        ({"node_selector": {"pool": "not a label"}}, "node_selector['pool']"),
        ({"tolerations": [{"key": "x"}]}, "tolerations[0]"),
        ({"affinity": {"nodeAfinity": {}}}, "affinity"),
        ({"affinity": "zone-a"}, "affinity"),
        ({"labels": {"team": "m l"}}, "labels['team']"),
        ({"labels": {"hera-volcano/job": "x"}}, "labels['hera-volcano/job']"),
        ({"labels": {"volcano.sh/job-name": "x"}}, "labels['volcano.sh/job-name']"),
        ({"annotations": {"a/b/c": "x"}}, "annotations['a/b/c']"),
        ({"annotations": {"a": 1}}, "annotations['a']"),
        ({"patch": {"containers": []}}, "patch"),
        ({"patch": ["spec"]}, "patch"),
    ],
)
def test_bad_settings_name_the_setting(kwargs: dict[str, Any], field: str) -> None:
    with pytest.raises(ValidationError) as e:
        PodSettings(**kwargs)
    assert e.value.field == field


@pytest.mark.parametrize(
    ("make", "field"),
    [
        (lambda: PodVolume("Bad", "/a", {"emptyDir": {}}), "volume.name"),
        (lambda: PodVolume("a", "relative", {"emptyDir": {}}), "volumes[a].mount_path"),
        (lambda: PodVolume("a", "/{{workflow.name}}", {"emptyDir": {}}), "volumes[a].mount_path"),
        (lambda: PodVolume("a", "/a", {}), "volumes[a].source"),
        (lambda: PodVolume("a", "/a", {"emptyDir": {}, "secret": {}}), "volumes[a].source"),
        (lambda: PodVolume("a", "/a", {"emptyDir": {}}, sub_path="../up"), "volumes[a].sub_path"),
        (lambda: PodVolume("a", "/a", {"emptyDir": {}}, read_only="yes"), "volumes[a].read_only"),
        (lambda: PodVolume.empty_dir("a", "/a", size_limit="big"), "volumes[a].size_limit"),
        (lambda: PodVolume.config_map("a", "/a", config_map="Bad Name"), "volumes[a].config_map"),
        (lambda: PodVolume.claim("a", "/a", claim=""), "volumes[a].claim"),
        (lambda: Toleration(key="x", operator="In"), "toleration.operator"),
        (lambda: Toleration(), "toleration.key"),
        (lambda: Toleration(key="x", operator="Exists", value="y"), "toleration.value"),
        (lambda: Toleration(key="x", effect="NoRun"), "toleration.effect"),
        (lambda: Toleration(key="x", effect="NoSchedule", seconds=5), "toleration.seconds"),
        (lambda: Toleration(key="bad key"), "toleration.key"),
    ],
)
def test_bad_volumes_and_tolerations_name_the_field(make: Any, field: str) -> None:
    with pytest.raises(ValidationError) as e:
        make()
    assert e.value.field == field


def test_a_missing_container_is_refused() -> None:
    with pytest.raises(ValidationError) as e:
        PodSettings(cpu="1").apply(template("main"), container="other")
    assert e.value.field == "container"


def test_combined_settings_that_break_a_kubernetes_rule_are_refused_when_the_job_renders() -> None:
    # each setting is fine on its own; together they mount two volumes at one path of the same container
    shared = PodSettings(volumes=[PodVolume.empty_dir("a", "/data")])
    role = PodSettings(volumes=[PodVolume.empty_dir("b", "/data")])
    with pytest.raises(ValidationError) as e:
        pytorch_job(image=IMAGE, program=Program.command(["train"]), pod=shared, worker_pod=role).to_dict()
    assert e.value.field == "spec.tasks[1].template.spec.containers[0].volumeMounts[1].mountPath"
    # the MPI master already has a volume of that name (its API token, for the wait for workers)
    with pytest.raises(ValidationError) as e:
        mpi_job(
            image=IMAGE,
            program=Program.command(["a"]),
            pod=PodSettings(volumes=[PodVolume.empty_dir("kube-api-access", "/x")]),
        ).to_dict()
    assert e.value.field == "spec.tasks[0].template.spec.volumes[2].name"
    # a patched limit below the request
    patch = {"spec": {"containers": [{"name": "chief", "resources": {"limits": {"memory": "1Gi"}}}]}}
    with pytest.raises(ValidationError) as e:
        tensorflow_job(
            image=IMAGE, program=Program.command(["t"]), chief_pod=PodSettings(memory="2Gi", patch=patch)
        ).to_dict()
    assert e.value.field == "spec.tasks[0].template.spec.containers[0].resources.requests.memory"


def test_patch_merges_containers_env_mounts_and_ports_by_key_and_replaces_other_lists() -> None:
    base = {
        "metadata": {"labels": {"a": "1", "b": "2"}},
        "spec": {
            "containers": [
                {
                    "name": "main",
                    "image": IMAGE,
                    "command": ["a", "b"],
                    "env": [{"name": "X", "value": "1"}, {"name": "Y", "value": "2"}],
                    "ports": [{"containerPort": 80, "name": "http"}],
                    "volumeMounts": [{"name": "v", "mountPath": "/v"}],
                }
            ],
            "tolerations": [{"operator": "Exists"}],
            "terminationGracePeriodSeconds": 30,
        },
    }
    patch = {
        "metadata": {"labels": {"b": None, "c": "3"}},
        "spec": {
            "containers": [
                {
                    "name": "main",
                    "command": ["c"],
                    "env": [{"name": "Y", "value": "two"}, {"name": "Z", "value": "3"}],
                    "ports": [{"containerPort": 80, "protocol": "TCP"}],
                    "volumeMounts": [{"mountPath": "/v", "readOnly": True}],
                },
                {"name": "sidecar", "image": "busybox:1.37.0"},
            ],
            "tolerations": [{"key": "gpu", "operator": "Exists"}],
            "terminationGracePeriodSeconds": None,
            "priorityClassName": "high",
        },
    }
    merged = merge_pod_template(base, patch)
    assert merged == {
        "metadata": {"labels": {"a": "1", "c": "3"}},
        "spec": {
            "containers": [
                {
                    "name": "main",
                    "image": IMAGE,
                    "command": ["c"],
                    "env": [{"name": "X", "value": "1"}, {"name": "Y", "value": "two"}, {"name": "Z", "value": "3"}],
                    "ports": [{"containerPort": 80, "name": "http", "protocol": "TCP"}],
                    "volumeMounts": [{"name": "v", "mountPath": "/v", "readOnly": True}],
                },
                {"name": "sidecar", "image": "busybox:1.37.0"},
            ],
            "tolerations": [{"key": "gpu", "operator": "Exists"}],
            "priorityClassName": "high",
        },
    }
    assert base["spec"]["containers"][0]["command"] == ["a", "b"], "the template itself is left as it was"


def test_patch_items_of_merged_lists_need_their_key() -> None:
    with pytest.raises(ValidationError) as e:
        merge_pod_template(template("main"), {"spec": {"containers": [{"image": "x:1"}]}})
    assert e.value.field == "patch" and "'name'" in e.value.rule


def test_patch_is_applied_last_and_checked_in_the_job() -> None:
    settings = PodSettings(
        env={"A": "1"},
        patch={"spec": {"containers": [{"name": "worker", "env": [{"name": "A", "value": "patched"}]}]}},
    )
    data = pytorch_job(image=IMAGE, program=Program.command(["train"]), worker_pod=settings).to_dict()
    worker = data["spec"]["tasks"][1]["template"]["spec"]["containers"][0]
    assert worker["env"] == [{"name": "A", "value": "patched"}]


def test_settings_may_hold_hera_models_as_pod_templates_do() -> None:
    from hera.workflows.models import NodeAffinity, PreferredSchedulingTerm
    from hera.workflows.models import Toleration as HeraToleration

    term = PreferredSchedulingTerm(weight=1, preference={"matchExpressions": [{"key": "a", "operator": "Exists"}]})
    settings = PodSettings(
        affinity={"nodeAffinity": NodeAffinity(preferred_during_scheduling_ignored_during_execution=[term])},
        patch={"spec": {"tolerations": [HeraToleration(key="spot", operator="Exists")]}},
    )
    pod = checked(settings.apply(template("main"), container="main"))
    assert pod["spec"]["affinity"] == {
        "nodeAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 1, "preference": {"matchExpressions": [{"key": "a", "operator": "Exists"}]}}
            ]
        }
    }
    assert pod["spec"]["tolerations"] == [{"key": "spot", "operator": "Exists"}]


def test_the_builders_stay_light() -> None:
    """Pod settings and the framework builders are pure data: using them does not import hera.workflows."""
    import subprocess
    import sys

    code = (
        "import sys, hera_volcano as hv\n"
        "torch = hv.Program.command(hv.torchrun('t.py'))\n"
        "hv.pytorch_job(image='x:1', program=torch, pod=hv.PodSettings(cpu='1')).to_dict()\n"
        "settings = hv.PodSettings(tolerations=[hv.Toleration(operator='Exists')])\n"
        "hv.tensorflow_job(image='x:1', program=hv.Program.command(['t']), worker_pod=settings).to_dict()\n"
        "print('hera.workflows' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    assert out.strip() == "False"


def test_env_values_known_at_run_time_reach_the_process_as_they_are() -> None:
    settings = PodSettings(env={"LR": Placeholder.input("lr", "0.1"), "N": Placeholder.workflow_parameter("n", 2)})
    pod = {"spec": {"containers": [{"name": "main", "image": IMAGE}]}}
    container = settings.apply(pod, container="main")["spec"]["containers"][0]
    assert [(e["name"], values.parse(e["value"].expression)) for e in container["env"]] == [
        ("LR", values.Value("inputs", "lr", "text", 1)),
        ("N", values.Value("workflow", "n", "text", 1)),
    ]
    assert settings == PodSettings(
        env={"LR": Placeholder.input("lr", "0.5"), "N": Placeholder.workflow_parameter("n", 2)}
    )
    assert replace(settings, cpu="1").env == settings.env, "re-checked settings keep their values"
    with pytest.raises(ValidationError) as e:
        PodSettings(env={"A": Placeholder("workflow.name", "x")})
    assert e.value.field == "env['A']"


def _main(**fields: Any) -> dict[str, Any]:
    return {"spec": {"containers": [{"name": "main", **fields}]}}


@pytest.mark.parametrize(
    ("patch", "field", "words"),
    [
        ({"spec": {"hostNetwrok": True}}, "patch.spec.hostNetwrok", "unknown field 'hostNetwrok'"),
        ({"spec": {"restartPolicy": "Sometimes"}}, "patch.spec.restartPolicy", "must be one of Always"),
        (_main(resources={"requests": {"cpu": "lots"}}), "patch.spec.containers[0].resources.requests.cpu", "quantity"),
        (_main(env=[{"name": "PORT", "value": 8080}]), "patch.spec.containers[0].env[0].value", "must be a string"),
        (_main(imagePullPolicy="Sometimes"), "patch.spec.containers[0].imagePullPolicy", "must be one of"),
        ({"spec": {"containers": [{"name": "Side_Car", "image": "x"}]}}, "patch.spec.containers[0].name", "DNS-1123"),
        ({"metadata": {"labels": {"team name": "ml"}}}, "patch.metadata.labels[team name]", "label key"),
        # What the settings' own node_selector= and tolerations= refuse, a patch may not slip in either.
        ({"spec": {"nodeSelector": {"gpu type": "a100"}}}, "patch.spec.nodeSelector[gpu type]", "qualified name"),
        (
            {"spec": {"tolerations": [{"key": "gpu", "operator": "Sometimes"}]}},
            "patch.spec.tolerations[0].operator",
            "",
        ),
        ({"spec": {"tolerations": [{"operator": "Equal", "value": "x"}]}}, "patch.spec.tolerations[0].key", "Exists"),
        ({"spec": {"tolerations": [{"key": "a", "tolerationSeconds": 5}]}}, "patch.spec.tolerations[0].toleration", ""),
    ],
)
def test_a_patch_meets_the_pod_template_checks_where_it_is_written(
    patch: dict[str, Any], field: str, words: str
) -> None:
    with pytest.raises(ValidationError) as e:
        PodSettings(patch=patch)
    assert e.value.field.startswith(field) and words in e.value.rule


@pytest.mark.parametrize(
    "patch",
    [
        {"spec": {"hostNetwork": True, "priorityClassName": "high"}},
        _main(volumeMounts=[{"name": "shm", "mountPath": "/dev/shm"}]),  # a volume of the settings or the template
        _main(image="{{inputs.parameters.image}}"),
        {"spec": {"containers": [{"name": "sidecar", "image": "busybox:1", "command": ["sleep", "9"]}]}},
        {"spec": {"tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]}},
    ],
)
def test_patches_of_what_the_builders_write_are_accepted(patch: dict[str, Any]) -> None:
    volumes = [PodVolume.empty_dir("shm", "/unused")] if "volumeMounts" in str(patch) else []
    settings = PodSettings(volumes=volumes, patch=patch)
    checked(settings.apply(template("main"), container="main"))


def test_node_selectors_and_tolerations_of_any_pod_template_meet_kubernetes_rules() -> None:
    for spec, field in [
        ({"nodeSelector": {"disk": "fast ssd"}}, "spec.tasks[0].template.spec.nodeSelector.disk"),
        (
            {"tolerations": [{"key": "a", "operator": "Exists", "value": "b"}]},
            "spec.tasks[0].template.spec.tolerations[0].value",
        ),
    ]:
        pod = template("main")
        pod["spec"].update(spec)
        with pytest.raises(ValidationError) as e:
            checked(pod)
        assert e.value.field == field
