"""Where Volcano's plugins mount into a job's pods, and the job's own mounts that collide with them.

The controller adds these mounts to every pod it creates, after admission: the svc plugin its hosts ConfigMap at
``/etc/volcano``, the ssh plugin its key Secret at ``--ssh-key-file-path`` (``/root/.ssh``), each in every
container and init container (Volcano 1.15). A job whose pod template already mounts something at one of those
paths is admitted, but Kubernetes refuses each of its pods (a container's ``mountPath`` must be unique), so the
gang never starts: caught here, where the job is built or linted.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator, Mapping
from typing import Final

from hera_volcano.shared.findings import Finding, as_list, as_map, error, warning

SVC_MOUNT: Final = "/etc/volcano"
SSH_MOUNT: Final = "/root/.ssh"
#: The ssh plugin's flags (Volcano 1.15); any other stops Go's parse, the defaults staying.
_SSH_FLAGS: Final = frozenset({"ssh-key-file-path", "ssh-private-key", "ssh-public-key", "ssh-port"})


def ssh_key_path(args: object) -> str:
    """The ssh plugin's mount path from its arguments, as Go's ``flag`` package reads them."""
    items = [a for a in as_list(args) if isinstance(a, str)]
    path, i = SSH_MOUNT, 0
    while i < len(items) and items[i].startswith("-") and items[i] not in ("-", "--"):
        flag, has_value, value = items[i].removeprefix("-").removeprefix("-").partition("=")
        if flag not in _SSH_FLAGS:
            break
        if not has_value:
            if i + 1 >= len(items):
                break
            i += 1
            value = items[i]
        if flag == "ssh-key-file-path":
            path = value
        i += 1
    return path


def plugin_mounts(plugins: Mapping[str, object], svc: bool) -> dict[str, str]:
    """Each path a plugin mounts in every container and init container of the job's pods, and the plugin."""
    mounts: dict[str, str] = {}
    if svc:
        mounts[SVC_MOUNT] = "svc"
    if "ssh" in plugins or "mpi" in plugins:  # the mutating webhook adds ssh for mpi
        mounts[posixpath.normpath(ssh_key_path(plugins.get("ssh")))] = "ssh"
    return mounts


def check_plugin_mounts(spec: Mapping[str, object], plugins: Mapping[str, object], svc: bool) -> Iterator[Finding]:
    """A mount of a task's pod template at a path a plugin mounts (an error: every pod is refused), or inside one (a
    warning: the plugin's volume hides it, or the runtime cannot create the mount point in it)."""
    mounts = plugin_mounts(plugins, svc)
    if not mounts:
        return
    for t, task in enumerate(as_list(spec.get("tasks"))):
        pod = as_map(as_map(as_map(task).get("template")).get("spec"))
        for group in ("containers", "initContainers"):
            for c, container in enumerate(as_list(pod.get(group))):
                for m, mount in enumerate(as_list(as_map(container).get("volumeMounts"))):
                    given = as_map(mount).get("mountPath")
                    if not isinstance(given, str) or not given.startswith("/"):
                        continue
                    at = posixpath.normpath(given)
                    path = f"spec.tasks[{t}].template.spec.{group}[{c}].volumeMounts[{m}].mountPath"
                    same = [(p, plugin) for p, plugin in mounts.items() if at == p]
                    inside = [(p, plugin) for p, plugin in mounts.items() if at.startswith(p + "/")]
                    for plugin_path, plugin in (same or inside)[:1]:
                        said = f"Volcano's {plugin} plugin mounts {plugin_path} in every container of the job's pods"
                        if same:
                            yield error(path, f"{given!r}: {said}, so Kubernetes refuses each pod; mount elsewhere")
                        else:
                            yield warning(path, f"{given!r} is inside {plugin_path}: {said}; mount elsewhere")
