"""Lines of findings: the line in the file of the field a finding's path names.

Rules work on plain data, which has no lines, so lines are found afterwards, and only for files that have findings:
the file is composed again (PyYAML's node tree keeps positions) and each path is followed as far as it goes. A
field missing from the file (``metadata.name is required``) gets the line of the nearest enclosing one. A field
inside a resource manifest (``...resource.manifest::spec.tasks[0].name``) gets its own line when the manifest is a
literal block (``manifest: |``), whose lines are the file's; otherwise the line of the ``manifest`` key.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
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


def segments(path: str) -> list[str]:
    """The keys and indices of a path: ``[0].spec.templates[2]`` is ``0, spec, templates, 2``."""
    return [m.group(1) if m.group(1) is not None else m.group(2) for m in _SEGMENT.finditer(path)]


def _compose_all(text: str) -> list[Node | None]:
    """Every document's node tree; an empty document is None. Raises what PyYAML raises."""
    return [None if _empty(node) else node for node in yaml.compose_all(text, Loader=_Loader)]


def _empty(node: Node | None) -> bool:
    return node is None or (isinstance(node, ScalarNode) and node.tag == "tag:yaml.org,2002:null" and not node.value)


def _follow(node: Node, keys: list[str]) -> tuple[Node, int, int]:
    """The deepest node along ``keys``, its line (0-based: a key's line for a map entry) and how many keys matched."""
    line = node.start_mark.line
    for depth, key in enumerate(keys):
        child: Node | None = None
        if isinstance(node, MappingNode):
            for key_node, value_node in node.value:  # the last of repeated keys: its value is the one loaded
                if isinstance(key_node, ScalarNode) and key_node.value == key:
                    child, line = value_node, key_node.start_mark.line
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
        node, line, matched = _follow(root, keys[1:])
        if inner and matched == len(keys) - 1 and isinstance(node, ScalarNode) and node.style == "|":
            inside = _manifest_line(node.value, segments(inner))
            if inside is not None:
                return node.start_mark.line + 2 + inside
        return line + 1


def _manifest_line(text: str, keys: list[str]) -> int | None:
    """The 0-based line, within a manifest's text, of the field ``keys`` name."""
    try:
        documents = [d for d in _compose_all(_PLACEHOLDER.sub("x", text)) if d is not None]
    except Exception:  # a manifest that does not parse is reported as such, at the manifest's line
        return None
    if len(documents) != 1:
        return None
    return _follow(documents[0], keys)[1]


def key_path(root: Node, key: DuplicateKey) -> str:
    """The path, within its document, of the repeated key."""
    for path, node in _mappings(root):
        for key_node, _ in node.value:
            if key_node.start_mark.line + 1 == key.line and key_node.value == key.key:
                return entry(path, key.key)
    return key.key


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


def duplicate_finding(text: str, key: DuplicateKey, prefix: str) -> Finding:
    """An error for a key written twice in document ``key.document`` of ``text``; ``prefix`` is the path of that
    document: ``[0]`` in a file, ``...manifest::`` in a manifest."""
    in_manifest = prefix.endswith(MANIFEST_SEPARATOR)
    message = _DUPLICATE.format(key=key.key, first=key.first_line, where="the manifest" if in_manifest else "the file")
    try:
        root = _compose_all(text)[key.document]
    except Exception:  # cannot happen for text that loaded; the finding then names the document only
        root = None
    relative = key.key if root is None else key_path(root, key)
    return error(prefix + relative if in_manifest else join(prefix, relative), message)
