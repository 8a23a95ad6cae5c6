"""A pipeline's workspace: one existing PersistentVolumeClaim mounted at one path in every job's pods and in every
ordinary step, so a prep step writes files and the job reads them (``PodSettings.volumes`` stays the general way)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from hera_volcano.builders.checkpoints import Checkpoints
from hera_volcano.builders.pod import PodSettings, PodVolume
from hera_volcano.shared.errors import ValidationError

if TYPE_CHECKING:
    from hera.workflows import ExistingVolume


@dataclass(frozen=True)
class Workspace:
    """The claim ``claim`` (it must exist in the workflow's namespace, with an access mode that lets every pod that
    mounts it do so: ReadWriteMany across nodes) mounted at ``path`` as the volume ``name``.

    :param claim: the PersistentVolumeClaim's name.
    :param path: where the pods mount it.
    :param name: the volume's name in each pod.
    """

    claim: str
    path: str = "/workspace"
    name: str = "workspace"

    def __post_init__(self) -> None:
        self.pod_volume()  # checks the claim, the path and the name as a PodVolume does

    def pod_volume(self, *, read_only: bool = False) -> PodVolume:
        """The workspace as a job pod's volume and mount.

        :param read_only: mount it read-only (a job that only reads what a prep step wrote).
        """
        return PodVolume.claim(self.name, self.path, claim=self.claim, read_only=read_only)

    def add_to(self, settings: PodSettings | None = None, *, read_only: bool = False) -> PodSettings:
        """``settings`` (for all of a job's pods) with the workspace among their volumes.

        :param settings: the pod settings to add it to (default: none but the workspace).
        :param read_only: mount it read-only (a job that only reads what a prep step wrote).
        """
        settings = settings or PodSettings()
        if not isinstance(settings, PodSettings):
            raise ValidationError("settings", f"must be PodSettings(...), not {type(settings).__name__}")
        for volume in settings.volumes:
            if volume.name == self.name or volume.mount_path == self.path:
                raise ValidationError(
                    f"volumes[{volume.name}]",
                    f"has the name or the mount path of the workspace ({self.name!r} at {self.path}): choose others",
                )
        return replace(settings, volumes=(*settings.volumes, self.pod_volume(read_only=read_only)))

    def checkpoints(self, folder: str = "checkpoints") -> Checkpoints:
        """Checkpoints on the workspace (a job's ``checkpoints=``): the workspace mounted in every pod of the job as it
        is (a :class:`Pipeline` with this workspace mounts it once), the runs' directories under ``folder``.

        :param folder: the folder of the workspace under which each run of each job gets its directory.
        """
        return Checkpoints(self.claim, self.path, self.name, folder)

    def hera_volume(self, *, read_only: bool = False) -> ExistingVolume:
        """The workspace for an ordinary step: ``Container(..., volumes=[workspace.hera_volume()])`` declares the
        volume on the step's template and mounts it in its container.

        :param read_only: mount it read-only (a step that only reads).
        """
        from hera.workflows import ExistingVolume

        return ExistingVolume(name=self.name, claim_name=self.claim, mount_path=self.path, read_only=read_only or None)
