"""Why a run's gangs do not start, decided from its recorded API objects.

For each Volcano Job: its PodGroup (phase, conditions, the scheduler's events), its queue (state, capability, what
is allocated, deserved and guarantee), the nodes (allocatable), its pods that are not running and why, and from
these the findings: what stands in the way and what to change. The gang's request is what Volcano checks: its
PodGroup's ``minResources``, the sum over its ``minMember`` pods. What could not be read (nodes and queues are
cluster-scoped, RBAC may not allow them) is named, not guessed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any

from hera_volcano.client.result import JobStatus, Result, job_status, result_of
from hera_volcano.shared.findings import as_list, as_map
from hera_volcano.volcano.amounts import (
    Amounts,
    add,
    first_misfit,
    gang_pods,
    gang_requests,
    largest,
    pod_requests,
    resource_list,
    show,
)

#: A resource Volcano names as short: "overused cpu" (overcommit), "insufficient cpu" (proportion, capacity),
#: "Insufficient cpu" (the predicates, per node).
_SHORT_OF = re.compile(r"\b(?:overused|[Ii]nsufficient) ([A-Za-z0-9][-A-Za-z0-9_./]*[A-Za-z0-9])")
#: What a Go ``errors.StatusError`` prints inside Volcano's "Error creating pods" event.
_STATUS_MESSAGE = re.compile(r'Message:"((?:[^"\\]|\\.)*)"')
_WAITING_HINTS = {
    "ErrImagePull": "check the image name and tag, and that the nodes can pull it (registry, credentials)",
    "ImagePullBackOff": "check the image name and tag, and that the nodes can pull it (registry, credentials)",
    "InvalidImageName": "fix the image reference",
    "CrashLoopBackOff": "the container keeps failing: read its log",
    "CreateContainerConfigError": "a ConfigMap, Secret or key it uses is missing",
    "CreateContainerError": "the runtime cannot create the container: see the message",
}
_STARTED_GROUP_PHASES = ("Running", "Completed")
#: What Volcano's proportion and capacity plugins say (a PodGroup event) when a queue's capability cannot admit a
#: gang, followed by ``insufficient RESOURCE`` for each resource that does not fit.
QUEUE_QUOTA = "queue resource quota insufficient"
#: Taint effects that keep a pod off a node unless it tolerates them.
_HARD_TAINTS = ("NoSchedule", "NoExecute")


@dataclass(frozen=True)
class Unreadable:
    """Something the client may not (or could not) read, and the API's reason."""

    what: str
    reason: str


@dataclass(frozen=True)
class Observed:
    """Everything read about one run: the Workflow, and each of the rest, or why it could not be read. ``queues``
    maps each queue a job names to the queue, None when it does not exist, or Unreadable."""

    workflow: Mapping[str, Any]
    jobs: Sequence[Mapping[str, Any]] | Unreadable
    podgroups: Sequence[Mapping[str, Any]] | Unreadable
    pods: Sequence[Mapping[str, Any]] | Unreadable
    events: Sequence[Mapping[str, Any]] | Unreadable
    queues: Mapping[str, Mapping[str, Any] | Unreadable | None]
    nodes: Sequence[Mapping[str, Any]] | Unreadable


@dataclass(frozen=True)
class Event:
    """One (aggregated) event: ``count`` times, the last at ``last``."""

    type: str
    reason: str
    message: str
    count: int
    last: str


@dataclass(frozen=True)
class Condition:
    type: str
    status: str
    reason: str
    message: str


@dataclass(frozen=True)
class PodGroupState:
    name: str
    phase: str
    min_member: int
    conditions: tuple[Condition, ...]
    events: tuple[Event, ...]


@dataclass(frozen=True)
class QueueState:
    """A Volcano queue: Open or not, its ``capability`` (a ceiling, per resource it names), what is allocated, its
    ``deserved`` share and ``guarantee`` (when set), its parent (empty under root) and how many gangs it has
    admitted that do not run yet (``inqueue``: they hold part of the capability)."""

    name: str
    state: str
    capability: Amounts
    allocated: Amounts
    deserved: Amounts = field(default_factory=dict)
    guarantee: Amounts = field(default_factory=dict)
    parent: str = ""
    inqueue: int = 0


@dataclass(frozen=True)
class NodesState:
    """The nodes a gang could use (Ready, not cordoned, hard taints tolerated by at least one of its tasks)."""

    usable: int
    total: int
    allocatable: Amounts
    largest: Mapping[str, Amounts]
    each: tuple[Amounts, ...] = ()


@dataclass(frozen=True)
class PodProblem:
    """A pod of the gang that is not running as it should: where it is and why."""

    name: str
    task: str
    phase: str
    node: str
    why: tuple[str, ...]
    events: tuple[Event, ...]


@dataclass(frozen=True)
class Finding:
    """What stands in the way (``problem``, about ``subject``) and what to change (empty: nothing)."""

    subject: str
    problem: str
    change: str


@dataclass(frozen=True)
class GangReport:
    """One Volcano Job: its state, what its gang asks, what the queue and nodes have, and the findings."""

    job: JobStatus
    queue_name: str
    podgroup: PodGroupState | None
    queue: QueueState | Unreadable | None
    nodes: NodesState | Unreadable
    asks: Amounts
    per_pod: tuple[tuple[str, Amounts], ...]
    gang: tuple[tuple[str, Amounts], ...]
    pods: tuple[PodProblem, ...]
    events: tuple[Event, ...]
    findings: tuple[Finding, ...]

    @property
    def stuck(self) -> bool:
        """Not finished, and its gang not (yet) placed and running."""
        if self.job.finished or self.job.deleted:
            return False
        started = self.podgroup is not None and self.podgroup.phase in _STARTED_GROUP_PHASES
        return not started or bool(self.pods)


@dataclass(frozen=True)
class Explanation:
    """The run's state, a report per Volcano Job, what could not be read, and findings about the run itself."""

    result: Result
    gangs: tuple[GangReport, ...]
    unreadable: tuple[Unreadable, ...]
    findings: tuple[Finding, ...]


def _items(read: Sequence[Mapping[str, Any]] | Unreadable) -> list[Mapping[str, Any]]:
    return [] if isinstance(read, Unreadable) else [as_map(i) for i in read]


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return as_map(obj.get("metadata"))


def owned_by(obj: Mapping[str, Any], owner: Mapping[str, Any]) -> bool:
    uid = _meta(owner).get("uid")
    return any(as_map(ref).get("uid") == uid for ref in as_list(_meta(obj).get("ownerReferences")))


def events_of(events: Sequence[Mapping[str, Any]], obj: Mapping[str, Any], kind: str) -> tuple[Event, ...]:
    """The events about ``obj`` (by uid, or by kind and name), oldest first, repeats of one message merged."""
    uid, name = _meta(obj).get("uid"), _meta(obj).get("name")
    merged: dict[tuple[str, str], Event] = {}
    for event in events:
        about = as_map(event.get("involvedObject"))
        if about.get("uid") != uid and (about.get("kind"), about.get("name")) != (kind, name):
            continue
        last = str(event.get("lastTimestamp") or event.get("eventTime") or event.get("firstTimestamp") or "")
        count = event["count"] if isinstance(event.get("count"), int) else 1
        key = (str(event.get("reason", "")), _short(str(event.get("message", ""))))
        before = merged.get(key)
        if before is not None:
            count += before.count
            last = max(last, before.last)
        merged[key] = Event(str(event.get("type", "")), key[0], key[1], count, last)
    return tuple(sorted(merged.values(), key=lambda e: e.last))


def _short(message: str) -> str:
    """A message without Go's dump of a StatusError around what it says (Volcano's "Error creating pods")."""
    inner = [m.replace('\\"', '"').replace("\\\\", "\\") for m in _STATUS_MESSAGE.findall(message)]
    if not inner:
        return message.strip()
    prefix = message.split(":", 1)[0] if ":" in message else ""
    unique = list(dict.fromkeys(inner))
    return f"{prefix}: {'; '.join(unique)}" if prefix else "; ".join(unique)


def queue_state(name: str, queue: Mapping[str, Any]) -> QueueState:
    spec, status = as_map(queue.get("spec")), as_map(queue.get("status"))
    parent = spec.get("parent")
    inqueue = status.get("inqueue")
    return QueueState(
        name,
        str(status.get("state") or "Unknown"),
        resource_list(spec.get("capability")),
        resource_list(status.get("allocated")),
        resource_list(spec.get("deserved")),
        resource_list(as_map(spec.get("guarantee")).get("resource")),
        parent if isinstance(parent, str) and parent != "root" else "",
        inqueue if isinstance(inqueue, int) and not isinstance(inqueue, bool) else 0,
    )


def queue_refusal(group: PodGroupState | None) -> tuple[str, tuple[str, ...]] | None:
    """The scheduler's newest word that the gang's queue cannot admit it, and the resources it names (none: it
    named none), from the PodGroup's events and conditions."""
    if group is None:
        return None
    texts = [e.message for e in reversed(group.events)] + [c.message for c in group.conditions if c.status == "True"]
    message = next((t for t in texts if QUEUE_QUOTA in t), None)
    return None if message is None else (message, tuple(_SHORT_OF.findall(message.split(QUEUE_QUOTA, 1)[1])))


def tolerates(tolerations: Sequence[Mapping[str, Any]], taint: Mapping[str, Any]) -> bool:
    """Whether one of ``tolerations`` matches ``taint``, as the scheduler matches them."""
    for t in tolerations:
        if t.get("effect") and t.get("effect") != taint.get("effect"):
            continue
        if t.get("operator") == "Exists":
            if not t.get("key") or t.get("key") == taint.get("key"):
                return True
        elif t.get("key") == taint.get("key") and (t.get("value") or "") == (taint.get("value") or ""):
            return True
    return False


def _usable(node: Mapping[str, Any], tolerations: Sequence[Mapping[str, Any]]) -> bool:
    spec, status = as_map(node.get("spec")), as_map(node.get("status"))
    ready = any(
        as_map(c).get("type") == "Ready" and as_map(c).get("status") == "True"
        for c in as_list(status.get("conditions"))
    )
    taints = [as_map(t) for t in as_list(spec.get("taints")) if as_map(t).get("effect") in _HARD_TAINTS]
    return ready and not spec.get("unschedulable") and all(tolerates(tolerations, t) for t in taints)


def _tasks(job: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    """(task name, pod spec) of each task of the job."""
    return [
        (str(as_map(t).get("name", "")), as_map(as_map(as_map(t).get("template")).get("spec")))
        for t in as_list(as_map(job.get("spec")).get("tasks"))
    ]


def nodes_state(nodes: Sequence[Mapping[str, Any]], job: Mapping[str, Any]) -> NodesState:
    per_task = {
        task: [n for n in nodes if _usable(n, [as_map(t) for t in as_list(spec.get("tolerations"))])]
        for task, spec in _tasks(job)
    }
    usable = {str(_meta(n).get("name")): n for found in per_task.values() for n in found}
    allocatable = {name: resource_list(as_map(n.get("status")).get("allocatable")) for name, n in usable.items()}
    return NodesState(
        usable=len(usable),
        total=len(nodes),
        allocatable=add(*allocatable.values()),
        largest={
            task: largest(allocatable[str(_meta(n).get("name"))] for n in found) for task, found in per_task.items()
        },
        each=tuple(allocatable.values()),
    )


def _conditions(group: Mapping[str, Any]) -> tuple[Condition, ...]:
    return tuple(
        Condition(str(c.get("type", "")), str(c.get("status", "")), str(c.get("reason", "")), str(c.get("message", "")))
        for c in map(as_map, as_list(as_map(group.get("status")).get("conditions")))
    )


def _pod_problems(pod: Mapping[str, Any], events: Sequence[Mapping[str, Any]]) -> PodProblem | None:
    """A pod not yet placed, or whose containers wait to start: where it is and why (None when it is fine)."""
    meta, spec, status = _meta(pod), as_map(pod.get("spec")), as_map(pod.get("status"))
    phase = str(status.get("phase") or "Pending")
    why: list[str] = []
    if not spec.get("nodeName"):
        for c in map(as_map, as_list(status.get("conditions"))):
            if c.get("type") == "PodScheduled" and c.get("status") == "False":
                why.append(f"not scheduled ({c.get('reason')}): {c.get('message')}")
        why = why or ["not scheduled yet"]
    statuses = as_list(status.get("initContainerStatuses")) + as_list(status.get("containerStatuses"))
    for c in map(as_map, statuses):
        waiting = as_map(as_map(c.get("state")).get("waiting"))
        if waiting.get("reason") in _WAITING_HINTS:
            why.append(f"container {c.get('name')} waiting ({waiting.get('reason')}): {waiting.get('message', '')}")
    if not why or phase in ("Succeeded", "Failed"):
        return None
    pod_events = tuple(e for e in events_of(events, pod, "Pod") if e.type == "Warning")
    task = str(as_map(meta.get("labels")).get("volcano.sh/task-spec", ""))
    return PodProblem(str(meta.get("name")), task, phase, str(spec.get("nodeName") or ""), tuple(why), pod_events)


def _named_short(group: PodGroupState | None, pods: Sequence[PodProblem]) -> dict[str, list[str]]:
    """The resources Volcano reports short of, each with the messages that say so (newest first)."""
    texts = [e.message for e in reversed(group.events)] if group else []
    texts += [c.message for c in group.conditions if c.status == "True"] if group else []
    texts += [e.message for p in pods for e in p.events] + [w for p in pods for w in p.why]
    named: dict[str, list[str]] = {}
    for text in texts:
        if QUEUE_QUOTA in text:
            continue  # the queue's findings say it, with the queue's figures
        for resource in _SHORT_OF.findall(text):
            if text not in named.setdefault(resource, []):
                named[resource].append(text)
    return named


def _queue_figures(queue: QueueState, name: str, *, capability: bool = True) -> str:
    """What the queue holds of one resource: its capability, what is allocated, and deserved and guarantee where
    set."""
    parts = []
    if capability:
        parts.append(
            f"capability {show(name, queue.capability[name])}" if name in queue.capability else "no capability"
        )
    parts.append(f"{show(name, queue.allocated.get(name, Fraction(0)))} allocated")
    for what, amounts in (("deserved", queue.deserved), ("guarantee", queue.guarantee)):
        if name in amounts:
            parts.append(f"{what} {show(name, amounts[name])}")
    return ", ".join(parts)


def _queue_findings(
    name: str, ask: Fraction, gang: str, queue: QueueState, started: bool, refusal: tuple[str, tuple[str, ...]] | None
) -> list[Finding]:
    """What the queue's capability of one resource does to the gang: never enough, used up, or (the scheduler says)
    held by gangs the queue admitted earlier."""
    ceiling = queue.capability.get(name)
    if ceiling is not None and ask > ceiling:
        return [
            Finding(
                name,
                f"{gang} asks {show(name, ask)}, more than queue {queue.name} may ever have (capability"
                f" {show(name, ceiling)})",
                "ask for less (smaller or fewer pods), raise the queue's capability, or use another queue",
            )
        ]
    if started:
        return []
    named = refusal is not None and (name in refusal[1] or (not refusal[1] and ceiling is not None))
    said = f"; Volcano: {refusal[0]}" if refusal is not None and named else ""
    used = queue.allocated.get(name, Fraction(0))
    where = f"queue {queue.name} ({queue.state}{', under ' + queue.parent if queue.parent else ''})"
    if ceiling is not None and used + ask > ceiling:
        left = show(name, max(ceiling - used, Fraction(0)))
        figures = _queue_figures(queue, name, capability=False)
        return [
            Finding(
                name,
                f"{where} has {left} of its capability {show(name, ceiling)} left ({figures}); {gang} asks"
                f" {show(name, ask)}{said}",
                "wait for the queue's other jobs to finish, or raise its capability",
            )
        ]
    if refusal is None or not named:
        return []
    admitted = f"the {queue.inqueue} gang(s)" if queue.inqueue else "gangs"
    held = (
        f"the rest is held by {admitted} it admitted earlier that do not run yet (Inqueue), or set aside for other"
        " queues' guarantee"
        if ceiling is not None
        else f"with no capability of {name} of its own, it may have what the cluster has less other queues'"
        " guarantees, and gangs running or admitted (Inqueue) hold that"
    )
    bound = f"; the capability of its parent {queue.parent} bounds it too" if queue.parent else ""
    return [
        Finding(
            name,
            f"{where} does not admit the gang ({refusal[0]}): {gang} asks {show(name, ask)}, the queue has"
            f" {_queue_figures(queue, name)}; {held}{bound}",
            "wait for the queue's admitted gangs to start or finish, raise its capability, or ask for less",
        )
    ]


def _resource_findings(
    asks: Amounts,
    per_pod: Sequence[tuple[str, Amounts]],
    queue: QueueState | Unreadable | None,
    nodes: NodesState | Unreadable,
    pods: int,
    started: bool,
    refusal: tuple[str, tuple[str, ...]] | None = None,
) -> list[Finding]:
    """What the gang asks against the queue's ceiling and what the nodes have."""
    found: list[Finding] = []
    gang = f"the gang ({pods} pod{'s' if pods != 1 else ''})"
    for name, ask in asks.items():
        if ask <= 0:
            continue
        if isinstance(queue, QueueState):
            found += _queue_findings(name, ask, gang, queue, started, refusal)
        if isinstance(nodes, NodesState):
            have = nodes.allocatable.get(name, Fraction(0))
            if ask > have:
                where = "the one usable node has" if nodes.usable == 1 else f"the {nodes.usable} usable nodes have"
                has = f"{show(name, have)} allocatable{' in total' if nodes.usable > 1 else ''}" if have else "none"
                found.append(
                    Finding(
                        name,
                        f"{gang} asks {show(name, ask)}, but {where} {has}",
                        "ask for less per pod, or run fewer pods (workers), or add nodes",
                    )
                )
    if isinstance(nodes, NodesState):
        for task, asked in per_pod:
            for name, ask in asked.items():
                most = nodes.largest.get(task, {}).get(name, Fraction(0))
                if ask > most and nodes.allocatable.get(name, Fraction(0)) > 0:
                    found.append(
                        Finding(
                            name,
                            f"each {task} pod asks {show(name, ask)}, more than any node it may"
                            f" use has ({show(name, most)} at most): it fits no node",
                            f"lower the {task} pods' {name} request",
                        )
                    )
    return found


def _packing(gang: Sequence[tuple[str, Amounts]], nodes: NodesState) -> list[Finding]:
    """The gang fits the nodes in total, and each pod fits a node, but not all pods at once (say, two pods of 1.5
    CPUs and nodes of 2 and 1): placed largest first on empty nodes, one finds no room."""
    misfit = first_misfit(gang, nodes.each)
    if misfit is None:
        return []
    task, asked = misfit
    tight = sorted(r for r, a in asked.items() if a > 0 and r != "pods") or ["pods"]
    problem = (
        f"the gang's {len(gang)} pods do not fit the usable nodes all at once, even with nothing else running"
        f" there: placed largest first, one {task} pod asking {', '.join(f'{r} {show(r, asked[r])}' for r in tight)}"
        " finds no node with that much left"
    )
    change = "use fewer, smaller pods that pack onto the nodes' sizes (or larger nodes)"
    return [Finding(tight[0], problem, change)]


def gang_report(job: Mapping[str, Any], observed: Observed, *, active: bool = True) -> GangReport:
    """The report on one Volcano Job of the run (with findings while the run is ``active``, not finished)."""
    events = _items(observed.events)
    group = next((g for g in _items(observed.podgroups) if owned_by(g, job)), None)
    group_state = None
    if group is not None:
        group_state = PodGroupState(
            str(_meta(group).get("name")),
            str(as_map(group.get("status")).get("phase") or "Pending"),
            int(as_map(group.get("spec")).get("minMember") or 0),
            _conditions(group),
            events_of(events, group, "PodGroup"),
        )
    queue_name = str(
        as_map((group or {}).get("spec")).get("queue") or as_map(job.get("spec")).get("queue") or "default"
    )
    read_queue = observed.queues.get(queue_name)
    queue = (
        read_queue if read_queue is None or isinstance(read_queue, Unreadable) else queue_state(queue_name, read_queue)
    )
    nodes = observed.nodes if isinstance(observed.nodes, Unreadable) else nodes_state(observed.nodes, job)
    asks = resource_list(as_map((group or {}).get("spec")).get("minResources")) or gang_requests(job)
    per_pod = tuple((task, pod_requests(spec)) for task, spec in _tasks(job))
    name = _meta(job).get("name")
    mine = [p for p in _items(observed.pods) if as_map(_meta(p).get("labels")).get("volcano.sh/job-name") == name]
    pods = tuple(p for p in (_pod_problems(pod, events) for pod in mine) if p is not None)
    job_events = tuple(e for e in events_of(events, job, "Job") if e.type == "Warning")
    report = GangReport(
        job_status(job),
        queue_name,
        group_state,
        queue,
        nodes,
        asks,
        per_pod,
        tuple(gang_pods(job)),
        pods,
        job_events,
        (),
    )
    return replace(report, findings=tuple(_gang_findings(report)) if active else ())


def _gang_findings(report: GangReport) -> list[Finding]:
    if not report.stuck:
        return []
    found: list[Finding] = []
    if report.queue is None:
        found.append(
            Finding(
                f"queue {report.queue_name}",
                "does not exist",
                "create it, or name an existing queue in the job (spec.queue)",
            )
        )
    elif isinstance(report.queue, QueueState) and report.queue.state != "Open":
        found.append(
            Finding(
                f"queue {report.queue_name}",
                f"is {report.queue.state}: it takes no new jobs",
                "open it (vcctl queue operate --name NAME --action open), or use another queue",
            )
        )
    for event in report.events:
        if event.reason == "FailedCreate":
            found.append(
                Finding(
                    "pods",
                    f"Volcano cannot create them: {event.message}",
                    "fix what the message names (a service account, a quota, a policy)",
                )
            )
    started = report.podgroup is not None and report.podgroup.phase in _STARTED_GROUP_PHASES
    size = report.podgroup.min_member if report.podgroup else report.job.min_available
    refusal = queue_refusal(report.podgroup)
    found += _resource_findings(report.asks, report.per_pod, report.queue, report.nodes, size, started, refusal)
    if refusal is not None and not isinstance(report.queue, QueueState):
        problem = f"Volcano does not admit the gang to queue {report.queue_name}: {refusal[0]}"
        found.append(Finding(f"queue {report.queue_name}", problem, "see the queue's capability and what it holds"))
    if not started and isinstance(report.nodes, NodesState) and not found:
        found += _packing(report.gang, report.nodes)
    covered = {f.subject for f in found}
    for resource, messages in _named_short(report.podgroup, report.pods).items():
        if resource not in covered:
            found.append(
                Finding(
                    resource,
                    f"Volcano reports it short: {messages[0]}",
                    "ask for less (smaller or fewer pods), wait until other pods free some, or add capacity",
                )
            )
    for pod in report.pods:
        for why in pod.why:
            reason = next((r for r in _WAITING_HINTS if f"({r})" in why), None)
            if reason is not None:
                found.append(Finding(f"pod {pod.name}", why, _WAITING_HINTS[reason]))
    return found


def explain(observed: Observed) -> Explanation:
    """The explanation of a run from everything read about it."""
    jobs = sorted(_items(observed.jobs), key=lambda j: str(_meta(j).get("creationTimestamp")))
    result = result_of(observed.workflow, jobs)
    reads = (
        observed.jobs,
        observed.podgroups,
        observed.pods,
        observed.events,
        observed.nodes,
        *observed.queues.values(),
    )
    unreadable = tuple(r for r in reads if isinstance(r, Unreadable))
    findings: list[Finding] = []
    if result.finished:
        findings.append(Finding("workflow", f"has finished ({result.phase}): nothing is waiting", ""))
    elif not jobs and not isinstance(observed.jobs, Unreadable):
        waiting = [s for s in result.steps.values() if s.phase in ("Pending", "Running")]
        steps = "; ".join(f"{s.name} is {s.phase}" + (f": {s.message}" if s.message else "") for s in waiting)
        problem = "has no Volcano Job yet" + (f" ({steps})" if steps else "")
        change = "if a step stays Pending, see its pod's events (kubectl describe pod)"
        findings.append(Finding("workflow", problem, change))
    gangs = tuple(gang_report(job, observed, active=not result.finished) for job in jobs)
    return Explanation(result, gangs, unreadable, tuple(findings))
