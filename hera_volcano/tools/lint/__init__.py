"""Lint Argo workflows and the Volcano Jobs their resource steps create, as plain YAML data.

Argo checks a workflow only when it is submitted, and nothing checks the Volcano Job inside a resource step until
the step runs on the cluster. This package finds both kinds of problem in files, without a cluster and without Hera
(pure dict work), fast enough for a pre-commit hook over thousands of rendered files: each file is parsed once with
the C loader, each manifest once after sample substitution. Every document is understood or reported (see
:mod:`.kinds`); findings carry the line of the field they are about.

Paths name the field: ``[0].spec.templates[2].name`` is the third template of the file's first document, and
``[0].spec.templates[1].resource.manifest::spec.tasks[0].name`` a field inside the Volcano Job of that manifest.
"""

from hera_volcano.tools.lint.context import MANIFEST_SEPARATOR, Source
from hera_volcano.tools.lint.dags import TASK_RESULTS, parse_depends
from hera_volcano.tools.lint.documents import lint_bytes, lint_document, lint_documents, lint_file, lint_text
from hera_volcano.tools.lint.kinds import KINDS, Kind
from hera_volcano.tools.lint.report import LintFinding, Summary, has_errors
from hera_volcano.tools.lint.resources import RESOURCE_ACTIONS

__all__ = [
    "KINDS",
    "MANIFEST_SEPARATOR",
    "RESOURCE_ACTIONS",
    "TASK_RESULTS",
    "Kind",
    "LintFinding",
    "Source",
    "Summary",
    "has_errors",
    "lint_bytes",
    "lint_document",
    "lint_documents",
    "lint_file",
    "lint_text",
    "parse_depends",
]
