"""Where Volcano's plugins mount into a job's pods, and the job's own mounts that collide with them.

The controller adds these mounts to every pod it creates, after admission: the svc plugin its hosts ConfigMap at
``/etc/volcano`` in every container and init container, the ssh plugin its key Secret at ``--ssh-key-file-path``
(``/root/.ssh``; ``/etc/volcano/.ssh`` with ``--no-root``) in every container. A job whose pod template already
mounts something at one of those paths is admitted, but Kubernetes refuses each of its pods (a container's
``mountPath`` must be unique), so the gang never starts: caught here, where the job is built or linted.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator, Mapping
from typing import Final

from hera_volcano.shared.findings import Finding, as_list, as_map, error, warning

SVC_MOUNT: Final = "/etc/volcano"
SSH_MOUNT: Final = "/root/.ssh"
SSH_NO_ROOT_MOUNT: Final = SVC_MOUNT + "/.ssh"


def ssh_key_path(args: object) -> str:
    """The ssh plugin's mount path from its arguments, as Go's ``flag`` package reads them (a flag it does not know
    stops the parse; the defaults stay)."""
    items = [a for a in as_list(args) if isinstance(a, str)]
    path, no_root, i = None, False, 0
    while i < len(items):
        flag, has_value, value = items[i].lstrip("-").partition("=")
        if not items[i].startswith("-") or flag not in ("ssh-key-file-path", "no-root"):
            break
        if flag == "no-root":
            no_root = not has_value or value.lower() in ("1", "t", "true")
        elif has_value:
            path = value
        elif i + 1 < len(items):
            i += 1
            path = items[i]
        i += 1
    if path is not None:
        return path
    return SSH_NO_ROOT_MOUNT if no_root else SSH_MOUNT


def plugin_mounts(plugins: Mapping[str, object], svc: bool) -> dict[str, tuple[str, bool]]:
    """Each path a plugin mounts in the job's pods: the plugin, and whether it mounts in init containers too."""
    mounts: dict[str, tuple[str, bool]] = {}
    if svc:
        mounts[SVC_MOUNT] = ("svc", True)
    if "ssh" in plugins or "mpi" in plugins:  # the mutating webhook adds ssh for mpi
        mounts[posixpath.normpath(ssh_key_path(plugins.get("ssh")))] = ("ssh", False)
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
                    near = [(p, plugin) for p, (plugin, init) in mounts.items() if init or group == "containers"]
                    same = [(p, plugin) for p, plugin in near if at == p]
                    inside = [(p, plugin) for p, plugin in near if at.startswith(p + "/")]
                    for plugin_path, plugin in (same or inside)[:1]:
                        said = f"Volcano's {plugin} plugin mounts {plugin_path} in every container of the job's pods"
                        if same:
                            yield error(path, f"{given!r}: {said}, so Kubernetes refuses each pod; mount elsewhere")
                        else:
                            yield warning(path, f"{given!r} is inside {plugin_path}: {said}; mount elsewhere")
