"""The API resources the client reads and writes, and the RBAC rules that lets it: one table for both, so the Role
``hera-volcano rbac --submitter`` prints grants exactly what the client calls."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from hera_volcano.pods.kubeapi import Kind


@dataclass(frozen=True)
class Resource(Kind):
    """Where a kind lives in the API: ``group`` (``""`` for core), ``version``, ``plural``; cluster-scoped or not."""

    namespaced: bool = True


WORKFLOWS: Final = Resource("argoproj.io", "v1alpha1", "workflows")
WORKFLOW_TEMPLATES: Final = Resource("argoproj.io", "v1alpha1", "workflowtemplates")
CRON_WORKFLOWS: Final = Resource("argoproj.io", "v1alpha1", "cronworkflows")
JOBS: Final = Resource("batch.volcano.sh", "v1alpha1", "jobs")
PODGROUPS: Final = Resource("scheduling.volcano.sh", "v1beta1", "podgroups")
QUEUES: Final = Resource("scheduling.volcano.sh", "v1beta1", "queues", namespaced=False)
PODS: Final = Resource("", "v1", "pods")
EVENTS: Final = Resource("", "v1", "events")
NODES: Final = Resource("", "v1", "nodes", namespaced=False)
CONFIG_MAPS: Final = Resource("", "v1", "configmaps")


@dataclass(frozen=True)
class Permission:
    """Verbs on one resource (``pods/log`` for a subresource) and which of the client's calls need them."""

    group: str
    resource: str
    verbs: tuple[str, ...]
    why: str


#: In the workflows' namespace, for every run (submit, status, wait, logs, explain, stop, delete).
SUBMITTER: Final = (
    Permission(
        "argoproj.io",
        "workflows",
        ("get", "list", "watch", "create", "patch", "delete"),
        "submit (create), status (get), wait (list, watch), stop (patch), delete",
    ),
    Permission("batch.volcano.sh", "jobs", ("get", "list", "watch"), "wait, logs and explain read the Volcano Jobs"),
    Permission("scheduling.volcano.sh", "podgroups", ("get", "list"), "explain reads the gangs' PodGroups"),
    Permission("", "pods", ("get", "list", "watch"), "logs finds the master's pod, explain the pending ones"),
    Permission("", "pods/log", ("get",), "logs streams the master's output"),
    Permission("", "events", ("list",), "explain reads the scheduler's events"),
    Permission("", "configmaps", ("get",), "submit checks the log follower's program is installed"),
)
#: With the WorkflowTemplates (submit_from reads the template it refers to).
TEMPLATES: Final = (Permission("argoproj.io", "workflowtemplates", ("get", "list"), "submit_from reads the template"),)
#: With the CronWorkflows (submit creates one; submit_from_cron reads the one it runs once).
CRONS: Final = (
    Permission("argoproj.io", "cronworkflows", ("get", "create"), "create_cron creates it, submit_from_cron reads it"),
)
#: Cluster-scoped and read-only, for explain's comparison of what a gang asks with what the cluster has.
CLUSTER_READS: Final = (
    Permission("", "nodes", ("get", "list"), "explain compares a gang's requests with the nodes' allocatable"),
    Permission("scheduling.volcano.sh", "queues", ("get", "list"), "explain reads the queue's capability and use"),
)
