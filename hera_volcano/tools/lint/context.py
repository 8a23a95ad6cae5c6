"""What the checks of one document know besides the document: where it comes from, and, for a workflow, the
facts every rule about its templates needs."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from hera_volcano.kube.loading import Budget
from hera_volcano.shared.findings import Finding, as_list, as_map
from hera_volcano.volcano.schema import QUEUE_API_VERSION, QUEUE_KIND

#: Separates the path of a resource manifest from the path of a field inside the object it holds:
#: ``spec.templates[1].resource.manifest::spec.tasks[0].name``.
MANIFEST_SEPARATOR: Final = "::"
#: Kinds whose parameters and job names are final when submitted (as opposed to templates).
_RUNNABLE_KINDS: Final = frozenset({"Workflow", "CronWorkflow"})
_STORED_KINDS: Final = {"WorkflowTemplate": False, "ClusterWorkflowTemplate": True}  # kind: cluster-scoped
#: A second opinion on each parsed document after the offline rules, such as an API server's
#: (:meth:`hera_volcano.Client.dry_run`): findings with paths relative to the document.
ServerCheck = Callable[[object], list[Finding]]


def templates_by_name(spec: Mapping[str, object]) -> dict[str, Mapping[str, object]]:
    """A workflow spec's templates by name; the first of a name, which is the one Argo's lookup finds."""
    found: dict[str, Mapping[str, object]] = {}
    for template in as_list(spec.get("templates")):
        if isinstance(template, Mapping) and isinstance(template.get("name"), str):
            found.setdefault(template["name"], template)
    return found


@dataclass(frozen=True)
class Stored:
    """A WorkflowTemplate or ClusterWorkflowTemplate linted in the same run, which a ``templateRef`` may name."""

    kind: str
    namespace: str | None
    templates: Mapping[str, Mapping[str, object]]
    #: Its whole spec (its arguments, and what reads them).
    spec: Mapping[str, object] = field(default_factory=dict)


#: Stored templates by (cluster-scoped, name); None for a name given to more than one.
StoredTemplates = Mapping[tuple[bool, str], Stored | None]


def stored_templates(docs: Iterable[object]) -> dict[tuple[bool, str], Stored | None]:
    """The WorkflowTemplates and ClusterWorkflowTemplates among ``docs``, for the calls of the others."""
    found: dict[tuple[bool, str], Stored | None] = {}
    for doc in docs:
        if not isinstance(doc, Mapping) or doc.get("apiVersion") != "argoproj.io/v1alpha1":
            continue
        kind, metadata = doc.get("kind"), as_map(doc.get("metadata"))
        name, namespace = metadata.get("name"), metadata.get("namespace")
        if not isinstance(kind, str) or kind not in _STORED_KINDS or not isinstance(name, str) or not name:
            continue
        key = (_STORED_KINDS[kind], name)
        own = namespace if isinstance(namespace, str) and namespace else None
        spec = as_map(doc.get("spec"))
        found[key] = None if key in found else Stored(kind, own, templates_by_name(spec), spec)
    return found


def stored_queues(docs: Iterable[object]) -> dict[str, Mapping[str, object]]:
    """The Volcano Queues among ``docs`` by name, for the jobs of the others that name them (the first of a name)."""
    found: dict[str, Mapping[str, object]] = {}
    for doc in docs:
        if isinstance(doc, Mapping) and doc.get("apiVersion") == QUEUE_API_VERSION and doc.get("kind") == QUEUE_KIND:
            name = as_map(doc.get("metadata")).get("name")
            if isinstance(name, str) and name:
                found.setdefault(name, doc)
    return found


@dataclass(frozen=True)
class Source:
    """The file a document comes from: its name as findings show it, its folder when it is a file on disk (for
    the files a kustomization lists), and whether kinds lint does not know are tolerated (``--allow-unknown``)."""

    file: str = ""
    directory: Path | None = None
    allow_unknown: bool = False
    #: The templates of the same stream that a ``templateRef`` may call.
    stored: StoredTemplates = field(default_factory=dict)
    #: The Volcano Queues of the same stream, by name: a job that names one must fit its capability.
    queues: Mapping[str, Mapping[str, object]] = field(default_factory=dict)
    #: Asked of every document after the offline rules (``lint --server``); what it raises ends the run.
    server: ServerCheck | None = None
    #: What the file may stand for, which the manifests parsed from it share (None: each parse its own).
    budget: Budget | None = None


@dataclass(frozen=True)
class Workflow:
    """What every check of one workflow document needs to know about it."""

    kind: str
    metadata: Mapping[str, object]
    spec: Mapping[str, object]
    spec_path: str
    #: The templates by name (the first of a name: Argo's lookup finds it).
    templates: Mapping[str, Mapping[str, object]]
    defaults: Mapping[str, object]
    #: The templates of the same stream that a ``templateRef`` may call.
    stored: StoredTemplates = field(default_factory=dict)
    #: The Volcano Queues of the same stream, by name.
    queues: Mapping[str, Mapping[str, object]] = field(default_factory=dict)
    #: What the file may stand for, which the manifests parsed from it share.
    budget: Budget | None = None

    @property
    def runnable(self) -> bool:
        """A Workflow (or a CronWorkflow's), as opposed to a template: its parameters and job names are final."""
        return self.kind in _RUNNABLE_KINDS

    @property
    def namespace(self) -> str | None:
        namespace = self.metadata.get("namespace")
        return namespace if isinstance(namespace, str) and namespace else None
