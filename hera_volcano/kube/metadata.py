"""Kubernetes' rules for an object's labels and annotations: the API server refuses any object (a Workflow, a
Volcano Job, the pods of its tasks) whose metadata breaks them."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from hera_volcano.kube import names
from hera_volcano.shared.findings import Finding, as_map, entry, error


def labels_and_annotations(metadata: Mapping[str, object], path: str) -> Iterator[Finding]:
    """Kubernetes' rules for label keys and values and annotation keys (any object's metadata, at ``path``)."""
    for key, value in as_map(metadata.get("labels")).items():
        at = entry(f"{path}.labels", key)
        message = names.qualified_name(key)
        if message is not None:
            yield error(at, f"label key {message}")
        message = names.label_value(value) if isinstance(value, str) else None  # other types: the type checks
        if message is not None:
            yield error(at, message)
    for key in as_map(metadata.get("annotations")):
        # Kubernetes checks annotation keys in lower case (unlike label keys).
        message = names.qualified_name(key.lower() if isinstance(key, str) else key)
        if message is not None:
            yield error(entry(f"{path}.annotations", key), f"annotation key {message}")
