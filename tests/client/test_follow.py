"""The log follower's steps on recorded pods (and their restarts), and reattaching without repeating lines."""

from __future__ import annotations

import copy
from typing import Any

from hera_volcano.argo.labels import LEAD_TASK_ANNOTATION
from hera_volcano.client.follow import (
    GONE,
    STEP_GRACE,
    Follower,
    LineCursor,
    ShowInit,
    Stop,
    Stream,
    Wait,
    lead_task,
    newest,
    pod_state,
    split_timestamp,
)
from hera_volcano.client.result import JobStatus
from tests.client.recorded import items

RUNNING = JobStatus("mpi-x", "Running")
COMPLETED = JobStatus("mpi-x", "Completed")


def master(scenario: str = "running") -> dict[str, Any]:
    return next(p for p in items(scenario, "pods") if p["metadata"]["labels"]["volcano.sh/task-spec"] == "mpimaster")


def terminated(pod: dict[str, Any]) -> dict[str, Any]:
    pod = copy.deepcopy(pod)
    pod["status"]["phase"] = "Succeeded"
    pod["status"]["containerStatuses"][0]["state"] = {"terminated": {"exitCode": 0, "reason": "Completed"}}
    return pod


def restarted(pod: dict[str, Any]) -> dict[str, Any]:
    pod = copy.deepcopy(pod)
    pod["status"]["containerStatuses"][0].update(containerID="containerd://" + "b" * 64, restartCount=1)
    return pod


def follower() -> Follower:
    return Follower("workflows.argoproj.io/workflow=w", grace=120)


def test_a_recorded_pods_state() -> None:
    state = pod_state(master(), "mpimaster")
    assert (state.phase, state.running, state.init_restarts) == ("Running", True, (("wait-for-workers", 0),))
    assert state.container_id.startswith("containerd://")
    assert state.containers == ("wait-for-workers", "mpimaster")
    pending = pod_state(master("tight"), "mpimaster")
    assert (pending.container_id, pending.running, pending.phase) == ("", False, "Pending")


def test_streams_a_run_once_then_stops_when_the_job_has_finished() -> None:
    f, pod = follower(), pod_state(master(), "mpimaster")
    assert f.next(pod, RUNNING, None, None, 1) == [Stream(pod.name, f"=== logs of {pod.name} (Running)")]
    done = pod_state(terminated(master()), "mpimaster")
    assert f.next(done, RUNNING, None, None, 2) == [Wait()]
    assert f.next(done, COMPLETED, None, None, 3) == [Stop("Job mpi-x is Completed")]


def test_a_dropped_stream_of_a_running_container_is_reattached() -> None:
    f, pod = follower(), pod_state(master(), "mpimaster")
    f.next(pod, RUNNING, None, None, 1)
    assert f.next(pod, RUNNING, None, None, 2) == [Stream(pod.name, f"=== reattaching to {pod.name}", reattach=True)]


def test_a_restarted_container_or_a_new_pod_is_streamed_from_its_start() -> None:
    f = follower()
    f.next(pod_state(master(), "mpimaster"), RUNNING, None, None, 1)
    again = pod_state(restarted(master()), "mpimaster")
    assert f.next(again, RUNNING, None, None, 2) == [Stream(again.name, f"=== logs of {again.name} (Running)")]
    new = copy.deepcopy(master())
    new["metadata"]["uid"] = "another-uid"  # Volcano recreates a pod under the same name
    pod = pod_state(new, "mpimaster")
    assert f.next(pod, RUNNING, None, None, 3) == [Stream(pod.name, f"=== logs of {pod.name} (Running)")]


def test_each_failed_init_attempt_is_shown_once_and_a_container_that_never_started_at_the_end() -> None:
    f = follower()
    pod = copy.deepcopy(master("tight"))
    pod["status"]["initContainerStatuses"] = [{"name": "wait-for-workers", "restartCount": 1, "state": {}}]
    state = pod_state(pod, "mpimaster")
    header = f"=== {state.name}: init container wait-for-workers failed (restart 1); the end of its output:"
    assert f.next(state, RUNNING, None, None, 1) == [ShowInit(state.name, "wait-for-workers", header), Wait()]
    assert f.next(state, RUNNING, None, None, 2) == [Wait()]
    assert f.next(state, JobStatus("mpi-x", "Terminated"), None, None, 3) == [Stop("Job mpi-x is Terminated", state)]


def test_no_job_within_the_grace_period_or_a_job_gone_or_the_workflow_finished_stops_it() -> None:
    f = follower()
    assert f.next(None, None, None, None, 119) == [Wait()]
    assert f.next(None, None, None, None, 121) == [
        Stop(f"Neither the job's step nor a job labelled {f.selector} appeared within 120 s")
    ]
    seen = follower()
    seen.next(None, RUNNING, None, None, 1)
    assert seen.next(None, None, None, None, 2) == [Stop("Job mpi-x is gone")]
    # a job created and deleted between two looks: the watch saw it go, so the follower stops all the same
    assert follower().next(None, None, "Running", None, 2, gone="mpi-y") == [Stop("Job mpi-y is gone")]
    assert follower().next(None, None, "Running", None, 2) == [Wait()]
    # a step pod that came and went between two looks has ended
    step_gone = follower()
    assert step_gone.next(None, None, GONE, None, 1) == [Wait()]
    assert step_gone.next(None, None, GONE, None, 1 + STEP_GRACE) == [
        Stop("The job's step has ended without creating a job")
    ]
    assert follower().next(None, None, None, "Failed", 1) == [Stop("Workflow is Failed")]


def test_the_newest_object_wins() -> None:
    old, new = copy.deepcopy(master()), copy.deepcopy(master())
    old["metadata"]["creationTimestamp"], new["metadata"]["creationTimestamp"] = (
        "2026-01-01T00:00:00Z",
        "2026-01-02T00:00:00Z",
    )
    assert newest([new, old]) is new
    assert newest([]) is None


def test_timestamps_are_split_off_exactly() -> None:
    assert split_timestamp("2026-12-01T18:00:25.123456789Z Hello") == ((1796148025, 123456789), "Hello")
    assert split_timestamp("2026-12-01T18:00:25Z x") == ((1796148025, 0), "x")
    assert split_timestamp("2026-12-01T18:00:25.5+01:00 y") == ((1796144425, 500000000), "y")
    assert split_timestamp("no stamp") == (None, "no stamp")


def test_a_reattached_stream_repeats_no_line_even_with_equal_timestamps() -> None:
    cursor = LineCursor()
    first = ["2026-12-01T18:00:25.1Z a", "2026-12-01T18:00:26Z b", "2026-12-01T18:00:26Z c"]
    assert [cursor.accept(line) for line in first] == ["a", "b", "c"]
    cursor.reattach()
    replay = [*first, "2026-12-01T18:00:26Z d", "2026-12-01T18:00:27Z e"]
    assert [t for t in map(cursor.accept, replay) if t is not None] == ["d", "e"]


def test_the_lead_task_is_the_one_the_job_names_else_the_mpi_master() -> None:
    job = copy.deepcopy(items("running", "jobs")[0])
    assert lead_task(job) == lead_task(None) == "mpimaster", "a job made before the annotation, or none yet"
    job["metadata"]["annotations"] = {LEAD_TASK_ANNOTATION: "chief"}
    assert lead_task(job) == "chief"
    job["metadata"]["annotations"] = {LEAD_TASK_ANNOTATION: "Not a task name"}
    assert lead_task(job) == "mpimaster"
