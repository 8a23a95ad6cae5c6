"""Kustomizations (``hera-volcano render`` writes one beside the workflows and the RBAC): every file they list
must exist, or ``kubectl apply -k`` and GitOps tools fail on the whole folder."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Final

from hera_volcano.shared.findings import Finding, as_list, as_map, error
from hera_volcano.tools.lint.context import Source

API_VERSION: Final = "kustomize.config.k8s.io/v1beta1"
KIND: Final = "Kustomization"
#: kustomize reads a file of one of these names even without apiVersion and kind.
FILE_NAMES: Final = frozenset({"kustomization.yaml", "kustomization.yml", "Kustomization"})
#: Fields that list files or folders relative to the kustomization.
_LISTS: Final = ("resources", "components", "crds", "bases")


def _is_remote(reference: str) -> bool:
    """A URL or a remote repository (``github.com/org/repo//path?ref=v1``): not a local file to look for."""
    return "://" in reference or reference.startswith(("github.com/", "git@")) or "?ref=" in reference


def check_kustomization(doc: Mapping[str, object], source: Source) -> Iterator[Finding]:
    """Each local file or folder listed exists next to the kustomization (when it was read from a folder)."""
    references: list[tuple[str, object]] = []
    for field in _LISTS:
        value = doc.get(field)
        if value is not None and not isinstance(value, list):
            yield error(field, "must be a list of files or folders")
        references.extend((f"{field}[{i}]", item) for i, item in enumerate(as_list(value)))
    for i, patch in enumerate(as_list(doc.get("patches"))):
        if as_map(patch).get("path") is not None:
            references.append((f"patches[{i}].path", as_map(patch)["path"]))
    for path, reference in references:
        if not isinstance(reference, str) or not reference:
            yield error(path, "must be a file or folder name")
        elif source.directory is not None and not _is_remote(reference) and not (source.directory / reference).exists():
            yield error(
                path, f"lists {reference!r}, which does not exist next to this kustomization: kubectl apply -k fails"
            )
