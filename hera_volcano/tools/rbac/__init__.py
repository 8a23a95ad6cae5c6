"""Least-privilege RBAC derived from what a workflow's pods actually do.

Each service account that runs pods gets one Role and one RoleBinding with exactly the rules those pods need: the
executor's task results (:mod:`.templates`); each resource step's verbs on its manifest's resource plus ``get`` for
polling (:mod:`.manifests`); the calls a pod declares, never words of its scripts: our pods' program by its part,
users' pods by ``hera-volcano/calls`` or a container whose exec form is ``kubectl`` (:mod:`.pods`,
:mod:`.kubectl`). A write no admission policy checks is refused unless allowed by name (:mod:`.coverage`). Every
rule is annotated with the templates that need it (:mod:`.roles`); an account that may create Volcano Jobs gets an
admission policy (:mod:`hera_volcano.tools.job_policy`); submitters get what the client calls (:mod:`.submitters`).
"""

from hera_volcano.tools.rbac.derive import rbac_for
from hera_volcano.tools.rbac.kubectl import qualified_resource
from hera_volcano.tools.rbac.manifests import plural
from hera_volcano.tools.rbac.pods import CALLS_ANNOTATION
from hera_volcano.tools.rbac.submitters import EXPLAIN_ROLE, Subject, submitter

__all__ = ["CALLS_ANNOTATION", "EXPLAIN_ROLE", "Subject", "plural", "qualified_resource", "rbac_for", "submitter"]
