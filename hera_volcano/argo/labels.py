"""The labels that tie a Volcano Job and its pods to their workflow and step, so that a log follower and the exit
handler find them although the job's name is generated."""

from __future__ import annotations

WORKFLOW_LABEL = "workflows.argoproj.io/workflow"
#: Our label on every pod of a job, so a follower finds the job's pods without knowing its generated name.
JOB_LABEL = "hera-volcano/job"
TASK_LABEL = "volcano.sh/task-spec"
#: On the Volcano Job: the task whose pod leads it (the MPI master, the PyTorch master, the TensorFlow chief), whose
#: output the log followers stream and whose rank 0 reports the job's outputs.
LEAD_TASK_ANNOTATION = "hera-volcano/lead-task"
