"""The log follower's state machine (hera_volcano/pods/follow.py) on recorded pods and jobs: what it streams, when it
reattaches, which job it follows in a loop, after an Argo retry or beside others that share its label, when it stops,
and reattaching without repeating lines."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from hera_volcano.argo.labels import LEAD_TASK_ANNOTATION, NODE_NAME_ANNOTATION, STEP_POD_ANNOTATION
from hera_volcano.pods.follow import (
    STEP_GRACE,
    Follower,
    Forget,
    GiveUp,
    LineCursor,
    Seen,
    ShowInit,
    Stop,
    Stream,
    Wait,
    attempt,
    failure_lines,
    lead_task,
    newest,
    pod_state,
    podgroup_said,
    sibling,
    split_timestamp,
)
from tests.client.recorded import items

JOB = items("running", "jobs")[0]
NAME = JOB["metadata"]["name"]


def master(scenario: str = "running") -> dict[str, Any]:
    return next(p for p in items(scenario, "pods") if p["metadata"]["labels"]["volcano.sh/task-spec"] == "mpimaster")


def job(phase: str | None, name: str = NAME, *, step: str = "", created: str = "", uid: str = "u") -> dict[str, Any]:
    obj = copy.deepcopy(JOB)
    obj["metadata"].update(name=name, uid=uid)
    if created:
        obj["metadata"]["creationTimestamp"] = created
    if step:
        obj["metadata"].setdefault("annotations", {})[STEP_POD_ANNOTATION] = step
    obj["status"]["state"] = {"phase": phase} if phase else {}
    return obj


def step_pod(name: str, node: str = "", phase: str = "Running") -> dict[str, Any]:
    annotations = {NODE_NAME_ANNOTATION: node} if node else {}
    return {"metadata": {"name": name, "annotations": annotations, "labels": {}}, "status": {"phase": phase}}


def terminated(pod: dict[str, Any]) -> dict[str, Any]:
    pod = copy.deepcopy(pod)
    pod["status"]["phase"] = "Succeeded"
    pod["status"]["containerStatuses"][0]["state"] = {"terminated": {"exitCode": 0, "reason": "Completed"}}
    return pod


def restarted(pod: dict[str, Any]) -> dict[str, Any]:
    pod = copy.deepcopy(pod)
    pod["status"]["containerStatuses"][0].update(containerID="containerd://" + "b" * 64, restartCount=1)
    return pod


def of_job(pod: dict[str, Any], name: str, uid: str = "") -> dict[str, Any]:
    pod = copy.deepcopy(pod)
    pod["metadata"]["labels"]["volcano.sh/job-name"] = name
    pod["metadata"]["name"] = f"{name}-mpimaster-0"
    pod["metadata"]["uid"] = uid or f"{name}-uid"
    return pod


def follower(**settings: Any) -> Follower:
    return Follower("workflows.argoproj.io/workflow=w", grace=120, **settings)


def look(f: Follower, at: float, jobs: Sequence[Any] = (), pods: Sequence[Any] = (), **more: Any) -> list[Any]:
    return f.next(Seen(list(jobs), list(pods), at, **more))


def test_a_recorded_pods_state() -> None:
    state = pod_state(master(), "mpimaster")
    assert (state.phase, state.running, state.init_restarts) == ("Running", True, (("wait-for-workers", 0),))
    assert state.container_id.startswith("containerd://")
    assert state.containers == ("wait-for-workers", "mpimaster")
    pending = pod_state(master("tight"), "mpimaster")
    assert (pending.container_id, pending.running, pending.phase) == ("", False, "Pending")


def test_streams_a_run_once_then_stops_when_the_job_has_finished() -> None:
    f, pod = follower(), master()
    name = pod["metadata"]["name"]
    assert look(f, 1, [job("Running")], [pod]) == [Stream(name, "mpimaster", f"=== logs of {name} (Running)")]
    f.stream_ended(2, 1, failed=False, relayed=True)
    assert look(f, 2, [job("Running")], [terminated(pod)]) == [Wait()]
    assert look(f, 3, [job("Completed")], [terminated(pod)]) == [Stop(f"Job {NAME} is Completed", phase="Completed")]
    assert not f.needs_reread()


def test_a_dropped_stream_of_a_running_container_is_reattached_after_a_back_off_while_streams_end_at_once() -> None:
    f, pod = follower(backoff=2, backoff_max=4), master()
    name = pod["metadata"]["name"]
    again = Stream(name, "mpimaster", f"=== reattaching to {name}", reattach=True)
    look(f, 1, [job("Running")], [pod])
    assert look(f, 1.5, [job("Running")], [pod]) == [Wait()], "not while it streams"
    f.stream_ended(100, 60, failed=False, relayed=True)  # a long stream: again at once
    assert look(f, 100, [job("Running")], [pod]) == [again]
    f.stream_ended(101, 1, failed=True, relayed=False)  # at once: 2 s, then 4, 4
    assert look(f, 102.9, [job("Running")], [pod]) == [Wait()]
    assert look(f, 103, [job("Running")], [pod]) == [again]
    f.stream_ended(103, 0, failed=True, relayed=False)
    assert look(f, 106.9, [job("Running")], [pod]) == [Wait()]
    assert look(f, 107, [job("Running")], [pod]) == [again]
    f.stream_ended(107, 0, failed=True, relayed=False)
    assert look(f, 111, [job("Running")], [pod]) == [again], "at most backoff_max"


def test_a_finished_job_is_not_reattached_and_a_failed_last_stream_is_read_again() -> None:
    """The e2e failure: the stream opened while the kubelet still said 'waiting to start', the program ran and
    ended in between, the job Completed: its log is read once more so no rank's line is lost."""
    f, pod = follower(), master()
    look(f, 1, [job("Running")], [pod])
    f.stream_ended(1.1, 0.1, failed=True, relayed=False)
    assert look(f, 2, [job("Completed")], [pod]) == [Stop(f"Job {NAME} is Completed", phase="Completed")]
    assert f.needs_reread()
    ok = follower()
    look(ok, 1, [job("Running")], [pod])
    ok.stream_ended(1.1, 0.1, failed=False, relayed=False)  # ended at once, nothing relayed
    assert ok.needs_reread()


def test_a_restarted_container_or_a_new_pod_is_streamed_from_its_start() -> None:
    f = follower()
    look(f, 1, [job("Running")], [master()])
    f.stream_ended(2, 1, failed=False, relayed=True)
    name = master()["metadata"]["name"]
    header = Stream(name, "mpimaster", f"=== logs of {name} (Running)")
    assert look(f, 2, [job("Running")], [restarted(master())]) == [header]
    new = copy.deepcopy(master())
    new["metadata"]["uid"] = "another-uid"  # Volcano recreates a pod under the same name
    assert look(f, 3, [job("Running")], [new]) == [header], "even while the last run's stream has not ended"


def test_each_failed_init_attempt_is_shown_once_and_a_container_that_never_started_at_the_end() -> None:
    f = follower()
    pod = copy.deepcopy(master("tight"))
    pod["metadata"]["labels"]["volcano.sh/job-name"] = NAME
    ran = {"terminated": {"exitCode": 1, "startedAt": "2026-12-06T12:00:05Z", "finishedAt": "2026-12-06T12:00:25Z"}}
    pod["status"]["initContainerStatuses"] = [
        {"name": "wait-for-workers", "restartCount": 1, "state": {"running": {}}, "lastState": ran}
    ]
    state = pod_state(pod, "mpimaster")
    header = f"=== {state.name}: init container wait-for-workers failed (restart 1); the end of its output:"
    window = (1796558405, 1796558425)
    assert look(f, 1, [job("Running")], [pod]) == [
        ShowInit(state.name, "wait-for-workers", header, True, window),
        Wait(),
    ]
    assert look(f, 2, [job("Running")], [pod]) == [Wait()]
    assert look(f, 3, [job("Terminated")], [pod]) == [Stop(f"Job {NAME} is Terminated", state, phase="Terminated")]


def test_a_failed_init_runs_window_comes_from_its_state_while_it_waits_and_from_its_last_state_once_restarted() -> None:
    run = {"startedAt": "2026-12-06T12:00:05Z", "finishedAt": "2026-12-06T12:00:25Z"}
    pod = copy.deepcopy(master("tight"))
    waiting = {"name": "wait-for-workers", "restartCount": 0, "state": {"terminated": {"reason": "Error", **run}}}
    pod["status"]["initContainerStatuses"] = [waiting]
    assert pod_state(pod, "mpimaster").init_failures == (("wait-for-workers", 1796558405, 1796558425),)
    backoff = {"waiting": {"reason": "CrashLoopBackOff"}}
    pod["status"]["initContainerStatuses"] = [{**waiting, "state": backoff, "lastState": {"terminated": run}}]
    assert pod_state(pod, "mpimaster").init_failures == (("wait-for-workers", 1796558405, 1796558425),)
    pod["status"]["initContainerStatuses"] = [{"name": "wait-for-workers", "restartCount": 0, "state": {}}]
    assert pod_state(pod, "mpimaster").init_failures == (), "a run not ended yet has no window"


def test_the_failed_runs_log_is_the_one_within_its_window_whichever_the_kubelet_calls_current() -> None:
    window = (1796558405, 1796558425)
    failed = ["2026-12-06T12:00:05.5Z Waiting for 2 Ready pods", "2026-12-06T12:00:25.1Z Only 0 of 2 workers Ready"]
    shown = ["Waiting for 2 Ready pods", "Only 0 of 2 workers Ready"]
    new_run = ["2026-12-06T12:00:26.2Z Waiting for 2 Ready pods"]
    older = ["2026-12-06T11:59:40Z Waiting for 2 Ready pods", "2026-12-06T12:00:01Z Only 0 of 2 workers Ready"]
    # The kubelet restarted it before the status said so: the current log is the new run's, empty or not yet.
    assert failure_lines(window, [], failed) == shown
    assert failure_lines(window, new_run, failed) == shown
    # Not restarted yet: the current log is the failure's; the previous one is the run before it.
    assert failure_lines(window, failed, older) == shown
    assert failure_lines(window, older, failed) == shown
    # No previous run yet (the kubelet answers 400), or a run that printed nothing: nothing of another run.
    assert failure_lines(window, None, failed) == shown
    assert failure_lines(window, [], older) == []
    assert failure_lines(window, ["no timestamp"], None) == []
    # Without a window (the status named no times), the first log that could be read.
    assert failure_lines(None, None, ["x", "2026-12-06T12:00:05Z y"]) == ["x", "y"]


def test_an_init_container_killed_as_its_pod_is_deleted_did_not_fail() -> None:
    pod = copy.deepcopy(master("tight"))
    failed = {"terminated": {"exitCode": 137, "reason": "Error"}}
    pod["status"]["initContainerStatuses"] = [{"name": "wait-for-workers", "restartCount": 3, "state": failed}]
    assert pod_state(pod, "mpimaster").init_restarts == (("wait-for-workers", 4),)
    pod["metadata"]["deletionTimestamp"] = "2026-12-01T18:00:00Z"
    assert pod_state(pod, "mpimaster").init_restarts == (("wait-for-workers", 3),)


def test_no_job_within_the_grace_period_or_a_job_gone_or_the_workflow_finished_stops_it() -> None:
    f = follower()
    assert look(f, 119) == [Wait()]
    assert look(f, 121) == [Stop(f"Neither the job's step nor a job labelled {f.selector} appeared within 120 s")]
    seen = follower()
    look(seen, 1, [job("Running")])
    assert look(seen, 2) == [Stop(f"Job {NAME} is gone")]
    # a job created and deleted between two looks: the watch saw it go, so the follower stops all the same
    assert look(follower(), 2, deleted_jobs=[job("Running", "mpi-y")]) == [Stop("Job mpi-y is gone")]
    assert look(follower(), 2, pods=[step_pod("s")]) == [Wait()]
    # a step pod that came and went between two looks has ended
    step_gone = follower()
    assert look(step_gone, 1, deleted_pods=[step_pod("s")]) == [Wait()]
    assert look(step_gone, 1 + STEP_GRACE, deleted_pods=[step_pod("s")]) == [
        Stop("The job's step has ended without creating a job")
    ]
    assert look(follower(), 1, workflow="Failed") == [Stop("Workflow is Failed")]


def test_the_step_that_ended_without_its_job_finishing_ends_the_following_after_its_grace() -> None:
    f = follower()
    look(f, 1, [job("Pending")], [step_pod("s")])
    assert look(f, 2, [job("Pending")], [step_pod("s", phase="Failed")]) == [Wait()]
    assert look(f, 2 + STEP_GRACE, [job("Pending")], [step_pod("s", phase="Failed")]) == [
        Stop(f"The job's step has ended; job {NAME} is Pending")
    ]


def test_node_names_say_which_steps_are_siblings() -> None:
    assert sibling("wf.main.run.logs", "wf.main.run.job")
    assert sibling("wf.main.run.logs", "wf.main.run.job(1)")
    assert not sibling("wf.main.run.logs", "wf.main.run.logs")
    assert not sibling("wf.main.run.logs", "wf.main.other.job")
    assert not sibling("wf.main.run.logs", "wf.main.run.inner.job")
    loop = "wf.main.trial(1:lr=0.1).logs"
    assert sibling(loop, "wf.main.trial(1:lr=0.1).job") and sibling(loop, "wf.main.trial(1:lr=0.1).job(2)")
    assert not sibling(loop, "wf.main.trial(0:lr=0.01).job")
    assert sibling("wf.main.t(0:a.b).logs", "wf.main.t(0:a.b).job"), "a loop's item may hold dots"
    assert sibling("wf.main.run.logs(0)", "wf.main.run.job(1)"), "a retried follower is no loop iteration"
    assert sibling("", "anything")
    assert (attempt("wf.main.run.job(3)"), attempt("wf.main.run.job"), attempt("wf.t(1:x)")) == (3, None, None)


def test_a_loop_item_holding_a_bar_dots_or_parentheses_still_names_its_own_iteration() -> None:
    """The bash follower read '|'-separated fields, and an item holding '|' shifted the node name out of its field;
    dots and parentheses are what node names are split on."""
    for item, other in (("c|d.e", "c|d.f"), ("g(y).z", "g(y).w"), ("a)b", "a(b")):
        own = f"wf.main.trial(1:{item}).logs"
        assert sibling(own, f"wf.main.trial(1:{item}).job") and sibling(own, f"wf.main.trial(1:{item}).job(1)")
        assert not sibling(own, f"wf.main.trial(0:{other}).job") and not sibling(own, f"wf.main.trial(2:{item}).job")
        looped = f"wf[0].logs(1:{item})"  # a follower looped in steps: its item is in its own name
        assert sibling(looped, f"wf[0].job(1:{item})") and not sibling(looped, f"wf[0].job(0:{other})")
    steps = [step_pod(f"step-{i}", f"wf.main.trial({i}:{item}).job") for i, item in enumerate(("c|d.e", "g(y).z"))]
    jobs = [job("Running", f"j-{i}", step=f"step-{i}", created=f"2026-01-01T00:00:0{i}Z") for i in range(2)]
    f = follower(node="wf.main.trial(0:c|d.e).logs")
    look(f, 1, jobs, [*steps, *(of_job(master(), f"j-{i}") for i in range(2))])
    assert f.job == "j-0", "its own iteration's job, not the newest"


def test_in_a_loop_each_follower_follows_the_job_its_own_iteration_created() -> None:
    node = "wf.main.trial(1:lr=0.1).logs"
    steps = [step_pod(f"step-{i}", f"wf.main.trial({i}:lr={lr}).job") for i, lr in enumerate(("0.01", "0.1", "1"))]
    jobs = [job("Running", f"j-{i}", step=f"step-{i}", created=f"2026-01-01T00:00:0{i}Z") for i in range(3)]
    pods = [of_job(master(), f"j-{i}") for i in range(3)]
    f = follower(node=node)
    assert look(f, 1, jobs, [*steps, *pods]) == [
        Stream("j-1-mpimaster-0", "mpimaster", "=== logs of j-1-mpimaster-0 (Running)")
    ]
    assert f.job == "j-1"
    unknown = follower()
    look(unknown, 1, jobs, [*steps, *pods])
    assert unknown.job == "j-2", "without its node name: the newest job"


def test_after_an_argo_retry_the_next_attempts_job_is_followed_with_its_own_clock_and_no_old_values() -> None:
    node = "wf.main.run.logs"
    f = follower(node=node, step_retries=1, retry_grace=60, start_limit=100)
    a = job("Running", "j-a", step="step-a", created="2026-01-01T00:00:01Z")
    first = [step_pod("step-a", "wf.main.run.job(0)")]
    look(f, 1, [a], first)
    failed = job("Failed", "j-a", step="step-a", created="2026-01-01T00:00:01Z")
    ended = [step_pod("step-a", "wf.main.run.job(0)", "Failed")]
    assert look(f, 2, [failed], ended) == [Wait()], "Argo retries the step: wait for the next attempt"
    assert look(f, 61, [failed], ended) == [Wait()]
    b = job("Running", "j-b", step="step-b", created="2026-01-01T00:00:05Z")
    second = [*ended, step_pod("step-b", "wf.main.run.job(1)")]
    assert look(f, 50, [failed, b], second)[0] == Forget("j-b")
    assert (f.job, f.start_at) == ("j-b", 50)
    done = job("Failed", "j-b", step="step-b", created="2026-01-01T00:00:05Z")
    assert look(f, 51, [failed, done], second) == [Stop("Job j-b is Failed", phase="Failed")], "the last attempt"


def test_a_next_attempt_whose_pod_runs_is_waited_for_however_long_it_takes_to_create_its_job() -> None:
    """On a busy node the next attempt's pod may run for minutes before its job exists (e2e 33.2 under load): the
    retry grace counts from the last attempt's end, not from the first's."""
    f = follower(node="wf.main.run.logs", step_retries=2, retry_grace=60)
    failed = job("Failed", "j-a", step="step-a", created="2026-01-01T00:00:01Z")
    ended = step_pod("step-a", "wf.main.run.job(0)", "Failed")
    look(f, 1, [failed], [ended])
    second = [ended, step_pod("step-b", "wf.main.run.job(1)")]
    assert look(f, 30, [failed], second) == [Wait()]
    assert look(f, 300, [failed], second) == [Wait()], "the second attempt's pod runs: its job is yet to come"
    b = job("Running", "j-b", step="step-b", created="2026-01-01T00:05:01Z")
    assert look(f, 301, [failed, b], second)[0] == Forget("j-b")
    gone = [ended, step_pod("step-b", "wf.main.run.job(1)", "Failed")]
    look(f, 302, [failed], gone)
    assert look(f, 362, [failed], gone) == [Stop("Job j-a is Failed", phase="Failed")], "then the grace counts"


def test_a_failed_attempt_whose_retry_never_comes_ends_the_following_after_the_retry_grace() -> None:
    f = follower(node="wf.main.run.logs", step_retries=2, retry_grace=60)
    failed = job("Failed", "j-a", step="step-a")
    ended = [step_pod("step-a", "wf.main.run.job(0)", "Failed")]
    look(f, 1, [failed], ended)
    assert look(f, 61, [failed], ended) == [Stop("Job j-a is Failed", phase="Failed")]


def test_another_workflows_or_another_steps_job_is_not_ours() -> None:
    f = follower(node="wf.main.run.logs")
    other = job("Running", "j-x", step="not-our-step")
    assert look(f, 1, [other], [step_pod("step-a", "wf.main.run.job")]) == [Wait()]
    assert f.job is None


def test_a_job_that_does_not_start_within_the_start_limit_is_given_up() -> None:
    f = follower(start_limit=10)
    assert look(f, 0, [job("Pending", uid="u1")]) == [Wait()]
    assert look(f, 10, [job("Pending", uid="u1")]) == [GiveUp(NAME, "u1", 10)]
    assert GiveUp(NAME, "u1", 10).message("Inqueue; Unschedulable x: y") == (
        f"Job {NAME} did not start within 10 s (start limit); its PodGroup: Inqueue; Unschedulable x: y"
    )
    none = follower(start_limit=10)
    look(none, 0, pods=[step_pod("s")])
    assert look(none, 10, pods=[step_pod("s")]) == [GiveUp(None, "", 10)]
    assert GiveUp(None, "", 10).message(None) == "No job was created within 10 s (start limit)"
    ran = follower(start_limit=10)
    look(ran, 0, [job("Running")])
    assert look(ran, 20, [job("Pending")]) == [Wait()], "a job that ran is followed to its end"


def test_a_job_given_up_that_had_started_after_all_is_followed_to_its_end() -> None:
    """The loop reads the job's phase once more before deleting it: a lagging watch can still say Pending."""
    f = follower(start_limit=10)
    look(f, 0, [job("Pending", uid="u1")])
    assert look(f, 10, [job("Pending", uid="u1")]) == [GiveUp(NAME, "u1", 10)]
    f.started(NAME)
    assert look(f, 11, [job("Pending", uid="u1")]) == [Wait()], "not given up again"
    assert look(f, 12, [job("Completed", uid="u1")]) == [Stop(f"Job {NAME} is Completed", phase="Completed")]
    retried = follower(node="wf.main.run.logs", step_retries=1, start_limit=10)
    a, steps = job("Pending", "j-a", step="step-a", uid="ua"), [step_pod("step-a", "wf.main.run.job(0)")]
    look(retried, 0, [a], steps)
    assert look(retried, 10, [a], steps) == [GiveUp("j-a", "ua", 10, retried=True)]
    retried.started("j-a")
    assert look(retried, 11, [job("Running", "j-a", step="step-a", uid="ua")], steps) == [Wait()]
    assert retried.job == "j-a", "still followed: it was not given up"


def test_a_start_limit_with_retries_left_gives_up_one_attempt_and_starts_the_clock_again() -> None:
    f = follower(node="wf.main.run.logs", step_retries=1, start_limit=10)
    a = job("Pending", "j-a", step="step-a", uid="ua")
    steps = [step_pod("step-a", "wf.main.run.job(0)")]
    look(f, 0, [a], steps)
    assert look(f, 10, [a], steps) == [GiveUp("j-a", "ua", 10, retried=True)]
    assert look(f, 11, [a], steps) == [Wait()], "not followed again"
    assert look(f, 11, [], steps) == [Wait()], "its deletion is no job gone"
    ended = [step_pod("step-a", "wf.main.run.job(0)", "Failed")]
    look(f, 12, [], ended)
    assert look(f, 12 + 60, [], ended) == [
        Stop("No attempt of the job's step started within its start limit", failed=True)
    ]


def test_the_podgroups_word() -> None:
    group = {"status": {"phase": "Inqueue", "conditions": [{"type": "Unschedulable", "reason": "R", "message": "m"}]}}
    assert podgroup_said(group) == "Inqueue; Unschedulable R: m"
    assert podgroup_said({}) == ""


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
    assert cursor.since() is None
    first = ["2026-12-01T18:00:25.1Z a", "2026-12-01T18:00:26.5Z b", "2026-12-01T18:00:26.5Z c"]
    assert [cursor.accept(line) for line in first] == ["a", "b", "c"]
    assert cursor.since() == "2026-12-01T18:00:26Z", "whole seconds, at or before the last line"
    cursor.reattach()
    replay = [*first, "2026-12-01T18:00:26.5Z d", "2026-12-01T18:00:27Z e"]
    assert [t for t in map(cursor.accept, replay) if t is not None] == ["d", "e"]


def test_the_lead_task_is_the_one_the_job_names_else_the_mpi_master() -> None:
    obj = copy.deepcopy(JOB)
    obj["metadata"]["annotations"] = {}
    assert lead_task(obj) == lead_task(None) == "mpimaster", "a job made before the annotation, or none yet"
    obj["metadata"]["annotations"] = {LEAD_TASK_ANNOTATION: "chief"}
    assert lead_task(obj) == "chief"
    obj["metadata"]["annotations"] = {LEAD_TASK_ANNOTATION: "Not a task name"}
    assert lead_task(obj) == "mpimaster"


def test_two_sibling_steps_creating_jobs_of_its_label_fail_the_follower_at_once_naming_them() -> None:
    """The hand-wired pair called twice in one DAG: both steps are siblings of both followers, which would follow
    one job each by a guess (and report the other's value): refused, never guessed."""
    steps = [step_pod("pod-a", "wf.main.train-a"), step_pod("pod-b", "wf.main.train-b")]
    jobs = [job("Running", f"j-{x}", step=f"pod-{x}", created=f"2026-01-01T00:00:0{i}Z") for i, x in enumerate("ab")]
    f = follower(node="wf.main.logs-a")
    (stop,) = look(f, 1, jobs, [*steps, *(of_job(master(), f"j-{x}") for x in "ab")])
    assert isinstance(stop, Stop) and stop.failed
    assert "train-a, train-b" in stop.message and "job_dag" in stop.message
    assert f.job is None, "it followed nothing"


def test_attempts_of_one_step_or_other_iterations_are_no_crossing() -> None:
    retried = follower(node="wf.main.run.logs", step_retries=1)
    pods = [step_pod("a", "wf.main.run.job(0)", "Failed"), step_pod("b", "wf.main.run.job(1)")]
    assert retried.next(Seen([], pods, 1)) == [Wait()]
    looped = follower(node="wf.main.trial(0:0.1).logs")
    pods = [step_pod("a", "wf.main.trial(0:0.1).job"), step_pod("b", "wf.main.trial(1:0.01).job")]
    assert looped.next(Seen([], pods, 1)) == [Wait()]
    unknown = follower()  # the client's logs(): no node of its own, every step counts and none is refused
    assert unknown.next(Seen([], [step_pod("a", "wf.x"), step_pod("b", "wf.y")], 1)) == [Wait()]


def test_a_quiet_follower_streams_nothing_and_still_gives_up_a_job_that_does_not_start() -> None:
    """A job nobody follows (a PipelineJob without follow_logs) gets a quiet follower: its start limit holds."""
    quiet = follower(start_limit=10, quiet=True)
    running = [job("Running")]
    assert look(quiet, 0, running, [master()]) == [Wait()], "its pod is running: nothing streamed"
    assert look(quiet, 1, [job("Completed")], [terminated(master())]) == [
        Stop(f"Job {NAME} is Completed", phase="Completed")
    ]
    waiting = follower(start_limit=10, quiet=True)
    look(waiting, 0, [job("Pending", uid="u1")])
    assert look(waiting, 10, [job("Pending", uid="u1")]) == [GiveUp(NAME, "u1", 10)]


def replica(index: int, created: str, labelled: bool = True) -> dict[str, Any]:
    pod = copy.deepcopy(master())
    pod["metadata"]["name"] = f"{NAME}-mpimaster-{index}"
    pod["metadata"]["creationTimestamp"] = created
    if labelled:
        pod["metadata"]["labels"]["volcano.sh/task-index"] = str(index)
    else:
        pod["metadata"]["labels"].pop("volcano.sh/task-index", None)
    return pod


def test_a_task_of_several_replicas_is_followed_on_its_replica_0_whose_report_counts() -> None:
    """A batch job of 2 replicas: replica 1 created after replica 0 (or in the same second, its name sorting
    after) is not the one followed; replica 0 reports (the e2e failure of issue 44's local run scenario)."""
    for labelled in (True, False):
        pods = [replica(0, "2026-12-07T15:39:00Z", labelled), replica(1, "2026-12-07T15:39:01Z", labelled)]
        [step] = look(follower(), 1, [job("Running")], pods)
        assert isinstance(step, Stream) and step.pod == f"{NAME}-mpimaster-0", labelled
