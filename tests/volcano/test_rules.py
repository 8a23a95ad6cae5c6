"""Volcano Job admission and CRD rules: start from a valid MPI job, break one rule at a time.

Every rule has at least one accepted variant (no findings at all) and one rejected variant whose finding names the
field path and the rule.
"""

from __future__ import annotations

import subprocess
import sys
from fractions import Fraction
from typing import Any

import pytest

from hera_volcano.kube.quantities import DURATION_MESSAGE, QUANTITY_MESSAGE, is_go_duration, parse_quantity
from hera_volcano.shared.errors import ValidationError
from hera_volcano.shared.findings import Finding
from hera_volcano.volcano.rules import check_job, mpi_roles, raise_first

DELETE = object()
T0 = "spec.tasks.0"
T1 = "spec.tasks.1"
C0 = "spec.tasks.0.template.spec.containers.0"
C1 = "spec.tasks.1.template.spec.containers.0"
P0 = "spec.tasks[0]"
P1 = "spec.tasks[1]"
PC0 = "spec.tasks[0].template.spec.containers[0]"
PC1 = "spec.tasks[1].template.spec.containers[0]"


def valid_job() -> dict[str, Any]:
    """An MPI job: one master, two workers, ssh/svc/mpi plugins, policies, a volume, GPUs."""
    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": "mpi-hello", "namespace": "argo", "labels": {"workflows.argoproj.io/workflow": "wf-1"}},
        "spec": {
            "minAvailable": 3,
            "schedulerName": "volcano",
            "queue": "default",
            "maxRetry": 3,
            "ttlSecondsAfterFinished": 600,
            "plugins": {"ssh": [], "svc": [], "mpi": ["--master=mpimaster", "--worker=mpiworker"]},
            "policies": [{"event": "PodEvicted", "action": "RestartJob"}],
            "volumes": [{"mountPath": "/data", "volumeClaimName": "shared-data"}],
            "tasks": [
                {
                    "name": "mpimaster",
                    "replicas": 1,
                    "policies": [{"event": "TaskCompleted", "action": "CompleteJob"}],
                    "template": {
                        "metadata": {"labels": {"workflows.argoproj.io/workflow": "wf-1"}},
                        "spec": {
                            "restartPolicy": "OnFailure",
                            "containers": [
                                {
                                    "name": "mpimaster",
                                    "image": "volcanosh/example-mpi:0.0.3",
                                    "command": ["/bin/sh", "-c", "mpiexec --host ${MPI_HOST} -np 2 mpi_hello_world"],
                                    "ports": [{"containerPort": 22, "name": "mpijob-port"}],
                                    "resources": {
                                        "requests": {"cpu": "500m", "memory": "512Mi"},
                                        "limits": {"cpu": 1, "memory": "1Gi"},
                                    },
                                }
                            ],
                        },
                    },
                },
                {
                    "name": "mpiworker",
                    "replicas": 2,
                    "template": {
                        "spec": {
                            "restartPolicy": "OnFailure",
                            "volumes": [{"name": "scratch", "emptyDir": {}}],
                            "containers": [
                                {
                                    "name": "mpiworker",
                                    "image": "volcanosh/example-mpi:0.0.3",
                                    "command": ["/bin/sh", "-c", "/usr/sbin/sshd -D"],
                                    "ports": [{"containerPort": 22, "name": "mpijob-port", "protocol": "TCP"}],
                                    "readinessProbe": {"tcpSocket": {"port": 22}, "periodSeconds": 10},
                                    "env": [{"name": "OMP_NUM_THREADS", "value": "1"}],
                                    "volumeMounts": [{"name": "scratch", "mountPath": "/scratch"}],
                                    "resources": {
                                        "requests": {"nvidia.com/gpu": 1, "rdma/ib": 0},
                                        "limits": {"nvidia.com/gpu": 1, "rdma/ib": 0},
                                    },
                                }
                            ],
                        }
                    },
                },
            ],
        },
    }


def changed(*edits: tuple[str, object]) -> dict[str, Any]:
    """The valid job with edits applied; a path is dotted with list indices (``spec.tasks.0.name``)."""
    job = valid_job()
    for path, value in edits:
        *parents, last = path.split(".")
        target: Any = job
        for part in parents:
            target = target[int(part)] if isinstance(target, list) else target[part]
        key: Any = int(last) if isinstance(target, list) else last
        if value is DELETE:
            del target[key]
        else:
            target[key] = value
    return job


def errors(job: dict[str, Any]) -> list[Finding]:
    return [f for f in check_job(job) if f.severity == "error"]


def test_valid_job_has_no_findings() -> None:
    assert check_job(valid_job()) == []


# Each accepted case must produce no findings at all.
ACCEPTED: list[tuple[str, list[tuple[str, object]]]] = [
    ("generate-name", [("metadata.name", DELETE), ("metadata.generateName", "mpi-hello-")]),
    ("name-51-chars", [("metadata.name", "j" * 51)]),
    ("generate-name-46-chars", [("metadata.name", DELETE), ("metadata.generateName", "j" * 46)]),
    ("digit-name-without-svc", [("metadata.name", "1job"), ("spec.plugins", {"ssh": []})]),
    ("dotted-name-without-svc", [("metadata.name", "a.b"), ("spec.plugins", {"env": []})]),
    ("no-plugins", [("spec.plugins", DELETE)]),
    ("mpi-default-roles", [(f"{T0}.name", "master"), (f"{T1}.name", "worker"), ("spec.plugins", {"mpi": []})]),
    ("mpi-space-args", [("spec.plugins.mpi", ["--master", "mpimaster", "-worker", "mpiworker", "--port=2222"])]),
    (
        "unnamed-task-is-default1",
        [(f"{T1}.name", DELETE), ("spec.plugins.mpi", ["--master=mpimaster", "--worker=default1"])],
    ),
    (
        "all-plugins-known",
        [("spec.plugins", {p: [] for p in ("ssh", "env", "svc", "tensorflow", "pytorch", "hcclrank", "ray")})],
    ),
    ("min-available-equals-total", [("spec.minAvailable", 3)]),
    ("min-available-zero", [("spec.minAvailable", 0)]),
    ("task-min-available-equals-replicas", [(f"{T1}.minAvailable", 2)]),
    ("min-success-1", [("spec.minSuccess", 1)]),
    ("zero-replicas", [(f"{T1}.replicas", 0), ("spec.minAvailable", 1)]),
    ("max-retry-zero", [("spec.maxRetry", 0), (f"{T0}.maxRetry", 0)]),
    ("ttl-zero", [("spec.ttlSecondsAfterFinished", 0)]),
    ("null-field", [("spec.queue", None)]),
    ("queue-subdomain", [("spec.queue", "team-a.gpu")]),
    ("priority-class", [("spec.priorityClassName", "high-priority")]),
    ("running-estimate", [("spec.runningEstimate", "1h30m")]),
    ("events-list", [("spec.policies", [{"events": ["PodFailed", "PodEvicted"], "action": "RestartJob"}])]),
    (
        "event-and-same-events",
        [("spec.policies", [{"event": "PodFailed", "events": ["PodFailed"], "action": "AbortJob"}])],
    ),
    (
        "star-alone",
        [("spec.policies", [{"event": "*", "action": "AbortJob"}, {"exitCode": 3, "action": "RestartJob"}])],
    ),
    (
        "pod-pending-with-timeout",
        [("spec.policies", [{"event": "PodPending", "action": "RestartPod", "timeout": "10m"}])],
    ),
    (
        "exit-codes",
        [("spec.policies", [{"exitCode": 137, "action": "RestartPod"}, {"exitCode": 1, "action": "AbortJob"}])],
    ),
    ("same-event-in-job-and-task", [(f"{T0}.policies", [{"event": "PodEvicted", "action": "RestartTask"}])]),
    (
        "all-actions",
        [
            (
                "spec.policies",
                [
                    {"event": e, "action": a}
                    for e, a in [
                        ("PodFailed", "RestartPartition"),
                        ("Unknown", "TerminateJob"),
                        ("TaskFailed", "ResumeJob"),
                        ("JobUpdated", "RestartPod"),
                    ]
                ],
            )
        ],
    ),
    (
        "volume-claim",
        [
            (
                "spec.volumes",
                [
                    {
                        "mountPath": "/d",
                        "volumeClaim": {
                            "accessModes": ["ReadWriteOnce"],
                            "resources": {"requests": {"storage": "1Gi"}},
                        },
                    }
                ],
            )
        ],
    ),
    ("depends-on-dag", [(f"{T0}.dependsOn", {"name": ["mpiworker"]})]),
    ("cpu-equal", [(f"{C0}.resources", {"requests": {"cpu": "1000m"}, "limits": {"cpu": 1}})]),
    ("memory-units", [(f"{C0}.resources", {"requests": {"memory": "1Gi"}, "limits": {"memory": "1024Mi"}})]),
    ("memory-exponent", [(f"{C0}.resources", {"requests": {"memory": "1e3"}, "limits": {"memory": "1k"}})]),
    ("float-cpu", [(f"{C0}.resources", {"requests": {"cpu": 0.5}, "limits": {"cpu": "500m"}})]),
    ("gpu-limit-only", [(f"{C1}.resources", {"limits": {"nvidia.com/gpu": 2}})]),
    ("native-domain-resource", [(f"{C0}.resources", {"requests": {"example.kubernetes.io/thing": "500m"}})]),
    (
        "hugepages",
        [
            (
                f"{C0}.resources",
                {
                    "limits": {"hugepages-2Mi": "4Mi", "memory": "1Gi"},
                    "requests": {"hugepages-2Mi": "4Mi", "memory": "1Gi"},
                },
            )
        ],
    ),
    (
        "topology-integer-cpu",
        [
            (f"{T0}.topologyPolicy", "single-numa-node"),
            (f"{C0}.resources", {"requests": {"cpu": 2}, "limits": {"cpu": 2}}),
        ],
    ),
    (
        "topology-cpu-from-limits",
        [(f"{T0}.topologyPolicy", "restricted"), (f"{C0}.resources", {"limits": {"cpu": "2"}})],
    ),
    ("topology-none-fractional", [(f"{T0}.topologyPolicy", "none")]),
    (
        "partition-policy",
        [
            (f"{T1}.replicas", 4),
            (f"{T1}.minAvailable", 2),
            ("spec.minAvailable", 3),
            (f"{T1}.partitionPolicy", {"totalPartitions": 2, "partitionSize": 2, "minPartitions": 1}),
        ],
    ),
    ("network-topology", [("spec.networkTopology", {"mode": "hard", "highestTierAllowed": 1})]),
    ("init-container", [(f"{T0}.template.spec.initContainers", [{"name": "wait", "image": "kubectl"}])]),
    ("container-port-name-15", [(f"{C0}.ports", [{"containerPort": 65535, "name": "a" * 15}])]),
    ("template-metadata", [(f"{T0}.template.metadata", {"name": "ignored", "annotations": {"example.com/a": "b"}})]),
    (
        "pod-spec-fields",
        [
            (f"{T0}.template.spec.tolerations", [{"key": "nvidia.com/gpu", "operator": "Exists"}]),
            (f"{T0}.template.spec.hostname", "h"),
            (
                f"{T0}.template.spec.topologySpreadConstraints",
                [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}],
            ),
        ],
    ),
    ("newer-kubernetes-field", [(f"{C0}.restartPolicyRules", [{"action": "Restart"}])]),
    ("int-or-string-port", [(f"{C1}.readinessProbe", {"tcpSocket": {"port": "ssh"}})]),
    ("status-ignored", [("status", {"state": {"phase": "Running"}})]),
]


@pytest.mark.parametrize(("edits"), [pytest.param(e, id=i) for i, e in ACCEPTED])
def test_accepted(edits: list[tuple[str, object]]) -> None:
    assert check_job(changed(*edits)) == []


LONG = "j" * 52
# (id, edits, expected finding path, fragment of its message)
REJECTED: list[tuple[str, list[tuple[str, object]], str, str]] = [
    # header and metadata
    ("api-version", [("apiVersion", "batch.volcano.sh/v1beta1")], "apiVersion", "batch.volcano.sh/v1alpha1"),
    ("kind", [("kind", "VolcanoJob")], "kind", "must be Job"),
    ("no-metadata", [("metadata", DELETE)], "metadata", "is required"),
    ("no-name", [("metadata.name", DELETE)], "metadata.name", "is required"),
    ("empty-name", [("metadata.name", "")], "metadata.name", "is required"),
    ("name-uppercase", [("metadata.name", "MPI-hello")], "metadata.name", "DNS-1123 subdomain"),
    ("name-64", [("metadata.name", "j" * 64)], "metadata.name", "at most 63 characters"),
    ("name-digit-with-svc", [("metadata.name", "1job")], "metadata.name", "DNS-1035 label"),
    (
        "name-digit-with-mpi-implied-svc",
        [("metadata.name", "1job"), ("spec.plugins", {"mpi": ["--master=mpimaster", "--worker=mpiworker"]})],
        "metadata.name",
        "svc plugin",
    ),
    ("name-dotted-with-svc", [("metadata.name", "a.b")], "metadata.name", "DNS-1035 label"),
    (
        "generate-name-invalid",
        [("metadata.name", DELETE), ("metadata.generateName", "MPI-")],
        "metadata.generateName",
        "DNS-1123 subdomain",
    ),
    (
        "generate-name-digit-svc",
        [("metadata.name", DELETE), ("metadata.generateName", "1-")],
        "metadata.generateName",
        "DNS-1035",
    ),
    ("pod-name-too-long", [("metadata.name", LONG)], f"{P0}.name", "at most 63"),
    (
        "generated-pod-name-too-long",
        [("metadata.name", DELETE), ("metadata.generateName", "j" * 47)],
        f"{P0}.name",
        "generateName adds 5",
    ),
    ("namespace", [("metadata.namespace", "Argo")], "metadata.namespace", "DNS-1123 label"),
    (
        "label-key",
        [("metadata.labels", {"bad key": "v"})],
        "metadata.labels[bad key]",
        "label key must be a qualified name",
    ),
    ("label-value", [("metadata.labels", {"app": "a b"})], "metadata.labels.app", "label value"),
    ("annotation-key", [("metadata.annotations", {"-x": "v"})], "metadata.annotations[-x]", "annotation key"),
    ("metadata-unknown", [("metadata.nmae", "x")], "metadata.nmae", "unknown field"),
    # tasks
    ("no-tasks", [("spec.tasks", [])], "spec.tasks", "at least one task"),
    ("tasks-missing", [("spec.tasks", DELETE)], "spec.tasks", "at least one task"),
    ("no-spec", [("spec", DELETE)], "spec", "is required"),
    ("task-name-pattern", [(f"{T0}.name", "mpi_master"), ("spec.plugins.mpi", [])], f"{P0}.name", "DNS-1123 label"),
    ("task-name-64", [(f"{T1}.name", "w" * 64)], f"{P1}.name", "at most 63"),
    ("duplicate-task-name", [(f"{T1}.name", "mpimaster")], f"{P1}.name", "duplicate task name"),
    (
        "duplicate-default-name",
        [(f"{T0}.name", "default1"), (f"{T1}.name", DELETE), ("spec.plugins", {})],
        f"{P1}.name",
        "duplicate task name 'default1'",
    ),
    (
        "task-min-available-over-replicas",
        [(f"{T1}.minAvailable", 3)],
        f"{P1}.minAvailable",
        "must not exceed replicas (2)",
    ),
    (
        "job-min-available-over-total",
        [("spec.minAvailable", 4)],
        "spec.minAvailable",
        "total replicas of all tasks (3)",
    ),
    ("replicas-negative", [(f"{T1}.replicas", -1)], f"{P1}.replicas", "at least 0"),
    ("task-min-available-negative", [(f"{T1}.minAvailable", -1)], f"{P1}.minAvailable", "at least 0"),
    ("task-max-retry-negative", [(f"{T1}.maxRetry", -1)], f"{P1}.maxRetry", "at least 0"),
    ("min-available-negative", [("spec.minAvailable", -1)], "spec.minAvailable", "at least 0"),
    ("max-retry-negative", [("spec.maxRetry", -1)], "spec.maxRetry", "at least 0"),
    ("ttl-negative", [("spec.ttlSecondsAfterFinished", -1)], "spec.ttlSecondsAfterFinished", "at least 0"),
    ("min-success-zero", [("spec.minSuccess", 0)], "spec.minSuccess", "at least 1"),
    (
        "topology-policy-enum",
        [(f"{T0}.topologyPolicy", "numa")],
        f"{P0}.topologyPolicy",
        "must be one of none, best-effort",
    ),
    # types
    ("replicas-string", [(f"{T1}.replicas", "2")], f"{P1}.replicas", "must be an integer, not the string '2'"),
    ("min-available-bool", [("spec.minAvailable", True)], "spec.minAvailable", "must be an integer"),
    ("max-retry-float", [("spec.maxRetry", 1.5)], "spec.maxRetry", "must be an integer"),
    ("int32-overflow", [(f"{T1}.replicas", 2**31)], f"{P1}.replicas", "32-bit integer"),
    ("queue-int", [("spec.queue", 3)], "spec.queue", "must be a string"),
    ("tasks-mapping", [("spec.tasks", {"a": 1})], "spec.tasks", "must be a list"),
    ("plugins-list", [("spec.plugins", ["ssh"])], "spec.plugins", "must be a mapping"),
    ("plugin-args-string", [("spec.plugins.ssh", "--ssh-key-file-path=/x")], "spec.plugins.ssh", "must be a list"),
    (
        "container-port-string",
        [(f"{C0}.ports", [{"containerPort": "22"}])],
        f"{PC0}.ports[0].containerPort",
        "must be an integer",
    ),
    ("env-value-int", [(f"{C1}.env", [{"name": "N", "value": 1}])], f"{PC1}.env[0].value", "must be a string"),
    ("bool-field", [(f"{T0}.template.spec.hostNetwork", "true")], f"{P0}.template.spec.hostNetwork", "true or false"),
    (
        "quantity-invalid",
        [(f"{C0}.resources", {"limits": {"memory": "1 GB"}})],
        f"{PC0}.resources.limits.memory",
        QUANTITY_MESSAGE,
    ),
    (
        "quantity-suffix",
        [(f"{C0}.resources", {"limits": {"memory": "1GB"}})],
        f"{PC0}.resources.limits.memory",
        QUANTITY_MESSAGE,
    ),
    # unknown fields
    ("unknown-top-level", [("extra", 1)], "extra", "unknown field 'extra': not a field of a Volcano Job"),
    ("unknown-spec", [("spec.minavailable", 1)], "spec.minavailable", "not a field of the Volcano Job spec"),
    ("unknown-task", [(f"{T1}.replica", 2)], f"{P1}.replica", "not a field of a Volcano task"),
    (
        "unknown-policy",
        [("spec.policies.0.actions", "x")],
        "spec.policies[0].actions",
        "not a field of a Volcano lifecycle policy",
    ),
    (
        "unknown-pod-spec",
        [(f"{T0}.template.spec.container", [])],
        f"{P0}.template.spec.container",
        "not a field of a Kubernetes PodSpec",
    ),
    (
        "unknown-container",
        [(f"{C0}.imagePullPolicyy", "Always")],
        f"{PC0}.imagePullPolicyy",
        "not a field of a Kubernetes Container",
    ),
    (
        "unknown-resources",
        [(f"{C0}.resources.limit", {})],
        f"{PC0}.resources.limit",
        "not a field of a Kubernetes ResourceRequirements",
    ),
    (
        "unknown-nested",
        [(f"{C1}.readinessProbe.tcpSocket.prot", 22)],
        f"{PC1}.readinessProbe.tcpSocket.prot",
        "not a field of a Kubernetes TCPSocketAction",
    ),
    (
        "template-metadata-generate-name",
        [(f"{T0}.template.metadata.generateName", "x-")],
        f"{P0}.template.metadata.generateName",
        "not a field of pod template metadata",
    ),
    ("unknown-template", [(f"{T0}.template.kind", "Pod")], f"{P0}.template.kind", "unknown field"),
    # plugins
    ("unknown-plugin", [("spec.plugins.horovod", [])], "spec.plugins.horovod", "unknown plugin 'horovod'"),
    (
        "mpi-master-missing",
        [("spec.plugins.mpi", ["--master=launcher", "--worker=mpiworker"])],
        "spec.plugins.mpi",
        "master task 'launcher'",
    ),
    (
        "mpi-default-master-missing",
        [("spec.plugins.mpi", ["--worker=mpiworker"])],
        "spec.plugins.mpi",
        "master task 'master'",
    ),
    ("mpi-worker-missing", [("spec.plugins.mpi", ["--master=mpimaster"])], "spec.plugins.mpi", "before 1.15"),
    # spec fields
    ("queue-root", [("spec.queue", "root")], "spec.queue", "must not be root"),
    ("queue-pattern", [("spec.queue", "Team_A")], "spec.queue", "DNS-1123 subdomain"),
    ("priority-class-pattern", [("spec.priorityClassName", "High")], "spec.priorityClassName", "DNS-1123 subdomain"),
    ("scheduler-name-long", [("spec.schedulerName", "s" * 64)], "spec.schedulerName", "at most 63"),
    ("running-estimate", [("spec.runningEstimate", "90")], "spec.runningEstimate", DURATION_MESSAGE),
    (
        "network-topology-both",
        [("spec.networkTopology", {"highestTierAllowed": 1, "highestTierName": "rack"})],
        "spec.networkTopology",
        "not set both",
    ),
    (
        "network-topology-mode",
        [("spec.networkTopology", {"mode": "strict"})],
        "spec.networkTopology.mode",
        "hard, soft",
    ),
    (
        "network-topology-tier",
        [("spec.networkTopology", {"highestTierAllowed": -1})],
        "spec.networkTopology.highestTierAllowed",
        "at least 0",
    ),
    # policies
    ("event-internal", [(f"{T0}.policies.0.event", "PodRunning")], f"{P0}.policies[0].event", "internal to Volcano"),
    ("event-job-unknown", [("spec.policies.0.event", "JobUnknown")], "spec.policies[0].event", "did you mean Unknown"),
    (
        "events-item",
        [("spec.policies", [{"events": ["PodFailed", "OutOfSync"], "action": "RestartJob"}])],
        "spec.policies[0].events[1]",
        "internal",
    ),
    (
        "action-unknown",
        [(f"{T0}.policies.0.action", "CompleteJobs")],
        f"{P0}.policies[0].action",
        "must be one of AbortJob",
    ),
    ("action-internal", [("spec.policies.0.action", "SyncJob")], "spec.policies[0].action", "must be one of"),
    (
        "action-missing",
        [(f"{T0}.policies.0.action", DELETE)],
        f"{P0}.policies[0].action",
        "is required for an event policy",
    ),
    (
        "event-and-exit-code",
        [("spec.policies.0.exitCode", 1)],
        "spec.policies[0]",
        "not set both event(s) and exitCode",
    ),
    (
        "events-and-exit-code",
        [("spec.policies", [{"events": ["PodFailed"], "exitCode": 1, "action": "AbortJob"}])],
        "spec.policies[0]",
        "not set both",
    ),
    (
        "neither-event-nor-exit-code",
        [("spec.policies", [{"action": "AbortJob"}])],
        "spec.policies[0]",
        "must set event, events or exitCode",
    ),
    (
        "duplicate-event",
        [
            (
                "spec.policies",
                [
                    {"event": "PodFailed", "action": "AbortJob"},
                    {"events": ["PodEvicted", "PodFailed"], "action": "RestartJob"},
                ],
            )
        ],
        "spec.policies[1].events[1]",
        "duplicate event 'PodFailed'",
    ),
    (
        "star-with-others",
        [("spec.policies", [{"event": "PodFailed", "action": "AbortJob"}, {"event": "*", "action": "RestartJob"}])],
        "spec.policies[1].event",
        "'*' must be the only event",
    ),
    (
        "exit-code-zero",
        [("spec.policies", [{"exitCode": 0, "action": "AbortJob"}])],
        "spec.policies[0].exitCode",
        "must not be 0",
    ),
    (
        "exit-code-duplicate",
        [("spec.policies", [{"exitCode": 3, "action": "AbortJob"}, {"exitCode": 3, "action": "RestartJob"}])],
        "spec.policies[1].exitCode",
        "duplicate exitCode 3",
    ),
    (
        "timeout-format",
        [("spec.policies", [{"event": "PodPending", "action": "RestartPod", "timeout": "10 minutes"}])],
        "spec.policies[0].timeout",
        DURATION_MESSAGE,
    ),
    ("event-crd-enum", [(f"{T0}.policies.0.event", "Completed")], f"{P0}.policies[0].event", "must be one of *"),
    # volumes
    (
        "volume-mount-path-missing",
        [("spec.volumes", [{"volumeClaimName": "a"}])],
        "spec.volumes[0].mountPath",
        "is required",
    ),
    (
        "volume-mount-path-colon",
        [("spec.volumes", [{"mountPath": "c:/d", "volumeClaimName": "a"}])],
        "spec.volumes[0].mountPath",
        "':'",
    ),
    (
        "volume-mount-path-duplicate",
        [("spec.volumes", [{"mountPath": "/d", "volumeClaimName": "a"}, {"mountPath": "/d", "volumeClaimName": "b"}])],
        "spec.volumes[1].mountPath",
        "duplicate mountPath",
    ),
    ("volume-no-claim", [("spec.volumes", [{"mountPath": "/d"}])], "spec.volumes[0]", "volumeClaim"),
    (
        "volume-both-claims",
        [("spec.volumes", [{"mountPath": "/d", "volumeClaimName": "a", "volumeClaim": {}}])],
        "spec.volumes[0]",
        "only one of volumeClaim",
    ),
    (
        "volume-claim-name",
        [("spec.volumes", [{"mountPath": "/d", "volumeClaimName": "A"}])],
        "spec.volumes[0].volumeClaimName",
        "DNS-1123 subdomain",
    ),
    # dependsOn
    (
        "depends-on-unknown",
        [(f"{T0}.dependsOn", {"name": ["workers"]})],
        f"{P0}.dependsOn.name[0]",
        "unknown task 'workers'",
    ),
    (
        "depends-on-cycle",
        [(f"{T0}.dependsOn", {"name": ["mpiworker"]}), (f"{T1}.dependsOn", {"name": ["mpimaster"]})],
        f"{P0}.dependsOn",
        "cycle: mpimaster -> mpiworker -> mpimaster",
    ),
    (
        "depends-on-self",
        [(f"{T1}.dependsOn", {"name": ["mpiworker"]})],
        f"{P1}.dependsOn",
        "cycle: mpiworker -> mpiworker",
    ),
    # partition policy
    (
        "partition-replicas",
        [(f"{T1}.partitionPolicy", {"totalPartitions": 2, "partitionSize": 2})],
        f"{P1}.replicas",
        "totalPartitions * partitionSize (4)",
    ),
    (
        "partition-min-available",
        [
            (f"{T1}.replicas", 4),
            (f"{T1}.minAvailable", 3),
            (f"{T1}.partitionPolicy", {"totalPartitions": 2, "partitionSize": 2, "minPartitions": 1}),
        ],
        f"{P1}.minAvailable",
        "minPartitions * partitionSize (2)",
    ),
    (
        "partition-required",
        [(f"{T1}.partitionPolicy", {"totalPartitions": 2})],
        f"{P1}.partitionPolicy.partitionSize",
        "is required",
    ),
    (
        "partition-minimum",
        [(f"{T1}.partitionPolicy", {"totalPartitions": 0, "partitionSize": 2})],
        f"{P1}.partitionPolicy.totalPartitions",
        "at least 1",
    ),
    # pod template
    ("template-missing", [(f"{T0}.template", DELETE)], f"{P0}.template.spec.containers", "at least one container"),
    (
        "containers-empty",
        [(f"{T0}.template.spec.containers", [])],
        f"{P0}.template.spec.containers",
        "at least one container",
    ),
    ("container-name-invalid", [(f"{C0}.name", "MPI")], f"{PC0}.name", "DNS-1123 label"),
    ("container-name-missing", [(f"{C0}.name", DELETE)], f"{PC0}.name", "is required"),
    (
        "container-name-duplicate",
        [(f"{T0}.template.spec.initContainers", [{"name": "mpimaster", "image": "x"}])],
        f"{PC0}.name",
        "duplicate container name",
    ),
    ("image-missing", [(f"{C0}.image", DELETE)], f"{PC0}.image", "is required"),
    (
        "init-image-missing",
        [(f"{T0}.template.spec.initContainers", [{"name": "wait"}])],
        f"{P0}.template.spec.initContainers[0].image",
        "is required",
    ),
    (
        "ephemeral-containers",
        [(f"{T0}.template.spec.ephemeralContainers", [{"name": "debug", "image": "x"}])],
        f"{P0}.template.spec.ephemeralContainers",
        "not allowed in a pod template",
    ),
    (
        "restart-policy",
        [(f"{T0}.template.spec.restartPolicy", "Sometimes")],
        f"{P0}.template.spec.restartPolicy",
        "Always, OnFailure, Never",
    ),
    ("dns-policy", [(f"{T0}.template.spec.dnsPolicy", "Cluster")], f"{P0}.template.spec.dnsPolicy", "must be one of"),
    ("pull-policy", [(f"{C0}.imagePullPolicy", "Sometimes")], f"{PC0}.imagePullPolicy", "IfNotPresent"),
    ("hostname", [(f"{T0}.template.spec.hostname", "Host")], f"{P0}.template.spec.hostname", "DNS-1123 label"),
    (
        "template-label",
        [(f"{T0}.template.metadata.labels", {"app": "a b"})],
        f"{P0}.template.metadata.labels.app",
        "label value",
    ),
    ("port-number", [(f"{C0}.ports", [{"containerPort": 0}])], f"{PC0}.ports[0].containerPort", "between 1 and 65535"),
    ("port-missing", [(f"{C0}.ports", [{"name": "ssh"}])], f"{PC0}.ports[0].containerPort", "is required"),
    (
        "port-name-long",
        [(f"{C0}.ports", [{"containerPort": 22, "name": "a" * 16}])],
        f"{PC0}.ports[0].name",
        "IANA service name",
    ),
    ("port-name-digits", [(f"{C0}.ports", [{"containerPort": 22, "name": "22"}])], f"{PC0}.ports[0].name", "IANA"),
    (
        "port-name-duplicate",
        [(f"{C0}.ports", [{"containerPort": 22, "name": "ssh"}, {"containerPort": 23, "name": "ssh"}])],
        f"{PC0}.ports[1].name",
        "duplicate port name",
    ),
    (
        "port-protocol",
        [(f"{C0}.ports", [{"containerPort": 22, "protocol": "tcp"}])],
        f"{PC0}.ports[0].protocol",
        "TCP, UDP, SCTP",
    ),
    (
        "host-port",
        [(f"{C0}.ports", [{"containerPort": 22, "hostPort": 70000}])],
        f"{PC0}.ports[0].hostPort",
        "between 1 and 65535",
    ),
    ("env-name-missing", [(f"{C1}.env", [{"value": "1"}])], f"{PC1}.env[0].name", "is required"),
    (
        "volume-mount-unknown",
        [(f"{C1}.volumeMounts.0.name", "cache")],
        f"{PC1}.volumeMounts[0].name",
        "must name a volume",
    ),
    (
        "volume-mount-path-duplicate-in-container",
        [(f"{C1}.volumeMounts", [{"name": "scratch", "mountPath": "/s"}, {"name": "scratch", "mountPath": "/s"}])],
        f"{PC1}.volumeMounts[1].mountPath",
        "duplicate mountPath",
    ),
    (
        "pod-volume-name",
        [(f"{T1}.template.spec.volumes.0.name", "Scratch"), (f"{C1}.volumeMounts.0.name", "Scratch")],
        f"{P1}.template.spec.volumes[0].name",
        "DNS-1123 label",
    ),
    (
        "pod-volume-source-missing",
        [(f"{T1}.template.spec.volumes", [{"name": "scratch"}])],
        f"{P1}.template.spec.volumes[0]",
        "must set a volume source",
    ),
    (
        "pod-volume-two-sources",
        [(f"{T1}.template.spec.volumes", [{"name": "scratch", "emptyDir": {}, "hostPath": {"path": "/x"}}])],
        f"{P1}.template.spec.volumes[0]",
        "only one volume source",
    ),
    (
        "pod-volume-duplicate",
        [(f"{T1}.template.spec.volumes", [{"name": "scratch", "emptyDir": {}}, {"name": "scratch", "emptyDir": {}}])],
        f"{P1}.template.spec.volumes[1].name",
        "duplicate volume name",
    ),
    # resources
    (
        "request-over-limit",
        [(f"{C0}.resources", {"requests": {"cpu": 2}, "limits": {"cpu": "1"}})],
        f"{PC0}.resources.requests.cpu",
        "less than or equal to the cpu limit",
    ),
    (
        "memory-over-limit",
        [(f"{C0}.resources", {"requests": {"memory": "1.5Gi"}, "limits": {"memory": "1500Mi"}})],
        f"{PC0}.resources.requests.memory",
        "less than or equal",
    ),
    (
        "gpu-fraction",
        [(f"{C1}.resources", {"limits": {"nvidia.com/gpu": 0.5}})],
        f"{PC1}.resources.limits[nvidia.com/gpu]",
        "whole number",
    ),
    (
        "gpu-request-not-limit",
        [(f"{C1}.resources", {"requests": {"nvidia.com/gpu": 1}, "limits": {"nvidia.com/gpu": 2}})],
        f"{PC1}.resources.requests[nvidia.com/gpu]",
        "must equal the nvidia.com/gpu limit",
    ),
    (
        "gpu-request-only",
        [(f"{C1}.resources", {"requests": {"rdma/ib": 1}})],
        f"{PC1}.resources.limits[rdma/ib]",
        "needs an equal limit",
    ),
    (
        "resource-without-domain",
        [(f"{C0}.resources", {"limits": {"gpu": 1}})],
        f"{PC0}.resources.limits.gpu",
        "not a container resource",
    ),
    (
        "resource-name-invalid",
        [(f"{C0}.resources", {"limits": {"example.com/a/b": 1}})],
        f"{PC0}.resources.limits[example.com/a/b]",
        "qualified name",
    ),
    (
        "resource-negative",
        [(f"{C0}.resources", {"requests": {"cpu": "-1"}})],
        f"{PC0}.resources.requests.cpu",
        "must not be negative",
    ),
    (
        "hugepages-need-cpu-or-memory",
        [(f"{C0}.resources", {"limits": {"hugepages-2Mi": "4Mi"}})],
        f"{PC0}.resources",
        "cpu or memory",
    ),
    (
        "hugepages-multiple",
        [(f"{C0}.resources", {"limits": {"hugepages-2Mi": "3Mi", "memory": "1Gi"}})],
        f"{PC0}.resources.limits.hugepages-2Mi",
        "multiple of the page size",
    ),
    (
        "hugepages-request-equal",
        [
            (
                f"{C0}.resources",
                {"limits": {"hugepages-2Mi": "4Mi", "memory": "1Gi"}, "requests": {"hugepages-2Mi": "2Mi"}},
            )
        ],
        f"{PC0}.resources.requests.hugepages-2Mi",
        "must equal",
    ),
    (
        "topology-fractional-cpu",
        [(f"{T0}.topologyPolicy", "single-numa-node")],
        f"{PC0}.resources.requests.cpu",
        "whole number of CPUs",
    ),
    (
        "topology-missing-cpu",
        [(f"{T1}.topologyPolicy", "best-effort")],
        f"{PC1}.resources.requests.cpu",
        "topologyPolicy best-effort",
    ),
    (
        "topology-init-container",
        [
            (f"{T0}.topologyPolicy", "restricted"),
            (f"{C0}.resources", {"limits": {"cpu": 1}}),
            (f"{T0}.template.spec.initContainers", [{"name": "w", "image": "x"}]),
        ],
        f"{P0}.template.spec.initContainers[0].resources.limits.cpu",
        "whole number of CPUs",
    ),
]


@pytest.mark.parametrize(("edits", "path", "fragment"), [pytest.param(e, p, f, id=i) for i, e, p, f in REJECTED])
def test_rejected(edits: list[tuple[str, object]], path: str, fragment: str) -> None:
    found = errors(changed(*edits))
    assert any(f.path == path and fragment in f.message for f in found), found


WARNED: list[tuple[str, list[tuple[str, object]], str, str]] = [
    (
        "pod-pending-without-timeout",
        [("spec.policies", [{"event": "PodPending", "action": "RestartPod"}])],
        "spec.policies[0]",
        "timeout",
    ),
    (
        "exit-code-unknown-action",
        [("spec.policies", [{"exitCode": 2, "action": "Restart"}])],
        "spec.policies[0].action",
        "would never act",
    ),
    ("exit-code-no-action", [(f"{T1}.policies", [{"exitCode": 2}])], f"{P1}.policies[0].action", "not a known action"),
    (
        "mpi-args-unparsable",
        [("spec.plugins.mpi", ["--master=mpimaster", "--worker=mpiworker", "--np=2"])],
        "spec.plugins.mpi",
        "flag provided but not defined: -np",
    ),
]


@pytest.mark.parametrize(("edits", "path", "fragment"), [pytest.param(e, p, f, id=i) for i, e, p, f in WARNED])
def test_warnings_are_not_errors(edits: list[tuple[str, object]], path: str, fragment: str) -> None:
    findings = check_job(changed(*edits))
    assert errors(changed(*edits)) == []
    assert [(f.path, f.severity) for f in findings] == [(path, "warning")]
    assert fragment in findings[0].message


def test_not_a_mapping() -> None:
    assert check_job([1, 2]) == [Finding("job", "error", "must be a mapping: a Volcano Job object")]  # type: ignore[arg-type]


def test_several_findings_are_all_reported() -> None:
    found = errors(changed(("spec.queue", "root"), (f"{C0}.image", DELETE), ("spec.minSuccess", 0)))
    assert {f.path for f in found} == {"spec.queue", f"{PC0}.image", "spec.minSuccess"}


def test_raise_first_raises_the_first_error_only() -> None:
    raise_first([])
    raise_first([Finding("a", "warning", "w")])
    with pytest.raises(ValidationError) as caught:
        raise_first([Finding("a", "warning", "w"), Finding("b", "error", "e1"), Finding("c", "error", "e2")])
    assert (caught.value.field, caught.value.rule) == ("b", "e1")


def test_raise_first_on_a_bad_job() -> None:
    with pytest.raises(ValidationError, match=r"spec\.tasks\[1\]\.replicas: must be an integer"):
        raise_first(check_job(changed((f"{T1}.replicas", "2"))))


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("500m", Fraction(1, 2)),
        ("1", Fraction(1)),
        (2, Fraction(2)),
        (0.5, Fraction(1, 2)),
        ("1.5", Fraction(3, 2)),
        (".5", Fraction(1, 2)),
        ("5.", Fraction(5)),
        ("+1", Fraction(1)),
        ("-1", Fraction(-1)),
        ("1k", Fraction(1000)),
        ("1Ki", Fraction(1024)),
        ("1.5Gi", Fraction(3 * 2**29)),
        ("1E", Fraction(10**18)),
        ("1Ei", Fraction(2**60)),
        ("1e3", Fraction(1000)),
        ("1E3", Fraction(1000)),
        ("1e-3", Fraction(1, 1000)),
        (1e-05, Fraction(1, 100000)),
        ("100u", Fraction(1, 10000)),
        ("1n", Fraction(1, 10**9)),
        ("0.1n", Fraction(1, 10**9)),  # rounded up to 1n
        ("1e100", Fraction(2**63 - 1)),  # capped
        ("1e999999999", Fraction(2**63 - 1)),
    ],
)
def test_parse_quantity(text: object, value: Fraction) -> None:
    assert parse_quantity(text) == value


@pytest.mark.parametrize("text", ["", "1 GB", "1GB", "1e", "--1", "1.2.3", "Mi", "one", True, None, [1], "1_000", " 1"])
def test_parse_quantity_rejects(text: object) -> None:
    with pytest.raises(ValueError, match="Kubernetes quantity"):
        parse_quantity(text)


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ([], ("master", "worker", None)),
        (["--master=a", "--worker=b"], ("a", "b", None)),
        (["-master", "a", "--port", "22"], ("a", "worker", None)),
        (["a", "--master=b"], ("master", "worker", None)),  # parsing stops at the first non-flag
        (["--", "--master=b"], ("master", "worker", None)),
    ],
)
def test_mpi_roles(args: list[str], expected: tuple[str, str, None]) -> None:
    assert mpi_roles(args) == expected


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--masters=a"], "not defined: -masters"),
        (["--master"], "needs an argument"),
        (["--port=x"], "-port"),
        (["---a"], "bad flag"),
    ],
)
def test_mpi_roles_problems(args: list[str], fragment: str) -> None:
    problem = mpi_roles(args)[2]
    assert problem is not None
    assert fragment in problem


@pytest.mark.parametrize("text", ["0", "10m", "1h30m", "1.5h", "300ms", "-1s", "2us", "2µs"])
def test_go_duration(text: str) -> None:
    assert is_go_duration(text)


@pytest.mark.parametrize("text", ["", "10", "10 m", "1d", "m", "1h 30m", 10])
def test_not_go_duration(text: object) -> None:
    assert not is_go_duration(text)


def test_importing_the_rules_does_not_import_hera_workflows() -> None:
    code = (
        "import sys, hera_volcano.volcano.rules, hera_volcano.argo.selectors, hera_volcano.kube.names;"
        "assert 'hera.workflows' not in sys.modules, 'hera.workflows imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize(
    ("edits", "paths"),
    [
        pytest.param([("spec.tasks", [])], ["spec.tasks"], id="no-tasks-stops-there"),
        pytest.param([(f"{T1}.replicas", "2")], [f"{P1}.replicas"], id="mistyped-replicas-not-summed"),
        pytest.param([("metadata.name", "MPI")], ["metadata.name"], id="bad-name-no-pod-name-noise"),
        pytest.param([("metadata", "x")], ["metadata"], id="metadata-not-a-mapping"),
        pytest.param([("metadata.name", 123)], ["metadata.name"], id="name-not-a-string"),
        pytest.param([("spec.tasks.1", "mpiworker")], [f"{P1}", "spec.plugins.mpi"], id="task-not-a-mapping"),
    ],
)
def test_one_mistake_one_finding(edits: list[tuple[str, object]], paths: list[str]) -> None:
    assert [f.path for f in check_job(changed(*edits))] == paths
