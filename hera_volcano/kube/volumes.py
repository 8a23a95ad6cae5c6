"""Kubernetes' rules for a pod's volumes and its containers' mounts that their field types do not say: the names a
source needs, file modes, the paths of items inside a volume, host path types, projected sources and token
lifetimes, sub paths and mount propagation.

Volcano's admission webhook runs Kubernetes' pod-template validation (after Kubernetes' defaults) on every task, so
a task that breaks one of these fails the whole job at creation; the builders' :class:`PodVolume` checks its source
and sub path by the same functions when it is made.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Final

from hera_volcano.kube.containers import check_field_path
from hera_volcano.kube.references import resource_field_findings
from hera_volcano.shared.findings import Finding, as_list, as_map, error

#: The largest file mode (``defaultMode``, an item's ``mode``): 0777 octal.
FILE_MODE_MAX: Final = 0o777
FILE_MODE_MESSAGE: Final = "must be a number between 0 and 0777 (octal), both inclusive"
HOST_PATH_TYPES: Final = (
    "",
    "BlockDevice",
    "CharDevice",
    "Directory",
    "DirectoryOrCreate",
    "File",
    "FileOrCreate",
    "Socket",
)
MOUNT_PROPAGATIONS: Final = ("Bidirectional", "HostToContainer", "None")
#: A projected service account token lives at least ten minutes and at most 2^32 seconds.
TOKEN_MIN_SECONDS: Final = 600
TOKEN_MAX_SECONDS: Final = 1 << 32
#: Fields of the downward API a volume file may hold (besides a label or an annotation subscripted).
VOLUME_DOWNWARD_FIELDS: Final = (
    "metadata.annotations",
    "metadata.labels",
    "metadata.name",
    "metadata.namespace",
    "metadata.uid",
)
#: Volume sources whose name is required, by source and field.
_REQUIRED: Final = {
    "secret": "secretName",
    "configMap": "name",
    "hostPath": "path",
    "persistentVolumeClaim": "claimName",
}
_PROJECTIONS: Final = (
    "secret",
    "configMap",
    "downwardAPI",
    "serviceAccountToken",
    "clusterTrustBundle",
    "podCertificate",
)


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def descending_path_problem(path: str) -> str | None:
    """Kubernetes' rule for a path inside a volume that a mount's ``subPath`` or ``subPathExpr`` names
    (``validateLocalDescendingPath``): relative, and no ``..`` element."""
    if path.startswith("/"):
        return "must be a relative path"
    if ".." in path.split("/"):
        return "must not contain '..'"
    return None


def item_path_problem(path: str) -> str | None:
    """The rule for the path of a file a volume writes (an item of a Secret, ConfigMap, downward API or projected
    volume; a token): a descending path that does not start with ``..`` either (``ValidateLocalNonReservedPath``).
    """
    if not path:
        return "is required"
    problem = descending_path_problem(path)
    if problem is None and path.startswith(".."):
        return "must not start with '..'"
    return problem


def _mode(value: object, path: str) -> Iterator[Finding]:
    mode = _int(value)
    if mode is not None and not 0 <= mode <= FILE_MODE_MAX:
        shown = f"{mode} (0{mode:o})" if mode >= 0 else str(mode)
        yield error(path, f"{FILE_MODE_MESSAGE}, got {shown}")


def _item_path(value: object, path: str) -> Iterator[Finding]:
    if isinstance(value, str) or value is None:
        problem = item_path_problem(value or "")
        if problem is not None:
            yield error(path, problem if value else "path is required")


def _key_items(body: Mapping[str, object], path: str) -> Iterator[Finding]:
    """The items of a Secret or ConfigMap source: a key, a path inside the volume, a file mode."""
    for j, item in enumerate(as_list(body.get("items"))):
        item = as_map(item)
        at = f"{path}.items[{j}]"
        if item.get("key") in (None, ""):
            yield error(f"{at}.key", "key is required")
        yield from _item_path(item.get("path"), f"{at}.path")
        yield from _mode(item.get("mode"), f"{at}.mode")


def _downward_file(item: Mapping[str, object], path: str) -> Iterator[Finding]:
    """A file of a downward API volume: its path and mode, and one of fieldRef and resourceFieldRef."""
    yield from _item_path(item.get("path"), f"{path}.path")
    yield from _mode(item.get("mode"), f"{path}.mode")
    field_ref, resource_ref = item.get("fieldRef"), item.get("resourceFieldRef")
    if isinstance(field_ref, Mapping):
        field_path = field_ref.get("fieldPath")
        if isinstance(field_path, str):
            yield from check_field_path(field_path, f"{path}.fieldRef.fieldPath", VOLUME_DOWNWARD_FIELDS, "a volume")
        if resource_ref is not None:
            yield error(path, "fieldRef and resourceFieldRef can not be specified simultaneously")
    elif isinstance(resource_ref, Mapping):
        if resource_ref.get("containerName") in (None, ""):
            yield error(f"{path}.resourceFieldRef.containerName", "containerName is required in a volume")
        yield from resource_field_findings(resource_ref, f"{path}.resourceFieldRef")
    elif field_ref is None and resource_ref is None:
        yield error(path, "one of fieldRef and resourceFieldRef is required")


def _projected(body: Mapping[str, object], path: str) -> Iterator[Finding]:
    """A projected volume: each source one kind, its own rules, and no two files of its Secrets, ConfigMaps,
    downward API and trust bundles at the same path."""
    seen: dict[str, str] = {}
    for i, source in enumerate(as_list(body.get("sources"))):
        source = as_map(source)
        at = f"{path}.sources[{i}]"
        kinds = [k for k in _PROJECTIONS if source.get(k) is not None]
        if len(kinds) > 1:
            yield error(at, f"may not specify more than 1 volume type per source, not {', '.join(kinds)}")
        paths: list[tuple[object, str]] = []
        for kind in kinds:
            part, part_at = as_map(source[kind]), f"{at}.{kind}"
            if kind in ("secret", "configMap"):
                if part.get("name") in (None, ""):
                    yield error(f"{part_at}.name", "name is required")
                yield from _key_items(part, part_at)
                paths += [
                    (as_map(item).get("path"), f"{part_at}.items[{j}].path")
                    for j, item in enumerate(as_list(part.get("items")))
                ]
            elif kind == "downwardAPI":
                for j, item in enumerate(as_list(part.get("items"))):
                    yield from _downward_file(as_map(item), f"{part_at}.items[{j}]")
                    paths.append((as_map(item).get("path"), f"{part_at}.items[{j}].path"))
            elif kind == "serviceAccountToken":  # Kubernetes leaves the token's path out of the comparison
                yield from _token(part, part_at)
            elif kind == "clusterTrustBundle":
                yield from _item_path(part.get("path"), f"{part_at}.path")
                paths.append((part.get("path"), f"{part_at}.path"))
        for file, file_at in paths:
            if isinstance(file, str) and file in seen:
                yield error(file_at, f"conflicting duplicate paths: {file!r} is also written by {seen[file]}")
            elif isinstance(file, str) and file:
                seen[file] = file_at


def _token(token: Mapping[str, object], path: str) -> Iterator[Finding]:
    seconds = _int(token.get("expirationSeconds"))
    if seconds is not None and seconds < TOKEN_MIN_SECONDS:
        yield error(
            f"{path}.expirationSeconds",
            f"may not specify a duration less than 10 minutes ({TOKEN_MIN_SECONDS} seconds), got {seconds}",
        )
    elif seconds is not None and seconds > TOKEN_MAX_SECONDS:
        yield error(f"{path}.expirationSeconds", f"may not specify a duration larger than 2^32 seconds, got {seconds}")
    yield from _item_path(token.get("path"), f"{path}.path")


def check_volume_source(volume: Mapping[str, object], path: str) -> Iterator[Finding]:
    """The rules of a volume's source (``volume`` is one item of a pod's ``volumes``, at ``path``)."""
    for source, key in _REQUIRED.items():
        body = volume.get(source)
        if isinstance(body, Mapping) and body.get(key) in (None, ""):
            yield error(f"{path}.{source}.{key}", f"{key} is required")
    for source in ("secret", "configMap", "downwardAPI", "projected"):
        body = volume.get(source)
        if not isinstance(body, Mapping):
            continue
        at = f"{path}.{source}"
        yield from _mode(body.get("defaultMode"), f"{at}.defaultMode")
        if source == "projected":
            yield from _projected(body, at)
        elif source == "downwardAPI":
            for j, item in enumerate(as_list(body.get("items"))):
                yield from _downward_file(as_map(item), f"{at}.items[{j}]")
        else:
            yield from _key_items(body, at)
    yield from _host_path(as_map(volume.get("hostPath")), f"{path}.hostPath")
    directory = as_map(volume.get("gitRepo")).get("directory")
    if isinstance(directory, str) and directory and descending_path_problem(directory) is not None:
        yield error(f"{path}.gitRepo.directory", str(descending_path_problem(directory)))


def _host_path(host_path: Mapping[str, object], path: str) -> Iterator[Finding]:
    target, kind = host_path.get("path"), host_path.get("type")
    if isinstance(target, str) and target and ".." in target.split("/"):
        yield error(f"{path}.path", "must not contain '..'")
    if isinstance(kind, str) and kind not in HOST_PATH_TYPES:
        shown = ", ".join(t or repr(t) for t in HOST_PATH_TYPES)
        yield error(f"{path}.type", f"Unsupported value {kind!r}: supported values: {shown}")


def check_mounts(container: Mapping[str, object], path: str) -> Iterator[Finding]:
    """The sub paths and mount propagation of a container's ``volumeMounts`` (the container at ``path``)."""
    privileged = as_map(container.get("securityContext")).get("privileged") is True
    for k, mount in enumerate(as_list(container.get("volumeMounts"))):
        mount = as_map(mount)
        at = f"{path}.volumeMounts[{k}]"
        sub_path, expression = mount.get("subPath"), mount.get("subPathExpr")
        for key, value in (("subPath", sub_path), ("subPathExpr", expression)):
            problem = descending_path_problem(value) if isinstance(value, str) and value else None
            if problem is not None:
                yield error(f"{at}.{key}", problem)
        if sub_path and expression:
            yield error(f"{at}.subPathExpr", "subPathExpr and subPath are mutually exclusive")
        propagation = mount.get("mountPropagation")
        if isinstance(propagation, str) and propagation not in MOUNT_PROPAGATIONS:
            yield error(
                f"{at}.mountPropagation",
                f"Unsupported value {propagation!r}: supported values: {', '.join(MOUNT_PROPAGATIONS)}",
            )
        elif propagation == "Bidirectional" and not privileged:
            yield error(
                f"{at}.mountPropagation",
                "Bidirectional mount propagation is available only to privileged containers"
                " (securityContext.privileged: true)",
            )


def check_pod_volumes(spec: Mapping[str, object], path: str) -> Iterator[Finding]:
    """Every volume source of a pod spec (at ``path``) and every mount of its containers and init containers."""
    for i, volume in enumerate(as_list(spec.get("volumes"))):
        if isinstance(volume, Mapping):
            yield from check_volume_source(volume, f"{path}.volumes[{i}]")
    for group in ("initContainers", "containers"):
        for j, container in enumerate(as_list(spec.get(group))):
            if isinstance(container, Mapping):
                yield from check_mounts(container, f"{path}.{group}[{j}]")
