"""Kubernetes and Argo name rules, as small functions returning a message or None.

A rule returns ``None`` when the value is fine and otherwise one sentence saying what the value must be, so the
same rule serves the linter (which collects findings) and the builders (which raise through :func:`check`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final, TypeAlias

from hera_volcano.shared.errors import ValidationError

Rule: TypeAlias = Callable[[object], str | None]

_DNS1123_LABEL: Final = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DNS1123_SUBDOMAIN: Final = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_DNS1035_LABEL: Final = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")
_QUALIFIED_NAME_PART: Final = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_ARGO_NAME: Final = re.compile(r"[a-zA-Z0-9][-a-zA-Z0-9]*")
_PORT_NAME: Final = re.compile(r"[-a-z0-9]+")

DNS1123_LABEL_MESSAGE: Final = (
    "must be a DNS-1123 label (lowercase letters, digits and '-', starting and ending with a letter or digit,"
    " at most 63 characters)"
)
#: Kubernetes' limit on object names that are DNS subdomains (most kinds, Roles included).
DNS1123_SUBDOMAIN_MAX: Final = 253
DNS1123_SUBDOMAIN_MESSAGE: Final = (
    "must be a DNS-1123 subdomain (lowercase letters, digits, '-' and '.', each dot-separated part starting and"
    " ending with a letter or digit, at most 253 characters)"
)
DNS1035_LABEL_MESSAGE: Final = (
    "must be a DNS-1035 label (lowercase letters, digits and '-', starting with a letter and ending with a letter"
    " or digit, at most 63 characters)"
)
QUALIFIED_NAME_MESSAGE: Final = (
    "must be a qualified name (an optional DNS-1123 subdomain prefix and '/', then a name of at most 63"
    " characters: letters, digits, '-', '_' and '.', starting and ending with a letter or digit)"
)
LABEL_VALUE_MESSAGE: Final = (
    "must be a label value (empty, or at most 63 characters: letters, digits, '-', '_' and '.', starting and"
    " ending with a letter or digit)"
)
#: Argo's limit on template, step and task names.
ARGO_NAME_MAX: Final = 128
ARGO_NAME_MESSAGE: Final = (
    "must be an Argo template/step/task name (letters, digits and '-', starting with a letter or digit,"
    f" at most {ARGO_NAME_MAX} characters)"
)
STRING_MESSAGE: Final = "must be a string"
PORT_NAME_MESSAGE: Final = (
    "must be an IANA service name (at most 15 characters: lowercase letters, digits and '-', with at least"
    " one letter, no '--', not starting or ending with '-')"
)


def _matches(pattern: re.Pattern[str], value: object, max_length: int) -> bool:
    """Whole-string match (``fullmatch``: ``$`` would accept a trailing newline) within a length limit."""
    return isinstance(value, str) and len(value) <= max_length and pattern.fullmatch(value) is not None


def dns1123_label(value: object) -> str | None:
    """Names of namespaces, containers, volumes, Volcano tasks: one DNS label."""
    if not isinstance(value, str):
        return STRING_MESSAGE
    return None if _matches(_DNS1123_LABEL, value, 63) else DNS1123_LABEL_MESSAGE


def dns1123_subdomain(value: object) -> str | None:
    """Names of most objects (custom resources, PVCs, priority classes, queues): dot-separated DNS labels."""
    if not isinstance(value, str):
        return STRING_MESSAGE
    return None if _matches(_DNS1123_SUBDOMAIN, value, DNS1123_SUBDOMAIN_MAX) else DNS1123_SUBDOMAIN_MESSAGE


def dns1035_label(value: object) -> str | None:
    """Names of Services: a DNS label that starts with a letter."""
    if not isinstance(value, str):
        return STRING_MESSAGE
    return None if _matches(_DNS1035_LABEL, value, 63) else DNS1035_LABEL_MESSAGE


def qualified_name(value: object) -> str | None:
    """Label and annotation keys (``example.com/name``); Volcano also holds job and pod names to it."""
    if not isinstance(value, str):
        return STRING_MESSAGE
    prefix, slash, name = value.rpartition("/")
    if slash and (not prefix or "/" in prefix or dns1123_subdomain(prefix) is not None):
        return QUALIFIED_NAME_MESSAGE
    return None if _matches(_QUALIFIED_NAME_PART, name, 63) else QUALIFIED_NAME_MESSAGE


def label_value(value: object) -> str | None:
    """Label values and label-selector values: may be empty."""
    if not isinstance(value, str):
        return STRING_MESSAGE
    return None if value == "" or _matches(_QUALIFIED_NAME_PART, value, 63) else LABEL_VALUE_MESSAGE


def argo_name(value: object) -> str | None:
    """Argo template, step and task names: not a DNS label (capitals allowed), but no '.' or '_'."""
    if not isinstance(value, str):
        return STRING_MESSAGE
    return None if _matches(_ARGO_NAME, value, ARGO_NAME_MAX) else ARGO_NAME_MESSAGE


def port_name(value: object) -> str | None:
    """Names of container ports (and ports a probe names): Kubernetes' IANA_SVC_NAME rule."""
    if not isinstance(value, str):
        return STRING_MESSAGE
    if (
        len(value) > 15
        or _PORT_NAME.fullmatch(value) is None
        or not re.search("[a-z]", value)
        or "--" in value
        or value.startswith("-")
        or value.endswith("-")
    ):
        return PORT_NAME_MESSAGE
    return None


def check(field: str, value: object, rule_fn: Rule) -> None:
    """Raise :class:`ValidationError` naming ``field`` when ``value`` breaks ``rule_fn``; builders call this."""
    message = rule_fn(value)
    if message is not None:
        raise ValidationError(field, message)
