"""Where a job's checkpoints live: a claim mounted in every pod of the job, and one directory on it per run of the job
(``checkpoints=`` of every builder), told to the program in the variable of
:class:`hera_volcano.pods.checkpoints.CheckpointSettings` and read by ``hera_volcano.runtime``.

The directory is ``PATH[/FOLDER]/WORKFLOW_UID/NODE_KEY``, both parts made by Argo when it creates the job, from
variables no submitter writes into the manifest:

- ``{{workflow.uid}}``: one per run of the Workflow (a resubmitted or cron-started run is another Workflow, another
  uid), and the same for all its steps; ``argo retry`` of the same Workflow keeps it;
- the SHA-256 (hex) of ``{{node.name}}``, computed by Argo's expression: the node of the step that creates the job.
  Inside a template with a ``retryStrategy`` Argo substitutes ``node.name`` with the retry node's name, before it
  names each attempt ``NAME(N)`` (``executeTemplate`` in ``workflow/controller/operator.go``, v3.7 and v4.1), so every
  attempt of an ``ArgoRetry`` gets the same; two tasks of one DAG differ by their names, and a loop's iterations by
  their ``(INDEX:ITEM)``. The node's name holds the loop's item text, which is why it enters only as a digest: no
  quote or tag of an item ever reaches the manifest.

Volcano's ``RestartJob`` recreates the pods from the same job, so their variable is the same too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Final

from hera_volcano.builders.pod import PodVolume
from hera_volcano.kube.volumes import descending_path_problem
from hera_volcano.pods.checkpoints import CheckpointSettings
from hera_volcano.shared.errors import ValidationError
from hera_volcano.shared.findings import as_list, as_map
from hera_volcano.shared.placeholders import has_expression
from hera_volcano.volcano.job import VolcanoJob, VolcanoTask, pod_template_to_dict

#: The run's part of the directory: the Workflow's uid.
RUN_KEY: Final = "{{workflow.uid}}"
#: The job's part: the digest of its step's node name (the same for every attempt of a retried step).
NODE_KEY: Final = "{{=sprig.sha256sum(node.name)}}"


#: A PodVolume's fields by the names the checkpoints give them.
_FIELDS: Final = {"mount_path": "path", "claim": "claim", "name": "name"}


@dataclass(frozen=True)
class Checkpoints:
    """The claim ``claim`` mounted at ``path`` (as the volume ``name``) in every pod of the job, and the directory of
    this run of this job under it (``path/folder/WORKFLOW_UID/DIGEST_OF_THE_STEP``) given to the program: the same
    across Volcano's restarts of the job and Argo's retries of its step, another for another run, another job of the
    workflow, another iteration of a loop. A function finds it with ``hera_volcano.runtime.checkpoint_dir()`` and
    resumes from ``latest_checkpoint()``; any program reads it from the variable
    ``hera_volcano.pods.checkpoints.CheckpointSettings.DIRECTORY``.

    :param claim: the PersistentVolumeClaim's name (it must exist in the job's namespace; ReadWriteMany when the
        job's pods run on several nodes).
    :param path: where every pod of the job mounts it.
    :param name: the volume's name in each pod.
    :param folder: a folder inside the volume under which the runs' directories are (none: at its top).
    """

    claim: str
    path: str = "/checkpoints"
    name: str = "checkpoints"
    folder: str | None = None

    def __post_init__(self) -> None:
        for field_name in ("claim", "path", "name"):
            if not isinstance(getattr(self, field_name), str):
                raise ValidationError(f"checkpoints.{field_name}", "must be a string")
        try:
            self.pod_volume()  # the claim, the path and the name by the rules of a PodVolume
        except ValidationError as e:
            at = e.field.rpartition(".")[2]  # volumes[NAME].claim, volumes[NAME].mount_path, volume.name
            raise ValidationError(f"checkpoints.{_FIELDS.get(at, at)}", e.rule) from None
        if self.folder is not None:
            problem = "must be a string" if not isinstance(self.folder, str) else descending_path_problem(self.folder)
            if problem is None and (not self.folder or has_expression(self.folder)):
                problem = "must be a non-empty relative path without Argo expressions"
            if problem is not None:
                raise ValidationError("checkpoints.folder", problem)

    def pod_volume(self) -> PodVolume:
        """The claim as a pod's volume and its main container's mount."""
        return PodVolume.claim(self.name, self.path, claim=self.claim)

    def directory(self) -> str:
        """The directory every pod of the job is told, with the Argo tags Argo replaces when it creates the job."""
        base = self.path.rstrip("/") + ("/" + self.folder.strip("/") if self.folder else "")
        return f"{base}/{RUN_KEY}/{NODE_KEY}"

    def settings(self) -> CheckpointSettings[str]:
        return CheckpointSettings(self.directory())


def check(value: object) -> Checkpoints | None:
    """A builder's ``checkpoints=`` setting."""
    if value is not None and not isinstance(value, Checkpoints):
        raise ValidationError("checkpoints", f"must be Checkpoints(...), not {type(value).__name__}")
    return value


def mounted(job: VolcanoJob, checkpoints: Checkpoints | None) -> VolcanoJob:
    """``job`` with ``checkpoints`` in every pod: the volume, its mount and the variable in each task's main
    container (the one named as the task, else the first). Refused where a pod sets the variable itself, or holds
    another volume of the same name or another mount at the same path; the same volume (a workspace already mounted
    there) is used as it is."""
    if checkpoints is None:
        return job
    tasks = [_task(task, checkpoints, f"tasks[{task.name}]") for task in job.tasks]
    return replace(job, tasks=tasks)


def _task(task: VolcanoTask, checkpoints: Checkpoints, field: str) -> VolcanoTask:
    template = pod_template_to_dict(task.template)
    spec = dict(as_map(template.get("spec")))
    containers = [dict(as_map(c)) for c in as_list(spec.get("containers"))]
    if not containers:
        raise ValidationError(field, "has no container to mount the checkpoints in")
    for group in ("initContainers", "containers"):
        for container in as_list(spec.get(group)):
            for item in as_list(as_map(container).get("env")):
                if as_map(item).get("name") in CheckpointSettings.NAMES:
                    raise ValidationError(
                        f"{field}.{as_map(container).get('name')}.env", "is set by checkpoints=Checkpoints(...)"
                    )
    volume = checkpoints.pod_volume()
    spec["volumes"] = _volumes(as_list(spec.get("volumes")), volume.volume(), field)
    at = next((i for i, c in enumerate(containers) if c.get("name") == task.name), 0)
    main = containers[at]
    main["volumeMounts"] = _mounts(as_list(main.get("volumeMounts")), volume.mount(), f"{field}.{main.get('name')}")
    main["env"] = [*as_list(main.get("env")), *checkpoints.settings().to_env()]
    containers[at] = main
    spec["containers"] = containers
    return replace(task, template={**template, "spec": spec})


def _volumes(volumes: Sequence[Any], volume: Mapping[str, object], field: str) -> list[Any]:
    same = [v for v in volumes if as_map(v).get("name") == volume["name"]]
    if not same:
        return [*volumes, dict(volume)]
    if dict(as_map(same[0])) != dict(volume):
        raise ValidationError(f"{field}.volumes[{volume['name']}]", "is another volume of the checkpoints' name")
    return list(volumes)


def _mounts(mounts: Sequence[Any], mount: Mapping[str, object], field: str) -> list[Any]:
    there = [m for m in mounts if as_map(m).get("mountPath") == mount["mountPath"]]
    if not there:
        return [*mounts, dict(mount)]
    if dict(as_map(there[0])) != dict(mount):
        at = f"{field}.volumeMounts[{mount['mountPath']}]"
        raise ValidationError(at, "mounts another volume at the checkpoints' path")
    return list(mounts)
