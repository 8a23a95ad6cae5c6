"""The labels that tie a Volcano Job, its pods and the step that created it to their workflow, so that a log follower
and the exit handler find them although the job's name is generated."""

from __future__ import annotations

# What the code in pods reads is named on the ground floor, where that code can import it.
from hera_volcano.pods.labels import LEAD_TASK_ANNOTATION as LEAD_TASK_ANNOTATION
from hera_volcano.pods.labels import NODE_NAME_ANNOTATION as NODE_NAME_ANNOTATION
from hera_volcano.pods.labels import STEP_POD_ANNOTATION as STEP_POD_ANNOTATION
from hera_volcano.pods.labels import TASK_LABEL as TASK_LABEL

#: Argo's label, on the Volcano Job (the exit handler and the client find a workflow's jobs by it), never on the
#: job's pods: `argo logs WF` asks every pod carrying it for a container named `main`, which they do not have.
WORKFLOW_LABEL = "workflows.argoproj.io/workflow"
#: Our own workflow label, on the job's pods and on the pod of the step that creates the job.
POD_WORKFLOW_LABEL = "hera-volcano/workflow"
#: On the job, its pods and its step's pod, so a follower finds them without knowing the job's generated name.
JOB_LABEL = "hera-volcano/job"
