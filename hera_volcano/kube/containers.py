"""Kubernetes' rules for one container of a pod template that its field types do not say: environment variables,
probes and lifecycle hooks, restart and termination-message policies, user and group ids.

Volcano's admission webhook runs Kubernetes' pod-template validation on every task, with default validation
options: environment variable names are held to the strict rule (not the relaxed one the API server uses for pods
since Kubernetes 1.34), sleep hooks must last at least a second, and only init containers take a restart policy.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Final

from hera_volcano.kube import names
from hera_volcano.kube.references import resource_field_findings
from hera_volcano.shared.checks import INT32_MAX
from hera_volcano.shared.findings import Finding, as_list, as_map, error

ENV_NAME_MESSAGE: Final = (
    "must be an environment variable name (letters, digits, '_', '-' and '.', not starting with a digit, and not"
    " '.' or starting with '..'): Volcano validates names without Kubernetes' relaxed rule"
)
#: Where Kubernetes' downward API reads an environment variable from (besides a label or an annotation).
DOWNWARD_FIELDS: Final = (
    "metadata.name",
    "metadata.namespace",
    "metadata.uid",
    "spec.nodeName",
    "spec.serviceAccountName",
    "status.hostIP",
    "status.hostIPs",
    "status.podIP",
    "status.podIPs",
)
_ENV_SOURCES: Final = ("fieldRef", "resourceFieldRef", "configMapKeyRef", "secretKeyRef", "fileKeyRef")
_ENV_FROM_SOURCES: Final = ("configMapRef", "secretRef")
_PROBE_HANDLERS: Final = ("exec", "httpGet", "tcpSocket", "grpc")
_HOOK_HANDLERS: Final = ("exec", "httpGet", "tcpSocket", "sleep")
_PROBES: Final = ("livenessProbe", "readinessProbe", "startupProbe")
_PROBE_COUNTS: Final = (
    "initialDelaySeconds",
    "timeoutSeconds",
    "periodSeconds",
    "successThreshold",
    "failureThreshold",
)
_TERMINATION_MESSAGE_POLICIES: Final = ("File", "FallbackToLogsOnError")
_SCHEMES: Final = ("HTTP", "HTTPS")
_ENV_NAME: Final = re.compile(r"[-._a-zA-Z][-._a-zA-Z0-9]*")
_SUBSCRIPTED: Final = re.compile(r"metadata\.(labels|annotations)\['(.*)'\]")
#: Kubernetes' default terminationGracePeriodSeconds.
DEFAULT_GRACE_SECONDS: Final = 30


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def env_name_problem(name: str) -> str | None:
    """Kubernetes' strict environment variable name rule (``IsEnvVarName``), or None."""
    if _ENV_NAME.fullmatch(name) is None or name == "." or name.startswith(".."):
        return ENV_NAME_MESSAGE
    return None


def check_container(container: Mapping[str, object], path: str, *, init: bool, grace: int | None) -> Iterator[Finding]:
    """A container (``init``: of initContainers) at ``path``; ``grace`` is the pod's terminationGracePeriodSeconds
    (None when it is not a whole number: then sleep hooks are not judged)."""
    yield from _check_env(container, path)
    policy = container.get("terminationMessagePolicy")
    if isinstance(policy, str) and policy not in _TERMINATION_MESSAGE_POLICIES:
        yield error(f"{path}.terminationMessagePolicy", f"must be one of {', '.join(_TERMINATION_MESSAGE_POLICIES)}")
    restart = container.get("restartPolicy")
    sidecar = init and restart == "Always"
    if restart is not None and not init:
        yield error(f"{path}.restartPolicy", "must not be set: only init containers take a restart policy (Always)")
    elif isinstance(restart, str) and restart != "Always":
        yield error(f"{path}.restartPolicy", "must be Always (a sidecar) or left out in an init container")
    for probe in _PROBES:
        value = container.get(probe)
        if value is None:
            continue
        if init and not sidecar:
            yield error(f"{path}.{probe}", "must not be set on an init container without restartPolicy: Always")
        elif isinstance(value, Mapping):
            yield from _check_probe(value, f"{path}.{probe}", probe)
    lifecycle = container.get("lifecycle")
    if lifecycle is not None and init and not sidecar:
        yield error(f"{path}.lifecycle", "must not be set on an init container without restartPolicy: Always")
    elif isinstance(lifecycle, Mapping):
        for hook in ("postStart", "preStop"):
            handler = lifecycle.get(hook)
            if isinstance(handler, Mapping):
                yield from _check_handler(handler, f"{path}.lifecycle.{hook}", _HOOK_HANDLERS, grace)
    yield from check_security_ids(as_map(container.get("securityContext")), f"{path}.securityContext")


def check_security_ids(context: Mapping[str, object], path: str) -> Iterator[Finding]:
    """User and group ids of a (pod or container) security context: 0 to 2147483647."""
    for key in ("runAsUser", "runAsGroup", "fsGroup"):
        value = _int(context.get(key))
        if value is not None and not 0 <= value <= INT32_MAX:
            yield error(f"{path}.{key}", f"must be between 0 and {INT32_MAX}, got {value}")


def _check_env(container: Mapping[str, object], path: str) -> Iterator[Finding]:
    for k, env in enumerate(as_list(container.get("env"))):
        if not isinstance(env, Mapping):
            continue
        at = f"{path}.env[{k}]"
        name = env.get("name")
        if isinstance(name, str) and name:
            problem = env_name_problem(name)
            if problem is not None:
                yield error(f"{at}.name", problem)
        source = env.get("valueFrom")
        if isinstance(source, Mapping):
            yield from _check_env_source(source, env.get("value"), f"{at}.valueFrom")
    for k, env in enumerate(as_list(container.get("envFrom"))):
        if not isinstance(env, Mapping):
            continue
        at = f"{path}.envFrom[{k}]"
        prefix = env.get("prefix")
        if isinstance(prefix, str) and prefix:
            problem = env_name_problem(prefix)
            if problem is not None:
                yield error(f"{at}.prefix", problem)
        sources = [s for s in _ENV_FROM_SOURCES if env.get(s) is not None]
        if len(sources) != 1:
            yield error(at, f"must set one of {' and '.join(_ENV_FROM_SOURCES)}, and only one of them")
        for s in sources:
            if as_map(env[s]).get("name") in (None, ""):
                yield error(f"{at}.{s}.name", "is required")


def _check_env_source(source: Mapping[str, object], value: object, path: str) -> Iterator[Finding]:
    sources = [s for s in _ENV_SOURCES if source.get(s) is not None]
    if not sources:
        yield error(path, f"must set one of {', '.join(_ENV_SOURCES)}")
        return
    if isinstance(value, str) and value:
        yield error(path, "must not be set when value is: a variable takes a value or a source, not both")
    elif len(sources) > 1:
        yield error(path, f"must set only one of {', '.join(sources)}")
    field_ref = as_map(source.get("fieldRef"))
    field_path = field_ref.get("fieldPath")
    if "fieldRef" in sources and isinstance(field_path, str):
        yield from check_field_path(
            field_path, f"{path}.fieldRef.fieldPath", DOWNWARD_FIELDS, "an environment variable"
        )
    yield from resource_field_findings(as_map(source.get("resourceFieldRef")), f"{path}.resourceFieldRef")
    for selector in ("configMapKeyRef", "secretKeyRef"):
        ref = source.get(selector)
        if isinstance(ref, Mapping):
            for key in ("name", "key"):
                if ref.get(key) in (None, ""):
                    yield error(f"{path}.{selector}.{key}", f"{key} is required")


def check_field_path(field_path: str, path: str, fields: tuple[str, ...], what: str) -> Iterator[Finding]:
    """A downward API ``fieldPath`` (at ``path``): one of ``fields`` (those the downward API gives ``what``), or a
    label or an annotation by its key."""
    subscripted = _SUBSCRIPTED.fullmatch(field_path)
    if subscripted is not None:
        kind, key = subscripted.groups()
        problem = names.qualified_name(key.lower() if kind == "annotations" else key)
        if problem is not None:
            yield error(path, f"the {kind[:-1]} key {problem}")
    elif field_path not in fields:
        yield error(
            path,
            f"is not a field the downward API gives {what}: {', '.join(fields)},"
            " metadata.labels['KEY'] or metadata.annotations['KEY']",
        )


def _check_probe(probe: Mapping[str, object], path: str, kind: str) -> Iterator[Finding]:
    yield from _check_handler(probe, path, _PROBE_HANDLERS, None)
    for key in _PROBE_COUNTS:
        value = _int(probe.get(key))
        if value is not None and value < 0:
            yield error(f"{path}.{key}", f"must not be negative, got {value}")
    success = _int(probe.get("successThreshold"))
    if kind != "readinessProbe" and success is not None and success != 1:
        yield error(f"{path}.successThreshold", f"must be 1 for a {kind}, got {success}")
    grace = probe.get("terminationGracePeriodSeconds")
    seconds = _int(grace)
    if kind == "readinessProbe" and grace is not None:
        yield error(f"{path}.terminationGracePeriodSeconds", "must not be set on a readinessProbe")
    elif seconds is not None and seconds <= 0:
        yield error(f"{path}.terminationGracePeriodSeconds", f"must be greater than 0, got {seconds}")


def _check_handler(
    handler: Mapping[str, object], path: str, kinds: tuple[str, ...], grace: int | None
) -> Iterator[Finding]:
    """A probe or hook: exactly one handler, and that handler's own rules."""
    present = [k for k in kinds if handler.get(k) is not None]
    if len(present) != 1:
        got = f"it sets {', '.join(present)}" if present else "it sets none"
        yield error(path, f"must set exactly one handler ({', '.join(kinds)}): {got}")
        return
    kind = present[0]
    body = as_map(handler[kind])
    at = f"{path}.{kind}"
    if kind == "exec" and not as_list(body.get("command")):
        yield error(f"{at}.command", "is required: the command to run")
    elif kind in ("httpGet", "tcpSocket", "grpc"):
        yield from _check_port(body.get("port"), f"{at}.port")
        scheme = body.get("scheme")
        if kind == "httpGet" and isinstance(scheme, str) and scheme not in _SCHEMES:
            yield error(f"{at}.scheme", f"must be one of {', '.join(_SCHEMES)}")
    elif kind == "sleep":
        seconds = _int(body.get("seconds"))
        if seconds is not None and grace is not None and not 0 < seconds <= grace:
            yield error(
                f"{at}.seconds",
                f"must be greater than 0 and at most the pod's terminationGracePeriodSeconds ({grace}), got {seconds}",
            )


def _check_port(port: object, path: str) -> Iterator[Finding]:
    number = _int(port)
    if number is not None and not 1 <= number <= 65535:
        yield error(path, f"must be a port number between 1 and 65535, got {number}")
    elif isinstance(port, str) and names.port_name(port) is not None:
        yield error(path, str(names.port_name(port)))
