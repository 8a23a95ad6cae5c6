"""A run's result and its explanation as text for a person (``hera-volcano status`` and ``explain`` print these)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction

from hera_volcano.client.explain import (
    Event,
    Explanation,
    Finding,
    GangReport,
    NodesState,
    QueueState,
    Unreadable,
)
from hera_volcano.client.progress import job_line
from hera_volcano.client.result import Result
from hera_volcano.volcano.amounts import show

#: The newest events shown per object (older ones repeat what these say).
EVENTS_SHOWN = 5


def amounts(values: Mapping[str, Fraction]) -> str:
    return ", ".join(f"{name} {show(name, value)}" for name, value in sorted(values.items())) or "none"


def _heading(result: Result) -> list[str]:
    message = f": {result.message}" if result.message else ""
    lines = [f"Workflow {result.name} in {result.namespace}: {result.phase}{message}"]
    for step in result.steps.values():
        lines.append(f"  {step.name}: {step.phase}" + (f": {step.message}" if step.message else ""))
    return lines


def format_result(result: Result) -> str:
    """The workflow's phase, each step's, and each Volcano Job's with its pods."""
    lines = _heading(result)
    if result.jobs:
        lines.append("Volcano Jobs:")
        lines += [job_line(job) for job in result.jobs]
    return "\n".join(lines) + "\n"


def _events(events: Sequence[Event], indent: str) -> list[str]:
    return [
        f"{indent}event {e.reason} ({e.type}, {e.count}x, last {e.last or '?'}): {e.message}"
        for e in events[-EVENTS_SHOWN:]
    ]


def _findings(findings: Sequence[Finding], indent: str) -> list[str]:
    lines = []
    for f in findings:
        lines.append(f"{indent}- {f.subject}: {f.problem}")
        if f.change:
            lines.append(f"{indent}  change: {f.change}")
    return lines


def _gang(gang: GangReport, finished: bool) -> list[str]:
    job = gang.job
    lines = [f"Volcano Job{job_line(job).removeprefix('  job')}; minAvailable {job.min_available}"]
    lines += _events(gang.events, "  ")
    group = gang.podgroup
    if group is None:
        written = "none: Volcano removes it once the job has finished" if job.finished else "none yet"
        lines.append(f"  PodGroup: {written}")
    else:
        lines.append(f"  PodGroup {group.name}: {group.phase}, minMember {group.min_member}, queue {gang.queue_name}")
        for c in group.conditions:
            reason = f" ({c.reason})" if c.reason else ""
            lines.append(f"    condition {c.type}={c.status}{reason}" + (f": {c.message}" if c.message else ""))
        if gang.stuck and not finished:
            lines += _events(group.events, "    ")
    if isinstance(gang.queue, QueueState):
        queue = gang.queue
        capability = amounts(queue.capability) if queue.capability else "no limit"
        line = f"  queue {queue.name}: {queue.state}; capability: {capability}; allocated: {amounts(queue.allocated)}"
        line += f"; deserved: {amounts(queue.deserved)}" if queue.deserved else ""
        line += f"; guarantee: {amounts(queue.guarantee)}" if queue.guarantee else ""
        line += f"; parent: {queue.parent}" if queue.parent else ""
        line += f"; gangs admitted, not running yet: {queue.inqueue}" if queue.inqueue else ""
        lines.append(line)
    elif isinstance(gang.queue, Unreadable):
        lines.append(f"  queue {gang.queue_name}: could not be read (below)")
    else:
        lines.append(f"  queue {gang.queue_name}: does not exist")
    lines.append(f"  the gang asks: {amounts(gang.asks)}")
    lines.append("  each pod asks: " + "; ".join(f"{task}: {amounts(asked)}" for task, asked in gang.per_pod))
    if isinstance(gang.nodes, NodesState):
        nodes = gang.nodes
        lines.append(f"  nodes: {nodes.usable} usable of {nodes.total}; allocatable: {amounts(nodes.allocatable)}")
    else:
        lines.append("  nodes: could not be read (below)")
    for pod in gang.pods:
        where = f" on {pod.node}" if pod.node else ""
        lines.append(f"  pod {pod.name} ({pod.task}): {pod.phase}{where}")
        lines += [f"    {why}" for why in pod.why]
        lines += _events(pod.events, "    ")
    if gang.findings:
        lines.append("  Why it does not start, and what to change:")
        lines += _findings(gang.findings, "    ")
    elif gang.stuck and not finished:
        lines.append("  Nothing read here says why it waits: see the PodGroup's events above, and vc-scheduler's log")
    return lines


def format_explanation(explanation: Explanation) -> str:
    """The run, then each Volcano Job (PodGroup, queue, what the gang asks, the nodes, pods, findings), then what
    could not be read."""
    lines = _heading(explanation.result)
    lines += _findings(explanation.findings, "")
    for gang in explanation.gangs:
        lines += ["", *_gang(gang, explanation.result.finished)]
    if explanation.unreadable:
        lines.append("")
        lines += [f"Could not read {u.what}: {u.reason}" for u in explanation.unreadable]
    return "\n".join(lines) + "\n"
