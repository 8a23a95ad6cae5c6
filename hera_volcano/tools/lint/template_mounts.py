"""Where a workflow template's pod puts its files: Argo's rule that no two volume mounts (nor an input artifact) of a
container share a path, and Kubernetes' rules for the mounts and volumes of the pod Argo makes for the step.

Argo refuses a container template whose mounts or input artifacts collide when the workflow is submitted (and a
container set's mounts); a script template's collision and a mount or volume Kubernetes refuses fail the step when
its pod is created.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from hera_volcano.kube.volumes import check_mounts, check_volume_source
from hera_volcano.shared.findings import Finding, as_list, as_map, error


def _paths(mounts: object, artifacts: object, path: str, at: str, judge: str) -> Iterator[Finding]:
    """Each mount's (then each input artifact's) path, unless an earlier one has it."""
    seen: dict[str, str] = {}
    for i, mount in enumerate(as_list(mounts)):
        mount_path = as_map(mount).get("mountPath")
        if isinstance(mount_path, str) and mount_path in seen:
            yield error(
                f"{at}.volumeMounts[{i}].mountPath", f"{mount_path!r} already mounted in {seen[mount_path]}{judge}"
            )
        elif isinstance(mount_path, str):
            seen[mount_path] = f"{at.rpartition('.')[2]}.volumeMounts.{as_map(mount).get('name')}"
    for i, artifact in enumerate(as_list(artifacts)):
        artifact_path = as_map(artifact).get("path")
        if isinstance(artifact_path, str) and artifact_path in seen:
            yield error(
                f"{path}.inputs.artifacts[{i}].path",
                f"{artifact_path!r} already mounted in {seen[artifact_path]}{judge}",
            )
        elif isinstance(artifact_path, str):
            seen[artifact_path] = f"inputs.artifacts.{as_map(artifact).get('name')}"


def check_template_mounts(template: Mapping[str, object], path: str) -> Iterator[Finding]:
    """The mounts and volumes of a workflow template (at ``path``)."""
    for i, volume in enumerate(as_list(template.get("volumes"))):
        if isinstance(volume, Mapping):
            yield from check_volume_source(volume, f"{path}.volumes[{i}]")
    container = template.get("container")
    if isinstance(container, Mapping):
        artifacts = as_map(template.get("inputs")).get("artifacts")
        yield from _paths(
            container.get("volumeMounts"), artifacts, path, f"{path}.container", ": Argo refuses the workflow"
        )
        yield from check_mounts(container, f"{path}.container")
    script = template.get("script")
    if isinstance(script, Mapping):
        judge = ": Kubernetes refuses the step's pod (mount paths must be unique)"
        yield from _paths(script.get("volumeMounts"), None, path, f"{path}.script", judge)
        yield from check_mounts(script, f"{path}.script")
    container_set = template.get("containerSet")
    if isinstance(container_set, Mapping):
        at = f"{path}.containerSet"
        yield from _paths(container_set.get("volumeMounts"), None, path, at, ": Argo refuses the workflow")
        for j, member in enumerate(as_list(container_set.get("containers"))):
            if isinstance(member, Mapping):
                yield from check_mounts(member, f"{at}.containers[{j}]")


def check_workflow_volumes(spec: Mapping[str, object], path: str) -> Iterator[Finding]:
    """The workflow's own ``volumes`` (at ``path``, its spec), which every step's pod gets."""
    for i, volume in enumerate(as_list(spec.get("volumes"))):
        if isinstance(volume, Mapping):
            yield from check_volume_source(volume, f"{path}.volumes[{i}]")
