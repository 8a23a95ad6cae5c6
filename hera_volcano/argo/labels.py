"""The labels that tie a Volcano Job, its pods and the step that created it to their workflow, so that a log follower
and the exit handler find them although the job's name is generated."""

from __future__ import annotations

#: Argo's label, on the Volcano Job (the exit handler and the client find a workflow's jobs by it), never on the
#: job's pods: `argo logs WF` asks every pod carrying it for a container named `main`, which they do not have.
WORKFLOW_LABEL = "workflows.argoproj.io/workflow"
#: Our own workflow label, on the job's pods and on the pod of the step that creates the job.
POD_WORKFLOW_LABEL = "hera-volcano/workflow"
#: On the job, its pods and its step's pod, so a follower finds them without knowing the job's generated name.
JOB_LABEL = "hera-volcano/job"
TASK_LABEL = "volcano.sh/task-spec"
#: On the Volcano Job: the task whose pod leads it (the MPI master, the PyTorch master, the TensorFlow chief), whose
#: output the log followers stream and whose rank 0 reports the job's outputs.
LEAD_TASK_ANNOTATION = "hera-volcano/lead-task"
