"""The shape the hello worlds share: in DAG ``main``, ``submit-job`` creates the Volcano Job and waits for it while
``follow-logs`` streams its master's output beside it; the exit handler deletes the job of a run that did not
succeed."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hera.workflows import Workflow

    from hera_volcano.volcano.job import VolcanoJob


def submit_and_follow(
    w: Workflow, job: VolcanoJob, *, job_label: str, master: str, follower_image: str, poll_seconds: int | None = None
) -> None:
    """Add the shape to ``w``; call it inside ``with w:``, where Hera collects the templates."""
    from hera.workflows import DAG

    from hera_volcano.argo.cleanup import cleanup_on_failure
    from hera_volcano.argo.follow_logs import follow_logs_template, follower_continue_on
    from hera_volcano.argo.job_template import job_template

    # Nothing here reads the step's job-name and job-phase: without them its pod makes about 6 requests fewer.
    submit = job_template(
        job, name="submit-volcano-job", job_label=job_label, poll_seconds=poll_seconds, job_outputs=False
    )
    follow = follow_logs_template(submit, name="follow-master-logs", task=master, follower_image=follower_image)
    with DAG(name="main"):
        submit(name="submit-job")
        follow(name="follow-logs", continue_on=follower_continue_on())
    w.on_exit = cleanup_on_failure()
