"""Every Volcano Job admission and CRD rule, checked on the job as plain data.

A Volcano Job created by an Argo resource step is only validated when the step runs, so a broken job fails at run
time on the cluster. These checks move that failure to render and lint time. Sources: the Job CRD (enforced by the
API server since Volcano 1.14, by the webhook before), the ``validatejob.volcano.sh`` webhook, and the Kubernetes
pod-template validation that webhook runs on each task. Field names and scalar types are checked by
``volcano.schema``, quantities parsed by ``kube.quantities``. The job model raises the first error
(:func:`raise_first`); the linter reports every finding.
"""

from __future__ import annotations

import re
import typing
from collections.abc import Iterable, Iterator, Mapping, Sequence
from fractions import Fraction
from typing import Final

from hera_volcano.kube import containers, names, pod_scheduling, pod_security, pods
from hera_volcano.kube.images import image_problem
from hera_volcano.kube.metadata import check_namespace, labels_and_annotations
from hera_volcano.kube.quantities import DURATION_MESSAGE, is_go_duration, quantity
from hera_volcano.shared.errors import ValidationError
from hera_volcano.shared.findings import Finding, as_list, as_map, entry, error, join, warning
from hera_volcano.shared.graphs import cycles
from hera_volcano.volcano.plugin_mounts import check_plugin_mounts
from hera_volcano.volcano.schema import API_VERSION, KIND, check_pod_template_shape, check_shape

#: Plugins the webhook knows (their arguments are not checked).
PLUGINS: Final = ("ssh", "env", "svc", "tensorflow", "mpi", "pytorch", "hcclrank", "ray")
#: svc itself, and the plugins the mutating webhook adds svc for.
SVC_PLUGINS: Final = frozenset({"svc", "mpi", "pytorch", "tensorflow", "ray"})
#: Events the webhook accepts in a policy.
EVENTS: Final = ("*", "PodFailed", "PodEvicted", "PodPending", "Unknown", "TaskCompleted", "TaskFailed", "JobUpdated")
#: Events the CRD enum allows but the webhook rejects.
INTERNAL_EVENTS: Final = ("PodRunning", "OutOfSync", "CommandIssued")
#: Actions the webhook accepts for an event policy.
ACTIONS: Final = (
    "AbortJob",
    "RestartJob",
    "RestartTask",
    "RestartPod",
    "RestartPartition",
    "TerminateJob",
    "CompleteJob",
    "ResumeJob",
)
TOPOLOGY_POLICIES: Final = ("none", "best-effort", "restricted", "single-numa-node")
NETWORK_TOPOLOGY_MODES: Final = ("hard", "soft")
MAX_NAME_LENGTH: Final = 63
#: Kubernetes appends this many random characters to ``generateName`` (after cutting it to 58).
GENERATED_SUFFIX_LENGTH: Final = 5


_DEFAULT_MPI_MASTER: Final = "master"
_DEFAULT_MPI_WORKER: Final = "worker"
_RESTART_POLICIES: Final = ("Always", "OnFailure", "Never")
_DNS_POLICIES: Final = ("ClusterFirstWithHostNet", "ClusterFirst", "Default", "None")
_TOLERATION_OPERATORS: Final = ("Equal", "Exists")
_TOLERATION_EFFECTS: Final = ("NoSchedule", "PreferNoSchedule", "NoExecute")
_PULL_POLICIES: Final = ("Always", "Never", "IfNotPresent")
_PROTOCOLS: Final = ("TCP", "UDP", "SCTP")
_STANDARD_CONTAINER_RESOURCES: Final = ("cpu", "memory", "ephemeral-storage")
_HUGEPAGES: Final = "hugepages-"

# ---- small helpers ---------------------------------------------------------------------------------------------------


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _one_of(path: str, value: object, allowed: Sequence[str]) -> Iterator[Finding]:
    if isinstance(value, str) and value not in allowed:
        yield error(path, f"must be one of {', '.join(allowed)}")


def _minimum(parent: Mapping[str, object], key: str, minimum: int, path: str) -> Iterator[Finding]:
    value = _int(parent.get(key))
    if value is not None and value < minimum:
        yield error(join(path, key), f"must be at least {minimum}")


def _named(path: str, value: object, rule: names.Rule) -> Iterator[Finding]:
    if isinstance(value, str):
        message = rule(value)
        if message is not None:
            yield error(path, message)


# ---- metadata and names ----------------------------------------------------------------------------------------------


def _job_name_problem(name: str, svc: bool) -> str | None:
    """Why Kubernetes or Volcano would refuse this job name, or None."""
    message = names.dns1123_subdomain(name)
    if message is not None:
        return f"{message}: the name of a Kubernetes object"
    if len(name) > MAX_NAME_LENGTH:
        return f"must be at most {MAX_NAME_LENGTH} characters: Volcano requires a qualified name"
    if svc and names.dns1035_label(name) is not None:
        return f"{names.DNS1035_LABEL_MESSAGE}: the svc plugin names a Service after the job"
    return None


def _job_name(metadata: Mapping[str, object], svc: bool) -> tuple[str | None, list[Finding]]:
    """The job's name as its pods will see it (a generated name is simulated) and the findings about it."""
    name, generate = metadata.get("name"), metadata.get("generateName")
    if isinstance(name, str) and name:
        problem = _job_name_problem(name, svc)
        return (None, [error("metadata.name", problem)]) if problem else (name, [])
    if isinstance(generate, str) and generate:
        simulated = generate[: MAX_NAME_LENGTH - GENERATED_SUFFIX_LENGTH] + "x" * GENERATED_SUFFIX_LENGTH
        problem = _job_name_problem(simulated, svc)
        return (None, [error("metadata.generateName", problem)]) if problem else (simulated, [])
    if name in (None, "") and generate in (None, ""):
        return None, [error("metadata.name", "is required (or set metadata.generateName)")]
    return None, []  # a non-string name: reported by the shape check


def _check_header(job: Mapping[str, object]) -> Iterator[Finding]:
    if job.get("apiVersion") != API_VERSION:
        yield error("apiVersion", f"must be {API_VERSION}")
    if job.get("kind") != KIND:
        yield error("kind", f"must be {KIND}")
    if job.get("metadata") is None:
        yield error("metadata", "is required: a Volcano Job needs metadata.name or metadata.generateName")
    if job.get("spec") is None:
        yield error("spec", "is required")


# ---- policies --------------------------------------------------------------------------------------------------------


def _policy_events(policy: Mapping[str, object], path: str) -> list[tuple[str, str]]:
    """(event, path) pairs of one policy, ``events`` then ``event``; Volcano drops repeats within one policy."""
    pairs = [(e, f"{path}.events[{i}]") for i, e in enumerate(as_list(policy.get("events"))) if isinstance(e, str)]
    event = policy.get("event")
    if isinstance(event, str) and event:
        pairs.append((event, f"{path}.event"))
    unique: dict[str, str] = {}
    for event_name, event_path in pairs:
        unique.setdefault(event_name, event_path)
    return list(unique.items())


def _event_problem(event: str) -> str | None:
    if event in EVENTS:
        return None
    if event in INTERNAL_EVENTS:
        return f"{event} is internal to Volcano: its webhook rejects it in a policy; use one of {', '.join(EVENTS)}"
    hint = " (did you mean Unknown?)" if event == "JobUnknown" else ""
    return f"must be one of {', '.join(EVENTS)}{hint}"


def _check_policies(policies: object, path: str) -> Iterator[Finding]:
    """One policy list (job-level or one task's): Volcano checks each list on its own."""
    seen_events: dict[str, str] = {}
    seen_codes: dict[int, str] = {}
    for i, policy in enumerate(as_list(policies)):
        if not isinstance(policy, Mapping):
            continue
        at = f"{path}[{i}]"
        events = _policy_events(policy, at)
        has_events = bool(events) or bool(as_list(policy.get("events")))
        exit_code = policy.get("exitCode")
        action = policy.get("action")
        timeout = policy.get("timeout")
        if timeout is not None and isinstance(timeout, str) and not is_go_duration(timeout):
            yield error(f"{at}.timeout", DURATION_MESSAGE)
        if has_events and exit_code is not None:
            yield error(at, "must not set both event(s) and exitCode")
            continue
        if not has_events and exit_code is None:
            yield error(at, "must set event, events or exitCode")
            continue
        if has_events:
            for event, event_path in events:
                problem = _event_problem(event)
                if problem is not None:
                    yield error(event_path, problem)
                if event in seen_events:
                    yield error(event_path, f"duplicate event {event!r}: already handled by {seen_events[event]}")
                else:
                    seen_events[event] = event_path
            if not isinstance(action, str) or not action:
                yield error(f"{at}.action", f"is required for an event policy: one of {', '.join(ACTIONS)}")
            elif action not in ACTIONS:
                yield error(f"{at}.action", f"must be one of {', '.join(ACTIONS)}")
            if any(event == "PodPending" for event, _ in events) and not timeout:
                yield warning(at, "a PodPending policy acts only after its timeout: set timeout (e.g. 10m)")
            continue
        code = _int(exit_code)
        if code == 0:
            yield error(f"{at}.exitCode", "must not be 0: 0 is not an error exit code")
        elif code is not None and code in seen_codes:
            yield error(f"{at}.exitCode", f"duplicate exitCode {code}: already handled by {seen_codes[code]}")
        elif code is not None:
            seen_codes[code] = f"{at}.exitCode"
        if action not in ACTIONS:
            yield warning(
                f"{at}.action",
                f"is not a known action ({', '.join(ACTIONS)}): Volcano does not check an exitCode policy's action,"
                " so this policy would never act",
            )
    if "*" in seen_events and len(seen_events) > 1:
        others = ", ".join(e for e in seen_events if e != "*")
        yield error(seen_events["*"], f"'*' must be the only event in its policy list (also listed: {others})")


# ---- plugins -------------------------------------------------------------------------------------------------------


def mpi_roles(args: Sequence[object]) -> tuple[str, str, str | None]:
    """The mpi plugin's master and worker task names, parsed as Go's ``flag`` package parses them.

    Returns ``(master, worker, problem)``; ``problem`` explains where parsing stopped (Volcano then keeps the
    values read so far and the defaults for the rest).
    """
    master, worker = _DEFAULT_MPI_MASTER, _DEFAULT_MPI_WORKER
    i = 0
    while i < len(args):
        arg = args[i]
        if not isinstance(arg, str) or len(arg) < 2 or arg[0] != "-" or arg == "--":
            return master, worker, None
        flag = arg[2:] if arg.startswith("--") else arg[1:]
        if not flag or flag[0] in "-=":
            return master, worker, f"bad flag syntax: {arg}"
        flag, has_value, value = flag.partition("=")
        if flag not in ("master", "worker", "port"):
            return master, worker, f"flag provided but not defined: -{flag} (known: --master, --worker, --port)"
        if not has_value:
            if i + 1 >= len(args) or not isinstance(args[i + 1], str):
                return master, worker, f"flag needs an argument: -{flag}"
            i += 1
            value = typing.cast(str, args[i])
        if flag == "master":
            master = value
        elif flag == "worker":
            worker = value
        elif not re.fullmatch(r"[+-]?[0-9]+", value):
            return master, worker, f"invalid value {value!r} for flag -port: must be an integer"
        i += 1
    return master, worker, None


def _check_plugins(plugins: Mapping[str, object], task_names: Iterable[str]) -> Iterator[Finding]:
    known_tasks = set(task_names)
    for name in plugins:
        if name not in PLUGINS:
            yield error(entry("spec.plugins", name), f"unknown plugin {name!r}: Volcano knows {', '.join(PLUGINS)}")
    if "mpi" not in plugins:
        return
    master, worker, problem = mpi_roles(as_list(plugins["mpi"]))
    if problem is not None:
        yield warning("spec.plugins.mpi", f"the mpi plugin cannot parse its arguments: {problem}")
    if master not in known_tasks:
        yield error(
            "spec.plugins.mpi",
            f"the mpi master task {master!r} (--master) must be one of the tasks ({', '.join(sorted(known_tasks))})",
        )
    if worker not in known_tasks:
        yield error(
            "spec.plugins.mpi",
            f"the mpi worker task {worker!r} (--worker) must be one of the tasks ({', '.join(sorted(known_tasks))});"
            " Volcano before 1.15 rejects the job otherwise",
        )


# ---- spec-level fields ---------------------------------------------------------------------------------------------


def _check_network_topology(value: object, path: str) -> Iterator[Finding]:
    topology = as_map(value)
    yield from _one_of(f"{path}.mode", topology.get("mode"), NETWORK_TOPOLOGY_MODES)
    yield from _minimum(topology, "highestTierAllowed", 0, path)
    tier_name = topology.get("highestTierName")
    if isinstance(tier_name, str) and len(tier_name) > 253:
        yield error(f"{path}.highestTierName", "must be at most 253 characters")
    if topology.get("highestTierAllowed") is not None and tier_name:
        yield error(path, "must not set both highestTierAllowed and highestTierName")


def _check_volumes(volumes: object) -> Iterator[Finding]:
    mount_paths: dict[str, str] = {}
    for i, volume in enumerate(as_list(volumes)):
        if not isinstance(volume, Mapping):
            continue
        at = f"spec.volumes[{i}]"
        mount_path = volume.get("mountPath")
        if mount_path is None or mount_path == "":
            yield error(f"{at}.mountPath", "is required")
        elif isinstance(mount_path, str) and ":" in mount_path:
            yield error(f"{at}.mountPath", "must not contain ':'")
        elif isinstance(mount_path, str) and mount_path in mount_paths:
            yield error(f"{at}.mountPath", f"duplicate mountPath {mount_path!r}: also {mount_paths[mount_path]}")
        elif isinstance(mount_path, str):
            mount_paths[mount_path] = f"{at}.mountPath"
        claim, claim_name = volume.get("volumeClaim"), volume.get("volumeClaimName")
        if claim is None and not claim_name:
            yield error(at, "must set volumeClaim (a new PVC) or volumeClaimName (an existing PVC)")
        elif claim is not None and claim_name:
            yield error(at, "must set only one of volumeClaim (a new PVC) and volumeClaimName (an existing PVC)")
        yield from _named(f"{at}.volumeClaimName", claim_name, names.dns1123_subdomain)


def _check_spec_fields(spec: Mapping[str, object]) -> Iterator[Finding]:
    for key, minimum in (("minAvailable", 0), ("maxRetry", 0), ("ttlSecondsAfterFinished", 0), ("minSuccess", 1)):
        yield from _minimum(spec, key, minimum, "spec")
    queue = spec.get("queue")
    if queue == "root":
        yield error("spec.queue", "must not be root: Volcano accepts jobs only in leaf queues")
    if queue != "":  # Volcano's mutating webhook turns an empty queue into "default"
        yield from _named("spec.queue", queue, names.dns1123_subdomain)
    yield from _named("spec.priorityClassName", spec.get("priorityClassName"), names.dns1123_subdomain)
    scheduler = spec.get("schedulerName")
    if isinstance(scheduler, str) and len(scheduler) > MAX_NAME_LENGTH:
        yield error("spec.schedulerName", f"must be at most {MAX_NAME_LENGTH} characters")
    estimate = spec.get("runningEstimate")
    if isinstance(estimate, str) and not is_go_duration(estimate):
        yield error("spec.runningEstimate", DURATION_MESSAGE)
    if spec.get("networkTopology") is not None:
        yield from _check_network_topology(spec["networkTopology"], "spec.networkTopology")
    yield from _check_policies(spec.get("policies"), "spec.policies")
    yield from _check_volumes(spec.get("volumes"))


# ---- tasks ---------------------------------------------------------------------------------------------------------


def _task_name(task: Mapping[str, object], index: int) -> str:
    """The name Volcano uses: the mutating webhook names an unnamed task ``default<index>``."""
    name = task.get("name")
    return name if isinstance(name, str) and name else f"default{index}"


def _check_partition(task: Mapping[str, object], path: str) -> Iterator[Finding]:
    policy = as_map(task.get("partitionPolicy"))
    at = f"{path}.partitionPolicy"
    for key in ("totalPartitions", "partitionSize"):
        if policy.get(key) is None:
            yield error(f"{at}.{key}", "is required")
        yield from _minimum(policy, key, 1, at)
    yield from _minimum(policy, "minPartitions", 0, at)
    total, size = _int(policy.get("totalPartitions")), _int(policy.get("partitionSize"))
    replicas, min_partitions = _int(task.get("replicas")) or 0, _int(policy.get("minPartitions")) or 0
    min_available = _int(task.get("minAvailable"))
    if total is not None and size is not None and total >= 1 and size >= 1:
        if replicas != total * size:
            yield error(f"{path}.replicas", f"must equal totalPartitions * partitionSize ({total * size})")
        elif min_available is not None and min_partitions > 0 and min_available != min_partitions * size:
            yield error(f"{path}.minAvailable", f"must equal minPartitions * partitionSize ({min_partitions * size})")
    if policy.get("networkTopology") is not None:
        yield from _check_network_topology(policy["networkTopology"], f"{at}.networkTopology")


def _check_task(
    task: Mapping[str, object], index: int, job_name: str | None, svc: bool, names_known: bool
) -> Iterator[Finding]:
    path = f"spec.tasks[{index}]"
    name = task.get("name")
    name_problem = names.dns1123_label(name) if isinstance(name, str) and name else None
    if name_problem is not None:
        yield error(f"{path}.name", name_problem)
    for key in ("replicas", "minAvailable", "maxRetry"):
        yield from _minimum(task, key, 0, path)
    replicas = _int(task.get("replicas")) or 0
    min_available = _int(task.get("minAvailable"))
    if min_available is not None and min_available > replicas:
        yield error(f"{path}.minAvailable", f"must not exceed replicas ({replicas})")
    policy = task.get("topologyPolicy")
    yield from _one_of(f"{path}.topologyPolicy", policy, TOPOLOGY_POLICIES)
    if task.get("partitionPolicy") is not None:
        yield from _check_partition(task, path)
    yield from _check_policies(task.get("policies"), f"{path}.policies")
    if job_name is not None and name_problem is None:
        # Pods are JOB-TASK-N. The webhook checks N = the task's position as a qualified name (at most 63); with
        # the svc plugin every pod's name is also its hostname, a DNS label, so the highest replica number counts.
        number = max(replicas - 1, index, 0) if svc else index
        pod = f"{job_name}-{_task_name(task, index)}-{number}"
        if len(pod) > MAX_NAME_LENGTH:
            why = "the svc plugin makes each pod name its hostname" if svc else "Volcano checks JOB-TASK-INDEX"
            finding = error(
                f"{path}.name" if name else path,
                f"makes pod names too long: {pod!r} has {len(pod)} characters, at most {MAX_NAME_LENGTH}"
                f" ({why}; generateName adds 5 characters)",
            )
            yield finding if names_known else _sampled(finding)
    cpu_policy = policy if isinstance(policy, str) and policy in TOPOLOGY_POLICIES and policy != "none" else None
    yield from _check_pod_template(task.get("template"), f"{path}.template", cpu_policy)


def _check_tasks(spec: Mapping[str, object], job_name: str | None, svc: bool, names_known: bool) -> Iterator[Finding]:
    tasks = spec.get("tasks")
    if tasks is None or tasks == []:
        yield error("spec.tasks", "must list at least one task")
        return
    first_index: dict[str, int] = {}
    total_replicas = 0
    mistyped = False  # a task or its replicas has the wrong type (already reported): the sum would mislead
    for index, task in enumerate(as_list(tasks)):
        if not isinstance(task, Mapping):
            mistyped = True
            continue
        name = _task_name(task, index)
        if name in first_index:
            yield error(
                f"spec.tasks[{index}].name", f"duplicate task name {name!r}: also spec.tasks[{first_index[name]}]"
            )
        else:
            first_index[name] = index
        replicas = task.get("replicas")
        mistyped = mistyped or (replicas is not None and _int(replicas) is None)
        total_replicas += _int(replicas) or 0
        yield from _check_task(task, index, job_name, svc, names_known)
    job_min = _int(spec.get("minAvailable"))
    if job_min is not None and not mistyped and job_min > total_replicas:
        yield error("spec.minAvailable", f"must not exceed the total replicas of all tasks ({total_replicas})")
    yield from _check_depends_on(as_list(tasks), first_index)


def _check_depends_on(tasks: list[object], index_of: Mapping[str, int]) -> Iterator[Finding]:
    """Task dependencies must name existing tasks and form a DAG."""
    graph: dict[str, list[str]] = {}
    for index, task in enumerate(tasks):
        if not isinstance(task, Mapping) or task.get("dependsOn") is None:
            continue
        name = _task_name(task, index)
        for k, dependency in enumerate(as_list(as_map(task["dependsOn"]).get("name"))):
            if not isinstance(dependency, str):
                continue
            if dependency not in index_of:
                yield error(
                    f"spec.tasks[{index}].dependsOn.name[{k}]",
                    f"unknown task {dependency!r}: dependsOn must name tasks of this job ({', '.join(index_of)})",
                )
            else:
                graph.setdefault(name, []).append(dependency)
    for cycle in cycles(graph):
        yield error(
            f"spec.tasks[{index_of[cycle[0]]}].dependsOn",
            f"task dependencies must form a DAG, but they form a cycle: {' -> '.join(cycle)}",
        )


# ---- pod templates (Kubernetes' own pod-template validation) -------------------------------------------------------


def _is_native_resource(name: str) -> bool:
    return "/" not in name or "kubernetes.io/" in name


def is_extended_resource(name: str) -> bool:
    """A resource with a domain other than kubernetes.io: whole numbers only, never overcommitted."""
    return (
        not _is_native_resource(name)
        and not name.startswith("requests.")
        and names.qualified_name(f"requests.{name}") is None
    )


def _resource_name_problem(name: str) -> str | None:
    message = names.qualified_name(name)
    if message is not None:
        return f"resource name {message}"
    if "/" not in name and name not in _STANDARD_CONTAINER_RESOURCES and not name.startswith(_HUGEPAGES):
        return (
            f"{name!r} is not a container resource ({', '.join(_STANDARD_CONTAINER_RESOURCES)}, hugepages-<size>);"
            " other resources need a domain, such as nvidia.com/gpu"
        )
    if not _is_native_resource(name) and not is_extended_resource(name):
        return f"{name!r} is not a valid extended resource name"
    return None


def _check_resources(resources: Mapping[str, object], path: str) -> Iterator[Finding]:
    parsed: dict[str, dict[str, Fraction]] = {"limits": {}, "requests": {}}
    for kind in ("limits", "requests"):
        for name, raw in as_map(resources.get(kind)).items():
            at = entry(f"{path}.{kind}", name)
            problem = _resource_name_problem(name) if isinstance(name, str) else "resource names must be strings"
            if problem is not None:
                yield error(at, problem)
                continue
            value = quantity(raw)
            if value is None:
                continue  # reported by the shape check
            parsed[kind][name] = value
            if value < 0:
                yield error(at, "must not be negative")
            elif is_extended_resource(name) and value.denominator != 1:
                yield error(at, f"must be a whole number: {name} is an extended resource")
            elif name.startswith(_HUGEPAGES):
                page = quantity(name[len(_HUGEPAGES) :])
                if page is not None and page > 0 and (value / page).denominator != 1:
                    yield error(at, f"must be a whole multiple of the page size {name[len(_HUGEPAGES) :]}")
    limits, requests = parsed["limits"], parsed["requests"]
    for name, request in requests.items():
        at = entry(f"{path}.requests", name)
        overcommit = _is_native_resource(name) and not name.startswith(_HUGEPAGES)
        limit = limits.get(name)
        if limit is None:
            if not overcommit:
                yield error(
                    entry(f"{path}.limits", name),
                    f"is required: {name} cannot be overcommitted, so a request needs an equal limit",
                )
        elif not overcommit and request != limit:
            yield error(at, f"must equal the {name} limit: {name} cannot be overcommitted")
        elif request > limit:
            yield error(at, f"must be less than or equal to the {name} limit")
    uses_hugepages = any(n.startswith(_HUGEPAGES) for n in (*limits, *requests))
    if uses_hugepages and not {"cpu", "memory"} & {*limits, *requests}:
        yield error(path, "hugepages require a cpu or memory request or limit")


def _check_integer_cpu(container: Mapping[str, object], path: str, policy: str) -> Iterator[Finding]:
    """With a topologyPolicy, Volcano wants whole CPUs; an empty ``requests`` falls back to ``limits``."""
    resources = as_map(container.get("resources"))
    kind = "requests" if as_map(resources.get("requests")) else "limits"
    raw = as_map(resources.get(kind)).get("cpu")
    cpu = quantity(raw)
    if raw is not None and cpu is None:
        return  # reported by the shape check
    if cpu is None or cpu < 1 or cpu.denominator != 1:
        yield error(
            f"{path}.resources.{kind}.cpu",
            f"must be a whole number of CPUs (at least 1): the task sets topologyPolicy {policy}",
        )


def _check_ports(ports: object, path: str) -> Iterator[Finding]:
    port_names: set[str] = set()
    for j, port in enumerate(as_list(ports)):
        if not isinstance(port, Mapping):
            continue
        at = f"{path}[{j}]"
        number = port.get("containerPort")
        if number is None:
            yield error(f"{at}.containerPort", "is required")
        elif _int(number) is not None and not 1 <= typing.cast(int, number) <= 65535:
            yield error(f"{at}.containerPort", "must be a port number between 1 and 65535")
        host_port = _int(port.get("hostPort"))
        if host_port is not None and host_port != 0 and not 1 <= host_port <= 65535:
            yield error(f"{at}.hostPort", "must be a port number between 1 and 65535")
        name = port.get("name")
        if isinstance(name, str) and name:
            problem = names.port_name(name)
            if problem is not None:
                yield error(f"{at}.name", problem)
            elif name in port_names:
                yield error(f"{at}.name", f"duplicate port name {name!r}")
            port_names.add(name)
        yield from _one_of(f"{at}.protocol", port.get("protocol"), _PROTOCOLS)


def _check_container(
    container: Mapping[str, object],
    path: str,
    volume_names: set[str],
    cpu_policy: str | None,
    pod: Mapping[str, object],
    init: bool,
) -> Iterator[Finding]:
    image = container.get("image")
    if image is None or image == "":
        yield error(f"{path}.image", "is required")
    elif isinstance(image, str) and image != image.strip():
        yield error(f"{path}.image", "must not have leading or trailing whitespace (Kubernetes refuses the pod)")
    elif isinstance(image, str) and "{{" not in image and image_problem(image):  # {{...}}: Argo fills it in later
        yield error(f"{path}.image", str(image_problem(image)))
    yield from _one_of(f"{path}.imagePullPolicy", container.get("imagePullPolicy"), _PULL_POLICIES)
    yield from _check_ports(container.get("ports"), f"{path}.ports")
    for k, env in enumerate(as_list(container.get("env"))):
        if isinstance(env, Mapping) and not env.get("name"):
            yield error(f"{path}.env[{k}].name", "is required")
    mount_paths: set[str] = set()
    for k, mount in enumerate(as_list(container.get("volumeMounts"))):
        if not isinstance(mount, Mapping):
            continue
        at = f"{path}.volumeMounts[{k}]"
        name, mount_path = mount.get("name"), mount.get("mountPath")
        if not name:
            yield error(f"{at}.name", "is required")
        elif isinstance(name, str) and name not in volume_names:
            yield error(f"{at}.name", f"must name a volume of the pod template (spec.volumes), not {name!r}")
        if not mount_path:
            yield error(f"{at}.mountPath", "is required")
        elif isinstance(mount_path, str) and mount_path in mount_paths:
            yield error(f"{at}.mountPath", f"duplicate mountPath {mount_path!r} in this container")
        elif isinstance(mount_path, str):
            mount_paths.add(mount_path)
    resources = container.get("resources")
    if isinstance(resources, Mapping):
        yield from _check_resources(resources, f"{path}.resources")
    if cpu_policy is not None:
        yield from _check_integer_cpu(container, path, cpu_policy)
    yield from containers.check_container(container, path, init=init, grace=pods.grace_seconds(pod))


def _check_pod_volumes(volumes: object, path: str) -> tuple[set[str], list[Finding]]:
    volume_names: set[str] = set()
    findings: list[Finding] = []
    for j, volume in enumerate(as_list(volumes)):
        if not isinstance(volume, Mapping):
            continue
        at = f"{path}[{j}]"
        name = volume.get("name")
        if not name:
            findings.append(error(f"{at}.name", "is required"))
        elif isinstance(name, str):
            findings.extend(_named(f"{at}.name", name, names.dns1123_label))
            if name in volume_names:
                findings.append(error(f"{at}.name", f"duplicate volume name {name!r}"))
            volume_names.add(name)
        sources = [key for key, value in volume.items() if key != "name" and value is not None]
        if not sources:
            findings.append(error(at, "must set a volume source (emptyDir, configMap, secret, ...)"))
        elif len(sources) > 1:
            findings.append(error(at, f"must set only one volume source, not {', '.join(map(str, sources))}"))
    return volume_names, findings


def _check_pod_template(template: object, path: str, cpu_policy: str | None) -> Iterator[Finding]:
    """Kubernetes' validation of a pod template, which Volcano's webhook runs on every task."""
    if template is not None and not isinstance(template, Mapping):
        return  # reported by the shape check
    template = as_map(template)
    yield from labels_and_annotations(as_map(template.get("metadata")), f"{path}.metadata")
    spec = template.get("spec")
    if spec is not None and not isinstance(spec, Mapping):
        return
    spec = as_map(spec)
    at = f"{path}.spec"
    volume_names, findings = _check_pod_volumes(spec.get("volumes"), f"{at}.volumes")
    yield from findings
    if spec.get("containers") in (None, []):
        yield error(f"{at}.containers", "must list at least one container")
    if spec.get("ephemeralContainers"):
        yield error(f"{at}.ephemeralContainers", "is not allowed in a pod template")
    container_names: dict[str, str] = {}
    for group in ("initContainers", "containers"):
        for j, container in enumerate(as_list(spec.get(group))):
            if not isinstance(container, Mapping):
                continue
            container_path = f"{at}.{group}[{j}]"
            name = container.get("name")
            if not name:
                yield error(f"{container_path}.name", "is required")
            elif isinstance(name, str):
                yield from _named(f"{container_path}.name", name, names.dns1123_label)
                if name in container_names:
                    yield error(
                        f"{container_path}.name", f"duplicate container name {name!r}: also {container_names[name]}"
                    )
                else:
                    container_names[name] = container_path
            yield from _check_container(
                container, container_path, volume_names, cpu_policy, spec, group == "initContainers"
            )
    yield from _one_of(f"{at}.restartPolicy", spec.get("restartPolicy"), _RESTART_POLICIES)
    yield from _one_of(f"{at}.dnsPolicy", spec.get("dnsPolicy"), _DNS_POLICIES)
    for key, value in as_map(spec.get("nodeSelector")).items():
        at_key = entry(f"{at}.nodeSelector", key)
        yield from _named(at_key, key, names.qualified_name)
        yield from _named(at_key, value, names.label_value)
    for j, toleration in enumerate(as_list(spec.get("tolerations"))):
        if isinstance(toleration, Mapping):
            yield from _check_toleration(toleration, f"{at}.tolerations[{j}]")
    for key in ("hostname", "subdomain"):
        if spec.get(key):
            yield from _named(f"{at}.{key}", spec[key], names.dns1123_label)
    yield from pods.check_pod_spec(spec, at)
    yield from pod_security.check_pod_security(spec, at)
    yield from pod_scheduling.check_pod_scheduling(spec, at)


def _check_toleration(toleration: Mapping[str, object], path: str) -> Iterator[Finding]:
    """Kubernetes' rules for a toleration: a key, unless the operator is Exists; no value with Exists; a known
    effect; tolerationSeconds only for NoExecute."""
    key, operator, value = toleration.get("key"), toleration.get("operator") or "Equal", toleration.get("value")
    if key:
        yield from _named(f"{path}.key", key, names.qualified_name)
    elif operator == "Equal":
        yield error(f"{path}.key", "is required unless the operator is Exists")
    yield from _one_of(f"{path}.operator", operator, _TOLERATION_OPERATORS)
    if operator == "Exists" and value:
        yield error(f"{path}.value", "must be unset when the operator is Exists")
    elif value:
        yield from _named(f"{path}.value", value, names.label_value)
    yield from _one_of(f"{path}.effect", toleration.get("effect") or "NoExecute", _TOLERATION_EFFECTS)
    if toleration.get("tolerationSeconds") is not None and toleration.get("effect") != "NoExecute":
        yield error(f"{path}.tolerationSeconds", "applies only to the NoExecute effect")


def check_pod_template(template: object, path: str) -> list[Finding]:
    """Every rule a task's pod template breaks, its fields' shape and Kubernetes' validation (paths under
    ``path``): what :func:`check_job` checks of each task's."""
    return [*check_pod_template_shape(template, path), *_check_pod_template(template, path, None)]


# ---- entry points --------------------------------------------------------------------------------------------------


def check_job(job: Mapping[str, object], *, names_known: bool = True) -> list[Finding]:
    """Every Volcano admission and CRD rule ``job`` (a Volcano Job as plain data) breaks, errors and warnings.

    Checks that need the cluster (the queue exists, is open and is a leaf) are left out.
    """
    if not isinstance(job, Mapping):
        return [error("job", "must be a mapping: a Volcano Job object")]
    findings = list(check_shape(job))
    findings.extend(_check_header(job))
    metadata = as_map(job.get("metadata"))
    spec = as_map(job.get("spec"))
    plugins = as_map(spec.get("plugins"))
    svc = any(p in SVC_PLUGINS for p in plugins)
    job_name, name_findings = _job_name(metadata, svc=svc)
    if not names_known:
        name_findings = [_sampled(f) for f in name_findings]
    if isinstance(job.get("metadata"), Mapping):
        findings.extend(name_findings)
        findings.extend(check_namespace(metadata, "metadata.namespace"))
        findings.extend(labels_and_annotations(metadata, "metadata"))
    if not isinstance(job.get("spec"), Mapping):
        return findings
    findings.extend(_check_spec_fields(spec))
    task_names = [_task_name(t, i) for i, t in enumerate(as_list(spec.get("tasks"))) if isinstance(t, Mapping)]
    if task_names:  # without tasks Volcano stops at "No task specified" before looking at plugins
        findings.extend(_check_plugins(plugins, task_names))
    findings.extend(_check_tasks(spec, job_name, svc, names_known))
    findings.extend(check_plugin_mounts(spec, plugins, svc))
    return findings


def _sampled(finding: Finding) -> Finding:
    """A name finding judged on a placeholder's sample value: the real name's length is only known at run time."""
    return warning(finding.path, f"{finding.message} (judged with a sample value: the name holds a placeholder)")


def raise_first(findings: Iterable[Finding]) -> None:
    """Raise :class:`ValidationError` for the first error finding; warnings never raise."""
    for finding in findings:
        if finding.severity == "error":
            raise ValidationError(finding.path, finding.message)
