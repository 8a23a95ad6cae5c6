"""The exit handler that deletes a workflow's Volcano Jobs when the workflow did not succeed.

This module imports ``hera.workflows`` (slow); ``import hera_volcano`` reaches it only when it is used.
"""

from __future__ import annotations

from hera.workflows import Resource, Step, Steps

from hera_volcano.argo.labels import THIS_WORKFLOW
from hera_volcano.kube import names
from hera_volcano.shared.errors import ValidationError

#: The exit handler that deletes a workflow's Volcano Jobs when it did not succeed, and the step doing it.
CLEANUP = "cleanup-volcano-jobs"
DELETE_JOBS = "delete-volcano-jobs"


def cleanup_on_failure(*, name: str = CLEANUP, delete_name: str = DELETE_JOBS) -> Steps:
    """An exit handler (``Workflow(on_exit=...)``): unless the workflow Succeeded, delete its Volcano Jobs.

    A workflow that is stopped (``argo stop``), fails or errors leaves jobs behind that may still run or wait for a
    gang: the job outlives its step, owned by the Workflow until that is deleted. This deletes every Volcano Job
    carrying the workflow's label (all jobs ``job_template`` makes do), without waiting, so their pods and
    PodGroups go and give back what they hold. Jobs of a workflow that Succeeded are kept for inspection. Needs
    ``delete`` and ``list`` on ``jobs.batch.volcano.sh`` (``rbac_for`` grants them). ``argo terminate`` runs no exit
    handler: deleting the Workflow removes its jobs in any case (owner references).

    :param name: the exit handler's (Steps) template name.
    :param delete_name: the name of the resource template that deletes the jobs.
    """
    names.check("name", name, names.argo_name)
    names.check("delete_name", delete_name, names.argo_name)
    if name == delete_name:
        raise ValidationError("delete_name", "must differ from name (both are templates of one workflow)")
    delete = Resource(
        name=delete_name,
        action="delete",
        flags=["jobs.batch.volcano.sh", "--selector", THIS_WORKFLOW.jobs_selector(), "--wait=false"],
    )
    with Steps(name=name) as steps:
        Step(name=delete_name, template=delete, when="{{workflow.status}} != Succeeded")
    return steps
