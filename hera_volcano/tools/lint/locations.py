"""Lines of findings: the line in the file of the field a finding's path names.

Rules work on plain data, which has no lines, so lines are found afterwards, and only for files that have findings:
the file is composed again (PyYAML's node tree keeps positions) and each path is followed as far as it goes. A
field missing from the file (``metadata.name is required``) gets the line of the nearest enclosing one. A field
inside a resource manifest (``...resource.manifest::spec.tasks[0].name``) gets its own line when the manifest is a
literal block (``manifest: |``), whose lines are the file's; otherwise the line of the ``manifest`` key.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from typing import Final

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from hera_volcano.kube.loading import DuplicateKey
from hera_volcano.shared.findings import Finding, entry, error, join
from hera_volcano.tools.lint.context import MANIFEST_SEPARATOR

_Loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
#: ``.key``, ``key`` (at the start) or ``[index-or-key]``.
_SEGMENT: Final = re.compile(r"\[([^\]]*)\]|\.?([^.\[\]]+)")
#: What a placeholder becomes before a manifest is composed: a plain word keeps the YAML valid and the lines.
_PLACEHOLDER: Final = re.compile(r"\{\{[^{}\n]*\}\}")
#: A mapping node's scalar keys (by id of the node): the key node and the value node of each.
_KeyIndex = dict[int, dict[str, tuple[Node, Node]]]


def segments(path: str) -> list[str]:
    """The keys and indices of a path: ``[0].spec.templates[2]`` is ``0, spec, templates, 2``."""
    return [m.group(1) if m.group(1) is not None else m.group(2) for m in _SEGMENT.finditer(path)]


def _compose_all(text: str) -> list[Node | None]:
    """Every document's node tree; an empty document is None. Raises what PyYAML raises."""
    return [None if _empty(node) else node for node in yaml.compose_all(text, Loader=_Loader)]


def _empty(node: Node | None) -> bool:
    return node is None or (isinstance(node, ScalarNode) and node.tag == "tag:yaml.org,2002:null" and not node.value)


def _follow(node: Node, keys: list[str], index: _KeyIndex | None = None) -> tuple[Node, int, int]:
    """The deepest node along ``keys``, its line (0-based: a key's line for a map entry) and how many keys matched.
    ``index`` keeps each mapping's keys once looked up, so that many findings in one wide mapping cost one pass."""
    index = {} if index is None else index
    line = node.start_mark.line
    for depth, key in enumerate(keys):
        child: Node | None = None
        if isinstance(node, MappingNode):
            entries = index.get(id(node))
            if entries is None:
                # The last of repeated keys: its value is the one loaded.
                entries = index[id(node)] = {k.value: (k, v) for k, v in node.value if isinstance(k, ScalarNode)}
            found = entries.get(key)
            if found is not None:
                child, line = found[1], found[0].start_mark.line
        elif isinstance(node, SequenceNode) and key.isdigit() and int(key) < len(node.value):
            child = node.value[int(key)]
            line = child.start_mark.line
        if child is None:
            return node, line, depth
        node = child
    return node, line, len(keys)


class Locator:
    """Lines of paths in one file's text (``[i]`` first: the document). The text is composed on the first call."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._documents: list[Node | None] | None = None
        self._keys: _KeyIndex = {}
        self._manifests: dict[int, Node | None] = {}  # a literal manifest's object, composed once
        self._duplicates: dict[int, dict[tuple[int, str], str]] = {}

    def _document(self, index: int) -> Node | None:
        if self._documents is None:
            self._documents = []
            try:
                for node in yaml.compose_all(self._text, Loader=_Loader):
                    self._documents.append(None if _empty(node) else node)
            except Exception:  # the documents before a parse error still have lines
                pass
        return self._documents[index] if index < len(self._documents) else None

    def line(self, path: str) -> int | None:
        """The 1-based line of the field ``path`` names, or of the nearest enclosing field in the file."""
        outer, _, inner = path.partition(MANIFEST_SEPARATOR)
        keys = segments(outer)
        if not keys or not keys[0].isdigit():
            return None
        root = self._document(int(keys[0]))
        if root is None:
            return None
        node, line, matched = _follow(root, keys[1:], self._keys)
        if inner and matched == len(keys) - 1 and isinstance(node, ScalarNode) and node.style == "|":
            if id(node) not in self._manifests:
                self._manifests[id(node)] = _manifest_root(node.value)
            manifest = self._manifests[id(node)]
            if manifest is not None:
                return node.start_mark.line + 2 + _follow(manifest, segments(inner), self._keys)[1]
        return line + 1

    def duplicates(self, keys: Iterable[DuplicateKey], prefix: Callable[[int], str]) -> list[Finding]:
        """An error for each key written twice, at its path; ``prefix(document)`` is the path of a document: ``[i]``
        in a file, ``...manifest::`` in a manifest. The text is composed once and each document's keys are walked
        once, however many keys repeat."""
        found: list[Finding] = []
        for key in keys:
            paths = self._duplicates.get(key.document)
            if paths is None:
                root = self._document(key.document)
                paths = self._duplicates[key.document] = {} if root is None else _key_paths(root)
            relative = paths.get((key.line, key.key), key.key)
            at = prefix(key.document)
            in_manifest = at.endswith(MANIFEST_SEPARATOR)
            where = "the manifest" if in_manifest else "the file"
            message = _DUPLICATE.format(key=key.key, first=key.first_line, where=where)
            found.append(error(at + relative if in_manifest else join(at, relative), message))
        return found


def _manifest_root(text: str) -> Node | None:
    """The one object a manifest's text holds, composed (None if it does not parse or holds another number)."""
    try:
        documents = [d for d in _compose_all(_PLACEHOLDER.sub("x", text)) if d is not None]
    except Exception:  # a manifest that does not parse is reported as such, at the manifest's line
        return None
    return documents[0] if len(documents) == 1 else None


def _key_paths(root: Node) -> dict[tuple[int, str], str]:
    """The path of every scalar key under ``root`` by its 1-based line and text (the first one found of a line)."""
    paths: dict[tuple[int, str], str] = {}
    for path, node in _mappings(root):
        for key_node, _ in node.value:
            if isinstance(key_node, ScalarNode):
                paths.setdefault((key_node.start_mark.line + 1, key_node.value), entry(path, key_node.value))
    return paths


def _mappings(root: Node) -> Iterator[tuple[str, MappingNode]]:
    """Every mapping under ``root`` with its path (depth first, without recursion: files nest deep)."""
    stack: list[tuple[str, Node]] = [("", root)]
    seen: set[int] = set()
    while stack:
        path, node = stack.pop()
        if id(node) in seen:  # an alias: the same node again
            continue
        seen.add(id(node))
        if isinstance(node, MappingNode):
            yield path, node
            stack.extend((entry(path, k.value), v) for k, v in node.value if isinstance(k, ScalarNode))
        elif isinstance(node, SequenceNode):
            stack.extend((f"{path}[{i}]", v) for i, v in enumerate(node.value))


_DUPLICATE: Final = (
    "duplicate key {key!r} (also on line {first} of {where}): YAML readers keep the last value, but kubectl, the API"
    " server and argo submit decode strictly and refuse the object"
)


def duplicate_findings(text: str, keys: Iterable[DuplicateKey], prefix: Callable[[int], str]) -> list[Finding]:
    """Errors for keys written twice in ``text`` (see :meth:`Locator.duplicates`)."""
    return Locator(text).duplicates(keys, prefix)
