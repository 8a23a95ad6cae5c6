"""Pod settings every job builder takes: resources, environment, volumes, image pull secrets, placement, metadata,
and a pod-template patch for anything else.

One typed object (:class:`PodSettings`) serves every builder, for all of a job's pods or for one role (the MPI
master, the PyTorch workers...). Values are checked when the settings are made, naming the setting and the rule;
the job they end up in is checked against every Volcano and Kubernetes rule when it is rendered.

The patch merges into a pod template as Kubernetes' strategic merge patch does for the fields pods use most
(:func:`merge_pod_template`), so adding a sidecar or one environment variable does not mean restating a list.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from hera_volcano.argo.labels import JOB_LABEL, POD_WORKFLOW_LABEL, WORKFLOW_LABEL
from hera_volcano.kube import names
from hera_volcano.kube.expansion import runtime_text
from hera_volcano.kube.quantities import QUANTITY_MESSAGE, parse_quantity
from hera_volcano.kube.values import check_keys
from hera_volcano.kube.volumes import check_volume_source, descending_path_problem
from hera_volcano.shared import checks
from hera_volcano.shared.errors import ValidationError
from hera_volcano.shared.findings import as_list, as_map
from hera_volcano.shared.placeholders import Placeholder, collect, has_expression, with_samples
from hera_volcano.volcano.job import pod_template_to_dict

GPU: Final = "nvidia.com/gpu"
#: Extended resources (GPUs, RDMA devices) per container: more than any node has.
MAX_DEVICES: Final = 1024
Quantity = str | int

#: Kubernetes' rule for environment variable names before 1.34 relaxed it (so older clusters accept them too).
_ENV_NAME: Final = re.compile(r"[-._a-zA-Z][-._a-zA-Z0-9]*")
_ENV_SOURCES: Final = ("fieldRef", "resourceFieldRef", "configMapKeyRef", "secretKeyRef", "fileKeyRef")
#: Pod labels that job_template and Volcano set: the log follower and the exit handler find pods by them.
_RESERVED_LABELS: Final = frozenset(
    {
        WORKFLOW_LABEL,
        POD_WORKFLOW_LABEL,
        JOB_LABEL,
        "volcano.sh/job-name",
        "volcano.sh/task-spec",
        "volcano.sh/job-namespace",
        "volcano.sh/queue-name",
        "volcano.sh/task-index",
    }
)
_OPERATORS: Final = ("Equal", "Exists")
_EFFECTS: Final = ("NoSchedule", "PreferNoSchedule", "NoExecute")
_AFFINITIES: Final = ("nodeAffinity", "podAffinity", "podAntiAffinity")
#: The lists of a pod template whose items a patch merges by a key (the merge keys of Kubernetes' strategic merge
#: patch); any other list in a patch replaces the one it patches.
MERGE_KEYS: Final[Mapping[str, str]] = {
    "containers": "name",
    "initContainers": "name",
    "volumes": "name",
    "env": "name",
    "imagePullSecrets": "name",
    "volumeMounts": "mountPath",
    "ports": "containerPort",
}


def _quantity(field_name: str, value: object) -> Quantity | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise ValidationError(field_name, f"{QUANTITY_MESSAGE} (a string, or an integer)")
    try:
        amount = parse_quantity(value)
    except ValueError:
        raise ValidationError(field_name, QUANTITY_MESSAGE) from None
    if amount < 0:
        raise ValidationError(field_name, "must not be negative")
    return value


def _at_most(request_field: str, request: Quantity | None, limit_field: str, limit: Quantity | None) -> None:
    if request is not None and limit is not None and parse_quantity(request) > parse_quantity(limit):
        raise ValidationError(request_field, f"must be less than or equal to {limit_field} ({limit})")


def _string_map(field_name: str, value: object, key_rule: names.Rule, value_rule: names.Rule | None) -> dict[str, str]:
    if not isinstance(value, Mapping):
        raise ValidationError(field_name, "must be a mapping of strings to strings")
    out: dict[str, str] = {}
    for key, item in value.items():
        names.check(f"{field_name}[{key!r}]", key, key_rule)
        if not isinstance(item, str):
            raise ValidationError(f"{field_name}[{key!r}]", "must be a string")
        if value_rule is not None:
            names.check(f"{field_name}[{key!r}]", item, value_rule)
        out[key] = item
    return out


def _annotation_key(value: object) -> str | None:
    """Kubernetes checks annotation keys as qualified names in lower case."""
    return names.qualified_name(value.lower() if isinstance(value, str) else value)


def _plain_mapping(field_name: str, value: object) -> dict[str, Any]:
    """Plain data from a mapping (which may hold Hera or ``kubernetes`` models) or a model."""
    try:
        return pod_template_to_dict(value)
    except ValidationError:
        raise ValidationError(field_name, "must be a mapping (or a Hera or kubernetes model)") from None


def _path(field_name: str, value: object, *, absolute: bool) -> str:
    """A mount path (``absolute``) or a sub path inside the volume, by Kubernetes' rule for ``subPath``."""
    if not isinstance(value, str) or not value or has_expression(value):
        raise ValidationError(field_name, "must be a non-empty path without Argo expressions")
    if absolute and not value.startswith("/"):
        raise ValidationError(field_name, "must be an absolute path")
    problem = None if absolute else descending_path_problem(value)
    if problem is not None:
        raise ValidationError(field_name, problem)
    return value


@dataclass(frozen=True)
class PodVolume:
    """A volume of the pod and where its container mounts it: ``source`` is one Kubernetes volume source, e.g.
    ``{"emptyDir": {}}`` (or use :meth:`empty_dir`, :meth:`config_map`, :meth:`secret`, :meth:`claim`).

    :param name: the volume's name in the pod (a DNS-1123 label).
    :param mount_path: where the main container sees it, an absolute path.
    :param source: one Kubernetes volume source.
    :param read_only: mount it read-only.
    :param sub_path: mount only this relative path inside the volume.
    """

    name: str
    mount_path: str
    source: Mapping[str, object]
    read_only: bool = False
    sub_path: str | None = None

    def __post_init__(self) -> None:
        names.check("volume.name", self.name, names.dns1123_label)
        _path(f"volumes[{self.name}].mount_path", self.mount_path, absolute=True)
        source = _plain_mapping(f"volumes[{self.name}].source", self.source)
        check_keys(source, f"volumes[{self.name}].source")
        if len(source) != 1 or "name" in source or not isinstance(next(iter(source.values())), Mapping):
            raise ValidationError(f"volumes[{self.name}].source", "must be one volume source, such as {'emptyDir': {}}")
        object.__setattr__(self, "source", source)
        from hera_volcano.volcano.rules import raise_first

        raise_first(check_volume_source(self.volume(), f"volumes[{self.name}]"))
        if not isinstance(self.read_only, bool):
            raise ValidationError(f"volumes[{self.name}].read_only", "must be true or false")
        if self.sub_path is not None:
            _path(f"volumes[{self.name}].sub_path", self.sub_path, absolute=False)

    @classmethod
    def empty_dir(
        cls, name: str, mount_path: str, *, size_limit: Quantity | None = None, memory: bool = False
    ) -> PodVolume:
        """Scratch space that lives as long as the pod (``memory``: a tmpfs, counted against the memory limit).

        :param name: the volume's name in the pod.
        :param mount_path: where the main container sees it.
        :param size_limit: the most it may hold (a Kubernetes quantity such as ``"10Gi"``); past it the pod is
            evicted.
        :param memory: keep it in memory (a tmpfs) rather than on the node's disk.
        """
        source: dict[str, Any] = {}
        if memory:
            source["medium"] = "Memory"
        if size_limit is not None:
            source["sizeLimit"] = _quantity(f"volumes[{name}].size_limit", size_limit)
        return cls(name, mount_path, {"emptyDir": source})

    @classmethod
    def config_map(cls, name: str, mount_path: str, *, config_map: str | None = None) -> PodVolume:
        """The keys of a ConfigMap (default: the one named ``name``) as files, read-only.

        :param name: the volume's name in the pod.
        :param mount_path: the folder where each key is a file.
        :param config_map: the ConfigMap's name, when it is not ``name``.
        """
        names.check(f"volumes[{name}].config_map", config_map or name, names.dns1123_subdomain)
        return cls(name, mount_path, {"configMap": {"name": config_map or name}}, read_only=True)

    @classmethod
    def secret(cls, name: str, mount_path: str, *, secret: str | None = None) -> PodVolume:
        """The keys of a Secret (default: the one named ``name``) as files, read-only.

        :param name: the volume's name in the pod.
        :param mount_path: the folder where each key is a file.
        :param secret: the Secret's name, when it is not ``name``.
        """
        names.check(f"volumes[{name}].secret", secret or name, names.dns1123_subdomain)
        return cls(name, mount_path, {"secret": {"secretName": secret or name}}, read_only=True)

    @classmethod
    def claim(cls, name: str, mount_path: str, *, claim: str, read_only: bool = False) -> PodVolume:
        """An existing PersistentVolumeClaim: shared datasets, checkpoints.

        :param name: the volume's name in the pod.
        :param mount_path: where the main container sees it.
        :param claim: the PersistentVolumeClaim's name.
        :param read_only: mount it read-only (a dataset no pod should change).
        """
        names.check(f"volumes[{name}].claim", claim, names.dns1123_subdomain)
        return cls(name, mount_path, {"persistentVolumeClaim": {"claimName": claim}}, read_only=read_only)

    def volume(self) -> dict[str, object]:
        return {"name": self.name, **self.source}

    def mount(self) -> dict[str, object]:
        out: dict[str, object] = {"name": self.name, "mountPath": self.mount_path}
        if self.read_only:
            out["readOnly"] = True
        if self.sub_path is not None:
            out["subPath"] = self.sub_path
        return out


@dataclass(frozen=True)
class Toleration:
    """Lets the pods run on nodes with a matching taint (GPU nodes are often tainted ``nvidia.com/gpu``).

    Without ``key`` (and with operator ``Exists``) it tolerates every taint; ``seconds`` bounds how long a pod stays
    on a node that gets a ``NoExecute`` taint.

    :param key: the taint's key (None: every taint, with operator ``Exists``).
    :param operator: ``Equal`` (the taint's value must be ``value``) or ``Exists`` (any value).
    :param value: the taint's value, for ``Equal``.
    :param effect: the taint's effect it tolerates (``NoSchedule``, ``PreferNoSchedule``, ``NoExecute``; None:
        any).
    :param seconds: how long a pod stays on a node that gets a ``NoExecute`` taint (default: for ever).
    """

    key: str | None = None
    operator: str = "Equal"
    value: str | None = None
    effect: str | None = None
    seconds: int | None = None

    def __post_init__(self) -> None:
        if self.operator not in _OPERATORS:
            raise ValidationError("toleration.operator", f"must be one of {', '.join(_OPERATORS)}")
        if self.key is None:
            if self.operator != "Exists":
                raise ValidationError("toleration.key", "is required unless the operator is Exists")
        else:
            names.check("toleration.key", self.key, names.qualified_name)
        if self.operator == "Exists" and self.value is not None:
            raise ValidationError("toleration.value", "must be unset when the operator is Exists")
        if self.value is not None:
            names.check("toleration.value", self.value, names.label_value)
        if self.effect is not None and self.effect not in _EFFECTS:
            raise ValidationError("toleration.effect", f"must be one of {', '.join(_EFFECTS)} (or unset: any)")
        if self.seconds is not None:
            checks.integer("toleration.seconds", self.seconds, minimum=checks.INT32_MIN, maximum=checks.INT32_MAX)
            if self.effect != "NoExecute":
                raise ValidationError("toleration.seconds", "applies only to the NoExecute effect")

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {}
        if self.key is not None:
            out["key"] = self.key
        out["operator"] = self.operator
        if self.value is not None:
            out["value"] = self.value
        if self.effect is not None:
            out["effect"] = self.effect
        if self.seconds is not None:
            out["tolerationSeconds"] = self.seconds
        return out


@dataclass(frozen=True, eq=False)
class PodSettings:
    """What a job's pods need beyond image and command, for every builder (``pod=`` for all pods of a job, or one
    role's, such as ``worker_pod=``).

    ``cpu`` and ``memory`` are requests, ``cpu_limit`` and ``memory_limit`` limits (Kubernetes quantities);
    ``gpus`` (``nvidia.com/gpu``) and ``extended_resources`` (``{"rdma/ib": 1}``) are whole devices, written as
    requests and limits alike. ``env`` values are strings, a mapping that is the variable's ``valueFrom``
    (``{"secretKeyRef": {"name": ..., "key": ...}}``), or a text known at run time (``Placeholder.input(...)``,
    ``.workflow_parameter(...)``), which the process gets byte for byte (a string holding ``{{`` is refused). These,
    and the ``volumes``' mounts, go to the role's main container; the rest to the pod. ``patch`` merges last into
    the whole pod template ``{"metadata": ..., "spec": ...}`` (see :func:`merge_pod_template`), for anything the
    other settings do not cover.

    Settings compare equal (and hash alike) when they render the same, so jobs of a pipeline that share them share
    one template.

    :param cpu: the main container's CPU request (``"4"``, ``"500m"``).
    :param memory: its memory request (``"16Gi"``).
    :param cpu_limit: its CPU limit.
    :param memory_limit: its memory limit.
    :param gpus: whole ``nvidia.com/gpu`` devices for it.
    :param extended_resources: other devices, by resource name (``{"rdma/ib": 1}``).
    :param env: its environment variables, by name.
    :param volumes: volumes of the pod, each mounted in the main container.
    :param image_pull_secrets: the Secrets that let the pod pull a private image.
    :param node_selector: node labels the pod's node must have.
    :param tolerations: the node taints the pod tolerates.
    :param affinity: the pod's Kubernetes affinity (``nodeAffinity``, ``podAffinity``, ``podAntiAffinity``).
    :param labels: labels of the pods (not those job_template or Volcano set).
    :param annotations: annotations of the pods.
    :param patch: merged last into the pod template, for anything else.
    """

    cpu: Quantity | None = None
    memory: Quantity | None = None
    cpu_limit: Quantity | None = None
    memory_limit: Quantity | None = None
    gpus: int = 0
    extended_resources: Mapping[str, int | str] = field(default_factory=dict)
    env: Mapping[str, str | Mapping[str, object] | Placeholder] = field(default_factory=dict)
    volumes: Sequence[PodVolume] = ()
    image_pull_secrets: Sequence[str] = ()
    node_selector: Mapping[str, str] = field(default_factory=dict)
    tolerations: Sequence[Toleration] = ()
    affinity: Mapping[str, object] | None = None
    labels: Mapping[str, str] = field(default_factory=dict)
    annotations: Mapping[str, str] = field(default_factory=dict)
    patch: Mapping[str, object] | None = None

    def __post_init__(self) -> None:
        for request, limit in (("cpu", "cpu_limit"), ("memory", "memory_limit")):
            _quantity(request, getattr(self, request))
            _quantity(limit, getattr(self, limit))
            _at_most(request, getattr(self, request), limit, getattr(self, limit))
        checks.integer("gpus", self.gpus, maximum=MAX_DEVICES)
        object.__setattr__(self, "extended_resources", _extended(self.extended_resources))
        if self.gpus and GPU in self.extended_resources:
            raise ValidationError(f"extended_resources[{GPU!r}]", "is also set by gpus: set it once")
        object.__setattr__(self, "env", _env(self.env))
        object.__setattr__(self, "volumes", _volumes(self.volumes))
        secrets = checks.strings("image_pull_secrets", self.image_pull_secrets)
        for i, secret in enumerate(secrets):
            names.check(f"image_pull_secrets[{i}]", secret, names.dns1123_subdomain)
        object.__setattr__(self, "image_pull_secrets", tuple(dict.fromkeys(secrets)))
        selector = _string_map("node_selector", self.node_selector, names.qualified_name, names.label_value)
        object.__setattr__(self, "node_selector", selector)
        if isinstance(self.tolerations, str | bytes | Mapping) or not isinstance(self.tolerations, Sequence):
            raise ValidationError("tolerations", "must be a list of Toleration")
        for i, toleration in enumerate(self.tolerations):
            if not isinstance(toleration, Toleration):
                raise ValidationError(f"tolerations[{i}]", f"must be a Toleration, not {type(toleration).__name__}")
        object.__setattr__(self, "tolerations", tuple(self.tolerations))
        if self.affinity is not None:
            affinity = _plain_mapping("affinity", self.affinity)
            check_keys(affinity, "affinity")
            unknown = sorted(set(affinity) - set(_AFFINITIES))
            if unknown or not affinity:
                raise ValidationError("affinity", f"must set {', '.join(_AFFINITIES)} (a Kubernetes Affinity)")
            object.__setattr__(self, "affinity", affinity)
        labels = _string_map("labels", self.labels, names.qualified_name, names.label_value)
        reserved = sorted(set(labels) & _RESERVED_LABELS)
        if reserved:
            raise ValidationError(f"labels[{reserved[0]!r}]", "is set by job_template or Volcano: choose another key")
        object.__setattr__(self, "labels", labels)
        object.__setattr__(self, "annotations", _string_map("annotations", self.annotations, _annotation_key, None))
        if self.patch is not None:
            patch = _plain_mapping("patch", self.patch)
            check_keys(patch, "patch")
            unknown = sorted(set(patch) - {"metadata", "spec"})
            if unknown:
                raise ValidationError("patch", f"patches a pod template: only metadata and spec, not {unknown[0]!r}")
            _check_patch(patch)
            object.__setattr__(self, "patch", patch)

    def _parts(self) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        """What goes into the main container, the pod spec and the pod template's metadata."""
        container: dict[str, Any] = {}
        requests = {k: v for k, v in (("cpu", self.cpu), ("memory", self.memory)) if v is not None}
        limits = {k: v for k, v in (("cpu", self.cpu_limit), ("memory", self.memory_limit)) if v is not None}
        devices = {GPU: self.gpus, **self.extended_resources} if self.gpus else dict(self.extended_resources)
        resources: dict[str, Any] = {}
        if requests or devices:
            resources["requests"] = {**requests, **devices}
        if limits or devices:
            resources["limits"] = {**limits, **devices}
        if resources:
            container["resources"] = resources
        if self.env:
            container["env"] = [
                {"name": k, "value": v} if isinstance(v, str | Placeholder) else {"name": k, "valueFrom": dict(v)}
                for k, v in self.env.items()
            ]
        if self.volumes:
            container["volumeMounts"] = [v.mount() for v in self.volumes]
        spec: dict[str, Any] = {}
        if self.volumes:
            spec["volumes"] = [v.volume() for v in self.volumes]
        if self.image_pull_secrets:
            spec["imagePullSecrets"] = [{"name": s} for s in self.image_pull_secrets]
        if self.node_selector:
            spec["nodeSelector"] = dict(self.node_selector)
        if self.tolerations:
            spec["tolerations"] = [t.to_dict() for t in self.tolerations]
        if self.affinity is not None:
            spec["affinity"] = self.affinity
        metadata = {k: dict(v) for k, v in (("labels", self.labels), ("annotations", self.annotations)) if v}
        return container, spec, metadata

    def key(self) -> str:
        """The settings as canonical text: equal exactly when two settings render the same."""
        return json.dumps([*self._parts(), self.patch], sort_keys=True, separators=(",", ":"), default=str)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PodSettings) and self.key() == other.key()

    def __hash__(self) -> int:
        return hash(self.key())

    def apply(self, template: Mapping[str, Any], *, container: str) -> dict[str, Any]:
        """``template`` (a pod template) with these settings: resources, environment (replacing variables of the
        same name) and mounts on its container ``container``; volumes, pull secrets, node selector, tolerations
        and affinity on the pod; labels and annotations on its metadata; then the patch merged in.

        :param template: the pod template (a dict, possibly holding Hera or ``kubernetes`` models, or a
            ``V1PodTemplateSpec``).
        :param container: the name of its main container, which gets the resources, environment and mounts.
        """
        data = pod_template_to_dict(template)
        container_part, spec_part, metadata_part = self._parts()
        if metadata_part:
            metadata = dict(data.get("metadata") or {})
            for key, values in metadata_part.items():
                metadata[key] = {**(metadata.get(key) or {}), **values}
            data = {"metadata": metadata, **{k: v for k, v in data.items() if k != "metadata"}}
        spec = dict(data.get("spec") or {})
        containers = list(spec.get("containers") or [])
        index = next((i for i, c in enumerate(containers) if isinstance(c, Mapping) and c.get("name") == container), -1)
        if index < 0:
            raise ValidationError("container", f"the pod template has no container named {container!r}")
        main = dict(containers[index])
        for key, value in container_part.items():
            if key == "resources":
                own = main.get("resources") or {}
                main[key] = {**own, **{k: {**(own.get(k) or {}), **v} for k, v in value.items()}}
            elif key == "env":
                main[key] = _merge_named(main.get("env") or [], value, "env")
            else:
                main[key] = [*(main.get(key) or []), *value]
        containers[index] = main
        spec["containers"] = containers
        for key, value in spec_part.items():
            if key in ("volumes", "tolerations"):
                spec[key] = [*(spec.get(key) or []), *value]
            elif key == "imagePullSecrets":
                spec[key] = _merge_named(spec.get(key) or [], value, key)
            elif key == "nodeSelector":
                spec[key] = {**(spec.get(key) or {}), **value}
            else:
                spec[key] = value
        data["spec"] = spec
        return data if self.patch is None else merge_pod_template(data, self.patch)


def apply_settings(template: Mapping[str, object], container: str, *settings: PodSettings | None) -> dict[str, Any]:
    """``template`` with each of ``settings`` applied in turn (later ones win), skipping None; unchanged without
    any, so a builder's output stays the same for a job without pod settings."""
    data = dict(template)
    for item in settings:
        if item is not None:
            data = item.apply(data, container=container)
    return data


def check_settings(field_name: str, value: object) -> PodSettings | None:
    """A builder's ``pod=`` (or ``worker_pod=``...) argument: PodSettings or None."""
    if value is not None and not isinstance(value, PodSettings):
        raise ValidationError(field_name, f"must be PodSettings(...), not {type(value).__name__}")
    return value


def _check_patch(patch: Mapping[str, object]) -> None:
    """A patch meets the checks every task's pod template meets (its fields' shape, Kubernetes' validation), here
    where it is written: merged into a template holding just the containers it names (each with an image, as the
    builders' have), so that only what the patch sets is judged, at ``patch.<field>``."""
    from hera_volcano.volcano.rules import check_pod_template, raise_first

    spec = as_map(patch.get("spec"))
    probe_spec: dict[str, Any] = {}
    mounted: set[str] = set()
    for group in ("initContainers", "containers"):
        named = [c for c in as_list(spec.get(group)) if isinstance(c, Mapping) and isinstance(c.get("name"), str)]
        probe_spec[group] = [{"name": c["name"], "image": "image"} for c in named]
        mounts = [m for c in named for m in as_list(c.get("volumeMounts")) if isinstance(m, Mapping)]
        mounted |= {m["name"] for m in mounts if isinstance(m.get("name"), str)}
    # Mounts of volumes the patch does not define mount the template's (or the settings' volumes=).
    defined = {v.get("name") for v in as_list(spec.get("volumes")) if isinstance(v, Mapping)}
    probe_spec["volumes"] = [{"name": n, "emptyDir": {}} for n in sorted(mounted - defined)]
    probe = merge_pod_template({"spec": probe_spec}, patch)
    if not probe["spec"].get("containers"):
        probe["spec"]["containers"] = [{"name": "main", "image": "image"}]  # the builder's, which it does not touch
    raise_first(check_pod_template(with_samples(probe, collect(probe)), "patch"))


def merge_pod_template(template: Mapping[str, Any], patch: Mapping[str, Any]) -> dict[str, Any]:
    """``patch`` merged into ``template``, as a strategic merge patch would for a pod template.

    Mappings merge key by key, recursively; a ``None`` value removes the key. The lists named in
    :data:`MERGE_KEYS` merge item by item on their key (``containers``, ``initContainers``, ``volumes``, ``env``
    and ``imagePullSecrets`` by ``name``, ``volumeMounts`` by ``mountPath``, ``ports`` by ``containerPort``): an
    item with a key already there merges into that item, any other is appended. Every other list (``command``,
    ``args``, ``tolerations``...) and every scalar in the patch replaces what it patches.
    """
    merged: dict[str, Any] = _merge(template, patch, None)
    return merged


def _merge(base: Any, patch: Any, key: str | None) -> Any:
    if isinstance(patch, Mapping):
        out = dict(base) if isinstance(base, Mapping) else {}
        for k, v in patch.items():
            if v is None:
                out.pop(k, None)
            else:
                out[k] = _merge(out.get(k), v, k)
        return out
    if isinstance(patch, list) and key is not None and key in MERGE_KEYS:
        return _merge_named(base if isinstance(base, list) else [], patch, key)
    if isinstance(patch, list):
        return [_merge(None, item, None) for item in patch]
    return patch


def _merge_named(base: Sequence[Any], patch: Sequence[Any], key: str) -> list[Any]:
    """The list ``key`` of a pod template with ``patch`` merged in by its merge key."""
    merge_key = MERGE_KEYS[key]
    out = list(base)
    for item in patch:
        if not isinstance(item, Mapping) or item.get(merge_key) is None:
            raise ValidationError("patch", f"every item of {key} must be a mapping with {merge_key!r} (its merge key)")
        same = [j for j, old in enumerate(out) if isinstance(old, Mapping) and old.get(merge_key) == item[merge_key]]
        if same:
            out[same[0]] = _merge(out[same[0]], item, None)
        else:
            out.append(_merge(None, item, None))
    return out


def _extended(value: object) -> dict[str, int | str]:
    """Extended resources: whole numbers of devices (integers, or strings that are whole quantities)."""
    if not isinstance(value, Mapping):
        raise ValidationError("extended_resources", "must be a mapping of resource names to whole numbers")
    out: dict[str, int | str] = {}
    for name, amount in value.items():
        at = f"extended_resources[{name!r}]"
        names.check(at, name, names.qualified_name)
        if "/" not in name or "kubernetes.io/" in name:
            raise ValidationError(at, "must be an extended resource: a name with a domain, such as rdma/ib")
        rule = f"must be a whole number from 0 to {MAX_DEVICES}"
        if isinstance(amount, bool) or not isinstance(amount, int | str):
            raise ValidationError(at, rule)
        try:
            parsed = parse_quantity(amount)
        except ValueError:
            raise ValidationError(at, rule) from None
        if parsed.denominator != 1 or not 0 <= parsed <= MAX_DEVICES:
            raise ValidationError(at, rule)
        out[name] = amount
    return out


def _env(value: object) -> dict[str, str | dict[str, object] | Placeholder]:
    if not isinstance(value, Mapping):
        raise ValidationError("env", "must be a mapping of variable names to values")
    out: dict[str, str | dict[str, object] | Placeholder] = {}
    for name, item in value.items():
        if not isinstance(name, str) or not _ENV_NAME.fullmatch(name):
            raise ValidationError(
                f"env[{name!r}]",
                "must be a variable name: letters, digits, '_', '-' and '.', not starting with a digit",
            )
        if isinstance(item, str):
            if has_expression(item):
                raise ValidationError(
                    f"env[{name!r}]",
                    "holds '{{', which Argo would substitute as raw text: pass a value known at run time as "
                    "Placeholder.input(...) or Placeholder.workflow_parameter(...)",
                )
            out[name] = item
            continue
        if isinstance(item, Placeholder):
            out[name] = runtime_text(item, f"env[{name!r}]")
            continue
        source = _plain_mapping(f"env[{name!r}]", item) if isinstance(item, Mapping) else None
        if source is None or len(source) != 1 or next(iter(source)) not in _ENV_SOURCES:
            raise ValidationError(
                f"env[{name!r}]",
                f"must be a string, a Placeholder or a valueFrom: one of {', '.join(_ENV_SOURCES)}",
            )
        out[name] = source
    return out


def _volumes(value: object) -> tuple[PodVolume, ...]:
    if isinstance(value, str | bytes | Mapping) or not isinstance(value, Sequence):
        raise ValidationError("volumes", "must be a list of PodVolume")
    seen: dict[tuple[str, str], int] = {}
    for i, volume in enumerate(value):
        if not isinstance(volume, PodVolume):
            raise ValidationError(f"volumes[{i}]", f"must be a PodVolume, not {type(volume).__name__}")
        for kind, key in (("name", volume.name), ("mount path", volume.mount_path)):
            if (kind, key) in seen:
                raise ValidationError(f"volumes[{i}]", f"its {kind} {key!r} is also that of volumes[{seen[kind, key]}]")
            seen[kind, key] = i
    return tuple(value)
