"""Turning the shared follower cases (tests/follow_cases.py) into changes of the stand-in API server
(``recorded.World``), for both loops that drive the follower's state machine: the client's ``Run.logs()`` and the
follower that runs in a pod."""

from __future__ import annotations

import time
from typing import Any

from hera_volcano.argo.labels import JOB_LABEL, LEAD_TASK_ANNOTATION, POD_WORKFLOW_LABEL, TASK_LABEL, WORKFLOW_LABEL
from hera_volcano.client.resources import JOBS, PODS
from tests.client.harness import BOUND
from tests.client.recorded import Lines, World
from tests.follow_cases import Await, Event, Gone, Job, Log, Pod, Step

STEP = "wf-submit-1"
JOB_LABELS = {WORKFLOW_LABEL: "wf", JOB_LABEL: "mpi"}
POD_LABELS = {POD_WORKFLOW_LABEL: "wf", JOB_LABEL: "mpi"}


def stamp(seconds: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(1767225600 + seconds))


def job_object(job: Job) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "metadata": {
            "name": job.name,
            "creationTimestamp": stamp(job.created),
            "labels": JOB_LABELS,
            "annotations": {LEAD_TASK_ANNOTATION: job.lead},
        },
        "spec": {"tasks": []},
        "status": {"state": {"phase": job.phase}} if job.phase else {},
    }
    return obj


def pod_object(pod: Pod) -> dict[str, Any]:
    state: dict[str, Any] = {"waiting": {"reason": "PodInitializing"}}
    if pod.running:
        state = {"running": {"startedAt": stamp(pod.created + 1)}}
    elif pod.cid:
        state = {"terminated": {"exitCode": 0}}
    status: dict[str, Any] = {"phase": pod.phase}
    container: dict[str, Any] = {"name": pod.task, "state": state}
    if pod.cid:
        container["containerID"] = pod.cid
    status["containerStatuses"] = [container]
    if pod.inits:
        failed = {  # the failed init container's state: terminated for most of the back-off, then CrashLoopBackOff
            "terminated": {"terminated": {"exitCode": 1, "reason": "Error"}},
            "backoff": {"waiting": {"reason": "CrashLoopBackOff"}},
        }
        backoff = {"state": failed[pod.init_state]}
        status["initContainerStatuses"] = [
            {"name": n, "restartCount": r, **(backoff if n == pod.backoff else {})} for n, r in pod.inits
        ]
    return {
        "metadata": {
            "name": pod.name,
            "uid": f"{pod.name}-uid",
            "creationTimestamp": stamp(pod.created),
            "labels": {**POD_LABELS, TASK_LABEL: pod.task},
        },
        "spec": {"initContainers": [{"name": n} for n, _ in pod.inits], "containers": [{"name": pod.task}]},
        "status": status,
    }


class Driver:
    """Turns the cases' events into changes of the stand-in API server; a running container's log is a stream that
    stays open until the container stops, as the kubelet's."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.pending: dict[tuple[str, str], list[str]] = {}  # logged for a container's next run (or an init's)
        self.runs: dict[str, str] = {}  # pod -> the container ID of its current run
        self.streams: dict[tuple[str, str], Lines] = {}  # the open log stream of a running container
        self.shown: list[str] = []

    def apply(self, event: Event) -> None:
        w = self.world
        if isinstance(event, Job):
            w.put(JOBS, job_object(event))
        elif isinstance(event, Pod):
            self._pod(event)
        elif isinstance(event, Step):
            step = {
                "metadata": {"name": STEP, "uid": "step-uid", "labels": POD_LABELS},
                "status": {"phase": event.phase},
            }
            w.put(PODS, step)
        elif isinstance(event, Gone):
            if event.kind == "job":
                w.remove(JOBS, event.name)
            else:
                w.remove(PODS, STEP if event.kind == "step" else event.name)
                for key in [k for k in w.logs if k[0] == event.name]:
                    del w.logs[key]  # a deleted pod's logs go with it
        elif isinstance(event, Log):
            key = (event.pod, event.container)
            stream = self.streams.get(key)
            if stream is None:
                self.pending.setdefault(key, []).extend(event.lines)
            else:
                w.logs[key] = [*w.logs.get(key, []), *event.lines]
                for line in event.lines:
                    stream.push(line)
        elif isinstance(event, Await):
            deadline = time.monotonic() + BOUND
            while not any(event.text in line for line in self.shown):
                assert time.monotonic() < deadline, f"{event.text!r} never came; got {self.shown}"
                time.sleep(0.01)

    def _pod(self, pod: Pod) -> None:
        main = (pod.name, pod.task)
        for key in [k for k in self.pending if k[0] == pod.name and k[1] != pod.task]:
            self.world.logs[key] = self.pending.pop(key)  # an init container's attempt
        for name, _ in pod.inits:
            if pod.no_previous:
                self.world.no_previous.add((pod.name, name))
            else:
                self.world.no_previous.discard((pod.name, name))
        if pod.cid and self.runs.get(pod.name) != pod.cid:
            self.world.logs[main] = self.pending.pop(main, [])  # a new run's log starts afresh
            self.runs[pod.name] = pod.cid
        stream = self.streams.pop(main, None)
        if stream is not None and pod.running:
            self.streams[main] = stream
        elif stream is not None:
            stream.end()  # the container stopped: the kubelet ends its log stream
        if pod.running and main not in self.streams:
            self.streams[main] = stream = self.world.open_log(*main)
            for line in self.world.logs.get(main, []):
                stream.push(line)
        self.world.put(PODS, pod_object(pod))
