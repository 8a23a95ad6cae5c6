"""Kubernetes' rules for an object's labels, annotations and namespace: the API server refuses any object (a
Workflow, a Volcano Job, the pods of its tasks) whose metadata breaks them."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Final

from hera_volcano.kube import names
from hera_volcano.shared.findings import Finding, as_map, entry, error

#: The API server's limit on an object's annotations: keys and values together, in bytes.
ANNOTATIONS_MAX_BYTES: Final = 256 * 1024


def labels_and_annotations(metadata: Mapping[str, object], path: str) -> Iterator[Finding]:
    """Kubernetes' rules for label keys and values, annotation keys and the annotations' total size (any object's
    metadata, at ``path``)."""
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
    size = annotations_size(as_map(metadata.get("annotations")))
    if size > ANNOTATIONS_MAX_BYTES:
        yield error(
            f"{path}.annotations",
            f"too long: must have at most {ANNOTATIONS_MAX_BYTES} bytes, keys and values together (these have {size})",
        )


def annotations_size(annotations: Mapping[str, object]) -> int:
    """The size the API server counts: the UTF-8 bytes of every key and value (other types: the type checks)."""
    return sum(
        len(str(k).encode(errors="replace")) + len(v.encode(errors="replace")) if isinstance(v, str) else 0
        for k, v in annotations.items()
    )


def check_namespace(metadata: Mapping[str, object], path: str) -> Iterator[Finding]:
    """``metadata.namespace`` (at ``path``), when set: a lowercase RFC 1123 label, as the API server wants it."""
    namespace = metadata.get("namespace")
    message = names.dns1123_label(namespace) if isinstance(namespace, str) and namespace else None
    if message is not None:
        yield error(path, message)
