"""The MPI job builder: gang, ranks, readiness, completion, GPUs/RDMA, plugins, and its input rules."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from hera_volcano import PodSettings, Program, ValidationError, mpi_job
from hera_volcano.kube.images import PYTHON_IMAGE
from hera_volcano.pods import program
from hera_volcano.pods.workers import WAIT_COMMAND, WaitSettings


def spec(**kwargs: Any) -> dict[str, Any]:
    kwargs.setdefault("image", "volcanosh/example-mpi:0.0.3")
    if "program" not in kwargs:
        kwargs["program"] = Program.command(kwargs.pop("command", ["mpi_hello_world"]))
    data: dict[str, Any] = mpi_job(**kwargs).to_dict()
    return data


def task(data: dict[str, Any], name: str) -> dict[str, Any]:
    return next(t for t in data["spec"]["tasks"] if t["name"] == name)


def main_container(t: dict[str, Any]) -> dict[str, Any]:
    container: dict[str, Any] = t["template"]["spec"]["containers"][0]
    return container


def test_defaults_are_one_master_and_two_workers_in_one_gang() -> None:
    data = spec(name="hello")
    assert data["metadata"]["name"] == "hello"
    assert data["spec"]["schedulerName"] == "volcano"
    assert data["spec"]["minAvailable"] == 3
    assert [(t["name"], t["replicas"]) for t in data["spec"]["tasks"]] == [("mpimaster", 1), ("mpiworker", 2)]
    assert set(data["spec"]["plugins"]) == {"ssh", "svc"}


@pytest.mark.parametrize(("workers", "slots"), [(1, 1), (2, 1), (4, 3), (8, 2)])
def test_gang_and_rank_count_follow_workers_and_slots(workers: int, slots: int) -> None:
    data = spec(workers=workers, slots_per_worker=slots)
    assert data["spec"]["minAvailable"] == workers + 1
    assert task(data, "mpiworker")["replicas"] == workers
    command = main_container(task(data, "mpimaster"))["command"]
    assert f'-np {workers * slots} "$@"' in command[2] and command[3:] == ["sh", "mpi_hello_world"]
    assert f"sed 's/$/:{slots}/'" in command[2]


def test_workers_are_ready_only_when_sshd_listens() -> None:
    worker = main_container(task(spec(), "mpiworker"))
    assert worker["readinessProbe"]["tcpSocket"] == {"port": 22}
    assert "sshd -D" in worker["command"][2]


def test_master_waits_for_ready_workers_then_completes_the_job() -> None:
    master = task(spec(service_account="argo"), "mpimaster")
    pod = master["template"]["spec"]
    assert pod["serviceAccountName"] == "argo"
    wait = pod["initContainers"][0]
    # The pods' program from its ConfigMap, told to wait (hera_volcano/pods/workers.py), in the Python image.
    assert wait["command"][:2] == ["/bin/sh", "-c"] and "trap 'exit 143' TERM" in wait["command"][2]
    assert wait["command"][3:] == ["sh", "python3", "-c", program.bootstrap(), WAIT_COMMAND]
    assert wait["image"] == PYTHON_IMAGE
    volumes = {v["name"]: v for v in pod["volumes"]}
    mounts = {m["name"]: m["mountPath"] for m in wait["volumeMounts"]}
    assert volumes[program.config_map_name()]["configMap"] == {"name": program.config_map_name(), "optional": True}
    assert mounts[program.config_map_name()] == program.MOUNT_DIR
    assert wait["env"] == WaitSettings(None, "mpiworker", 2, 600).to_env()
    assert {"event": "TaskCompleted", "action": "CompleteJob"} in master["policies"]


def test_host_list_comes_from_the_svc_host_file_or_the_mpi_plugin() -> None:
    plain = main_container(task(spec(), "mpimaster"))["command"][2]
    assert "/etc/volcano/mpiworker.host" in plain
    data = spec(mpi_plugin=True)
    assert data["spec"]["plugins"] == {"mpi": ["--master=mpimaster", "--worker=mpiworker"]}
    assert "$MPI_HOST" in main_container(task(data, "mpimaster"))["command"][2]


def test_gpus_and_rdma_are_whole_numbers_with_requests_equal_to_limits() -> None:
    worker = main_container(task(spec(worker_pod=PodSettings(gpus=2, extended_resources={"rdma/ib": 1})), "mpiworker"))
    assert worker["resources"]["requests"] == worker["resources"]["limits"] == {"nvidia.com/gpu": 2, "rdma/ib": 1}
    assert "resources" not in main_container(task(spec(), "mpiworker"))


HOSTILE = ["it's", "x'$(touch PWNED)'", "a b", "$(rm -rf /)", '"; echo injected', "`id`", "$HOME", "*"]


def test_command_arguments_reach_mpiexec_as_argv_never_as_shell_text(tmp_path: Path) -> None:
    """The kubelet expands $(VAR) inside a container's arguments: a value that lands in shell text can run. The
    master's script passes the ranks' command on as "$@", which no shell reads again (issue 34)."""
    command = main_container(task(spec(command=["prog", *HOSTILE]), "mpimaster"))["command"]
    assert command[:2] == ["/bin/sh", "-c"] and command[3:] == ["sh", "prog", *HOSTILE]
    script = command[2]
    assert "prog" not in script and "PWNED" not in script
    # Run the script's last line as the master's shell would, with mpiexec standing in as a program that prints
    # its arguments: each arrives whole, and nothing ran.
    last = script.rstrip("\n").splitlines()[-1]
    assert last.startswith("exec mpiexec ") and last.endswith(' "$@"')
    runnable = re.sub(r"^exec mpiexec .* -np \d+ ", "exec printf '[%s]\\n' ", last)
    assert runnable != last
    shown = subprocess.run(
        ["/bin/sh", "-c", runnable, *command[3:]],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert shown.splitlines() == [f"[{a}]" for a in ["prog", *HOSTILE]]
    assert not (tmp_path / "PWNED").exists()


def test_without_a_name_the_job_name_is_generated() -> None:
    data = spec()
    assert "name" not in data["metadata"] and data["metadata"]["generateName"] == "mpi-job-"


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"workers": 0}, "workers"),
        ({"workers": True}, "workers"),
        ({"slots_per_worker": 0}, "slots_per_worker"),
        ({"image": ""}, "image"),
        ({"image": "bad image"}, "image"),
        ({"command": []}, "command"),
        ({"command": ["echo {{workflow.name}}"]}, "command[0]"),
        ({"name": "Bad_Name"}, "name"),
        ({"name": "1abc"}, "name"),
        ({"service_account": "Bad SA"}, "service_account"),
        ({"port": 0}, "port"),
    ],
)
def test_bad_input_names_the_field(kwargs: dict[str, Any], field: str) -> None:
    with pytest.raises(ValidationError) as e:
        spec(**kwargs)
    assert e.value.field == field


def test_job_name_too_long_for_its_pod_names_is_rejected() -> None:
    # <job>-mpiworker-<i> must fit in 63 characters: 63 - len("-mpiworker-1") = 51
    spec(name="a" * 51)
    with pytest.raises(ValidationError) as e:
        spec(name="a" * 52)
    assert "63" in e.value.rule


def test_only_the_wait_container_gets_an_api_token() -> None:
    data = spec(service_account="argo")
    assert task(data, "mpiworker")["template"]["spec"]["automountServiceAccountToken"] is False
    pod = task(data, "mpimaster")["template"]["spec"]
    assert pod["automountServiceAccountToken"] is False
    mounts = {m["mountPath"] for c in pod["initContainers"] for m in c.get("volumeMounts", [])}
    assert mounts == {"/var/run/secrets/kubernetes.io/serviceaccount", program.MOUNT_DIR}
    assert all("volumeMounts" not in c for c in pod["containers"])
    sources = pod["volumes"][0]["projected"]["sources"]
    assert {next(iter(s)) for s in sources} == {"serviceAccountToken", "configMap", "downwardAPI"}


def test_pod_settings_reach_each_role_and_the_environment_reaches_every_rank() -> None:
    from hera_volcano import PodVolume

    data = spec(
        service_account="argo",
        pod=PodSettings(env={"GREETING": "hello"}, volumes=[PodVolume.config_map("cfg", "/etc/cfg")]),
        master_pod=PodSettings(env={"NCCL_DEBUG": "INFO"}, cpu="100m"),
        worker_pod=PodSettings(cpu="2", memory="4Gi", gpus=1, env={"OMP_NUM_THREADS": "4"}),
    )
    master_pod = task(data, "mpimaster")["template"]["spec"]
    master, worker = main_container(task(data, "mpimaster")), main_container(task(data, "mpiworker"))
    assert [e["name"] for e in master["env"]] == ["GREETING", "NCCL_DEBUG"]
    assert [e["name"] for e in worker["env"]] == ["GREETING", "OMP_NUM_THREADS"]
    assert master["resources"] == {"requests": {"cpu": "100m"}}
    assert worker["resources"] == {
        "requests": {"nvidia.com/gpu": 1, "cpu": "2", "memory": "4Gi"},
        "limits": {"nvidia.com/gpu": 1},
    }
    assert {m["mountPath"] for c in (master, worker) for m in c["volumeMounts"]} == {"/etc/cfg"}
    assert [v["name"] for v in master_pod["volumes"]] == ["kube-api-access", program.config_map_name(), "cfg"]
    wait = master_pod["initContainers"][0]
    assert "GREETING" not in {e["name"] for e in wait["env"]} and "resources" not in wait, "the wait stays as it is"
    # sshd starts the ranks with a clean environment: mpiexec passes the master's variables on
    assert " -x GREETING -x NCCL_DEBUG --host " in master["command"][2]


def test_without_pod_settings_nothing_is_forwarded() -> None:
    assert " -x " not in main_container(task(spec(), "mpimaster"))["command"][2]


@pytest.mark.parametrize("key", ["pod", "master_pod", "worker_pod"])
def test_pod_settings_must_be_pod_settings(key: str) -> None:
    with pytest.raises(ValidationError) as e:
        spec(**{key: {"cpu": "1"}})
    assert e.value.field == key
