"""What the job builders share: their names, service accounts and working folders, checked alike, and the policy
that a pod failing outright ends the whole job."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from hera_volcano.builders.pod import PodSettings
from hera_volcano.kube import names
from hera_volcano.shared.errors import ValidationError
from hera_volcano.shared.placeholders import Placeholder, has_expression
from hera_volcano.volcano.job import Policy

#: More workers than any cluster gang-schedules.
MAX_WORKERS: Final = 10_000


def job_names(name: str | Placeholder | None, generate_name: str | None, default_prefix: str) -> str | None:
    """The job's ``generateName``: ``generate_name``, or ``default_prefix`` without a name, so creating a job twice
    never collides. A name (the svc plugin names a Service after the job) is a DNS-1035 label."""
    if isinstance(name, str):
        names.check("name", name, names.dns1035_label)
    if name is None and generate_name is None:
        generate_name = default_prefix
    if generate_name is not None:
        if not isinstance(generate_name, str):
            raise ValidationError("generate_name", "must be a string")
        names.check("generate_name", generate_name.rstrip("-") or "-", names.dns1035_label)
    return generate_name


def script_arguments(argv: Sequence[str]) -> list[str]:
    """A command the MPI master's script passes to ``mpiexec`` (joined into shell text by sshd on the workers): its
    arguments non-empty and without newlines."""
    for i, arg in enumerate(argv):
        if not arg or "\n" in arg:
            raise ValidationError(f"program.command[{i}]", "must be non-empty, without a newline (mpiexec's ranks)")
    return list(argv)


def service_account(value: str | None) -> None:
    if value is not None:
        names.check("service_account", value, names.dns1123_subdomain)


def working_dir(value: object) -> None:
    if not isinstance(value, str) or not value.startswith("/") or has_expression(value):
        raise ValidationError("working_dir", "must be an absolute path without Argo expressions")


def terminate_on_pod_failure() -> list[Policy]:
    """A pod that fails outright (deadline, eviction, node loss) ends the job instead of leaving it half a gang."""
    return [Policy(event="PodFailed", action="TerminateJob"), Policy(event="PodEvicted", action="TerminateJob")]


def reserved_env(plugin: str, variables: Sequence[str], roles: Mapping[str, PodSettings | None]) -> None:
    """Refuse settings that set a variable a Volcano plugin sets (the plugin's value would silently win)."""
    for field_name, settings in roles.items():
        for variable in settings.env if settings is not None else ():
            if variable in variables:
                raise ValidationError(f"{field_name}.env[{variable!r}]", f"is set by Volcano's {plugin} plugin")


def framework_container(
    task: str,
    image: str,
    command: Sequence[str],
    port: tuple[int, str],
    working_dir: str | None,
    env: Sequence[Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """The one container of a PyTorch or TensorFlow pod: its command as given (and ``env``, a launcher's), and the
    (number, name) of the port the plugin wires (named as the plugin names what it opens itself)."""
    out: dict[str, Any] = {"name": task, "image": image}
    if working_dir is not None:
        out["workingDir"] = working_dir
    out["command"] = list(command)
    if env:
        out["env"] = [dict(item) for item in env]
    out["ports"] = [{"containerPort": port[0], "name": port[1]}]
    return out


def framework_pod(container: dict[str, Any], service_account: str | None) -> dict[str, Any]:
    """A PyTorch or TensorFlow pod: restartPolicy Never, so a failed process fails its pod and Volcano ends the job
    (a restarted process could not rejoin the others). User code gets API credentials only under
    ``service_account``."""
    spec: dict[str, Any] = {}
    if service_account is None:
        spec["automountServiceAccountToken"] = False
    else:
        spec["serviceAccountName"] = service_account
    spec["containers"] = [container]
    spec["restartPolicy"] = "Never"
    return spec


def framework_policies() -> list[Policy]:
    """A pod that fails, is evicted or (under a patched restart policy) keeps restarting ends the job."""
    return [*terminate_on_pod_failure(), Policy(event="TaskFailed", action="TerminateJob")]
