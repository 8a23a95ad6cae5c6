"""A run's Result from its recorded Workflow and Volcano Jobs."""

from __future__ import annotations

import copy

from hera_volcano.client.result import JobStatus, StepStatus, result_of, steps_of, workflow_finished
from tests.client.recorded import items, load


def test_a_finished_run_has_its_final_phase_its_steps_by_display_name_and_its_jobs_counts() -> None:
    workflow = load("succeeded/workflow.json")
    result = result_of(workflow, items("succeeded", "jobs"))
    assert (result.name, result.namespace, result.phase) == (workflow["metadata"]["name"], "argo", "Succeeded")
    assert result.finished and result.succeeded
    assert set(result.steps) == {"follow-logs", "submit-job", "delete-volcano-jobs"}
    assert result.steps["submit-job"] == StepStatus("submit-job", "Succeeded", "", "Pod")
    skipped = result.steps["delete-volcano-jobs"]
    assert (skipped.phase, skipped.type) == ("Skipped", "Skipped")
    assert "evaluated false" in skipped.message
    [job] = result.jobs
    assert (job.phase, job.label, job.min_available, job.finished, job.deleted) == ("Completed", "mpi", 3, True, False)


def test_a_running_jobs_pod_counts() -> None:
    result = result_of(load("running/workflow.json"), items("running", "jobs"))
    assert not result.finished
    [job] = result.jobs
    assert (job.phase, job.running, job.pending, job.succeeded, job.failed) == ("Running", 3, 0, 0, 0)
    [pending] = result_of(load("tight/workflow.json"), items("tight", "jobs")).jobs
    assert (pending.phase, pending.running, pending.pending) == ("Pending", 0, 3)


def test_deleted_jobs_are_kept_as_last_seen_oldest_first() -> None:
    [job] = items("running", "jobs")
    newer = copy.deepcopy(job)
    newer["metadata"].update(name="newer", creationTimestamp="2099-01-01T00:00:00Z")
    result = result_of(load("running/workflow.json"), [newer], deleted=[job])
    assert [(j.name, j.deleted) for j in result.jobs] == [(job["metadata"]["name"], True), ("newer", False)]


def test_a_retried_step_is_one_step_its_retry_node_not_each_attempt() -> None:
    workflow = load("succeeded/workflow.json")
    nodes = workflow["status"]["nodes"]
    attempt = {"type": "Pod", "phase": "Failed", "message": "Error (exit code 1)"}
    nodes["a0"] = {"id": "a0", "displayName": "train(0)", **attempt}
    nodes["a1"] = {"id": "a1", "displayName": "train(1)", **attempt}
    nodes["retry"] = {
        "id": "retry",
        "displayName": "train",
        "type": "Retry",
        "phase": "Failed",
        "message": "No more retries left",
        "children": ["a0", "a1"],
    }
    steps = steps_of(workflow)
    assert steps["train"] == StepStatus("train", "Failed", "No more retries left", "Retry")
    assert not any(name.startswith("train(") for name in steps)


def test_finished_means_a_final_phase_and_finished_at() -> None:
    workflow = load("succeeded/workflow.json")
    assert workflow_finished(workflow)
    workflow["status"]["finishedAt"] = None
    assert not workflow_finished(workflow)
    assert not workflow_finished(load("running/workflow.json"))
    assert not workflow_finished({"metadata": {"name": "new"}})


def test_a_job_without_status_yet_is_pending() -> None:
    result = result_of({"metadata": {"name": "w"}}, [{"metadata": {"name": "j"}, "spec": {"minAvailable": 2}}])
    assert result.phase == "Pending"
    assert result.jobs == (JobStatus("j", "Pending", min_available=2),)
