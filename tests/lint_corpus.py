"""The lint corpus: documents the cluster refuses or accepts, each labelled with its verdict and, when refused, the
rule (a part of lint's error message).

Three judges make "the cluster": Volcano's admission webhook (``validatejob.volcano.sh``, which runs Kubernetes'
pod-template validation on every task) with the Job CRD behind the API server, for a Volcano Job; Argo's strict
decoding and validation (``argo submit``, both lines) and the API server's object-metadata rules, for a Workflow.
``tests/test_lint_corpus.py`` holds lint to every label; ``tests/e2e/test_lint_corpus.py`` holds the real cluster
to them (a server-side dry run of each Job, ``argo submit --server-dry-run`` of each Workflow), and the unit test
also runs Argo's own validators (conformance/) on the Workflows they judge alone.

A case changes one thing in a small, valid document, as a user would get it wrong (or, for an accepted case, get an
unusual thing right), so a refusal can only be for that one thing.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

Doc = dict[str, Any]


@dataclass(frozen=True)
class Case:
    """One document and the cluster's verdict on it. ``rule`` is part of lint's error message (refused cases)."""

    name: str
    document: Doc
    refused: bool
    rule: str = ""
    #: Who refuses a Workflow: "argo" (Argo's decoder or validator, both lines) or "apiserver" (object metadata).
    judge: str = ""

    @property
    def kind(self) -> str:
        return str(self.document["kind"])


# ---- documents -------------------------------------------------------------------------------------------------------


def job(
    *,
    container: Doc | None = None,
    pod: Doc | None = None,
    task: Doc | None = None,
    change: Callable[[Doc], None] | None = None,
) -> Doc:
    """A one-task Volcano Job (busybox printing a line) with ``container``, ``pod`` and ``task`` fields added to its
    container, pod spec and task; ``change`` edits the result further."""
    main = {"name": "main", "image": "busybox:1.37.0", "command": ["echo", "hello"], **(container or {})}
    spec = {"restartPolicy": "Never", "containers": [main], **(pod or {})}
    doc: Doc = {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"generateName": "corpus-"},
        "spec": {
            "schedulerName": "volcano",
            "queue": "default",
            "minAvailable": 1,
            "tasks": [{"name": "main", "replicas": 1, "template": {"spec": spec}, **(task or {})}],
        },
    }
    if change is not None:
        change(doc)
    return doc


def workflow(change: Callable[[Doc], None] | None = None) -> Doc:
    """A Workflow of one container template; ``change`` edits it."""
    doc: Doc = {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Workflow",
        "metadata": {"generateName": "corpus-"},
        "spec": {
            "entrypoint": "main",
            "serviceAccountName": "volcano-workflows",
            "templates": [{"name": "main", "container": {"image": "busybox:1.37.0", "command": ["echo", "hello"]}}],
        },
    }
    if change is not None:
        change(doc)
    return doc


def _set(path: str, value: object) -> Callable[[Doc], None]:
    """An edit that sets the field at ``path`` (dot-separated keys, integers index lists)."""

    def edit(doc: Doc) -> None:
        *parents, last = path.split(".")
        node: Any = doc
        for part in parents:
            node = node[int(part)] if part.isdigit() else node.setdefault(part, {})
        node[int(last) if last.isdigit() else last] = copy.deepcopy(value)

    return edit


def _say_with_input(*, default: str | None = None) -> Doc:
    """A template ``say`` with one input parameter ``text`` (with ``default`` when given)."""
    parameter: Doc = {"name": "text"} if default is None else {"name": "text", "default": default}
    return {
        "name": "say",
        "inputs": {"parameters": [parameter]},
        "container": {"image": "busybox:1.37.0", "command": ["echo", "{{inputs.parameters.text}}"]},
    }


def _calls(kind: str, arguments: Doc | None = None, *, default: str | None = None) -> Callable[[Doc], None]:
    """The entrypoint calls ``say`` once from a DAG task or a step, passing ``arguments``."""

    def edit(doc: Doc) -> None:
        call: Doc = {"name": "a", "template": "say", **({"arguments": arguments} if arguments else {})}
        body: Doc = {"dag": {"tasks": [call]}} if kind == "dag" else {"steps": [[call]]}
        doc["spec"]["templates"] = [{"name": "main", **body}, _say_with_input(default=default)]

    return edit


def _reads(kind: str, text: str, *, depends: str | None = None, between: bool = False) -> Callable[[Doc], None]:
    """The entrypoint calls ``say`` as ``a`` (text "hi"), then as ``b`` with ``text`` (a reference to ``a``, say):
    a DAG's ``b`` runs after ``depends`` (with ``between``, after a task ``c`` that runs after ``a``); a steps
    template's ``b`` (and ``c``) in a later group."""

    def edit(doc: Doc) -> None:
        def call(name: str, value: str, after: str | None = None) -> Doc:
            arguments = {"parameters": [{"name": "text", "value": value}]}
            return {"name": name, "template": "say", "arguments": arguments, **({"depends": after} if after else {})}

        middle = [call("c", "hi", "a")] if between else []
        if kind == "dag":
            body: Doc = {"dag": {"tasks": [call("a", "hi"), *middle, call("b", text, "c" if between else depends)]}}
        else:
            body = {"steps": [[call("a", "hi")], *([m] for m in middle), [call("b", text)]]}
        doc["spec"]["templates"] = [{"name": "main", **body}, _say_with_input()]

    return edit


def _both(*edits: Callable[[Doc], None]) -> Callable[[Doc], None]:
    def edit(doc: Doc) -> None:
        for e in edits:
            e(doc)

    return edit


ENV_NAME = "environment variable name"
PROBE_HANDLERS = "exactly one handler"
_SECRET = {"secretKeyRef": {"name": "credentials", "key": "token"}}
_FIELD = {"fieldRef": {"fieldPath": "metadata.name"}}
_EXEC = {"exec": {"command": ["true"]}}
_INIT = "spec.tasks.0.template.spec.initContainers"


def _refused(name: str, document: Doc, rule: str, judge: str = "") -> Case:
    return Case(name, document, True, rule, judge or ("" if document["kind"] == "Job" else "argo"))


def _accepted(name: str, document: Doc) -> Case:
    return Case(name, document, False)


# ---- Volcano Jobs: the pod-template rules Volcano's webhook applies to each task -------------------------------------

JOBS: tuple[Case, ...] = (
    _accepted("job", job()),
    # environment variables: Volcano validates without Kubernetes' relaxed names (a C-like name, '.' and '-' too)
    _refused("env-name-starts-with-digit", job(container={"env": [{"name": "1ST", "value": "x"}]}), ENV_NAME),
    _refused("env-name-with-space", job(container={"env": [{"name": "MY VAR", "value": "x"}]}), ENV_NAME),
    _refused("env-name-with-equals", job(container={"env": [{"name": "A=B", "value": "x"}]}), ENV_NAME),
    _refused("env-name-dot-dot", job(container={"env": [{"name": "..x", "value": "x"}]}), ENV_NAME),
    _accepted("env-name-dots-and-dashes", job(container={"env": [{"name": "my.env-name_1", "value": "x"}]})),
    _refused(
        "env-value-and-value-from",
        job(container={"env": [{"name": "TOKEN", "value": "x", "valueFrom": _SECRET}]}),
        "must not be set when value is",
    ),
    _accepted(
        "env-empty-value-and-value-from", job(container={"env": [{"name": "TOKEN", "value": "", "valueFrom": _SECRET}]})
    ),
    _refused("env-value-from-empty", job(container={"env": [{"name": "A", "valueFrom": {}}]}), "must set one of"),
    _refused(
        "env-value-from-two-sources",
        job(container={"env": [{"name": "A", "valueFrom": {**_SECRET, **_FIELD}}]}),
        "only one of",
    ),
    _refused(
        "env-field-ref-unsupported",
        job(container={"env": [{"name": "A", "valueFrom": {"fieldRef": {"fieldPath": "spec.hostname"}}}]}),
        "downward API",
    ),
    _accepted(
        "env-field-ref-label",
        job(container={"env": [{"name": "A", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['app']"}}}]}),
    ),
    _accepted("env-value-from-secret", job(container={"env": [{"name": "TOKEN", "valueFrom": _SECRET}]})),
    _refused(
        "env-secret-without-key",
        job(container={"env": [{"name": "A", "valueFrom": {"secretKeyRef": {"name": "credentials"}}}]}),
        "key is required",
    ),
    _refused(
        "env-from-bad-prefix", job(container={"envFrom": [{"prefix": "1_", "configMapRef": {"name": "c"}}]}), ENV_NAME
    ),
    _refused("env-from-no-source", job(container={"envFrom": [{"prefix": "A_"}]}), "must set one of"),
    _accepted("env-from-config-map", job(container={"envFrom": [{"prefix": "CFG_", "configMapRef": {"name": "c"}}]})),
    # service accounts and other names of objects
    _refused("service-account-capitals", job(pod={"serviceAccountName": "Trainer"}), "DNS-1123 subdomain"),
    _refused("service-account-underscore", job(pod={"serviceAccountName": "my_account"}), "DNS-1123 subdomain"),
    _accepted("service-account", job(pod={"serviceAccountName": "volcano-workflows"})),
    _refused("node-name-underscore", job(pod={"nodeName": "node_1"}), "DNS-1123 subdomain"),
    _refused("pod-priority-class-capitals", job(pod={"priorityClassName": "High"}), "DNS-1123 subdomain"),
    _refused("runtime-class-underscore", job(pod={"runtimeClassName": "fast_runtime"}), "DNS-1123 subdomain"),
    _refused("preemption-policy-unknown", job(pod={"preemptionPolicy": "Sometimes"}), "must be one of"),
    # tolerations
    _refused("toleration-operator-lowercase", job(pod={"tolerations": [{"operator": "exists"}]}), "must be one of"),
    _refused(
        "toleration-operator-gt",
        job(pod={"tolerations": [{"key": "k", "operator": "Gt", "value": "1"}]}),
        "must be one of",
    ),
    _refused(
        "toleration-exists-with-value",
        job(pod={"tolerations": [{"key": "k", "operator": "Exists", "value": "v"}]}),
        "must be unset when the operator is Exists",
    ),
    _refused("toleration-equal-without-key", job(pod={"tolerations": [{"value": "v"}]}), "is required unless"),
    _refused(
        "toleration-seconds-without-no-execute",
        job(pod={"tolerations": [{"key": "k", "operator": "Exists", "effect": "NoSchedule", "tolerationSeconds": 5}]}),
        "applies only to the NoExecute effect",
    ),
    _accepted("toleration-everything", job(pod={"tolerations": [{"operator": "Exists"}]})),
    # node selectors
    _refused("node-selector-value-space", job(pod={"nodeSelector": {"zone": "eu west"}}), "label value"),
    _refused("node-selector-key-dash", job(pod={"nodeSelector": {"-zone": "a"}}), "qualified name"),
    _accepted("node-selector", job(pod={"nodeSelector": {"kubernetes.io/os": "linux"}})),
    # deadlines and grace periods
    _refused("pod-deadline-negative", job(pod={"activeDeadlineSeconds": -60}), "between 1 and 2147483647"),
    _refused("pod-deadline-zero", job(pod={"activeDeadlineSeconds": 0}), "between 1 and 2147483647"),
    _accepted("pod-deadline", job(pod={"activeDeadlineSeconds": 600})),
    # probes and lifecycle hooks
    _refused(
        "probe-two-handlers",
        job(container={"livenessProbe": {**_EXEC, "tcpSocket": {"port": 8080}}}),
        PROBE_HANDLERS,
    ),
    _refused("probe-no-handler", job(container={"readinessProbe": {"periodSeconds": 5}}), PROBE_HANDLERS),
    _refused(
        "liveness-success-threshold", job(container={"livenessProbe": {**_EXEC, "successThreshold": 2}}), "must be 1"
    ),
    _refused("probe-negative-period", job(container={"readinessProbe": {**_EXEC, "periodSeconds": -1}}), "negative"),
    _refused(
        "readiness-grace-period",
        job(container={"readinessProbe": {**_EXEC, "terminationGracePeriodSeconds": 10}}),
        "must not be set on a readinessProbe",
    ),
    _refused(
        "probe-port-out-of-range",
        job(container={"livenessProbe": {"httpGet": {"path": "/", "port": 70000}}}),
        "between 1 and 65535",
    ),
    _refused(
        "probe-http-scheme-lowercase",
        job(container={"livenessProbe": {"httpGet": {"path": "/", "port": 80, "scheme": "https"}}}),
        "must be one of",
    ),
    _accepted("probes", job(container={"readinessProbe": {**_EXEC, "successThreshold": 2}, "livenessProbe": _EXEC})),
    _refused(
        "pre-stop-two-handlers",
        job(container={"lifecycle": {"preStop": {**_EXEC, "sleep": {"seconds": 5}}}}),
        PROBE_HANDLERS,
    ),
    _refused(
        "pre-stop-sleep-over-grace-period",
        job(container={"lifecycle": {"preStop": {"sleep": {"seconds": 60}}}}),
        "terminationGracePeriodSeconds",
    ),
    _accepted(
        "pre-stop-sleep-within-grace-period",
        job(
            container={"lifecycle": {"preStop": {"sleep": {"seconds": 60}}}}, pod={"terminationGracePeriodSeconds": 90}
        ),
    ),
    # containers' restart policies
    _refused("container-restart-policy", job(container={"restartPolicy": "Always"}), "init containers"),
    _refused(
        "init-container-probe",
        job(change=_set(_INIT, [{"name": "setup", "image": "busybox:1.37.0", "livenessProbe": _EXEC}])),
        "restartPolicy: Always",
    ),
    _refused(
        "init-container-restart-on-failure",
        job(change=_set(_INIT, [{"name": "setup", "image": "busybox:1.37.0", "restartPolicy": "OnFailure"}])),
        "must be Always",
    ),
    _accepted(
        "sidecar-with-probe",
        job(
            change=_set(
                _INIT,
                [{"name": "proxy", "image": "busybox:1.37.0", "restartPolicy": "Always", "readinessProbe": _EXEC}],
            )
        ),
    ),
    _refused("termination-message-policy", job(container={"terminationMessagePolicy": "Always"}), "must be one of"),
    # security context, host aliases, DNS
    _refused("run-as-user-negative", job(container={"securityContext": {"runAsUser": -1}}), "between 0 and 2147483647"),
    _accepted("run-as-user", job(container={"securityContext": {"runAsUser": 1000, "runAsNonRoot": True}})),
    _refused("host-alias-not-an-ip", job(pod={"hostAliases": [{"ip": "db", "hostnames": ["db.local"]}]}), "IP address"),
    _accepted("host-alias", job(pod={"hostAliases": [{"ip": "10.0.0.5", "hostnames": ["db.local"]}]})),
    _refused("dns-policy-none-without-config", job(pod={"dnsPolicy": "None"}), "nameserver"),
    # volumes
    _refused(
        "secret-volume-without-name",
        job(pod={"volumes": [{"name": "creds", "secret": {}}]}),
        "secretName is required",
    ),
    _refused(
        "config-map-item-absolute-path",
        job(pod={"volumes": [{"name": "cfg", "configMap": {"name": "c", "items": [{"key": "k", "path": "/etc/k"}]}}]}),
        "relative path",
    ),
    _refused("host-path-without-path", job(pod={"volumes": [{"name": "data", "hostPath": {}}]}), "path is required"),
    _accepted(
        "volumes",
        job(
            pod={
                "volumes": [
                    {"name": "creds", "secret": {"secretName": "credentials"}},
                    {"name": "cfg", "configMap": {"name": "c", "items": [{"key": "k", "path": "conf/k"}]}},
                ]
            },
            container={
                "volumeMounts": [{"name": "creds", "mountPath": "/creds"}, {"name": "cfg", "mountPath": "/cfg"}]
            },
        ),
    ),
    # labels and annotations of the job and of its pods
    _refused("job-label-key-space", job(change=_set("metadata.labels", {"my team": "ml"})), "label key"),
    _refused(
        "pod-annotation-key-space",
        job(change=_set("spec.tasks.0.template.metadata", {"annotations": {"a b": "x"}})),
        "annotation key",
    ),
)

# ---- volumes, mounts, environment, claims, readiness gates, DNS: Kubernetes' rules (kube/volumes, kube/references) --

_MOUNT = {"name": "d", "mountPath": "/d"}
_SCRATCH = [{"name": "d", "emptyDir": {}}]


def _mounted(mount: Doc, *, privileged: bool | None = None) -> Doc:
    """A job whose container mounts the scratch volume ``d`` with ``mount``'s fields added."""
    container: Doc = {"volumeMounts": [{**_MOUNT, **mount}]}
    if privileged is not None:
        container["securityContext"] = {"privileged": privileged}
    return job(container=container, pod={"volumes": _SCRATCH})


def _projected(*sources: Doc) -> Doc:
    return job(pod={"volumes": [{"name": "p", "projected": {"sources": list(sources)}}]})


def _env_from(source: Doc) -> Doc:
    return job(container={"env": [{"name": "A", "valueFrom": source}]})


_NAME_FILE = {"fieldRef": {"fieldPath": "metadata.name"}}

_VOLUME_RULES: tuple[Case, ...] = (
    _refused(
        "config-map-default-mode-over-0777",
        job(pod={"volumes": [{"name": "c", "configMap": {"name": "c", "defaultMode": 0o1000}}]}),
        "between 0 and 0777",
    ),
    _refused(
        "secret-item-mode-over-0777",
        job(
            pod={
                "volumes": [
                    {"name": "s", "secret": {"secretName": "s", "items": [{"key": "k", "path": "k", "mode": 1000}]}}
                ]
            }
        ),
        "between 0 and 0777",
    ),
    _accepted(
        "file-modes-0777",
        job(
            pod={
                "volumes": [
                    {
                        "name": "c",
                        "configMap": {
                            "name": "c",
                            "defaultMode": 0o777,
                            "items": [{"key": "k", "path": "k", "mode": 0}],
                        },
                    }
                ]
            }
        ),
    ),
    _refused(
        "downward-api-item-dot-dot",
        job(pod={"volumes": [{"name": "d", "downwardAPI": {"items": [{"path": "a/../../x", **_NAME_FILE}]}}]}),
        "must not contain '..'",
    ),
    _accepted(
        "downward-api-item-dots-in-a-name",
        job(pod={"volumes": [{"name": "d", "downwardAPI": {"items": [{"path": "a..b/name", **_NAME_FILE}]}}]}),
    ),
    _refused(
        "projected-duplicate-path",
        _projected(
            {"configMap": {"name": "a", "items": [{"key": "k", "path": "conf"}]}},
            {"downwardAPI": {"items": [{"path": "conf", **_NAME_FILE}]}},
        ),
        "conflicting duplicate paths",
    ),
    _refused(
        "token-under-ten-minutes",
        _projected({"serviceAccountToken": {"path": "token", "expirationSeconds": 599}}),
        "less than 10 minutes",
    ),
    _accepted(
        "projected-token-ten-minutes",
        _projected(
            {"configMap": {"name": "a", "items": [{"key": "k", "path": "conf"}]}},
            {"serviceAccountToken": {"path": "token", "expirationSeconds": 600}},
        ),
    ),
    _refused(
        "host-path-type-lowercase",
        job(pod={"volumes": [{"name": "h", "hostPath": {"path": "/x", "type": "directory"}}]}),
        "Unsupported value",
    ),
    _refused("sub-path-absolute", _mounted({"subPath": "/abs"}), "must be a relative path"),
    _refused("sub-path-dot-dot", _mounted({"subPath": "a/../../x"}), "must not contain '..'"),
    _refused("sub-path-expr-dot-dot", _mounted({"subPathExpr": "../$(POD_NAME)"}), "must not contain '..'"),
    _accepted("sub-paths", _mounted({"subPath": "logs/a..b"})),
    _refused(
        "bidirectional-propagation-unprivileged",
        _mounted({"mountPropagation": "Bidirectional"}),
        "privileged containers",
    ),
    _accepted("host-to-container-propagation", _mounted({"mountPropagation": "HostToContainer"})),
    _refused(
        "config-map-key-ref-bad-key",
        _env_from({"configMapKeyRef": {"name": "c", "key": "bad key!"}}),
        "valid config key",
    ),
    _refused(
        "secret-key-ref-dot-dot-key", _env_from({"secretKeyRef": {"name": "s", "key": "..token"}}), "valid config key"
    ),
    _accepted("key-refs", _env_from({"configMapKeyRef": {"name": "c", "key": "config.yaml"}})),
    _refused(
        "cpu-divisor-three",
        _env_from({"resourceFieldRef": {"resource": "limits.cpu", "divisor": "3"}}),
        "only divisor's values",
    ),
    _refused(
        "memory-divisor-1024",
        _env_from({"resourceFieldRef": {"resource": "limits.memory", "divisor": "1024"}}),
        "only divisor's values",
    ),
    _accepted("memory-divisor-1mi", _env_from({"resourceFieldRef": {"resource": "limits.memory", "divisor": "1Mi"}})),
    _refused(
        "container-claim-without-pod-claim",
        job(container={"resources": {"claims": [{"name": "gpu"}]}}),
        "pod.spec.resourceClaims",
    ),
    _refused("readiness-gate-space", job(pod={"readinessGates": [{"conditionType": "bad type!"}]}), "qualified name"),
    _accepted("readiness-gate", job(pod={"readinessGates": [{"conditionType": "example.com/ready"}]})),
    _refused(
        "dns-four-nameservers",
        job(pod={"dnsPolicy": "None", "dnsConfig": {"nameservers": ["10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4"]}}),
        "more than 3 nameservers",
    ),
    _refused(
        "dns-nameserver-name",
        job(pod={"dnsPolicy": "None", "dnsConfig": {"nameservers": ["dns.local"]}}),
        "valid IP address",
    ),
    _refused(
        "dns-search-underscore",
        job(pod={"dnsConfig": {"searches": ["my_domain.local"]}}),
        "DNS-1123 subdomain",
    ),
    _accepted(
        "dns-config",
        job(
            pod={
                "dnsPolicy": "None",
                "dnsConfig": {
                    "nameservers": ["10.0.0.1", "10.0.0.2", "fd00::10"],
                    "searches": ["svc.cluster.local."],
                    "options": [{"name": "ndots", "value": "2"}],
                },
            }
        ),
    ),
)

# ---- Workflows: Argo's scalar types, object metadata, inputs ---------------------------------------------------------

_WF_TEMPLATE = "spec.templates.0"
_WF_CONTAINER = "spec.templates.0.container"

WORKFLOWS: tuple[Case, ...] = (
    _accepted("workflow", workflow()),
    # scalar types Argo's strict decoder refuses
    _refused("deadline-word", workflow(_set("spec.activeDeadlineSeconds", "ten")), "must be an integer"),
    _refused("deadline-quoted-number", workflow(_set("spec.activeDeadlineSeconds", "600")), "must be an integer"),
    _refused("parallelism-true", workflow(_set("spec.parallelism", True)), "must be an integer"),
    _refused("parallelism-fraction", workflow(_set("spec.parallelism", 2.5)), "must be an integer"),
    _refused("priority-word", workflow(_set("spec.priority", "high")), "must be an integer"),
    _refused("service-account-number", workflow(_set("spec.serviceAccountName", 5)), "must be a string"),
    _refused("host-network-quoted", workflow(_set("spec.hostNetwork", "true")), "must be true or false"),
    _refused("template-parallelism-quoted", workflow(_set(f"{_WF_TEMPLATE}.parallelism", "2")), "must be an integer"),
    _refused("template-daemon-yes", workflow(_set(f"{_WF_TEMPLATE}.daemon", "yes")), "must be true or false"),
    _refused(
        "template-deadline-true", workflow(_set(f"{_WF_TEMPLATE}.activeDeadlineSeconds", True)), "non-negative integer"
    ),
    _refused("command-number", workflow(_set(f"{_WF_CONTAINER}.command", ["sleep", 5])), "must be a string"),
    _refused(
        "env-value-number", workflow(_set(f"{_WF_CONTAINER}.env", [{"name": "COUNT", "value": 3}])), "must be a string"
    ),
    _refused(
        "container-port-quoted",
        workflow(_set(f"{_WF_CONTAINER}.ports", [{"containerPort": "80"}])),
        "must be an integer",
    ),
    _refused("node-selector-number", workflow(_set("spec.nodeSelector", {"gpus": 4})), "must be a string"),
    _refused("label-value-number", workflow(_set("metadata.labels", {"version": 2})), "must be a string"),
    _accepted(
        "parameter-values-any-scalar",
        workflow(
            _set("spec.arguments", {"parameters": [{"name": "count", "value": 3}, {"name": "flag", "value": True}]})
        ),
    ),
    _accepted(
        "input-default-number",
        workflow(_set(f"{_WF_TEMPLATE}.inputs", {"parameters": [{"name": "count", "default": 3, "enum": [3, 4]}]})),
    ),
    _accepted(
        "typed-scalars",
        workflow(
            _both(
                _set("spec.activeDeadlineSeconds", 600),
                _set("spec.parallelism", 2),
                _set("spec.hostNetwork", False),
                _set(f"{_WF_TEMPLATE}.activeDeadlineSeconds", "{{workflow.parameters.d}}"),
                _set("spec.arguments", {"parameters": [{"name": "d", "value": "60"}]}),
            )
        ),
    ),
    # labels and annotations: the API server refuses the Workflow
    _refused("label-key-space", workflow(_set("metadata.labels", {"my team": "ml"})), "label key", "apiserver"),
    _refused(
        "label-value-space", workflow(_set("metadata.labels", {"team": "machine learning"})), "label value", "apiserver"
    ),
    _refused("label-value-too-long", workflow(_set("metadata.labels", {"team": "x" * 64})), "label value", "apiserver"),
    _refused(
        "label-key-bad-prefix", workflow(_set("metadata.labels", {"Example.com/team": "ml"})), "label key", "apiserver"
    ),
    _refused(
        "annotation-key-space", workflow(_set("metadata.annotations", {"my note": "x"})), "annotation key", "apiserver"
    ),
    _accepted(
        "labels-and-annotations",
        workflow(
            _both(
                _set("metadata.labels", {"app.kubernetes.io/name": "train", "empty": ""}),
                _set("metadata.annotations", {"Example.com/Note": "any text: at all"}),
            )
        ),
    ),
    # inputs a call leaves out
    _refused("dag-task-without-input", workflow(_calls("dag")), "does not pass 'text'"),
    _refused("step-without-input", workflow(_calls("steps")), "does not pass 'text'"),
    _accepted("dag-task-with-input", workflow(_calls("dag", {"parameters": [{"name": "text", "value": "hi"}]}))),
    _accepted("step-input-with-default", workflow(_calls("steps", default="hi"))),
    _refused(
        "entrypoint-without-input",
        workflow(_set("spec.templates", [_say_with_input() | {"name": "main"}])),
        "does not pass 'text'",
    ),
    _refused(
        "exit-handler-without-input",
        workflow(_both(_set("spec.onExit", "say"), lambda doc: doc["spec"]["templates"].append(_say_with_input()))),
        "does not pass 'text'",
    ),
    _accepted(
        "entrypoint-input-from-arguments",
        workflow(
            _both(
                _set("spec.templates", [_say_with_input() | {"name": "main"}]),
                _set("spec.arguments", {"parameters": [{"name": "text", "value": "hi"}]}),
            )
        ),
    ),
)

# ---- Workflows: a DAG's references to its tasks, a steps template's to its steps (tools/lint/outputs, dags) ---------

_A_RESULT = "{{tasks.a.outputs.result}}"
_WORKFLOW_NODE_REFERENCES: tuple[Case, ...] = (
    _refused(
        "dag-reads-a-misspelt-task", workflow(_reads("dag", "{{tasks.gird.outputs.result}}", depends="a")), "no task"
    ),
    _refused("dag-reads-a-task-it-does-not-run-after", workflow(_reads("dag", _A_RESULT)), "does not run after"),
    _accepted("dag-reads-a-task-it-runs-after", workflow(_reads("dag", _A_RESULT, depends="a"))),
    _accepted("dag-reads-a-task-it-runs-after-through-another", workflow(_reads("dag", _A_RESULT, between=True))),
    _refused(
        "dag-reads-a-step",
        workflow(_reads("dag", "{{steps.a.outputs.result}}", depends="a")),
        "a DAG names its tasks",
    ),
    _refused("steps-read-a-misspelt-step", workflow(_reads("steps", "{{steps.gird.outputs.result}}")), "no step"),
    _accepted("steps-read-an-earlier-step", workflow(_reads("steps", "{{steps.a.outputs.result}}"))),
    _refused("steps-read-a-task", workflow(_reads("steps", _A_RESULT)), "a steps template names its steps"),
)

# ---- Workflows: where a template's pod puts its files (tools/lint/template_mounts) -----------------------------------

_TWO_SCRATCH = [{"name": "a", "emptyDir": {}}, {"name": "b", "emptyDir": {}}]

_WORKFLOW_MOUNT_RULES: tuple[Case, ...] = (
    _refused(
        "same-mount-path-twice",
        workflow(
            _both(
                _set("spec.volumes", _TWO_SCRATCH),
                _set(
                    f"{_WF_CONTAINER}.volumeMounts",
                    [{"name": "a", "mountPath": "/d"}, {"name": "b", "mountPath": "/d"}],
                ),
            )
        ),
        "already mounted",
    ),
    _refused(
        "input-artifact-on-a-mount",
        workflow(
            _both(
                _set("spec.volumes", _TWO_SCRATCH[:1]),
                _set(f"{_WF_CONTAINER}.volumeMounts", [{"name": "a", "mountPath": "/d"}]),
                _set(f"{_WF_TEMPLATE}.inputs", {"artifacts": [{"name": "x", "path": "/d", "raw": {"data": "x"}}]}),
            )
        ),
        "already mounted",
    ),
    _accepted(
        "two-mount-paths",
        workflow(
            _both(
                _set("spec.volumes", _TWO_SCRATCH),
                _set(
                    f"{_WF_CONTAINER}.volumeMounts",
                    [{"name": "a", "mountPath": "/d"}, {"name": "b", "mountPath": "/d/b"}],
                ),
            )
        ),
    ),
)

JOBS += _VOLUME_RULES
WORKFLOWS += _WORKFLOW_MOUNT_RULES + _WORKFLOW_NODE_REFERENCES

# ---- BEGIN _SECURITY_RULES (issue 43): security contexts, scheduling, metadata size, Argo's Go types ---------------


def _anti_affinity(topology_key: str, selector: Doc | None = None) -> Doc:
    term = {"labelSelector": selector or {"matchLabels": {"app": "corpus"}}, "topologyKey": topology_key}
    return {"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}}


def _node_requirement(**requirement: object) -> Doc:
    terms = [{"matchExpressions": [{"key": "example.com/cores", **requirement}]}]
    return {
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}}
    }


def _spread(**constraint: object) -> Doc:
    return {
        "topologySpreadConstraints": [
            {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule", **constraint}
        ]
    }


def _pod_context(**context: object) -> Doc:
    return {"securityContext": context}


def _container_context(**context: object) -> Doc:
    return {"securityContext": context}


_SECURITY_JOBS: tuple[Case, ...] = (
    # security contexts: the pod's and each container's
    _refused(
        "fs-group-change-policy-unknown", job(pod=_pod_context(fsGroupChangePolicy="Sometimes")), "unsupported value"
    ),
    _accepted("fs-group-change-policy", job(pod=_pod_context(fsGroup=1000, fsGroupChangePolicy="OnRootMismatch"))),
    _refused("supplemental-group-negative", job(pod=_pod_context(supplementalGroups=[-1])), "between 0 and 2147483647"),
    _accepted("supplemental-groups-bounds", job(pod=_pod_context(supplementalGroups=[0, 2147483647]))),
    _refused("sysctl-name-space", job(pod=_pod_context(sysctls=[{"name": "bad name", "value": "1"}])), "match regex"),
    _refused(
        "sysctl-net-with-host-network",
        job(pod={"hostNetwork": True, **_pod_context(sysctls=[{"name": "net.ipv4.tcp_syncookies", "value": "1"}])}),
        "when 'hostNetwork' is true",
    ),
    _accepted("sysctl", job(pod=_pod_context(sysctls=[{"name": "kernel/shm_rmid_forced", "value": "1"}]))),
    _refused(
        "share-process-namespace-and-host-pid",
        job(pod={"shareProcessNamespace": True, "hostPID": True}),
        "cannot both be enabled",
    ),
    _accepted("share-process-namespace", job(pod={"shareProcessNamespace": True})),
    _refused(
        "host-users-false-host-network", job(pod={"hostUsers": False, "hostNetwork": True}), "`hostUsers` is false"
    ),
    _refused(
        "no-escalation-but-privileged",
        job(container=_container_context(allowPrivilegeEscalation=False, privileged=True)),
        "`privileged` to true",
    ),
    _refused(
        "no-escalation-but-cap-sys-admin",
        job(container=_container_context(allowPrivilegeEscalation=False, capabilities={"add": ["CAP_SYS_ADMIN"]})),
        "CAP_SYS_ADMIN",
    ),
    _accepted(
        "no-escalation-with-capability",
        job(container=_container_context(allowPrivilegeEscalation=False, capabilities={"add": ["NET_BIND_SERVICE"]})),
    ),
    _refused("proc-mount-unknown", job(container=_container_context(procMount="Bogus")), "unsupported value"),
    _refused(
        "proc-mount-unmasked", job(container=_container_context(procMount="Unmasked")), "`hostUsers` must be false"
    ),
    _accepted("proc-mount-default", job(container=_container_context(procMount="Default"))),
    _accepted(
        "proc-mount-unmasked-own-user-namespace",
        job(pod={"hostUsers": False}, container=_container_context(procMount="Unmasked")),
    ),
    _refused(
        "seccomp-localhost-without-profile",
        job(pod=_pod_context(seccompProfile={"type": "Localhost"})),
        "must be set when seccomp type is Localhost",
    ),
    _refused(
        "seccomp-runtime-default-with-profile",
        job(container=_container_context(seccompProfile={"type": "RuntimeDefault", "localhostProfile": "x.json"})),
        "can only be set when seccomp type is Localhost",
    ),
    _accepted(
        "seccomp-profiles",
        job(
            pod=_pod_context(seccompProfile={"type": "RuntimeDefault"}),
            container=_container_context(seccompProfile={"type": "Localhost", "localhostProfile": "profiles/a.json"}),
        ),
    ),
    _refused(
        "apparmor-localhost-without-profile",
        job(container=_container_context(appArmorProfile={"type": "Localhost"})),
        "must be set when AppArmor type is Localhost",
    ),
    _accepted("apparmor-runtime-default", job(pod=_pod_context(appArmorProfile={"type": "RuntimeDefault"}))),
    # the pod's OS
    _refused("os-name-unknown", job(pod={"os": {"name": "plan9"}}), "unsupported value"),
    _refused(
        "windows-pod-with-selinux",
        job(pod={"os": {"name": "windows"}, **_pod_context(seLinuxOptions={"type": "t"})}),
        "cannot be set for a windows pod",
    ),
    _refused(
        "linux-pod-with-windows-options",
        job(pod={"os": {"name": "linux"}}, container=_container_context(windowsOptions={"runAsUserName": "x"})),
        "windows options cannot be set for a linux pod",
    ),
    _accepted("windows-pod", job(pod={"os": {"name": "windows"}})),
    # affinity and topology spread
    _refused("anti-affinity-empty-topology-key", job(pod=_anti_affinity("")), "can not be empty"),
    _refused(
        "anti-affinity-selector-in-without-values",
        job(pod=_anti_affinity("zone", {"matchExpressions": [{"key": "app", "operator": "In"}]})),
        "must be specified when `operator` is 'In' or 'NotIn'",
    ),
    _accepted("anti-affinity", job(pod=_anti_affinity("kubernetes.io/hostname"))),
    _refused(
        "node-affinity-gt-two-values", job(pod=_node_requirement(operator="Gt", values=["4", "8"])), "single value"
    ),
    _refused(
        "node-affinity-in-without-values",
        job(pod=_node_requirement(operator="In")),
        "must be specified when `operator` is 'In' or 'NotIn'",
    ),
    _refused(
        "node-affinity-exists-with-values",
        job(pod=_node_requirement(operator="Exists", values=["4"])),
        "may not be specified when `operator` is 'Exists'",
    ),
    _accepted("node-affinity-gt", job(pod=_node_requirement(operator="Gt", values=["4"]))),
    _refused("spread-max-skew-zero", job(pod=_spread(maxSkew=0)), "must be greater than zero"),
    _refused("spread-when-unsatisfiable-unknown", job(pod=_spread(whenUnsatisfiable="Maybe")), "unsupported value"),
    _refused(
        "spread-min-domains-schedule-anyway",
        job(pod=_spread(whenUnsatisfiable="ScheduleAnyway", minDomains=2)),
        "can only use minDomains",
    ),
    _accepted("spread", job(pod=_spread(minDomains=2, labelSelector={"matchLabels": {"app": "corpus"}}))),
    # metadata: the API server counts every annotation's key and value
    _refused(
        "job-annotations-too-big",
        job(change=_set("metadata.annotations", {"note": "x" * (256 * 1024)})),
        "at most 262144 bytes",
    ),
    _accepted("job-annotations-large", job(change=_set("metadata.annotations", {"note": "x" * (250 * 1024)}))),
)

_SECURITY_WORKFLOWS: tuple[Case, ...] = (
    # Argo decodes a quantity as Kubernetes parses one, and each integer field into its Go type
    _refused("cpu-true", workflow(_set(f"{_WF_CONTAINER}.resources", {"limits": {"cpu": True}})), "quantity"),
    _refused("memory-gb", workflow(_set(f"{_WF_CONTAINER}.resources", {"requests": {"memory": "1Gb"}})), "quantity"),
    _accepted(
        "quantities",
        workflow(_set(f"{_WF_CONTAINER}.resources", {"requests": {"cpu": 0.5, "memory": "1Gi"}, "limits": {"cpu": 2}})),
    ),
    _refused("priority-over-int32", workflow(_set("spec.priority", 2**31)), "a Go int32"),
    _accepted("priority-int32-max", workflow(_set("spec.priority", 2**31 - 1))),
    _refused(
        "container-port-over-int32",
        workflow(_set(f"{_WF_CONTAINER}.ports", [{"containerPort": 2**31}])),
        "a Go int32",
    ),
    _refused("parallelism-over-int64", workflow(_set("spec.parallelism", 2**63)), "a Go int64"),
    # metadata the API server checks
    _refused("namespace-uppercase", workflow(_set("metadata.namespace", "Argo")), "DNS-1123 label", "apiserver"),
)

JOBS += _SECURITY_JOBS
WORKFLOWS += _SECURITY_WORKFLOWS

# ---- END _SECURITY_RULES ---------------------------------------------------------------------------------------------

CASES: tuple[Case, ...] = (*JOBS, *WORKFLOWS)
