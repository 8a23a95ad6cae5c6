"""What a pod calls, from what it declares, never from words in its scripts: our pods' program the calls its part
declares (the pod template says which part by its annotation, :data:`hera_volcano.pods.program.PROGRAM_ANNOTATION`);
a pod of yours the calls its template lists in :data:`CALLS_ANNOTATION`; a container whose exec form is ``kubectl``
that one call. A shell script that runs ``kubectl`` declares nothing by it: :func:`undeclared_scripts` finds those
for lint, with the declaration to add."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Final

from hera_volcano.pods import program
from hera_volcano.pods.run import CALLS
from hera_volcano.pods.sweep import PICK_CALLS
from hera_volcano.pods.workers import WAIT_CALLS
from hera_volcano.shared.errors import ValidationError
from hera_volcano.shared.findings import as_map
from hera_volcano.tools.rbac.kubectl import call_needs, exec_call, script_calls
from hera_volcano.tools.rbac.need import Call, Need, order
from hera_volcano.tools.rbac.refs import parse_resource, resource_text

#: The calls each part of the program declares.
DECLARED: Mapping[str, tuple[Call, ...]] = {
    program.FOLLOWER: CALLS,
    program.WAIT: WAIT_CALLS,
    program.PICK: PICK_CALLS,
}
#: The annotation of a pod template (an Argo template's ``metadata``, a Volcano task's ``template.metadata``) that
#: lists the API calls its containers make: ``VERB [VERB...] RESOURCE[/SUBRESOURCE][.GROUP]``, comma-separated
#: (``get pods, get pods/log``; ``""`` calls none).
CALLS_ANNOTATION: Final = "hera-volcano/calls"
#: The verbs a declaration may name: Kubernetes' own for objects (no wildcard, no ``escalate``, ``bind`` or
#: ``impersonate``).
VERBS: Final = frozenset({"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"})


def _annotations(template: Mapping[str, object]) -> Mapping[str, object]:
    return as_map(as_map(template.get("metadata")).get("annotations"))


def parse_calls(text: object, field: str) -> tuple[Call, ...]:
    """The calls ``hera-volcano/calls`` lists (see :data:`CALLS_ANNOTATION`); anything else is a ValidationError."""
    if not isinstance(text, str):
        raise ValidationError(field, "must be a string: VERB RESOURCE, comma-separated (get pods, get pods/log)")
    calls = []
    for entry in text.split(",") if text.strip() else ():
        *verbs, resource = entry.split() or [""]
        unknown = [v for v in verbs if v not in VERBS]
        if not verbs or unknown:
            raise ValidationError(
                field,
                f"each call is VERB [VERB...] RESOURCE (get pods, list watch jobs.batch.volcano.sh), the verbs among"
                f" {', '.join(order(VERBS))}; not {entry.strip()!r}",
            )
        calls.append((*parse_resource(resource, field), tuple(order(verbs))))
    return tuple(calls)


def declared_calls(template: Mapping[str, object], why: str) -> tuple[Call, ...]:
    """The calls a pod template's annotations declare: those of the program's part it names, and those it lists."""
    annotations = _annotations(template)
    calls: list[Call] = []
    part = annotations.get(program.PROGRAM_ANNOTATION)
    if part is not None:
        if not isinstance(part, str) or part not in DECLARED:
            raise ValidationError(
                f"{why}.metadata.annotations[{program.PROGRAM_ANNOTATION}]",
                f"must be one of {', '.join(DECLARED)} (the part of hera-volcano's program the pod runs), not {part!r}",
            )
        calls += DECLARED[part]
    if CALLS_ANNOTATION in annotations:
        calls += parse_calls(annotations[CALLS_ANNOTATION], f"{why}.metadata.annotations[{CALLS_ANNOTATION}]")
    return tuple(calls)


def pod_needs(
    sa: str,
    declared: Iterable[Call],
    containers: Iterable[Mapping[str, object]],
    why: str,
    namespace: str | None = None,
) -> list[Need]:
    """What a pod's API calls need: those its template declares (:func:`declared_calls`), and the call of each
    container whose exec form is ``kubectl``. ``namespace``: a Volcano pod's (its job's), where its account lives
    and its calls go."""
    calls = list(declared)
    for container in containers:
        args = exec_call(container)
        calls += call_needs(args) if args is not None else []
    return [Need(sa, group, resource, verbs, why, namespace, namespace) for group, resource, verbs in calls]


def undeclared_scripts(
    template: Mapping[str, object], containers: Iterable[tuple[str, Mapping[str, object]]]
) -> list[tuple[str, str]]:
    """(path, the declaration to add) for each container (given with its path) whose script runs ``kubectl`` in a
    pod template that declares no calls: the declaration its ``kubectl`` words would read as, to check by hand."""
    if CALLS_ANNOTATION in _annotations(template):
        return []
    found = []
    for path, container in containers:
        words = script_calls(container)
        if words is not None:
            calls = [call for args in words for call in call_needs(args)]
            found.append((path, declaration(calls)))
    return found


def declaration(calls: Iterable[Call]) -> str:
    """The ``hera-volcano/calls`` text of ``calls``, one entry per resource."""
    merged: dict[tuple[str, str], set[str]] = {}
    for group, resource, verbs in calls:
        merged.setdefault((group, resource), set()).update(verbs)
    return ", ".join(f"{' '.join(order(v))} {resource_text(*key)}" for key, v in sorted(merged.items()))
