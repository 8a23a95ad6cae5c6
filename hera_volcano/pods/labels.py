"""The labels and annotations the code in pods reads: Volcano's on a job's pods, Argo's on a step's pod, ours on a
job (hera_volcano.argo.labels writes them)."""

from __future__ import annotations

#: Volcano's, on a job's pods: the task they belong to, and the job.
TASK_LABEL = "volcano.sh/task-spec"
JOB_NAME_LABEL = "volcano.sh/job-name"
#: On the Volcano Job: the task whose pod leads it (the MPI master, the PyTorch master, the TensorFlow chief), whose
#: output the log followers stream and whose rank 0 reports the job's outputs.
LEAD_TASK_ANNOTATION = "hera-volcano/lead-task"
#: On a job: the pod of the step (the attempt) that created it (Argo's ``pod.name``), so its follower finds exactly
#: that job.
STEP_POD_ANNOTATION = "hera-volcano/step-pod"
#: Argo's annotation on a step's pod: its node's name (``WF.DAG.TASK``, with a loop's item or a retry's attempt).
NODE_NAME_ANNOTATION = "workflows.argoproj.io/node-name"
