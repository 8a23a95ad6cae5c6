"""What a pod calls: our pods' program the calls its part declares (the pod template says which part by its
annotation, :data:`hera_volcano.pods.program.PROGRAM_ANNOTATION`), each container its ``kubectl`` calls."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from hera_volcano.pods import program
from hera_volcano.pods.run import CALLS
from hera_volcano.pods.workers import WAIT_CALLS
from hera_volcano.shared.errors import ValidationError
from hera_volcano.shared.findings import as_map
from hera_volcano.tools.rbac.kubectl import call_needs, kubectl_calls
from hera_volcano.tools.rbac.need import Call, Need

#: The calls each part of the program declares.
DECLARED: Mapping[str, tuple[Call, ...]] = {program.FOLLOWER: CALLS, program.WAIT: WAIT_CALLS}


def program_calls(template: Mapping[str, object], why: str) -> tuple[Call, ...]:
    """The calls of the program's part a pod template's annotation names; none without the annotation. Nothing a
    container runs is read for it: a comment or a file name in a script declares nothing."""
    part = as_map(as_map(template.get("metadata")).get("annotations")).get(program.PROGRAM_ANNOTATION)
    if part is None:
        return ()
    if not isinstance(part, str) or part not in DECLARED:
        raise ValidationError(
            f"{why}.metadata.annotations[{program.PROGRAM_ANNOTATION}]",
            f"must be one of {', '.join(DECLARED)} (the part of hera-volcano's program the pod runs), not {part!r}",
        )
    return DECLARED[part]


def pod_needs(
    sa: str,
    declared: Iterable[Call],
    containers: Iterable[Mapping[str, object]],
    why: str,
    namespace: str | None = None,
) -> list[Need]:
    """What a pod's API calls need: the calls its part of our program declares (:func:`program_calls`), and each
    ``kubectl`` call of its containers, read for itself. ``namespace``: a Volcano pod's (its job's), where its account
    lives and its calls go."""
    calls = list(declared)
    for container in containers:
        for args in kubectl_calls(container):
            calls += call_needs(args)
    return [Need(sa, group, resource, verbs, why, namespace, namespace) for group, resource, verbs in calls]
