"""The PyTorch and TensorFlow builders: one gang, plugin arguments that name the tasks and the port each pod opens,
the completion and failure policies, and their input rules; usable in job_template and as a pipeline shape."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from hera_volcano import (
    Pipeline,
    PipelineJob,
    PodSettings,
    ValidationError,
    job_template,
    pytorch_job,
    tensorflow_job,
    to_yaml,
)
from hera_volcano.builders.program import Program
from hera_volcano.pods.run import Settings
from hera_volcano.volcano.rules import check_job
from tests.conftest import manifests

IMAGE = "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime"


def flags(args: list[str]) -> dict[str, str]:
    """``--name=value`` plugin arguments as a mapping (each given once)."""
    parsed = dict(a.removeprefix("--").split("=", 1) for a in args)
    assert len(parsed) == len(args), args
    return parsed


def tasks(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {t["name"]: t for t in data["spec"]["tasks"]}


def containers(task: dict[str, Any]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = task["template"]["spec"]["containers"]
    return found


def assert_valid(data: dict[str, Any]) -> None:
    assert [f for f in check_job(data) if f.severity == "error"] == []


# ---- PyTorch ---------------------------------------------------------------------------------------------------


def pytorch(**kwargs: Any) -> dict[str, Any]:
    kwargs.setdefault("image", IMAGE)
    if "program" not in kwargs:
        kwargs["program"] = Program.command(kwargs.pop("command", ["python3", "train.py"]))
    data: dict[str, Any] = pytorch_job(**kwargs).to_dict()
    assert_valid(data)
    return data


@pytest.mark.parametrize(("workers", "port"), [(1, 23456), (2, 23456), (7, 29500)])
def test_pytorch_plugin_names_the_tasks_and_every_pod_opens_its_port(workers: int, port: int) -> None:
    data = pytorch(workers=workers, port=port)
    by_name = tasks(data)
    assert {n: t["replicas"] for n, t in by_name.items()} == {"master": 1, "worker": workers}
    assert data["spec"]["minAvailable"] == workers + 1 == sum(t["replicas"] for t in by_name.values())
    plugin = flags(data["spec"]["plugins"]["pytorch"])
    assert plugin == {"master": "master", "worker": "worker", "port": str(port)}
    assert set(plugin.values()) - {str(port)} == set(by_name)
    assert "svc" in data["spec"]["plugins"], "the master's address is its svc DNS name"
    for task in by_name.values():
        [container] = containers(task)
        assert container["name"] == task["name"]
        assert container["ports"] == [{"containerPort": port, "name": "pytorchjob-port"}]
        assert container["command"] == ["python3", "train.py"]


def test_pytorch_master_completes_the_job_and_any_failure_ends_it() -> None:
    data = pytorch()
    assert data["spec"]["policies"] == [
        {"event": "PodFailed", "action": "TerminateJob"},
        {"event": "PodEvicted", "action": "TerminateJob"},
        {"event": "TaskFailed", "action": "TerminateJob"},
    ]
    master, worker = tasks(data)["master"], tasks(data)["worker"]
    assert master["policies"] == [{"event": "TaskCompleted", "action": "CompleteJob"}]
    assert "policies" not in worker
    for task in (master, worker):
        assert task["template"]["spec"]["restartPolicy"] == "Never"


def test_pytorch_pods_get_api_credentials_only_under_a_service_account() -> None:
    plain = tasks(pytorch())["master"]["template"]["spec"]
    assert plain["automountServiceAccountToken"] is False and "serviceAccountName" not in plain
    named = tasks(pytorch(service_account="trainer"))["worker"]["template"]["spec"]
    assert named["serviceAccountName"] == "trainer" and "automountServiceAccountToken" not in named


def test_pytorch_pod_settings_per_role() -> None:
    data = pytorch(
        pod=PodSettings(env={"NCCL_DEBUG": "INFO"}),
        master_pod=PodSettings(cpu="500m"),
        worker_pod=PodSettings(gpus=1, memory="8Gi"),
        working_dir="/workspace",
    )
    [master] = containers(tasks(data)["master"])
    [worker] = containers(tasks(data)["worker"])
    assert master["env"] == worker["env"] == [{"name": "NCCL_DEBUG", "value": "INFO"}]
    assert master["resources"] == {"requests": {"cpu": "500m"}}
    assert worker["resources"] == {
        "requests": {"memory": "8Gi", "nvidia.com/gpu": 1},
        "limits": {"nvidia.com/gpu": 1},
    }
    assert master["workingDir"] == worker["workingDir"] == "/workspace"


def test_pytorch_commands_may_span_lines() -> None:
    program = "import os\nprint(os.environ['RANK'])"
    assert containers(tasks(pytorch(command=["python3", "-c", program]))["worker"])[0]["command"][2] == program


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"workers": 0}, "workers"),
        ({"workers": 10_001}, "workers"),
        ({"port": 0}, "port"),
        ({"port": 65536}, "port"),
        ({"port": "23456"}, "port"),
        ({"image": "bad image"}, "image"),
        ({"command": []}, "command"),
        ({"command": "torchrun train.py"}, "command"),
        ({"command": ["echo", "{{workflow.name}}"]}, "command[1]"),
        ({"name": "Bad_Name"}, "name"),
        ({"generate_name": "9-"}, "generate_name"),
        ({"service_account": "Bad SA"}, "service_account"),
        ({"working_dir": "relative"}, "working_dir"),
        ({"pod": {"cpu": "1"}}, "pod"),
        ({"pod": PodSettings(env={"RANK": "0"})}, "pod.env['RANK']"),
        ({"worker_pod": PodSettings(env={"MASTER_ADDR": "x"})}, "worker_pod.env['MASTER_ADDR']"),
    ],
)
def test_pytorch_bad_input_names_the_field(kwargs: dict[str, Any], field: str) -> None:
    with pytest.raises(ValidationError) as e:
        pytorch(**kwargs)
    assert e.value.field == field


def test_pytorch_pod_names_must_fit() -> None:
    pytorch(name="a" * 54, workers=10)  # a...a-worker-9: 63 characters
    with pytest.raises(ValidationError) as e:
        pytorch(name="a" * 54, workers=11)
    assert "63" in e.value.rule


def test_pytorch_job_in_job_template() -> None:
    from hera.workflows import Workflow

    with Workflow(generate_name="train-", namespace="argo", entrypoint="train") as w:
        job_template(pytorch_job(image=IMAGE, program=Program.command(["python3", "train.py"])), name="train")
    [job] = manifests(w)
    for task in job["spec"]["tasks"]:
        assert task["template"]["metadata"]["labels"]["hera-volcano/job"] == "train"
        assert "activeDeadlineSeconds" not in task["template"]["spec"], "no default ends a running job"


def test_framework_jobs_in_a_pipeline_share_a_template_per_kind() -> None:
    torch = pytorch_job(image=IMAGE, program=Program.command(["python3", "train.py"]))
    tf = tensorflow_job(image=IMAGE, program=Program.command(["python3", "train.py"]))
    pipeline = Pipeline(
        [
            PipelineJob("pretrain", torch),
            PipelineJob("finetune", torch, after=["pretrain"], follow_logs=True),
            PipelineJob("distill", tf, after=["finetune"], follow_logs=True),
        ]
    )
    wf = pipeline.workflow("train")
    text = to_yaml(wf)
    assert text.count("kind: Job") == 2, "one template per kind of job"
    kinds = [tuple(t["name"] for t in job["spec"]["tasks"]) for job in manifests(wf)]
    assert sorted(kinds) == [("chief", "worker"), ("master", "worker")]
    followers = {t["name"]: t for t in yaml.safe_load(text)["spec"]["templates"] if t["name"].endswith("-logs")}
    tasks = sorted(
        {e["value"] for t in followers.values() for e in t["container"]["env"] if e["name"] == Settings.TASK}
    )
    assert tasks == ["chief", "master"], "each follower streams its job's lead task"


# ---- TensorFlow ------------------------------------------------------------------------------------------------


def tensorflow(**kwargs: Any) -> dict[str, Any]:
    kwargs.setdefault("image", IMAGE)
    if "program" not in kwargs:
        kwargs["program"] = Program.command(kwargs.pop("command", ["python3", "train.py"]))
    data: dict[str, Any] = tensorflow_job(**kwargs).to_dict()
    assert_valid(data)
    return data


@pytest.mark.parametrize(
    ("kwargs", "replicas"),
    [
        ({}, {"chief": 1, "worker": 2}),
        ({"ps": 2, "workers": 3}, {"chief": 1, "ps": 2, "worker": 3}),
        ({"chief": False, "ps": 1, "workers": 1}, {"ps": 1, "worker": 1}),
        ({"chief": False, "workers": 4, "port": 3333}, {"worker": 4}),
    ],
)
def test_tensorflow_plugin_names_exactly_the_tasks_and_every_pod_opens_its_port(
    kwargs: dict[str, Any], replicas: dict[str, int]
) -> None:
    data = tensorflow(**kwargs)
    by_name = tasks(data)
    assert list(by_name) == list(replicas), "chief, ps, worker: in that order"
    assert {n: t["replicas"] for n, t in by_name.items()} == replicas
    assert data["spec"]["minAvailable"] == sum(replicas.values())
    port = kwargs.get("port", 2222)
    plugin = flags(data["spec"]["plugins"]["tensorflow"])
    assert plugin == {**{role: role for role in replicas}, "port": str(port)}
    assert "svc" in data["spec"]["plugins"]
    for task in by_name.values():
        [container] = containers(task)
        assert container["name"] == task["name"]
        assert container["ports"] == [{"containerPort": port, "name": "tfjob-port"}]


def test_tensorflow_completes_with_the_chief_or_else_with_every_worker() -> None:
    completes = [{"event": "TaskCompleted", "action": "CompleteJob"}]
    with_chief = tasks(tensorflow(ps=1))
    assert with_chief["chief"]["policies"] == completes
    assert "policies" not in with_chief["ps"] and "policies" not in with_chief["worker"]
    without = tasks(tensorflow(chief=False, ps=1))
    assert without["worker"]["policies"] == completes and "policies" not in without["ps"]


def test_tensorflow_pod_settings_per_role() -> None:
    data = tensorflow(
        ps=1, pod=PodSettings(labels={"team": "ml"}), ps_pod=PodSettings(memory="16Gi"), worker_pod=PodSettings(gpus=2)
    )
    by_name = tasks(data)
    assert all(t["template"]["metadata"]["labels"] == {"team": "ml"} for t in by_name.values())
    assert containers(by_name["ps"])[0]["resources"] == {"requests": {"memory": "16Gi"}}
    assert containers(by_name["worker"])[0]["resources"]["limits"] == {"nvidia.com/gpu": 2}
    assert "resources" not in containers(by_name["chief"])[0]


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"workers": 0}, "workers"),
        ({"ps": -1}, "ps"),
        ({"chief": "yes"}, "chief"),
        ({"chief": False, "workers": 1}, "workers"),
        ({"port": 70000}, "port"),
        ({"command": ["{{pod.name}}"]}, "command[0]"),
        ({"chief_pod": PodSettings(env={"TF_CONFIG": "{}"})}, "chief_pod.env['TF_CONFIG']"),
        ({"ps_pod": "big"}, "ps_pod"),
    ],
)
def test_tensorflow_bad_input_names_the_field(kwargs: dict[str, Any], field: str) -> None:
    with pytest.raises(ValidationError) as e:
        tensorflow(**kwargs)
    assert e.value.field == field


def test_torchrun_takes_exactly_what_the_pytorch_plugin_sets() -> None:
    import re

    from hera_volcano import torchrun
    from hera_volcano.builders.pytorch import PLUGIN_ENV

    command = torchrun("train.py", "--epochs", "3", nproc_per_node=8)
    assert command[0] == "torchrun" and command[-3:] == ["train.py", "--epochs", "3"]
    assert "--nproc_per_node=8" in command
    assert {v for arg in command for v in re.findall(r"\$\(([A-Z_]+)\)", arg)} == set(PLUGIN_ENV)
    assert pytorch(command=command)["spec"]["tasks"][0]["template"]["spec"]["containers"][0]["command"] == command
    for bad, field in (({"nproc_per_node": 0}, "nproc_per_node"), ({"nproc_per_node": True}, "nproc_per_node")):
        with pytest.raises(ValidationError) as e:
            torchrun("train.py", **bad)
        assert e.value.field == field
    with pytest.raises(ValidationError) as e:
        torchrun(["train.py"])  # type: ignore[arg-type]
    assert e.value.field == "args[0]"
