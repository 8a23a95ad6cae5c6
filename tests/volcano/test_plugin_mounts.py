"""A job's own mounts where Volcano's plugins mount theirs (hera_volcano/volcano/plugin_mounts.py): the svc plugin's
hosts at /etc/volcano, the ssh plugin's keys at its key path, each in every container and init container.
Kubernetes refuses each pod of such a job after Volcano admitted it, so the gang would never start."""

from __future__ import annotations

from typing import Any

import pytest

import hera_volcano as hv
from hera_volcano.volcano.plugin_mounts import ssh_key_path
from hera_volcano.volcano.rules import check_job
from tests.volcano.test_rules import C1, T1, changed

MOUNTS = f"{C1}.volumeMounts"
AT = "spec.tasks[1].template.spec.containers[0].volumeMounts[0].mountPath"


def mounted(path: str, *edits: tuple[str, object]) -> list[tuple[str, str, str]]:
    job = changed((MOUNTS, [{"name": "scratch", "mountPath": path}]), *edits)
    return [(f.path, f.severity, f.message) for f in check_job(job)]


@pytest.mark.parametrize(
    ("path", "edits", "plugin"),
    [
        ("/etc/volcano", (), "svc"),
        ("/etc/volcano/", (), "svc"),
        ("/root/.ssh", (), "ssh"),  # the mutating webhook adds ssh for mpi
        ("/root//.ssh/", (("spec.plugins", {"mpi": ["--master=mpimaster", "--worker=mpiworker"]}),), "ssh"),
        ("/home/mpi/.ssh", (("spec.plugins.ssh", ["--ssh-key-file-path=/home/mpi/.ssh"]),), "ssh"),
        ("/keys", (("spec.plugins.ssh", ["--ssh-key-file-path", "/keys"]),), "ssh"),
        ("/k", (("spec.plugins.ssh", ["--ssh-port=2222", "--ssh-key-file-path=/k"]),), "ssh"),
    ],
)
def test_a_mount_at_a_plugins_path_is_refused_naming_the_plugin(
    path: str, edits: tuple[tuple[str, object], ...], plugin: str
) -> None:
    found = mounted(path, *edits)
    assert [(p, s) for p, s, _ in found] == [(AT, "error")], found
    assert f"Volcano's {plugin} plugin mounts" in found[0][2] and "Kubernetes refuses each pod" in found[0][2]


def test_elsewhere_or_where_no_plugin_mounts_is_accepted() -> None:
    assert mounted("/root/.ssh", ("spec.plugins.ssh", ["--ssh-key-file-path=/home/mpi/.ssh"])) == []
    assert mounted("/etc/volcano", ("spec.plugins", {"env": []})) == []  # no svc, no ssh
    assert mounted("/etc/volcano-data") == []


def test_a_mount_inside_a_plugins_path_is_a_warning() -> None:
    assert [(p, s) for p, s, _ in mounted("/etc/volcano/extra")] == [(AT, "warning")]


def test_an_init_container_collides_with_either() -> None:
    def init(path: str) -> list[Any]:
        job = changed(
            (
                f"{T1}.template.spec.initContainers",
                [{"name": "i", "image": "x", "volumeMounts": [{"name": "scratch", "mountPath": path}]}],
            )
        )
        return [(f.path, f.severity) for f in check_job(job)]

    at = "spec.tasks[1].template.spec.initContainers[0].volumeMounts[0].mountPath"
    assert init("/etc/volcano") == [(at, "error")]
    assert init("/root/.ssh") == [(at, "error")]


def test_the_ssh_key_path_is_read_as_go_flags_read_it() -> None:
    assert ssh_key_path([]) == "/root/.ssh"
    assert ssh_key_path(["-ssh-private-key", "KEY", "--ssh-key-file-path=/k"]) == "/k"
    assert ssh_key_path(["--port=22", "--ssh-key-file-path=/k"]) == "/root/.ssh", "an unknown flag stops the parse"
    assert ssh_key_path(["--ssh-key-file-path"]) == "/root/.ssh", "a flag without its value: the parse fails"


def test_a_users_mpi_job_with_checkpoints_where_the_ssh_keys_go_is_refused_when_rendered() -> None:
    """The user puts their checkpoints at /root/.ssh on an MPI job: refused before anything reaches the cluster."""
    from hera.workflows import Workflow

    job = hv.mpi_job(
        image="mpi:1", program=hv.Program.command(["true"]), workers=1, checkpoints=hv.Checkpoints("c", "/root/.ssh")
    )
    refused = r"volumeMounts\[\d\]\.mountPath: '/root/.ssh': Volcano's ssh plugin"
    with pytest.raises(hv.ValidationError, match=refused), Workflow(generate_name="w-", entrypoint="main"):
        hv.job_dag(job, name="main")
