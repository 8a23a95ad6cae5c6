"""Which kinds lint understands, and what it says about every other document.

Every document lint is given is either one of :data:`KINDS` or reported: a kind or apiVersion that is a near miss
of a known one (``kind: WorkFlow``, ``apiVersion: argoproj.io/v1``) is always an error, as is a Kubernetes batch Job
written with Volcano's fields; any other kind is an error, or a warning with ``--allow-unknown`` (for folders that
hold other manifests too). To check a new kind, add a row to :data:`KINDS` with its checker.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import PurePath
from typing import Final

from hera_volcano.argo.limits import WORKFLOW_KINDS
from hera_volcano.shared.findings import Finding, as_map, error, warning
from hera_volcano.shared.suggestions import closest
from hera_volcano.tools.lint import kustomizations
from hera_volcano.tools.lint.api_calls import check_job_calls
from hera_volcano.tools.lint.commands import check_job_commands
from hera_volcano.tools.lint.context import Source
from hera_volcano.tools.lint.jobs import misplaced_volcano_job
from hera_volcano.tools.lint.workflows import check_workflow
from hera_volcano.volcano import schema
from hera_volcano.volcano.queue_rules import check_gang_fits, check_queue
from hera_volcano.volcano.rules import check_job

Checker = Callable[[Mapping[str, object], Source], Iterable[Finding]]
ARGO_API_VERSION: Final = "argoproj.io/v1alpha1"


@dataclass(frozen=True)
class Kind:
    """A kind lint understands; ``check`` None: known (it is what the project renders, or planned), not checked."""

    api_version: str
    kind: str
    check: Checker | None


def _volcano_job(doc: Mapping[str, object], source: Source) -> list[Finding]:
    queue = source.queues.get(str(as_map(doc.get("spec")).get("queue")))
    fits = () if queue is None else check_gang_fits(doc, queue)
    return [*check_job(doc), *check_job_commands(doc), *check_job_calls(doc), *fits]


def _volcano_queue(doc: Mapping[str, object], source: Source) -> list[Finding]:
    return check_queue(doc)


KINDS: Final[tuple[Kind, ...]] = (
    *(Kind(ARGO_API_VERSION, k, check_workflow) for k in WORKFLOW_KINDS),
    Kind(schema.API_VERSION, schema.KIND, _volcano_job),
    Kind(schema.QUEUE_API_VERSION, schema.QUEUE_KIND, _volcano_queue),
    Kind(kustomizations.API_VERSION, kustomizations.KIND, kustomizations.check_kustomization),
    # What `hera-volcano rbac` and `render` write next to the workflows: known, their fields not checked.
    *(
        Kind("rbac.authorization.k8s.io/v1", k, None)
        for k in ("Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding")
    ),
    Kind("v1", "ServiceAccount", None),
    Kind("v1", "Secret", None),  # the token Argo mounts for the containers of a pod that has none of its own
    Kind("v1", "ConfigMap", None),  # the log follower's program
    Kind("v1", "Namespace", None),  # its Pod Security labels
    *(
        Kind("admissionregistration.k8s.io/v1", k, None)
        for k in ("ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding")
    ),
)
_BY_TYPE: Final[Mapping[tuple[str, str], Kind]] = {(k.api_version, k.kind): k for k in KINDS}
_API_VERSIONS: Final[Mapping[str, tuple[str, ...]]] = {
    name: tuple(dict.fromkeys(k.api_version for k in KINDS if k.kind == name)) for name in {k.kind for k in KINDS}
}
_GROUPS: Final = frozenset(k.api_version.rpartition("/")[0] for k in KINDS)
#: The kinds lint knows, for messages: ``Workflow, WorkflowTemplate (argoproj.io/v1alpha1); Job (...); ...``.
EXPECTED: Final = "a kind lint knows: " + "; ".join(
    f"{', '.join(k.kind for k in KINDS if k.api_version == version)} ({version})"
    for version in dict.fromkeys(k.api_version for k in KINDS)
)


def unknown(path: str, message: str, source: Source) -> Finding:
    """What lint does not know: an error, or with ``--allow-unknown`` a warning that it was not checked."""
    if source.allow_unknown:
        return warning(path, f"{message}; not checked (--allow-unknown)")
    return error(path, f"{message}; pass --allow-unknown to let other kinds through")


def check_document(doc: object, source: Source) -> list[Finding]:
    """Findings for one parsed document (not None), with paths relative to it."""
    if not isinstance(doc, Mapping):
        shown = "a list" if isinstance(doc, list) else f"the {type(doc).__name__} {str(doc)[:40]!r}"
        return [unknown("", f"is {shown}, not {EXPECTED}", source)]
    api_version, kind = doc.get("apiVersion"), doc.get("kind")
    if api_version is None and kind is None and PurePath(source.file).name in kustomizations.FILE_NAMES:
        return list(kustomizations.check_kustomization(doc, source))  # kustomize lets a kustomization leave them out
    if not isinstance(api_version, str) or not isinstance(kind, str) or not api_version or not kind:
        missing = " and ".join(f for f in ("apiVersion", "kind") if not isinstance(doc.get(f), str) or not doc.get(f))
        return [unknown(missing.partition(" ")[0], f"has no {missing}: it is not {EXPECTED}", source)]
    known = _BY_TYPE.get((api_version, kind))
    if known is not None:
        return [] if known.check is None else list(known.check(doc, source))
    return [_near_miss(doc, api_version, kind) or unknown("kind", _foreign(api_version, kind), source)]


def _foreign(api_version: str, kind: str) -> str:
    return f"lint does not know kind {kind!r} of {api_version!r}: expected {EXPECTED}"


def _near_miss(doc: Mapping[str, object], api_version: str, kind: str) -> Finding | None:
    """An error for what is almost a known kind: the right kind with another apiVersion, a misspelt kind of a known
    group, a batch/v1 Job with Volcano's fields."""
    misplaced = misplaced_volcano_job(doc)
    if misplaced is not None:
        return error("apiVersion", misplaced)
    group = api_version.rpartition("/")[0]
    versions = _API_VERSIONS.get(kind, ())
    if any(v.rpartition("/")[0] == group for v in versions) or (versions and kind in WORKFLOW_KINDS):
        # Another version of a known kind's group, or an Argo kind in another group (a Job of batch/v1 is not ours).
        return error(
            "apiVersion",
            f"{api_version!r} is not an apiVersion of {kind}: expected {' or '.join(versions)}"
            " (the API server has no such resource)",
        )
    if group in _GROUPS:
        meant = closest(kind, [k.kind for k in KINDS if k.api_version.rpartition("/")[0] == group])
        if meant is not None:
            return error(
                "kind",
                f"unknown kind {kind!r} in {api_version}: did you mean {meant!r}? (kinds are case-sensitive)",
            )
    return None
