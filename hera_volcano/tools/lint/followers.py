"""A log follower must not stop before the job step it follows.

The follower (:func:`hera_volcano.argo.follow_logs.follow_logs_template`) finds its job by the ``hera-volcano/job``
label in its ``JOB_SELECTOR`` and stops after ``FOLLOW_SECONDS`` (0: no limit) or its ``activeDeadlineSeconds``;
the job step (:func:`hera_volcano.argo.job_template.job_template`) carries the same label and waits up to its
``activeDeadlineSeconds``. A follower whose limit is the shorter one stops while the job may still run: its outputs
are empty, and a step that reads them runs on nothing. Absent limits are unlimited; a limit that is an Argo variable
is only known at run time and not compared.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final

from hera_volcano.argo.labels import JOB_LABEL, JobIdentity
from hera_volcano.pods.run import Settings
from hera_volcano.shared.findings import Finding, as_list, as_map, error
from hera_volcano.tools.lint.context import Workflow
from hera_volcano.tools.lint.wiring import levels, role

_SECONDS: Final = re.compile(r"\+?[0-9]+")
#: Stands for "no limit" in comparisons.
_UNLIMITED: Final = float("inf")


@dataclass(frozen=True)
class _Limit:
    """How long a template runs at most (``_UNLIMITED`` without a limit), and the field that says so."""

    seconds: float
    path: str


def _seconds(value: object) -> float | None:
    """A whole number of seconds from an int or its text; None for anything else (an Argo variable)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and _SECONDS.fullmatch(value.strip()):
        return int(value)
    return None


def _deadline(template: Mapping[str, Any], path: str, wf: Workflow) -> _Limit | None:
    """The template's ``activeDeadlineSeconds`` (or the workflow's templateDefaults'); None when not a number."""
    if "activeDeadlineSeconds" in template:
        value, at = template["activeDeadlineSeconds"], f"{path}.activeDeadlineSeconds"
    else:
        value, at = wf.defaults.get("activeDeadlineSeconds"), f"{wf.spec_path}.templateDefaults.activeDeadlineSeconds"
    if value is None:
        return _Limit(_UNLIMITED, path)
    seconds = _seconds(value)
    return None if seconds is None else _Limit(seconds, at)


def _follower(template: Mapping[str, Any], path: str, wf: Workflow) -> tuple[str, _Limit, str] | None:
    """``(job label, limit, outputs)`` of a follower template, or None when ``template`` is not one or its limit is
    only known at run time."""
    container = template.get("container")
    if not isinstance(container, Mapping):
        return None
    env = {
        e.get("name"): (i, e.get("value"))
        for i, e in enumerate(as_list(container.get("env")))
        if isinstance(e, Mapping) and isinstance(e.get("name"), str)
    }
    identity = JobIdentity.from_selector(env.get(Settings.JOB_SELECTOR, (0, None))[1])
    job = identity.job if identity is not None else None
    if not job:
        return None
    deadline = _deadline(template, path, wf)
    if deadline is None:
        return None
    limits = [deadline]
    index, value = env.get(Settings.FOLLOW_SECONDS, (0, None))
    if value not in (None, ""):
        seconds = _seconds(value)
        if seconds is None:
            return None  # an Argo variable
        if seconds > 0:  # 0: no limit of its own
            limits.append(_Limit(seconds, f"{path}.container.env[{index}].value"))
    outputs = env.get(Settings.OUTPUTS, (0, None))[1]
    return job, min(limits, key=lambda limit: limit.seconds), str(outputs or "")


def _met(wf: Workflow) -> set[tuple[str, str]]:
    """(follower template, job step template) pairs that some call puts side by side with the same label: what the
    follower really selects (a parametrised label resolved call by call, never matched as text)."""
    return {
        (f.template, j.template)
        for level in levels(wf)
        for f in level
        if f.follower
        for j in level
        if not j.follower and j.label == f.label
    }


def _label_of(wf: Workflow, template: str) -> str | None:
    found = role(wf.templates.get(template) or {})
    return None if found is None else found[1]


def check_followers(wf: Workflow) -> Iterator[Finding]:
    """Each follower of a workflow outlasts the deadline of every job step with its ``hera-volcano/job`` label."""
    jobs: dict[str, list[tuple[str, _Limit]]] = {}
    followers: list[tuple[str, str, _Limit, str]] = []
    for i, template in enumerate(as_list(wf.spec.get("templates"))):
        if not isinstance(template, Mapping):
            continue
        path = f"{wf.spec_path}.templates[{i}]"
        label = as_map(as_map(template.get("metadata")).get("labels")).get(JOB_LABEL)
        if template.get("resource") is not None and isinstance(label, str) and label:
            deadline = _deadline(template, path, wf)
            if deadline is not None:
                jobs.setdefault(label, []).append((str(template.get("name")), deadline))
            continue
        found = _follower(template, path, wf)
        if found is not None:
            followers.append((str(template.get("name")), *found))
    met = _met(wf)
    for name, job, limit, outputs in followers:
        steps = [(step, deadline) for labelled in jobs.values() for step, deadline in labelled]
        followed = [
            (s, d) for s, d in steps if (name, s) in met or (not met and job == _label_of(wf, s) and "{{" not in job)
        ]
        longer = [(step, deadline) for step, deadline in followed if deadline.seconds > limit.seconds]
        if not longer:
            continue
        step, deadline = max(longer, key=lambda found: found[1].seconds)
        waits = "has no deadline" if deadline.seconds == _UNLIMITED else f"waits up to {deadline.seconds:.0f} s"
        lost = f"its outputs ({', '.join(outputs.split())}) empty" if outputs.strip() else "the rest of the log unseen"
        yield error(
            limit.path,
            f"follower {name!r} stops after {limit.seconds:.0f} s, but the step {step!r} of its job {job!r} {waits}:"
            f" the follower would stop first, while the job runs on, leaving {lost}; give the follower a limit at"
            " least as long as the job's, or none",
        )
