"""Where the bundled workflows and Pipeline.workflow run, and as whom, unless told otherwise.

The account is a dedicated one that the bundled RBAC (``hera-volcano rbac``, ``rbac/rbac.yaml``) creates with exactly
the rights the workflows need. It is not ``argo``: in Argo's stock install that is the workflow controller's own
account, whose rights span every workflow, pod and more, so running the workflows as it would quietly undo least
privilege. The name is a DNS subdomain, as service account names must be, says what runs as it, and is none of
Argo's (``argo``, ``argo-server``) or Volcano's (``volcano-scheduler``, ``volcano-controllers``, ...) accounts.
"""

from typing import Final

NAMESPACE: Final = "argo"
SERVICE_ACCOUNT: Final = "volcano-workflows"
#: The account Argo's own containers run as in a step whose code gets no API token: the workflow's (Argo
#: substitutes it when it makes the pod), so the step reports its outputs with the rights the workflow already has.
EXECUTOR_ACCOUNT: Final = "{{workflow.serviceAccountName}}"
