"""Telling a Volcano Job from objects that resemble one: a Kubernetes ``batch/v1`` Job written with Volcano's fields
is the usual slip, and the API server would refuse it (or, for a bare file, create the wrong kind of job)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from hera_volcano.shared.findings import as_map
from hera_volcano.volcano.schema import API_VERSION, KIND

#: Fields of a Volcano Job's spec that a Kubernetes batch/v1 Job's spec does not have.
_VOLCANO_ONLY: Final = ("tasks", "plugins", "queue", "minAvailable", "policies", "schedulerName", "maxRetry")


def is_volcano_job(obj: Mapping[str, object]) -> bool:
    """A Job of Volcano's group, whatever its version (a wrong version is reported by Volcano's rules)."""
    api_version = obj.get("apiVersion")
    return isinstance(api_version, str) and api_version.startswith("batch.volcano.sh/") and obj.get("kind") == KIND


def misplaced_volcano_job(obj: Mapping[str, object]) -> str | None:
    """Why a Job of another group that carries Volcano's fields is a mistake, or None."""
    api_version = obj.get("apiVersion")
    if obj.get("kind") != KIND or not isinstance(api_version, str) or api_version.startswith("batch.volcano.sh/"):
        return None
    fields = [f for f in _VOLCANO_ONLY if f in as_map(obj.get("spec"))]
    if not fields:
        return None
    return (
        f"is {api_version!r} but the job has Volcano's spec.{', spec.'.join(fields)}: a Volcano Job's apiVersion is"
        f" {API_VERSION} (a Kubernetes {api_version} Job has no such fields, and the API server refuses them)"
    )
