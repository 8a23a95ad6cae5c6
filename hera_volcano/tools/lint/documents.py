"""Linting files: reading, parsing (each file once, with the C loader), checking every document by its kind, and
locating each finding on its line.

Whatever a file holds, the answer is findings, never an exception: unreadable files, text that is not UTF-8,
YAML that does not parse, a key written twice, an empty file, a document so malformed that a check trips over it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Final

import yaml

from hera_volcano.kube.loading import Budget, DuplicateKey, describe_error, load_all
from hera_volcano.shared.findings import Finding, error, join
from hera_volcano.tools.lint.context import ServerCheck, Source, stored_queues, stored_templates
from hera_volcano.tools.lint.kinds import EXPECTED, check_document, unknown
from hera_volcano.tools.lint.locations import Locator
from hera_volcano.tools.lint.report import LintFinding

_TAB_HINT: Final = ": YAML indents with spaces, never tabs"


def lint_file(
    path: Path | str, display: str | None = None, *, allow_unknown: bool = False, server: ServerCheck | None = None
) -> list[LintFinding]:
    """Lint one file; ``display`` is the name findings carry (the path by default). A file that cannot be read is
    an error finding. Files a kustomization lists are looked for next to it. ``server``, when given, is asked about
    each document after the offline rules (``lint --server``: :meth:`hera_volcano.Client.dry_run`)."""
    name = str(path) if display is None else display
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        return [LintFinding(name, "[0]", "error", f"cannot read: {e.strerror or e}")]
    except MemoryError:
        return [LintFinding(name, "[0]", "error", "cannot read: the file is larger than the memory available")]
    return lint_bytes(data, name, allow_unknown=allow_unknown, directory=Path(path).parent, server=server)


def lint_bytes(
    data: bytes,
    file: str,
    *,
    allow_unknown: bool = False,
    directory: Path | None = None,
    server: ServerCheck | None = None,
) -> list[LintFinding]:
    """Lint raw file contents: text that is not UTF-8 is an error finding, as kubectl and Argo refuse it."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        message = f"not UTF-8 text (byte {e.start}): YAML files must be UTF-8"
        return [LintFinding(file, "[0]", "error", message, line)]
    return lint_text(text, file, allow_unknown=allow_unknown, directory=directory, server=server)


def lint_text(
    text: str,
    file: str,
    *,
    allow_unknown: bool = False,
    directory: Path | None = None,
    server: ServerCheck | None = None,
) -> list[LintFinding]:
    """Lint every document of a YAML stream (document ``i`` is ``[i]`` in paths), each finding on its line."""
    budget = Budget(text)  # shared with the manifests parsed from the file
    source = Source(file, directory, allow_unknown, server=server, budget=budget)
    docs: list[object] = []
    duplicates: list[DuplicateKey] = []
    problem: LintFinding | None = None
    try:
        for doc in load_all(text, duplicates, budget):
            docs.append(doc)
    except Exception as e:  # PyYAML raises more than YAMLError on odd input (e.g. IndexError for `a: !!int`)
        message = f"not valid YAML: {describe_error(e)}"
        message += _TAB_HINT if _tab(text, e) else ""
        problem = LintFinding(file, f"[{len(docs)}]", "error", message, _line(e, text))
    found = lint_documents(docs, source)
    if problem is None and all(doc is None for doc in docs):
        message = f"holds no YAML document (nothing but blank lines or comments): expected {EXPECTED}"
        found.append(unknown("[0]", message, source))
    locator = Locator(text)  # composes the text only if a finding needs a line
    # A finding about nothing in the file (an empty file) is on its first line.
    out = [LintFinding(file, f.path, f.severity, f.message, _located(locator, f.path)) for f in found]
    for d, f in zip(duplicates, locator.duplicates(duplicates, lambda document: f"[{document}]"), strict=True):
        out.append(LintFinding(file, f.path, f.severity, f.message, d.line))
    return out if problem is None else [*out, problem]


def _located(locator: Locator, path: str) -> int:
    """The line of ``path``; the first when the locator cannot follow it (the finding matters more than its line)."""
    try:
        return locator.line(path) or 1
    except Exception:
        return 1


def _tab(text: str, e: BaseException) -> bool:
    """Whether the line a parse error points at holds a tab (the usual cause; PyYAML's message does not say so)."""
    mark = getattr(e, "problem_mark", None)
    lines = text.split("\n")
    return mark is not None and mark.line < len(lines) and "\t" in lines[mark.line]


def _line(e: BaseException, text: str) -> int:
    """The line a parse error is on: its mark's, the character's a reader error names, else the first."""
    if isinstance(e, yaml.MarkedYAMLError):
        mark = e.problem_mark or e.context_mark
        return 1 if mark is None else mark.line + 1
    if isinstance(e, yaml.reader.ReaderError):  # libyaml's position counts UTF-8 bytes
        return text.encode("utf-8", "surrogatepass").count(b"\n", 0, e.position) + 1
    return 1


def lint_documents(docs: Iterable[object], source: Source) -> list[Finding]:
    """Findings for parsed documents, with paths from ``[i]``; a call through ``templateRef`` to a WorkflowTemplate
    among them is checked against it. A document so malformed that a check trips over it (a map where a list belongs,
    nesting deep enough to exhaust the stack) is one error finding, so one bad file never stops a run over many.
    ``source.server`` is asked about each document after the offline rules; what it raises ends the run."""
    docs = list(docs)
    try:
        stored, queues = stored_templates(docs), stored_queues(docs)
    except Exception:  # a document too malformed to be a template or a queue: its own check reports it below
        stored, queues = {}, {}
    if stored or queues:
        source = replace(source, stored=stored, queues=queues)
    found: list[Finding] = []
    for i, doc in enumerate(docs):
        try:
            findings = lint_document(doc, source)
        except Exception as e:  # the rules read untrusted data; report what they could not, never crash
            findings = [error("", f"malformed document, cannot check it: {type(e).__name__}: {e}")]
        if source.server is not None and doc is not None:
            findings = [*findings, *source.server(doc)]
        found.extend(Finding(join(f"[{i}]", f.path), f.severity, f.message) for f in findings)
    return found


def lint_document(doc: object, source: Source | None = None) -> list[Finding]:
    """Findings for one parsed document, with paths relative to it; an empty document (None) has none."""
    if doc is None:
        return []
    return check_document(doc, Source() if source is None else source)
