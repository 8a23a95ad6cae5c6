"""What the checks of one document know besides the document: where it comes from, and, for a workflow, the
facts every rule about its templates needs."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

#: Separates the path of a resource manifest from the path of a field inside the object it holds:
#: ``spec.templates[1].resource.manifest::spec.tasks[0].name``.
MANIFEST_SEPARATOR: Final = "::"
#: Kinds whose parameters and job names are final when submitted (as opposed to templates).
_RUNNABLE_KINDS: Final = frozenset({"Workflow", "CronWorkflow"})


@dataclass(frozen=True)
class Source:
    """The file a document comes from: its name as findings show it, its folder when it is a file on disk (for
    the files a kustomization lists), and whether kinds lint does not know are tolerated (``--allow-unknown``)."""

    file: str = ""
    directory: Path | None = None
    allow_unknown: bool = False


@dataclass(frozen=True)
class Workflow:
    """What every check of one workflow document needs to know about it."""

    kind: str
    metadata: Mapping[str, Any]
    spec: Mapping[str, Any]
    spec_path: str
    template_names: frozenset[str]
    defaults: Mapping[str, Any]

    @property
    def runnable(self) -> bool:
        """A Workflow (or a CronWorkflow's), as opposed to a template: its parameters and job names are final."""
        return self.kind in _RUNNABLE_KINDS

    @property
    def namespace(self) -> str | None:
        namespace = self.metadata.get("namespace")
        return namespace if isinstance(namespace, str) and namespace else None
