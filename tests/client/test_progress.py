"""The progress lines wait() writes: redrawn in place on a terminal, only changes elsewhere."""

from __future__ import annotations

from dataclasses import replace

from hera_volcano.client.progress import ProgressView, job_line, workflow_line
from hera_volcano.client.result import JobStatus, Result, result_of
from tests.client.recorded import items, load


def running() -> Result:
    return result_of(load("running/workflow.json"), items("running", "jobs"))


def test_one_line_for_the_workflow_and_one_per_job() -> None:
    result = running()
    assert workflow_line(result) == f"{result.name}: Running (follow-logs, submit-job)"
    [job] = result.jobs
    assert job_line(job) == f"  job {job.name} (mpi): Running, pods 3 running, 0 pending"
    gone = JobStatus("j", "Terminated", succeeded=1, failed=2, deleted=True)
    assert job_line(gone) == "  job j: Terminated, pods 0 running, 0 pending, 1 succeeded, 2 failed (deleted)"
    done = result_of(load("succeeded/workflow.json"), items("succeeded", "jobs"))
    assert workflow_line(replace(done, message="child failed")) == f"{done.name}: Succeeded: child failed"


def test_elsewhere_only_lines_that_changed_are_written() -> None:
    view = ProgressView(tty=False)
    first = running()
    assert view.update(first).splitlines() == [workflow_line(first), job_line(first.jobs[0])]
    assert view.update(first) == ""
    job = replace(first.jobs[0], phase="Completing", running=2)
    assert view.update(replace(first, jobs=(job,))) == job_line(job) + "\n"


def test_on_a_terminal_the_lines_are_redrawn_in_place_and_cut_to_the_width() -> None:
    view = ProgressView(tty=True, width=40)
    first = running()
    drawn = view.update(first)
    assert drawn.count("\n") == 2 and "\x1b[" not in drawn.split("\r\x1b[2K")[0]
    assert all(len(line) <= 39 for line in drawn.replace("\r\x1b[2K", "").splitlines())
    assert view.update(first) == ""
    job = replace(first.jobs[0], phase="Completing")
    again = view.update(replace(first, jobs=(job,)))
    assert again.startswith("\x1b[2A") and again.count("\r\x1b[2K") == 2


def annotated(text: str) -> JobStatus:
    """The running job as its follower left it: ``text`` in its progress annotation."""
    [job] = items("running", "jobs")
    job["metadata"].setdefault("annotations", {})["hera-volcano/progress"] = text
    [status] = result_of(load("running/workflow.json"), [job]).jobs
    return status


def test_each_job_shows_the_progress_and_latest_metrics_its_rank_0_reported() -> None:
    job = annotated('{"progress":"12/100","metrics":{"loss":0.25,"epoch":3}}')
    assert (job.progress, dict(job.metrics)) == ("12/100", {"loss": 0.25, "epoch": 3})
    assert (
        job_line(job)
        == f"  job {job.name} (mpi): Running, pods 3 running, 0 pending; progress 12/100, loss 0.25, epoch 3"
    )
    only = annotated('{"metrics":{"acc":0.9}}')
    assert job_line(only).endswith("0 pending; acc 0.9"), "metrics before any progress"


def test_a_forged_progress_annotation_shows_nothing() -> None:
    for text in ('{"progress":"{{workflow.name}}"}', '{"progress":"3/10","metrics":{"a b":1}}', "garbage"):
        job = annotated(text)
        assert (job.progress, dict(job.metrics)) == (None, {})
        assert job_line(job).endswith("0 pending"), text


def test_waiting_shows_a_jobs_progress_as_it_changes() -> None:
    view = ProgressView(tty=False)
    first = running()
    view.update(first)
    later = replace(first.jobs[0], progress="3/10", metrics={"loss": 0.5})
    assert view.update(replace(first, jobs=(later,))).endswith("; progress 3/10, loss 0.5\n")
