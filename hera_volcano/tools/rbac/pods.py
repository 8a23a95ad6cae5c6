"""What a pod's containers call: our pods' program the calls it declares, any other container its ``kubectl`` calls."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from hera_volcano.pods.program import MARKER
from hera_volcano.pods.run import CALLS
from hera_volcano.pods.workers import WAIT_CALLS, WAIT_COMMAND
from hera_volcano.tools.rbac.kubectl import call_needs, kubectl_calls, scripts, words
from hera_volcano.tools.rbac.need import Call, Need


def _program_calls(container: Mapping[str, object]) -> tuple[Call, ...] | None:
    """The calls the container declares when it runs our pods' program: the MPI master's wait for its workers
    (:data:`WAIT_CALLS`), else the log follower (:data:`CALLS`); None for any other container."""
    if not any(part.startswith(MARKER) for part in scripts(container).split("\n")):
        return None
    return WAIT_CALLS if words(container)[-1:] == [WAIT_COMMAND] else CALLS


def container_needs(
    sa: str, containers: Iterable[Mapping[str, object]], why: str, namespace: str | None = None
) -> list[Need]:
    """What the containers' API calls need: our pods' program's, the calls it declares; any other container's, its
    ``kubectl`` calls, each read for itself. ``namespace``: a Volcano pod's (its job's), where its account lives and
    its calls go."""
    calls: list[Call] = []
    for container in containers:
        declared = _program_calls(container)
        if declared is not None:
            calls += declared
            continue
        for args in kubectl_calls(container):
            calls += call_needs(args)
    return [Need(sa, group, resource, verbs, why, namespace, namespace) for group, resource, verbs in calls]
