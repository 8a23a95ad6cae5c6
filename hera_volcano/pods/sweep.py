"""The pick of a sweep (``hera_volcano.sweep``): after every trial has ended, read the Workflow's own nodes, gather
each trial's parameters, phase, reported values and (when it failed) why, and choose the best by the objective.

Argo's gathered outputs of a loop leave out the iterations that failed, without a gap (argoproj/argo-workflows#11221),
and the reason of a failed node is only in the Workflow's status: so the pick reads the Workflow (``get`` on
``workflows.argoproj.io``, declared in :data:`PICK_CALLS`). A trial is the loop's iteration ``I`` (its node is the
trials group's child ``(I:...)``); its parameters are item ``I`` of the list the sweep looped over, given to the pick
as it was given to the loop. A trial that Succeeded without a finite number for the objective is a failed trial. The
pick fails (the sweep with it) when more trials failed than ``max_failures`` allows, or when none succeeded, naming
how many and why; otherwise it writes ``trials``, ``best-params``, ``best-trial`` and ``best-NAME`` of each value.
"""

from __future__ import annotations

import base64
import gzip
import json
import math
import os
import re
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, TextIO

from hera_volcano.pods.follow import step_of
from hera_volcano.pods.kubeapi import WORKFLOWS, ApiError, Transport
from hera_volcano.pods.reports import value_text
from hera_volcano.pods.run import TERMINATION_LOG

#: The API calls the pick makes, as RBAC names them (``hera_volcano.tools.rbac`` grants exactly these).
PICK_CALLS = (("argoproj.io", "workflows", ("get",)),)
#: The argument that makes the pods' program pick a sweep's best trial.
PICK_COMMAND = "pick-best"
#: The sweep's tasks: the loop of trials and the pick (the pick's node is ``SWEEP.pick``, the loop's ``SWEEP.trials``).
TRIALS_TASK = "trials"
PICK_TASK = "pick"
#: The pick's outputs besides ``best-NAME`` of each reported value.
TRIALS_OUTPUT = "trials"
BEST_PARAMS = "best-params"
BEST_TRIAL = "best-trial"
BEST_PREFIX = "best-"
#: Reported values no sweep may gather: their ``best-NAME`` is one of the pick's own outputs.
RESERVED_REPORTS = (BEST_PARAMS.removeprefix(BEST_PREFIX), BEST_TRIAL.removeprefix(BEST_PREFIX))
DIRECTIONS = ("min", "max")
#: Where the pick writes its outputs, one file per name (the template's outputs read them there).
PICK_OUTPUT_DIR = "/tmp/hera-volcano/sweep"
#: Seconds the pick waits for the controller to record every trial as ended (it reads the Workflow right after its
#: own pod starts, which the controller may not have written yet), and between two reads.
PICK_WAIT = 60.0
POLL_SECONDS = 2.0
_FULFILLED = frozenset({"Succeeded", "Failed", "Error", "Skipped", "Omitted"})
_FAILED = frozenset({"Failed", "Error"})
_ITERATION = re.compile(r"\((\d+):")


@dataclass(frozen=True)
class PickSettings:
    """What the pick is told, and the environment variable of each: the sweep's template writes :meth:`to_env`, the
    pod reads :meth:`from_env`. ``trials`` is the JSON list of parameter maps the loop iterates (a run-time list is
    given as the Argo expression that yields it); ``node`` the pick's own Argo node name (from its pod's annotation)."""

    workflow: str
    objective: str
    direction: str
    max_failures: int
    outputs: tuple[str, ...]
    parameters: tuple[str, ...]
    trials: str
    node: str = ""
    output_dir: str = PICK_OUTPUT_DIR
    termination_log: str = TERMINATION_LOG
    wait: float = PICK_WAIT

    WORKFLOW: ClassVar[str] = "SWEEP_WORKFLOW"
    OBJECTIVE: ClassVar[str] = "SWEEP_OBJECTIVE"
    DIRECTION: ClassVar[str] = "SWEEP_DIRECTION"
    MAX_FAILURES: ClassVar[str] = "SWEEP_MAX_FAILURES"
    OUTPUTS: ClassVar[str] = "SWEEP_OUTPUTS"
    PARAMETERS: ClassVar[str] = "SWEEP_PARAMETERS"
    TRIALS: ClassVar[str] = "SWEEP_TRIALS"
    NODE: ClassVar[str] = "SWEEP_NODE"
    OUTPUT_DIR: ClassVar[str] = "SWEEP_OUTPUT_DIR"
    TERMINATION_LOG: ClassVar[str] = "SWEEP_TERMINATION_LOG"
    WAIT: ClassVar[str] = "SWEEP_WAIT_SECONDS"
    #: Every variable, in the order :meth:`to_env` writes them (``NODE`` is the template's field reference).
    NAMES: ClassVar[tuple[str, ...]] = (
        WORKFLOW,
        OBJECTIVE,
        DIRECTION,
        MAX_FAILURES,
        OUTPUTS,
        PARAMETERS,
        TRIALS,
        NODE,
        OUTPUT_DIR,
        TERMINATION_LOG,
        WAIT,
    )

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> PickSettings:
        """The settings a pod was given (KeyError or ValueError when the environment lacks or garbles one)."""
        direction = env[cls.DIRECTION]
        if direction not in DIRECTIONS:
            raise ValueError(f"{cls.DIRECTION} must be min or max, not {direction!r}")
        return cls(
            workflow=env[cls.WORKFLOW],
            objective=env[cls.OBJECTIVE],
            direction=direction,
            max_failures=int(env[cls.MAX_FAILURES]),
            outputs=tuple(env[cls.OUTPUTS].split()),
            parameters=tuple(env[cls.PARAMETERS].split()),
            trials=env[cls.TRIALS],
            node=env.get(cls.NODE) or "",
            output_dir=env.get(cls.OUTPUT_DIR) or PICK_OUTPUT_DIR,
            termination_log=env.get(cls.TERMINATION_LOG) or TERMINATION_LOG,
            wait=float(env.get(cls.WAIT) or PICK_WAIT),
        )

    def to_env(self) -> dict[str, str]:
        """The environment :meth:`from_env` reads back (``NODE`` only when set: the template reads it from the pod's
        annotation; the paths and the wait only when not the default)."""
        env = {
            self.WORKFLOW: self.workflow,
            self.OBJECTIVE: self.objective,
            self.DIRECTION: self.direction,
            self.MAX_FAILURES: str(self.max_failures),
            self.OUTPUTS: " ".join(self.outputs),
            self.PARAMETERS: " ".join(self.parameters),
            self.TRIALS: self.trials,
            self.NODE: self.node,
            self.OUTPUT_DIR: self.output_dir,
            self.TERMINATION_LOG: self.termination_log,
            self.WAIT: str(self.wait),
        }
        defaults = {self.NODE: "", self.OUTPUT_DIR: PICK_OUTPUT_DIR, self.TERMINATION_LOG: TERMINATION_LOG}
        defaults[self.WAIT] = str(PICK_WAIT)
        return {k: v for k, v in env.items() if k not in defaults or v != defaults[k]}


@dataclass(frozen=True)
class Trial:
    """One trial as the pick saw it: its loop index, parameters, phase, the values it reported, its job's name, and
    why it failed (empty when it did not)."""

    index: int
    parameters: Mapping[str, Any]
    phase: str
    values: Mapping[str, str]
    reason: str = ""

    def record(self) -> dict[str, Any]:
        """The trial as one entry of the ``trials`` output."""
        entry: dict[str, Any] = {"trial": self.index, "parameters": dict(self.parameters), "phase": self.phase}
        entry["values"] = dict(self.values)
        if self.reason:
            entry["reason"] = self.reason
        return entry


@dataclass(frozen=True)
class Verdict:
    """What the pick decided: the trials (those that Succeeded without a usable objective marked failed), the best
    one (None when the sweep fails) and, when it fails, why."""

    trials: tuple[Trial, ...]
    best: Trial | None
    failure: str = ""


class NotReady(Exception):
    """The Workflow does not yet record every trial as ended (the controller writes it after starting the pick)."""


def expected_trials(text: str, parameters: tuple[str, ...]) -> list[dict[str, Any]]:
    """The list the loop iterates: a JSON list of maps, each giving every swept parameter (ValueError says which
    item is not)."""
    try:
        items = json.loads(text)
    except ValueError:
        raise ValueError(f"the list of trials is not JSON: {text[:200]!r}") from None
    if not isinstance(items, list):
        raise ValueError(f"the list of trials must be a JSON list of maps, not {type(items).__name__}")
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise ValueError(f"trial {i} of the list is not a map of parameters: {json.dumps(item)[:200]}")
        missing = [p for p in parameters if p not in item]
        if missing:
            raise ValueError(f"trial {i} of the list gives no {', '.join(missing)}: {json.dumps(item)[:200]}")
    return [{p: item[p] for p in parameters} for item in items]


def workflow_nodes(workflow: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The Workflow's nodes by id, also when the controller stored them compressed (``compressedNodes``); a
    ValueError when they are offloaded to Argo's database, out of the pick's reach."""
    given = workflow.get("status")
    status: dict[str, Any] = given if isinstance(given, dict) else {}
    nodes = status.get("nodes")
    if not nodes and status.get("compressedNodes"):
        nodes = json.loads(gzip.decompress(base64.b64decode(status["compressedNodes"])))
    if not nodes and status.get("offloadNodeStatusVersion"):
        raise ValueError(
            "the Workflow's nodes are offloaded to Argo's database (persistence nodeStatusOffLoad): the sweep's pick"
            " cannot read its trials"
        )
    return {k: v for k, v in (nodes or {}).items() if isinstance(v, dict)}


def _parameters_of(node: Mapping[str, Any], where: str) -> dict[str, str]:
    found = (node.get(where) or {}).get("parameters") or []
    return {str(p["name"]): str(p.get("value", "")) for p in found if isinstance(p, dict) and "name" in p}


def failure_reason(node: Mapping[str, Any], nodes: Mapping[str, Mapping[str, Any]]) -> str:
    """Why a trial failed: the messages of the failed steps inside it (each after its step's name), else its own."""
    found, seen, queue = [], set(), list(node.get("children") or [])
    while queue:
        child = nodes.get(queue.pop(0))
        if child is None or child.get("id") in seen:
            continue
        seen.add(child.get("id"))
        queue += child.get("children") or []
        if child.get("type") == "Pod" and child.get("phase") in _FAILED and child.get("message"):
            found.append(f"{child.get('displayName') or child.get('name')}: {child['message']}")
    return "; ".join(found) or str(node.get("message") or f"the trial {node.get('phase', 'failed')}")


def read_trials(workflow: Mapping[str, Any], settings: PickSettings, expected: list[dict[str, Any]]) -> list[Trial]:
    """Each trial of the sweep the pick belongs to, in loop order; NotReady while one has not ended; ValueError when
    the loop ended without the trials the list holds (Argo could not expand it)."""
    nodes = workflow_nodes(workflow)
    own = step_of(settings.node)  # a retried pick (a retryStrategy in templateDefaults) is SWEEP.pick(N)
    sweep = own.removesuffix("." + PICK_TASK)
    if not own.endswith("." + PICK_TASK):
        raise ValueError(f"the pick's node name {settings.node!r} does not end with .{PICK_TASK}")
    group_name = f"{sweep}.{TRIALS_TASK}"
    group = next((n for n in nodes.values() if n.get("name") == group_name), None)
    if group is None or group.get("phase") not in _FULFILLED:
        raise NotReady(f"the trials ({group_name}) have not all ended")
    found: dict[int, Mapping[str, Any]] = {}
    for child in (nodes.get(i) for i in group.get("children") or []):
        matched = _ITERATION.match(str((child or {}).get("name", ""))[len(group_name) :])
        if child is not None and matched:
            found[int(matched.group(1))] = child
    if sorted(found) != list(range(len(expected))):
        message = group.get("message") or "no message"
        raise ValueError(f"the loop ran {len(found)} trials of the {len(expected)} listed ({group_name}: {message})")
    trials = []
    for index, parameters in enumerate(expected):
        node = found[index]
        phase = str(node.get("phase") or "")
        if phase not in _FULFILLED:
            raise NotReady(f"trial {index} is {phase or 'not started'}")
        values = {k: v for k, v in _parameters_of(node, "outputs").items() if k in settings.outputs}
        reason = "" if phase == "Succeeded" else failure_reason(node, nodes)
        trials.append(Trial(index, parameters, phase, values, reason))
    return trials


def objective_of(trial: Trial, objective: str) -> float | str:
    """The trial's objective as a number, or why it has none (a trial that Succeeded without it failed)."""
    if trial.phase != "Succeeded":
        return trial.reason
    text = trial.values.get(objective)
    if text is None:
        return f"it Succeeded without reporting {objective}"
    try:
        value = float(text)
    except ValueError:
        return f"{objective} is not a number: {text[:100]!r}"
    return value if math.isfinite(value) else f"{objective} is not a finite number: {text[:100]!r}"


def decide(trials: list[Trial], objective: str, direction: str, max_failures: int) -> Verdict:
    """The best trial by ``objective`` (``direction`` min or max; a tie goes to the first in the list), or why the
    sweep fails: more failed trials than ``max_failures``, or none succeeded."""
    marked, scored = [], []
    for trial in trials:
        value = objective_of(trial, objective)
        if isinstance(value, str):
            phase = "Failed" if trial.phase == "Succeeded" else trial.phase
            marked.append(Trial(trial.index, trial.parameters, phase, trial.values, value))
        else:
            marked.append(trial)
            scored.append((value if direction == "min" else -value, trial.index, trial))
    failed = [t for t in marked if t.reason]
    why = "; ".join(f"trial {t.index} {shown(t.parameters)}: {t.reason}" for t in failed)
    if not trials:
        return Verdict((), None, "the sweep has no trials (the list is empty)")
    if not scored:
        return Verdict(tuple(marked), None, f"no trial succeeded ({len(failed)} failed: {why})")
    if len(failed) > max_failures:
        return Verdict(
            tuple(marked),
            None,
            f"{len(failed)} of {len(trials)} trials failed, more than max_failures={max_failures}: {why}",
        )
    return Verdict(tuple(marked), min(scored, key=lambda s: (s[0], s[1]))[2])


def shown(parameters: Mapping[str, Any]) -> str:
    """A trial's parameters as the pick's lines show them, ``(lr=0.1, batch=32)``."""
    return "(" + ", ".join(f"{k}={json.dumps(v)}" for k, v in parameters.items()) + ")"


def sweep_outputs(reported: Sequence[str]) -> list[str]:
    """The pick's outputs, and so the sweep's: ``trials``, ``best-params``, ``best-trial``, then ``best-NAME`` of each
    reported value (the objective first)."""
    return [TRIALS_OUTPUT, BEST_PARAMS, BEST_TRIAL, *(BEST_PREFIX + name for name in reported)]


def outputs_of(verdict: Verdict, outputs: tuple[str, ...]) -> dict[str, str]:
    """The pick's output files: ``trials`` always; the best trial's parameters, index and values when there is one.
    JSON is written so that Argo passes it on unchanged (:func:`hera_volcano.pods.reports.value_text`)."""
    files = {TRIALS_OUTPUT: value_text(TRIALS_OUTPUT, [t.record() for t in verdict.trials])}
    best = verdict.best
    if best is not None:
        files[BEST_PARAMS] = value_text(BEST_PARAMS, dict(best.parameters))
        files[BEST_TRIAL] = str(best.index)
        files.update({BEST_PREFIX + name: best.values.get(name, "") for name in outputs})
    return files


def _read(
    api: Transport,
    settings: PickSettings,
    expected: list[dict[str, Any]],
    clock: Callable[[], float],
    sleep: Callable[[float], None],
) -> list[Trial]:
    """The trials, read again until every one has ended (at most ``settings.wait`` seconds)."""
    end = clock() + settings.wait
    while True:
        try:
            return read_trials(api.get(WORKFLOWS, settings.workflow), settings, expected)
        except NotReady as e:
            if clock() >= end:
                raise ValueError(f"{e} after {settings.wait:g} s") from None
        sleep(POLL_SECONDS)


def pick(
    api: Transport,
    settings: PickSettings,
    out: TextIO = sys.stdout,
    *,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> int:
    """Read the trials, decide, write the outputs and say what was decided: 0 with a best trial, else 1 (the
    message also in the termination log, which Argo shows as the step's)."""
    try:
        expected = expected_trials(settings.trials, settings.parameters)
        trials = _read(api, settings, expected, clock, sleep) if expected else []
    except (ValueError, ApiError) as e:
        return _fail(settings, f"hera-volcano sweep: {e}", out)
    verdict = decide(trials, settings.objective, settings.direction, settings.max_failures)
    lines = described(verdict, settings.objective, settings.direction)
    for line in lines[:-1]:
        print(line, file=out, flush=True)
    os.makedirs(settings.output_dir, exist_ok=True)
    for name, text in outputs_of(verdict, settings.outputs).items():
        with open(os.path.join(settings.output_dir, name), "w", encoding="utf-8") as f:
            f.write(text)
    if verdict.best is None:
        return _fail(settings, lines[-1], out)
    print(lines[-1], file=out, flush=True)
    return 0


def described(verdict: Verdict, objective: str, direction: str) -> list[str]:
    """What was decided, as lines for a person: one per trial, then the best trial (by ``objective``,
    ``direction``) or why the sweep failed. The pick and a local sweep say it alike."""
    lines = []
    for trial in verdict.trials:
        values = " ".join(f"{k}={v}" for k, v in trial.values.items())
        lines.append(f"trial {trial.index} {shown(trial.parameters)}: {trial.phase} {values} {trial.reason}".rstrip())
    best = verdict.best
    if best is None:
        lines.append(f"hera-volcano sweep: {verdict.failure}")
    else:
        value = f"{objective}={best.values[objective]}"
        lines.append(f"best: trial {best.index} {shown(best.parameters)}, {value} ({direction})")
    return lines


def _fail(settings: PickSettings, message: str, out: TextIO) -> int:
    print(message, file=out, flush=True)
    try:
        with open(settings.termination_log, "w", encoding="utf-8") as f:
            f.write(message[:4000] + "\n")  # Argo shows it as the step's message
    except OSError:
        pass
    return 1
