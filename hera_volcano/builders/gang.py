"""What the job builders' shapes share: the policy that a pod failing outright ends the whole job, and the pods of
the PyTorch and TensorFlow jobs (one container each, wired by a Volcano plugin). The settings every job takes are
:mod:`hera_volcano.builders.settings`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from hera_volcano.builders.pod import PodSettings, apply_settings, check_settings
from hera_volcano.builders.program import Launch, Program, check_command_env, check_env, with_launcher
from hera_volcano.builders.settings import JobSettings
from hera_volcano.shared.errors import ValidationError
from hera_volcano.shared.placeholders import Placeholder
from hera_volcano.volcano.job import Policy

#: More workers than any cluster gang-schedules.
MAX_WORKERS: Final = 10_000


def script_arguments(argv: Sequence[str | Placeholder]) -> list[str | Placeholder]:
    """A command the MPI master's script passes to ``mpiexec`` (joined into shell text by sshd on the workers): its
    arguments non-empty and without newlines (a run-time value's sample)."""
    for i, arg in enumerate(argv):
        text = arg if isinstance(arg, str) else str(arg.sample)
        if not text or "\n" in text:
            raise ValidationError(f"program.command[{i}]", "must be non-empty, without a newline (mpiexec's ranks)")
    return list(argv)


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
    command: Sequence[str | Placeholder],
    port: tuple[int, str],
    working_dir: str | None,
    env: Sequence[Mapping[str, object]] | None = None,
) -> dict[str, object]:
    """The one container of a PyTorch or TensorFlow pod: its command as given (and ``env``, a launcher's), and the
    (number, name) of the port the plugin wires (named as the plugin names what it opens itself)."""
    out: dict[str, object] = {"name": task, "image": image}
    if working_dir is not None:
        out["workingDir"] = working_dir
    out["command"] = list(command)
    if env:
        out["env"] = [dict(item) for item in env]
    out["ports"] = [{"containerPort": port[0], "name": port[1]}]
    return out


def framework_pod(container: dict[str, object], service_account: str | None) -> dict[str, object]:
    """A PyTorch or TensorFlow pod: restartPolicy Never, so a failed process fails its pod and Volcano ends the job
    (a restarted process could not rejoin the others). User code gets API credentials only under
    ``service_account``."""
    spec: dict[str, object] = {}
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


@dataclass(frozen=True)
class FrameworkPods:
    """The pods of a PyTorch or TensorFlow job: one container each running ``command`` in ``image``, alike but for
    their role's settings (on top of the job's ``pod``)."""

    image: str
    command: Sequence[str | Placeholder]
    port: tuple[int, str]
    settings: JobSettings
    launch: Launch | None
    roles: Mapping[str, PodSettings | None]

    @classmethod
    def of(
        cls,
        settings: JobSettings,
        image: str,
        program: Program,
        command: Sequence[str | Placeholder],
        port: tuple[int, str],
        plugin_env: Sequence[str],
        plugin: str,
        **roles: PodSettings | None,
    ) -> FrameworkPods:
        """The pods, each role's settings (``master=``, ``worker=``...: the builder's ``ROLE_pod``) checked: none may
        set what the ``plugin`` sets (``plugin_env``) or, for a Python program, the launcher's variables."""
        checked = {role: check_settings(f"{role}_pod", value) for role, value in roles.items()}
        fields = {"pod": settings["pod"], **{f"{role}_pod": value for role, value in checked.items()}}
        reserved_env(plugin, plugin_env, fields)
        if program.launch is not None:
            check_env(fields)
        check_command_env(program, fields)
        return cls(image, tuple(command), port, settings, program.launch, checked)

    def template(self, role: str) -> dict[str, object]:
        """The pod template of ``role`` (also its task's and its container's name)."""
        env = None if self.launch is None else self.launch.env()
        container = framework_container(role, self.image, self.command, self.port, self.settings["working_dir"], env)
        spec = framework_pod(container, self.settings["service_account"])
        if self.launch is not None:
            with_launcher(spec, container)
        return apply_settings({"spec": spec}, role, self.settings["pod"], self.roles[role])
