"""The Volcano Job model: typed inputs that render to a ``batch.volcano.sh/v1alpha1`` Job as plain data.

Rendering checks every admission and CRD rule (``volcano.rules``) so a bad job fails here, with the field and the
rule named, rather than as a rejected step at run time.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from hera_volcano.kube import names
from hera_volcano.shared import checks
from hera_volcano.shared.errors import ValidationError
from hera_volcano.shared.placeholders import (
    Placeholder,
    bind,
    collect,
    expressions,
    has_expression,
    placeholders,
    with_samples,
)
from hera_volcano.volcano.queue import Queue, queue_name
from hera_volcano.volcano.schema import API_VERSION, KIND
from hera_volcano.volcano.step import DEFAULT_START_LIMIT, ArgoRetry, VolcanoRetry

IntValue = int | Placeholder
StrValue = str | Placeholder


@dataclass(frozen=True)
class Policy:
    """A lifecycle policy: on ``event`` (or ``events``, or container ``exit_code``) take ``action``.

    :param action: what Volcano does (``RestartJob``, ``AbortJob``, ``CompleteJob``, ``TerminateJob``...).
    :param event: the event that triggers it (``PodFailed``, ``PodEvicted``, ``TaskCompleted``...).
    :param events: several such events.
    :param exit_code: a container exit code that triggers it instead of an event.
    :param timeout: how long Volcano waits before taking the action (a duration such as ``10m``).
    """

    action: str
    event: str | None = None
    events: Sequence[str] = ()
    exit_code: int | None = None
    timeout: str | None = None

    def __post_init__(self) -> None:
        for field_name in ("action", "event", "timeout"):
            value = getattr(self, field_name)
            if value is not None and not isinstance(value, str):
                raise ValidationError(f"policy.{field_name}", "must be a string")
        checks.strings("policy.events", self.events)
        if self.exit_code is not None:
            checks.integer("policy.exit_code", self.exit_code, minimum=checks.INT32_MIN, maximum=checks.INT32_MAX)

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {}
        if self.event is not None:
            out["event"] = self.event
        if self.events:
            out["events"] = list(self.events)
        if self.exit_code is not None:
            out["exitCode"] = self.exit_code
        out["action"] = self.action
        if self.timeout is not None:
            out["timeout"] = self.timeout
        return out


@dataclass(frozen=True)
class Plugin:
    """A Volcano job plugin and its command-line style arguments (``--master=mpimaster``).

    :param name: the plugin's name (``ssh``, ``svc``, ``env``, ``mpi``, ``pytorch``, ``tensorflow``).
    :param args: its arguments; the classmethods (:meth:`ssh`, :meth:`mpi`...) write them for you.
    """

    name: str
    args: Sequence[str] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValidationError("plugin.name", "must be a plugin name such as ssh, svc or mpi")
        checks.strings(f"plugins.{self.name}", self.args)

    @classmethod
    def ssh(cls, *, key_file_path: str | None = None, port: int | None = None) -> Plugin:
        """Key pair and ssh config for password-less ssh between the job's pods (``--ssh-port`` needs ≥ 1.15).

        :param key_file_path: where the key pair is mounted in the pods (default: Volcano's, ``/root/.ssh``).
        :param port: the port sshd listens on (default: Volcano's, 22).
        """
        args = [f"--ssh-key-file-path={key_file_path}"] if key_file_path else []
        if port is not None:
            checks.integer("port", port, minimum=1, maximum=65535)
            args.append(f"--ssh-port={port}")
        return cls("ssh", args)

    @classmethod
    def svc(cls, *, publish_not_ready_addresses: bool = False, disable_network_policy: bool = False) -> Plugin:
        """Headless Service, host files under ``/etc/volcano`` and ``VC_<TASK>_HOSTS`` variables.

        :param publish_not_ready_addresses: the Service resolves pods before they are ready.
        :param disable_network_policy: no NetworkPolicy limiting the job's pods to each other.
        """
        args = []
        if publish_not_ready_addresses:
            args.append("--publish-not-ready-addresses=true")
        if disable_network_policy:
            args.append("--disable-network-policy=true")
        return cls("svc", args)

    @classmethod
    def env(cls) -> Plugin:
        """``VK_TASK_INDEX``/``VC_TASK_INDEX`` in every container."""
        return cls("env")

    @classmethod
    def mpi(cls, *, master: str = "master", worker: str = "worker", port: int | None = None) -> Plugin:
        """MPI wiring (Volcano ≥ 1.6): ``MPI_HOST`` on the master; ssh and svc are added by the webhook.

        :param master: the name of the task that runs ``mpirun``.
        :param worker: the name of the workers' task.
        :param port: the port the workers' sshd listens on (default: Volcano's, 22).
        """
        return cls("mpi", _roles(master, worker, port))

    @classmethod
    def pytorch(cls, *, master: str = "master", worker: str = "worker", port: int | None = None) -> Plugin:
        """``MASTER_ADDR``, ``MASTER_PORT``, ``WORLD_SIZE`` and ``RANK`` for torch.distributed (Volcano ≥ 1.7).

        :param master: the name of the task of rank 0 (whose address is ``MASTER_ADDR``).
        :param worker: the name of the workers' task.
        :param port: ``MASTER_PORT`` (default: Volcano's, 23456).
        """
        return cls("pytorch", _roles(master, worker, port))

    @classmethod
    def tensorflow(
        cls,
        *,
        ps: str | None = None,
        worker: str | None = None,
        chief: str | None = None,
        evaluator: str | None = None,
        port: int | None = None,
    ) -> Plugin:
        """``TF_CONFIG`` for TensorFlow's distributed runtime. Each role names the task that plays it (None: no
        such role).

        :param ps: the parameter servers' task.
        :param worker: the workers' task.
        :param chief: the chief's task.
        :param evaluator: the evaluator's task.
        :param port: the port each task listens on (default: Volcano's, 2222).
        """
        tasks = {"ps": ps, "worker": worker, "chief": chief, "evaluator": evaluator}
        args = [f"--{role}={_task(role, task)}" for role, task in tasks.items() if task is not None]
        return cls("tensorflow", args + _port(port))


def _roles(master: str, worker: str, port: int | None) -> list[str]:
    """Arguments naming the master and worker tasks (and the port) of the mpi and pytorch plugins."""
    return [f"--master={_task('master', master)}", f"--worker={_task('worker', worker)}", *_port(port)]


def _task(role: str, task: object) -> str:
    """A plugin argument naming a task: a task name, so nothing else can ride along into the plugin's flags."""
    names.check(role, task, names.dns1123_label)
    return str(task)


def _port(port: int | None) -> list[str]:
    return [] if port is None else [f"--port={checks.integer('port', port, minimum=1, maximum=65535)}"]


def pod_template_to_dict(template: object) -> dict[str, Any]:
    """Plain data from a pod template: a dict (possibly holding Hera or ``kubernetes`` models, e.g. containers),
    or a ``kubernetes`` ``V1PodTemplateSpec``."""
    data = _plain(template)
    if not isinstance(data, dict):
        raise ValidationError("template", "must be a pod template: a dict or a kubernetes V1PodTemplateSpec")
    return data


def _plain(value: object) -> object:
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    dump = getattr(value, "model_dump", None)
    if callable(dump):  # Hera's (pydantic) models
        return dump(exclude_none=True, by_alias=True, mode="json")
    if hasattr(value, "attribute_map") and hasattr(value, "openapi_types"):
        from kubernetes.client import ApiClient  # lazy: only users of kubernetes models pay for it

        return ApiClient().sanitize_for_serialization(value)  # type: ignore[no-untyped-call]
    return value


@dataclass(frozen=True)
class VolcanoTask:
    """One task of a Volcano Job: ``replicas`` pods from one pod template.

    :param name: the task's name (a DNS-1123 label: it names its pods, and plugins refer to it).
    :param template: the pods' template: a dict (which may hold Hera or ``kubernetes`` models) or a
        ``kubernetes`` ``V1PodTemplateSpec``.
    :param replicas: how many pods.
    :param min_available: how many of them must be able to start for the job to start (default: Volcano's, all).
    :param max_retry: how many times Volcano restarts the task before failing it.
    :param policies: lifecycle policies of this task (they take the job's place for it).
    :param depends_on: tasks that must be running (or done) before this one starts.
    :param depends_on_iteration: whether ``all`` of ``depends_on`` or ``any`` of them must be.
    :param topology_policy: the task's NUMA topology policy (``none``, ``best-effort``, ``restricted``,
        ``single-numa-node``).
    """

    name: str
    template: object
    replicas: IntValue = 1
    min_available: IntValue | None = None
    max_retry: int | None = None
    policies: Sequence[Policy] = ()
    depends_on: Sequence[str] = ()
    depends_on_iteration: Literal["all", "any"] | None = None
    topology_policy: str | None = None

    def __post_init__(self) -> None:
        _int_value("replicas", self.replicas)
        checks.strings("depends_on", self.depends_on)
        _sequence_of("policies", self.policies, Policy)

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {"name": self.name, "replicas": self.replicas}
        if self.min_available is not None:
            out["minAvailable"] = self.min_available
        if self.max_retry is not None:
            out["maxRetry"] = self.max_retry
        if self.policies:
            out["policies"] = [p.to_dict() for p in self.policies]
        if self.depends_on:
            dep: dict[str, object] = {"name": list(self.depends_on)}
            if self.depends_on_iteration:
                dep["iteration"] = self.depends_on_iteration
            out["dependsOn"] = dep
        if self.topology_policy is not None:
            out["topologyPolicy"] = self.topology_policy
        out["template"] = pod_template_to_dict(self.template)
        return out


_INPUT = "inputs.parameters."


@dataclass(frozen=True)
class VolcanoJob:
    """A Volcano Job, and how the step that runs it treats it: what every builder returns, and what
    :func:`hera_volcano.job_template`, :func:`hera_volcano.job_dag`, :class:`hera_volcano.PipelineJob` and
    :meth:`to_dict` take.

    Leave ``name`` unset and give ``generate_name`` to get a name unique per creation. ``queue`` is a queue's name
    or a :class:`Queue` (the job names it). ``arguments`` are the values of the job's own ``Placeholder.input``
    parameters (a batch job's image, command and replicas): :meth:`to_dict` and the templates write them in, and a
    pipeline passes them to the one template the jobs that differ only in them share.

    The step: ``deadline`` (seconds, none by default) bounds the whole step and each pod; ``start_limit`` (a day by
    default, None for none) bounds the wait for the gang to start, kept by the job's log follower; ``retry`` is
    :class:`ArgoRetry` (the step is retried, the job created again) or :class:`VolcanoRetry` (Volcano restarts the
    job on the events it names, ``maxRetry`` times; set it here, not through ``max_retry``).

    :param tasks: the job's tasks.
    :param name: a fixed name (a :class:`Placeholder` for one per call).
    :param generate_name: the prefix of a name generated per creation.
    :param namespace: the job's namespace (default: the step's, that is the Workflow's).
    :param labels: the job's labels.
    :param annotations: the job's annotations.
    :param min_available: how many pods must be able to start for any to start: the gang (default: Volcano's,
        all the tasks' ``min_available`` or replicas).
    :param scheduler_name: the scheduler (``volcano`` unless yours is another).
    :param queue: the Volcano queue, by name or as a :class:`Queue` (default: Volcano's ``default``).
    :param max_retry: how many times Volcano restarts the job (use ``retry=VolcanoRetry(...)`` instead).
    :param min_success: how many pods must succeed for the job to succeed (default: all).
    :param ttl_seconds_after_finished: seconds after which Volcano deletes the finished job.
    :param priority_class_name: the job's Kubernetes priority class.
    :param policies: the job's lifecycle policies.
    :param plugins: the job's Volcano plugins.
    :param arguments: values of the job's own ``Placeholder.input`` parameters, by name.
    :param deadline: seconds for the whole step and each pod (none by default).
    :param start_limit: seconds the gang may wait to start (a day by default, None for no limit).
    :param retry: how a failed job is tried again (none by default).
    """

    tasks: Sequence[VolcanoTask]
    name: StrValue | None = None
    generate_name: str | None = None
    namespace: str | None = None
    labels: Mapping[str, str] = field(default_factory=dict)
    annotations: Mapping[str, str] = field(default_factory=dict)
    min_available: IntValue | None = None
    scheduler_name: str = "volcano"
    queue: str | Queue | None = None
    max_retry: int | None = None
    min_success: int | None = None
    ttl_seconds_after_finished: int | None = None
    priority_class_name: str | None = None
    policies: Sequence[Policy] = ()
    plugins: Sequence[Plugin] = ()
    arguments: Mapping[str, object] = field(default_factory=dict)
    deadline: int | None = None
    start_limit: int | None = DEFAULT_START_LIMIT
    retry: ArgoRetry | VolcanoRetry | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.scheduler_name, str) or not self.scheduler_name:
            raise ValidationError("scheduler_name", "must name a scheduler (volcano, unless yours is another)")
        _sequence_of("tasks", self.tasks, VolcanoTask)
        _sequence_of("policies", self.policies, Policy)
        _sequence_of("plugins", self.plugins, Plugin)
        queue_name(self.queue)
        for field_name in ("labels", "annotations", "arguments"):
            if not isinstance(getattr(self, field_name), Mapping):
                raise ValidationError(field_name, "must be a mapping of strings")
        for key, value in self.arguments.items():
            if not isinstance(key, str) or not key:
                raise ValidationError("arguments", f"must be named by the job's input parameters, not {key!r}")
            if has_expression(value if isinstance(value, str) else repr(value)):
                raise ValidationError(f"arguments.{key}", "must not contain '{{' (Argo would substitute it)")
        for what, limit in (("deadline", self.deadline), ("start_limit", self.start_limit)):
            if limit is not None:
                checks.integer(what, limit, minimum=1, maximum=checks.INT32_MAX)
        if self.retry is not None and not isinstance(self.retry, ArgoRetry | VolcanoRetry):
            raise ValidationError("retry", "must be ArgoRetry(...) or VolcanoRetry(...)")
        if isinstance(self.retry, VolcanoRetry) and self.max_retry is not None:
            raise ValidationError("max_retry", "is set by retry=VolcanoRetry(max_retry=...): set it once")
        if isinstance(self.queue, Queue) and self.queue.capability:  # where the job and its Queue meet
            check_fits_queue(self.bound_data(), self.queue)

    def to_dict(self) -> dict[str, object]:
        """The Job as plain data, its ``arguments`` written in (other placeholders kept), after checking every
        Volcano rule against sample values."""
        data = self.bound_data()
        check(data)
        return data

    def bound_data(self) -> dict[str, object]:
        """The Job as plain data with its ``arguments`` written in (unchecked); each must name an input it uses."""
        data = self._data()
        used = {e.removeprefix(_INPUT) for e in placeholders(data) if e.startswith(_INPUT)}
        used |= {e.removeprefix(_INPUT) for e in _embedded(data) if e.startswith(_INPUT)}
        unknown = sorted(set(self.arguments) - used)
        if unknown:
            raise ValidationError(f"arguments.{unknown[0]}", "names no input parameter of the job")
        bound: dict[str, object] = bind(data, {_INPUT + k: v for k, v in self.arguments.items()})
        return bound

    def _data(self) -> dict[str, object]:
        metadata: dict[str, object] = {}
        if self.name is not None:
            metadata["name"] = self.name
        if self.generate_name is not None:
            metadata["generateName"] = self.generate_name
        if self.namespace is not None:
            metadata["namespace"] = self.namespace
        if self.labels:
            metadata["labels"] = dict(self.labels)
        if self.annotations:
            metadata["annotations"] = dict(self.annotations)
        spec: dict[str, object] = {"schedulerName": self.scheduler_name}
        if self.min_available is not None:
            spec["minAvailable"] = self.min_available
        policies = list(self.policies)
        max_retry = self.max_retry
        if isinstance(self.retry, VolcanoRetry):
            max_retry = self.retry.max_retry
            policies = _restarting(self.retry.restart_on, policies)
        optional = {
            "queue": queue_name(self.queue),
            "maxRetry": max_retry,
            "minSuccess": self.min_success,
            "ttlSecondsAfterFinished": self.ttl_seconds_after_finished,
            "priorityClassName": self.priority_class_name,
        }
        spec.update({k: v for k, v in optional.items() if v is not None})
        if policies:
            spec["policies"] = [p.to_dict() for p in policies]
        if self.plugins:
            spec["plugins"] = {p.name: list(p.args) for p in self.plugins}
        spec["tasks"] = [t.to_dict() for t in self.tasks]
        return {"apiVersion": API_VERSION, "kind": KIND, "metadata": metadata, "spec": spec}


def _restarting(events: Sequence[str], policies: Sequence[Policy]) -> list[Policy]:
    """``RestartJob`` on each of ``events``, then the job's other policies (those events taken out of them)."""
    out = [Policy(event=e, action="RestartJob") for e in events]
    for policy in policies:
        if policy.event in events:
            continue
        if policy.events:
            rest = [e for e in policy.events if e not in events]
            if not rest:
                continue
            policy = Policy(action=policy.action, events=rest, timeout=policy.timeout)
        out.append(policy)
    return out


def _embedded(data: object) -> list[str]:
    """The expressions inside the strings of ``data``."""
    if isinstance(data, str):
        return expressions(data) if "{{" in data else []
    if isinstance(data, Mapping):
        return [e for v in data.values() for e in _embedded(v)]
    if isinstance(data, list | tuple):
        return [e for v in data for e in _embedded(v)]
    return []


def _int_value(field: str, value: object) -> None:
    if not isinstance(value, Placeholder):
        checks.integer(field, value)


def _sequence_of(field: str, value: object, kind: type) -> None:
    if isinstance(value, str | bytes | Mapping) or not isinstance(value, Sequence):
        raise ValidationError(field, f"must be a list of {kind.__name__}")
    for i, item in enumerate(value):
        if not isinstance(item, kind):
            raise ValidationError(f"{field}[{i}]", f"must be a {kind.__name__}, not {type(item).__name__}")


def check(job: Mapping[str, object], samples: Mapping[str, object] | None = None) -> None:
    """Raise :class:`ValidationError` for the first Volcano rule ``job`` breaks, placeholders set to samples."""
    from hera_volcano.volcano.rules import check_job, raise_first

    values = {**collect(job), **(samples or {})}
    raise_first(check_job(with_samples(job, values)))


def check_fits_queue(job: Mapping[str, object], queue: Queue) -> None:
    """Raise :class:`ValidationError` when the gang of ``job`` (plain data) cannot fit ``queue``'s capability."""
    from hera_volcano.volcano.queue_rules import check_gang_fits
    from hera_volcano.volcano.rules import raise_first

    raise_first(check_gang_fits(job, queue.to_dict()))
