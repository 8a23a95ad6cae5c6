"""Field names and kinds of Argo's workflow objects (Workflow, WorkflowTemplate, ClusterWorkflowTemplate,
CronWorkflow), as Hera's generated models define them, for a strict field check without importing Hera.

``argo submit`` and ``argo lint`` decode strictly: an unknown field anywhere in a workflow is an error. Walking Hera's
models at run time would import ``hera.workflows`` (half a second) into every lint, so the table is a snapshot,
``workflow_fields.json``, made by ``python -m hera_volcano.argo.workflow_fields`` and checked against the installed
Hera by the test suite. Kubernetes types that ``kube.pod_fields`` already holds (Container, Volume, ObjectMeta...)
are referenced by their key there, not repeated; the kinds are those of :mod:`hera_volcano.kube.pod_fields`.

Hera 7.1's models follow Argo 4.0; the two Argo lines the project supports differ from them in a few fields, listed
here by hand from Argo's 3.7 and 4.1 schemas: :data:`ARGO_37_ONLY` (removed in Argo 4) and :data:`ARGO_4_ONLY`
(unknown to Argo 3.7).
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Mapping
from importlib import resources
from typing import Any, Final

from hera_volcano.kube import pod_fields

ARGO = "hera.workflows.models.io.argoproj.workflow.v1alpha1"
#: The model of each workflow kind; everything they reference is in this table or in ``pod_fields``'.
ROOTS: Final = (
    (ARGO, "Workflow"),
    (ARGO, "WorkflowTemplate"),
    (ARGO, "ClusterWorkflowTemplate"),
    (ARGO, "CronWorkflow"),
)
FILE = "workflow_fields.json"

#: Fields Argo 3.7 accepts and Argo 4 removed (its full CRDs and its CLI refuse them), with what replaces each.
ARGO_37_ONLY: Final[Mapping[str, Mapping[str, str]]] = {
    "CronWorkflowSpec": {"schedule": "schedules (a list)"},
    "Synchronization": {"mutex": "mutexes (a list)", "semaphore": "semaphores (a list)"},
}
#: Fields of Argo 4 that Argo 3.7 refuses as unknown: some are in Hera's models, the others (Argo 4.1 and
#: Kubernetes 1.34+) are newer than them.
ARGO_4_ONLY: Final[Mapping[str, tuple[str, ...]]] = {
    "Artifact": ("plugin",),
    "ArtifactLocation": ("plugin",),
    "ArtifactPaths": ("plugin",),
    "ContainerNode": ("restartPolicyRules",),
    "HTTPArtifact": ("saveStreamViaFile",),
    "S3Artifact": ("addressingStyle",),
    "ScriptTemplate": ("restartPolicyRules",),
    "Template": ("pendingTimeout", "podResources", "resourceClaims"),
    "UserContainer": ("restartPolicyRules",),
    "WorkflowSpec": ("executorPlugins", "podResources", "resourceClaims"),
    **pod_fields.NEWER_FIELDS,
}

#: Fields of Argo's ``AnyString`` type, which Hera's models type as strings: Argo decodes any scalar into them (a
#: parameter's ``value: 3``).
ANY_SCALAR: Final[Mapping[str, tuple[str, ...]]] = {
    "Parameter": ("default", "description", "enum", "value"),
    "ValueFrom": ("default",),
}

#: Fields Go decodes into an int32 (Hera's models type every integer as ``int``): Argo refuses a number beyond its
#: range. Read from the Go types of Argo 4.1 (``pkg/apis/workflow/v1alpha1``) and Kubernetes 1.37 (``core/v1``);
#: every other integer field is an int64.
INT32_FIELDS: Final[Mapping[str, tuple[str, ...]]] = {
    "AWSElasticBlockStoreVolumeSource": ("partition",),
    "Artifact": ("mode",),
    "ConfigMapVolumeSource": ("defaultMode",),
    "ContainerPort": ("containerPort", "hostPort"),
    "CronWorkflowSpec": ("failedJobsHistoryLimit", "successfulJobsHistoryLimit"),
    "DownwardAPIVolumeFile": ("mode",),
    "DownwardAPIVolumeSource": ("defaultMode",),
    "FCVolumeSource": ("lun",),
    "GCEPersistentDiskVolumeSource": ("partition",),
    "GRPCAction": ("port",),
    "ISCSIVolumeSource": ("lun",),
    "KeyToPath": ("mode",),
    "NodeStatus": ("failedPodRestarts",),
    "OSSLifecycleRule": ("markDeletionAfterDays", "markInfrequentAccessAfterDays"),
    "PluginArtifact": ("connectionTimeoutSeconds",),
    "PreferredSchedulingTerm": ("weight",),
    "Probe": ("failureThreshold", "initialDelaySeconds", "periodSeconds", "successThreshold", "timeoutSeconds"),
    "ProjectedVolumeSource": ("defaultMode",),
    "SecretVolumeSource": ("defaultMode",),
    "TTLStrategy": ("secondsAfterCompletion", "secondsAfterFailure", "secondsAfterSuccess"),
    "TarStrategy": ("compressionLevel",),
    "WeightedPodAffinityTerm": ("weight",),
    "WorkflowSpec": ("priority",),
}


@functools.cache
def table() -> dict[str, dict[str, Any]]:
    """The committed snapshot, read once per process (without the ``pod_fields`` types it references)."""
    data: dict[str, dict[str, Any]] = json.loads(resources.files("hera_volcano.argo").joinpath(FILE).read_text())
    return data


def model(name: str) -> Mapping[str, Any]:
    """The fields of one model, from this table or from ``pod_fields``' (their keys never collide)."""
    found = table().get(name)
    return found if found is not None else pod_fields.table()[name]


def snapshot() -> dict[str, dict[str, Any]]:
    """The table from the installed Hera (imports ``hera.workflows``)."""
    return pod_fields.snapshot(ROOTS, elsewhere=pod_fields.table())


def render() -> str:
    """The JSON file's text, in ``pod_fields``' layout."""
    return pod_fields.render(snapshot())


if __name__ == "__main__":
    sys.stdout.write(render())
