"""The labels and annotations that tie a Volcano Job, its pods and the step that created it to their workflow (the
job's name may be generated), and those the code in pods reads: Volcano's on a job's pods, Argo's on a step's pod,
ours on a job. :class:`JobIdentity` is the one place a job's labels and the selectors that find it are made, and a
selector read back."""

from __future__ import annotations

from dataclasses import dataclass

#: Volcano's, on a job's pods: the task they belong to, and the job.
TASK_LABEL = "volcano.sh/task-spec"
JOB_NAME_LABEL = "volcano.sh/job-name"
#: Volcano's label of a job's pod: its index in its task (0 for the first replica).
TASK_INDEX_LABEL = "volcano.sh/task-index"
#: On the Volcano Job: the task whose pod leads it (the MPI master, the PyTorch master, the TensorFlow chief), whose
#: output the log followers stream and whose rank 0 reports the job's outputs.
LEAD_TASK_ANNOTATION = "hera-volcano/lead-task"
#: On a job: the pod of the step (the attempt) that created it (Argo's ``pod.name``), so its follower finds exactly
#: that job.
STEP_POD_ANNOTATION = "hera-volcano/step-pod"
#: Argo's annotation on a step's pod: its node's name (``WF.DAG.TASK``, with a loop's item or a retry's attempt).
NODE_NAME_ANNOTATION = "workflows.argoproj.io/node-name"
#: Argo's label, on the Volcano Job (the exit handler and the client find a workflow's jobs by it), never on the
#: job's pods: `argo logs WF` asks every pod carrying it for a container named `main`, which they do not have.
WORKFLOW_LABEL = "workflows.argoproj.io/workflow"
#: Our own workflow label, on the job's pods and on the pod of the step that creates the job.
POD_WORKFLOW_LABEL = "hera-volcano/workflow"
#: On the job, its pods and its step's pod, so a follower finds them without knowing the job's generated name.
JOB_LABEL = "hera-volcano/job"


@dataclass(frozen=True)
class JobIdentity:
    """A job by its workflow (its name, or ``{{workflow.name}}`` in a template) and its ``hera-volcano/job`` label
    (None: every job of the workflow)."""

    workflow: str
    job: str | None = None

    def job_labels(self) -> dict[str, str]:
        """The labels of the Volcano Job."""
        return {WORKFLOW_LABEL: self.workflow, **({JOB_LABEL: self.job} if self.job is not None else {})}

    def pod_labels(self) -> dict[str, str]:
        """The labels of the job's pods and of the pod of the step that creates it."""
        return {POD_WORKFLOW_LABEL: self.workflow, **({JOB_LABEL: self.job} if self.job is not None else {})}

    def jobs_selector(self) -> str:
        """The label selector of the Volcano Jobs."""
        return _selector(self.job_labels())

    def pods_selector(self) -> str:
        """The label selector of the jobs' pods and of their steps' pods."""
        return _selector(self.pod_labels())

    @classmethod
    def from_selector(cls, selector: object) -> JobIdentity | None:
        """The job a selector of :meth:`jobs_selector` or :meth:`pods_selector` selects (its workflow ``""`` when
        it names none); None when it names no job label."""
        if not isinstance(selector, str):
            return None
        found: dict[str, str] = {}
        for requirement in selector.split(","):
            key, equals, value = requirement.partition("=")
            if equals:
                found[key.strip()] = value.removeprefix("=").strip()
        if JOB_LABEL not in found:
            return None
        return cls(found.get(WORKFLOW_LABEL) or found.get(POD_WORKFLOW_LABEL) or "", found[JOB_LABEL])


def _selector(labels: dict[str, str]) -> str:
    return ",".join(f"{key}={value}" for key, value in labels.items())
