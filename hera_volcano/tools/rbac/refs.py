"""A resource as a person writes it for RBAC: ``RESOURCE[/SUBRESOURCE][.GROUP]`` (``pods``, ``pods/log``,
``deployments.apps``, ``jobs.batch.volcano.sh``), the way ``kubectl`` names a resource, without a version (RBAC
names none). Declared calls and kinds allowed without a policy are written so."""

from __future__ import annotations

import re

from hera_volcano.shared.errors import ValidationError

_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_REF = re.compile(rf"(?P<resource>{_LABEL}(/{_LABEL})?)(\.(?P<group>{_LABEL}(\.{_LABEL})*))?")
_VERSION = re.compile(r"v\d+((alpha|beta)\d+)?")


def parse_resource(text: str, field: str) -> tuple[str, str]:
    """(group, resource) of ``text``; anything else (a kind, a version, a wildcard) is a ValidationError."""
    match = _REF.fullmatch(text) if isinstance(text, str) else None
    group = (match.group("group") or "") if match else ""
    if match is None or _VERSION.fullmatch(group.split(".")[0]):
        raise ValidationError(
            field,
            f"must name a resource as RBAC does, RESOURCE[/SUBRESOURCE][.GROUP] without a version (pods, pods/log,"
            f" deployments.apps, jobs.batch.volcano.sh), not {text!r}",
        )
    return group, match.group("resource")


def resource_text(group: str, resource: str) -> str:
    """``RESOURCE[.GROUP]``, as :func:`parse_resource` reads it."""
    return f"{resource}.{group}" if group else resource
