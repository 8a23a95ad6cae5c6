"""The labels that tie a Volcano Job, its pods and the step that created it to their workflow, so that a log follower
and the exit handler find them although the job's name is generated."""

from __future__ import annotations

from hera_volcano.pods.labels import JOB_LABEL as JOB_LABEL

# What the code in pods reads is named on the ground floor, where that code can import it.
from hera_volcano.pods.labels import LEAD_TASK_ANNOTATION as LEAD_TASK_ANNOTATION
from hera_volcano.pods.labels import NODE_NAME_ANNOTATION as NODE_NAME_ANNOTATION
from hera_volcano.pods.labels import POD_WORKFLOW_LABEL as POD_WORKFLOW_LABEL
from hera_volcano.pods.labels import STEP_POD_ANNOTATION as STEP_POD_ANNOTATION
from hera_volcano.pods.labels import TASK_LABEL as TASK_LABEL
from hera_volcano.pods.labels import WORKFLOW_LABEL as WORKFLOW_LABEL
from hera_volcano.pods.labels import JobIdentity as JobIdentity

#: The Volcano Jobs of the running workflow, in a template.
THIS_WORKFLOW = JobIdentity("{{workflow.name}}")
