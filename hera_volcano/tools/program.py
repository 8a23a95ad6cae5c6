"""The pods' program for a set of workflows: its ConfigMap (:func:`hera_volcano.pods.program.config_map`) in each
namespace where their pods mount it. It is code, not permissions: it ships in a document of its own
(``rbac/program.yaml``), beside the RBAC that ``rbac_for`` derives."""

from __future__ import annotations

from collections.abc import Mapping

from hera_volcano.pods import program
from hera_volcano.shared.errors import ValidationError
from hera_volcano.shared.findings import as_list, as_map
from hera_volcano.tools.rbac.manifests import is_volcano_job, job_pod_templates, manifest_namespace, manifest_objects
from hera_volcano.tools.rbac.need import Manifest
from hera_volcano.tools.rbac.workflows import read


def program_for(*workflows: object, namespace: str | None = None) -> list[Manifest]:
    """The program's ConfigMap for each namespace whose pods (the followers, the MPI masters' wait, the ranks of
    function jobs) mount it: the workflow's, and the one a Volcano Job's manifest names. ``namespace`` overrides the
    workflows' own (as in ``rbac_for``); a workflow that names none is taken to run in ``argo``. Empty when no pod
    mounts it. A pod that mounts another version's program is a ValidationError: this version does not render it.

    :param workflows: the workflows (Hera objects or dicts: Workflow, WorkflowTemplate, CronWorkflow).
    :param namespace: the namespace the workflows run in, over their own.
    """
    namespaces: set[str] = set()
    for wf in read(workflows, namespace):
        for j, template in wf.templates:
            why = f"{wf.name}/{template.get('name', j)}"
            namespaces |= {where or wf.namespace for where in _program_namespaces(template, why)}
    return [program.config_map(ns) for ns in sorted(namespaces)]


def _program_namespaces(template: Mapping[str, object], why: str) -> set[str | None]:
    """Where the template's pods, and the pods of the Volcano Jobs it creates, mount the pods' program: the
    namespaces that need its ConfigMap (None: the workflow's)."""
    found: set[str | None] = {None} if _mounts_program(template, why) else set()
    resource = template.get("resource")
    if not isinstance(resource, Mapping) or not isinstance(resource.get("manifest"), str):
        return found
    for obj in manifest_objects(resource, f"{why}.resource.manifest"):
        if not is_volcano_job(obj):
            continue
        for task, pod in job_pod_templates(obj):
            if _mounts_program(as_map(pod.get("spec")), f"{why} (Volcano task {task})"):
                found.add(manifest_namespace(obj, f"{why}.resource.manifest"))
    return found


def _mounts_program(pod: Mapping[str, object], why: str) -> bool:
    """The pod (a template's, a Volcano task's) mounts this version's program; another version's is refused, as its
    ConfigMap is not what this version renders."""
    mounted = False
    for volume in as_list(pod.get("volumes")):
        name = as_map(as_map(volume).get("configMap")).get("name")
        if not program.is_config_map_name(name):
            continue
        if name != program.config_map_name():
            raise ValidationError(
                f"{why}.volumes",
                f"mounts the pods' program {name}, of another hera-volcano version (this one installs"
                f" {program.config_map_name()}): render the workflow again with this version, or its program with"
                " that one",
            )
        mounted = True
    return mounted
