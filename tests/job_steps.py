"""A job step to build a follower from (followers are built from the step of the job they follow)."""

from __future__ import annotations

from hera_volcano import VolcanoJob, VolcanoTask, job_template
from hera_volcano.argo.calls import JobStep
from hera_volcano.shared.placeholders import Placeholder


def job_step(name: str, job_label: str | Placeholder | None = None, **job: object) -> JobStep:
    """The step of a small job named ``name`` (labelled ``job_label``, default ``name``), with the job's settings
    (``start_limit``, ``retry``...) from ``job``."""
    task = VolcanoTask(name="main", template={"spec": {"containers": [{"name": "main", "image": "busybox:1"}]}})
    volcano = VolcanoJob(generate_name="j-", tasks=[task], **job)  # type: ignore[arg-type]
    return job_template(volcano, name=name, job_label=job_label)
