"""Which pods of a Volcano Job call the Kubernetes API, and so must run as a named service account.

The MPI master waits for its workers by listing and watching pods (``hera_volcano/pods/workers.py``). A pod the
Volcano controller creates does not inherit the Workflow's account: without ``serviceAccountName`` it runs as the
namespace's ``default`` account, which ``hera-volcano rbac`` grants nothing, and the wait fails with Forbidden
once the job has started. Builders, lint and ``rbac`` refuse such a job before it runs."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from hera_volcano.pods.workers import WAIT_COMMAND
from hera_volcano.shared.findings import Finding, as_list, as_map, error


def _calls_the_api(spec: Mapping[str, object]) -> bool:
    """Whether a pod spec runs the pods' program's wait for workers (the only API caller a job's pod holds)."""
    for container in as_list(spec.get("initContainers")) + as_list(spec.get("containers")):
        command = as_list(as_map(container).get("command"))
        if command[-1:] == [WAIT_COMMAND]:
            return True
    return False


def accountless_api_callers(job: Mapping[str, object]) -> Iterator[Finding]:
    """An error at each task of ``job`` whose pods call the API but name no service account."""
    for i, task in enumerate(as_list(as_map(job.get("spec")).get("tasks"))):
        spec = as_map(as_map(as_map(task).get("template")).get("spec"))
        if not _calls_the_api(spec) or spec.get("serviceAccountName") or spec.get("serviceAccount"):
            continue
        yield error(
            f"spec.tasks[{i}].template.spec.serviceAccountName",
            f"is not set, but task {as_map(task).get('name', i)!r} lists and watches pods (the MPI master's wait for"
            " its workers): a Volcano pod does not inherit the Workflow's account, it runs as the namespace's"
            " 'default' account and fails with Forbidden; name one (mpi_job's service_account=, the account"
            " hera-volcano rbac grants)",
        )
