"""Which follower follows which job step, call by call: what a follower really selects.

A follower (:func:`hera_volcano.argo.follow_logs.follow_logs_template`) follows the job created by a *sibling* step
(same DAG, same Steps group, same loop item) whose pods carry its ``hera-volcano/job`` label. A label that is an
input parameter (``{{inputs.parameters.job}}``, as a :class:`~hera_volcano.Pipeline` gives each job its own) is
only known per call, so labels are compared as each call resolves them: a follower whose label stays a parameter
does not follow a job of a fixed label, nor the other way round. Two rules read this:

- ``job-step-called-twice`` (an error): at one level, a follower beside two calls of job steps that carry its
  label (the same hand-wired pair called twice, or a looped job step beside an unlooped follower) cannot tell which
  job is its own; at run time it fails at once. :func:`~hera_volcano.job_dag` nests each pair in a DAG of its own.
- a job step is *start-limited* when every call of it has a follower of its label beside it that keeps a start
  limit (``START_SECONDS``): :func:`start_limited` (used by :mod:`.resources`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Final

from hera_volcano.argo.labels import JOB_LABEL, JobIdentity
from hera_volcano.pods.run import Settings
from hera_volcano.shared.findings import Finding, as_list, as_map, error
from hera_volcano.tools.lint.context import Workflow

#: The rule named in the crossing finding.
CROSSING_RULE: Final = "job-step-called-twice"
_INPUT: Final = re.compile(r"\{\{\s*inputs\.parameters\.([-a-zA-Z0-9_]+)\s*\}\}")
_LOOPS: Final = ("withItems", "withParam", "withSequence")


@dataclass(frozen=True)
class Call:
    """A step or task that calls a job step or a follower: where, its name and template, the job label it resolves
    to, whether it is the follower (and its start limit, seconds; 0: none) and whether it loops."""

    path: str
    name: str
    template: str
    label: str
    follower: bool
    start_limit: int
    looped: bool


def role(template: Mapping[str, object]) -> tuple[bool, str, int] | None:
    """``(follower?, label, start limit)`` of a job step or follower template of this library; None for others."""
    labels = as_map(as_map(template.get("metadata")).get("labels"))
    if template.get("resource") is not None and isinstance(labels.get(JOB_LABEL), str) and labels[JOB_LABEL]:
        return False, str(labels[JOB_LABEL]), 0
    env = {
        e["name"]: e.get("value")
        for e in map(as_map, as_list(as_map(template.get("container")).get("env")))
        if isinstance(e.get("name"), str)
    }
    identity = JobIdentity.from_selector(env.get(Settings.JOB_SELECTOR))
    if identity is None or not identity.job:
        return None
    start = env.get(Settings.START_SECONDS)
    return True, identity.job, int(start) if isinstance(start, str) and start.isdigit() else 0


def _resolved(label: str, template: Mapping[str, object], call: Mapping[str, object]) -> str:
    """The label as this call gives it: each ``{{inputs.parameters.X}}`` the call's argument X (or the input's
    default); one the call does not give stays as written."""
    given: dict[str, object] = {}
    for parameter in map(as_map, as_list(as_map(template.get("inputs")).get("parameters"))):
        if "default" in parameter:
            given[str(parameter.get("name"))] = parameter["default"]
    for argument in map(as_map, as_list(as_map(call.get("arguments")).get("parameters"))):
        if "value" in argument:
            given[str(argument.get("name"))] = argument["value"]
    return _INPUT.sub(lambda m: str(given[m[1]]) if m[1] in given else m[0], label)


def levels(wf: Workflow) -> Iterator[list[Call]]:
    """The calls of job steps and followers at each level whose steps are siblings: a DAG's tasks, a Steps group."""
    for i, template in enumerate(map(as_map, as_list(wf.spec.get("templates")))):
        path = f"{wf.spec_path}.templates[{i}]"
        if "dag" in template:
            at = f"{path}.dag.tasks"
            yield list(
                _calls(wf, [(f"{at}[{k}]", t) for k, t in enumerate(as_list(as_map(template["dag"]).get("tasks")))])
            )
        for g, group in enumerate(as_list(template.get("steps"))):
            at = f"{path}.steps[{g}]"
            yield list(_calls(wf, [(f"{at}[{k}]", s) for k, s in enumerate(as_list(group))]))


def _calls(wf: Workflow, calls: list[tuple[str, object]]) -> Iterator[Call]:
    for path, raw in calls:
        call = as_map(raw)
        name = call.get("template")
        template = wf.templates.get(name) if isinstance(name, str) else None
        found = role(template) if template is not None else None
        if template is None or found is None:
            continue
        follower, label, start = found
        looped = any(call.get(loop) is not None for loop in _LOOPS)
        yield Call(path, str(call.get("name")), str(name), _resolved(label, template, call), follower, start, looped)


def check_wiring(wf: Workflow) -> Iterator[Finding]:
    """No follower beside two calls of job steps of its label (rule ``job-step-called-twice``)."""
    for level in levels(wf):
        for follower in (c for c in level if c.follower):
            jobs = [c for c in level if not c.follower and c.label == follower.label]
            if len(jobs) > 1 or any(c.looped and not follower.looped for c in jobs):
                steps = ", ".join(repr(c.name) for c in jobs)
                yield error(
                    jobs[-1].path,
                    f"{CROSSING_RULE}: the follower {follower.name!r} runs beside {steps}, which all create jobs"
                    f" labelled {follower.label!r} (a looped call creates one per item), so it cannot tell which is"
                    " its own and fails at once: call each job with job_dag (a DAG of its own per call), or give"
                    " each job step its own job_label and follower",
                )


def start_limited(name: str, wf: Workflow) -> bool:
    """Every call of the job step template ``name`` has a follower of its label beside it that keeps a start limit.
    A template this workflow never calls is judged by its label: a follower of the same fixed label anywhere."""
    calls = [(c, level) for level in levels(wf) for c in level if c.template == name and not c.follower]
    if calls:
        return all(any(f.follower and f.label == c.label and f.start_limit > 0 for f in level) for c, level in calls)
    found = role(wf.templates.get(name) or {})
    if found is None or "{{" in found[1]:
        return False
    others = (role(t) for t in wf.templates.values())
    return any(r is not None and r[0] and r[1] == found[1] and r[2] > 0 for r in others)
