"""Reading Kubernetes YAML fast: the C safe loader with a direct constructor for plain maps, lists and strings.

The linter parses thousands of files (and every manifest inside them); PyYAML's generator-based constructor is
most of that time. Results are what ``yaml.safe_load_all`` gives, except that dates and base-60 numbers (``1:30``)
stay strings, as Kubernetes' and Argo's Go decoder reads them: lint must not call a string field mistyped when the
API server would accept it.
"""

from __future__ import annotations

import re
import types
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final, NoReturn, TypeVar

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

_STR_TAG: Final = "tag:yaml.org,2002:str"
_MAP_TAG: Final = "tag:yaml.org,2002:map"
_SEQ_TAG: Final = "tag:yaml.org,2002:seq"
_MERGE_TAG: Final = "tag:yaml.org,2002:merge"
_VALUE_TAG: Final = "tag:yaml.org,2002:value"
#: YAML 1.1 forms PyYAML resolves that Go's decoder keeps as strings.
_GO_STRINGS: Final = frozenset({"tag:yaml.org,2002:timestamp"})
_BASE_60: Final = frozenset({"tag:yaml.org,2002:int", "tag:yaml.org,2002:float"})
_T = TypeVar("_T")
_LoaderBase: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
KIB: Final = 1024
MIB: Final = 1024 * KIB
#: Bytes a character of YAML may stand for, counting every text parsed (its characters) and what its documents
#: stand for once aliases and merge keys are expanded (a node: one byte plus its scalar's characters). A file
#: without aliases costs under twice its size (the bundled workflows 1.8, their manifests parsed again by lint up to
#: 7), an alias bomb millions of times it: so lint and submit take time and memory linear in their input, whoever
#: walks or serializes what they read.
BYTES_PER_CHARACTER: Final = 16
#: What the smallest file may stand for.
MIN_EXPANDED_BYTES: Final = 512 * KIB
#: What any file may stand for: more than a plain 60 MB file (a 3000-job pipeline is 1.4 MB), 1/32 of a bomb of
#: 100 KiB aliased 40,000 times.
MAX_EXPANDED_BYTES: Final = 128 * MIB


def _resolvers_by_first_character(
    resolvers: Mapping[str | None, list[tuple[str, re.Pattern[str]]]],
) -> Mapping[str, tuple[tuple[str, re.Pattern[str]], ...]]:
    wildcard = tuple(resolvers.get(None, ()))
    return types.MappingProxyType({k: (*v, *wildcard) for k, v in resolvers.items() if k is not None})


class _Loader(_LoaderBase):  # type: ignore[misc,valid-type,unused-ignore]
    """The C safe loader, with a direct constructor for the plain maps, lists and strings that make up Kubernetes
    YAML (PyYAML's generator-based one is most of the parse time); every other node goes through PyYAML's, so the
    result is what ``yaml.safe_load`` gives."""

    _BY_FIRST: Final[Mapping[str, tuple[tuple[str, re.Pattern[str]], ...]]] = _resolvers_by_first_character(
        _LoaderBase.yaml_implicit_resolvers
    )
    _WILDCARD: Final[tuple[tuple[str, re.Pattern[str]], ...]] = tuple(_LoaderBase.yaml_implicit_resolvers.get(None, ()))
    #: Where repeated keys are reported (None: not looked for), and the index of the document being built.
    duplicates: list[DuplicateKey] | None = None
    document = 0
    #: What the stream may stand for, shared with the other texts of one input; what is left of it for this document.
    budget: Budget
    remaining = 0

    def resolve(self, kind: type[Node], value: object, implicit: tuple[bool, bool]) -> str:
        """PyYAML's resolution without its per-call list building (safe loaders have no path resolvers)."""
        if kind is ScalarNode and isinstance(value, str):
            if implicit[0]:
                for tag, pattern in self._BY_FIRST.get(value[:1], self._WILDCARD):
                    if pattern.match(value):
                        if tag in _GO_STRINGS or (tag in _BASE_60 and ":" in value):
                            return _STR_TAG
                        return tag
            return _STR_TAG
        return str(super().resolve(kind, value, implicit))

    def descend_resolver(self, current_node: object, current_index: object) -> None:
        """No path resolvers: nothing to track."""

    def ascend_resolver(self) -> None:
        """No path resolvers: nothing to track."""

    def construct_document(self, node: Node) -> object:
        sizes: dict[int, int] = {}
        self.remaining = self.budget.remaining
        data = self._build(node, {}, sizes)
        self._sized(node, data, _cost(node, sizes), sizes)  # a document of one long scalar
        self.budget.remaining -= _cost(node, sizes)
        self.constructed_objects.clear()
        self.recursive_objects.clear()
        self.deep_construct = False
        return data

    def _build(self, node: Node, memo: dict[int, object], sizes: dict[int, int]) -> object:
        """Build ``node``; ``sizes`` holds how many bytes each collection stands for once aliases and merge keys are
        expanded (:func:`_cost`), checked after each child, so that a few hundred bytes of nested aliases (a "billion
        laughs") or a long string aliased many times are refused before the work that would expand them."""
        cls, tag = node.__class__, node.tag
        if cls is ScalarNode:
            return node.value if tag == _STR_TAG else self.construct_object(node, deep=True)
        known = memo.get(id(node))
        if known is not None:  # an alias
            if id(node) not in sizes:
                self._recursive(node)  # of a node being built
            return known
        size = 1
        if cls is SequenceNode and tag == _SEQ_TAG:
            items: list[object] = []
            memo[id(node)] = items
            for child in node.value:
                items.append(self._build(child, memo, sizes))
                size += _cost(child, sizes)
                if size > self.remaining:
                    self._refuse(node)
            return self._sized(node, items, size, sizes)
        if cls is MappingNode and tag == _MAP_TAG:
            mapping: dict[object, object] = {}
            memo[id(node)] = mapping
            merged: list[Node] = []
            first_lines: dict[tuple[str, object], int] | None = None  # built on the first repeated key
            for key_node, value_node in node.value:
                key_tag = key_node.tag
                if key_tag in (_STR_TAG, _VALUE_TAG):
                    key = key_node.value
                elif key_tag == _MERGE_TAG:
                    merged.append(value_node)
                    continue
                else:
                    key = self._build(key_node, memo, sizes)
                if self.duplicates is not None and key in mapping:
                    first_lines = first_lines or _first_lines(node)
                    self._duplicate(key_node, first_lines)
                try:
                    mapping[key] = self._build(value_node, memo, sizes)
                except TypeError:
                    break  # an unhashable key: PyYAML's constructor reports it
                size += _cost(key_node, sizes) + _cost(value_node, sizes)
                if size > self.remaining:
                    self._refuse(node)
            else:
                if merged:
                    size += self._merge(node, mapping, merged, memo, sizes)
                return self._sized(node, mapping, size, sizes)
        self._sized(node, None, self._node_size(node, sizes), sizes)  # counted before PyYAML's constructor expands it
        data = self.construct_object(node, deep=True)
        memo[id(node)] = data
        return data

    def _merge(
        self,
        node: Node,
        mapping: dict[object, object],
        merged: list[Node],
        memo: dict[int, object],
        sizes: dict[int, int],
    ) -> int:
        """Put in ``mapping`` the entries of the maps its merge keys (``<<``) name that it does not set itself (the
        first map named wins), keeping those first as ``yaml.safe_load`` does; the bytes they stand for."""
        sources: list[Node] = []
        for value_node in merged:
            children = value_node.value if isinstance(value_node, SequenceNode) else [value_node]
            for child in children:
                if not isinstance(child, MappingNode):
                    found = type(child).__name__.removesuffix("Node").lower()
                    raise yaml.constructor.ConstructorError(
                        "while constructing a mapping",
                        node.start_mark,
                        f"expected a mapping or list of mappings for merging, but found {found}",
                        child.start_mark,
                    )
                sources.append(child)
        entries: dict[object, object] = {}
        size = 0
        for source in sources:
            data = self._build(source, memo, sizes)
            if not isinstance(data, dict):
                raise yaml.constructor.ConstructorError(
                    "while constructing a mapping", node.start_mark, "expected a mapping for merging", source.start_mark
                )
            size += _cost(source, sizes)
            self._sized(node, entries, size, sizes)  # refused before copying more than the budget allows
            for key, value in data.items():
                entries.setdefault(key, value)
        own = dict(mapping)
        mapping.clear()
        mapping.update(entries)
        mapping.update(own)
        return size

    def _duplicate(self, key_node: Node, first_lines: Mapping[tuple[str, object], int]) -> None:
        assert self.duplicates is not None
        first = first_lines.get((key_node.tag, key_node.value), key_node.start_mark.line)
        self.duplicates.append(
            DuplicateKey(self.document, str(key_node.value), key_node.start_mark.line + 1, first + 1)
        )

    def _sized(self, node: Node, data: _T, size: int, sizes: dict[int, int]) -> _T:
        if size > self.remaining:
            self._refuse(node)
        sizes[id(node)] = size
        return data

    def _node_size(self, node: Node, sizes: dict[int, int]) -> int:
        """The bytes ``node`` stands for with aliases expanded (:func:`_cost`), for the nodes PyYAML's constructor
        builds (tagged ones: ``!!omap``, ``!!set``...); each node is counted once (``sizes``), and the count stops
        once past the budget."""
        known = sizes.get(id(node))
        if known == 0:
            self._recursive(node)
        if known is not None:
            return known
        if node.__class__ is ScalarNode:
            return _cost(node, sizes)
        sizes[id(node)] = 0  # being counted
        children = node.value if isinstance(node, SequenceNode) else [n for pair in node.value for n in pair]
        size = 1
        for child in children:
            size += self._node_size(child, sizes)
            if size > self.remaining:
                self._refuse(node)
        sizes[id(node)] = size
        return size

    def _recursive(self, node: Node) -> NoReturn:
        raise yaml.constructor.ConstructorError(
            None,
            None,
            "an alias inside the node it names (recursive data): Kubernetes' and Argo's decoders refuse it",
            node.start_mark,
        )

    def _refuse(self, node: Node) -> NoReturn:
        raise yaml.constructor.ConstructorError(None, None, _past(self.budget.limit), node.start_mark)


def _past(limit: int) -> str:
    return (
        f"aliases and merge keys (<<) expand this YAML past {limit:,} bytes ({BYTES_PER_CHARACTER} a character of it,"
        f" at least {MIN_EXPANDED_BYTES:,}, at most {MAX_EXPANDED_BYTES:,})"
    )


def _cost(node: Node, sizes: Mapping[int, int]) -> int:
    """The bytes ``node`` stands for once aliases are expanded: a scalar one plus its characters, a collection one
    plus its children's (``sizes``, where it is built)."""
    if node.__class__ is ScalarNode:
        return 1 + len(node.value)
    return sizes.get(id(node), 1)


def _first_lines(node: Node) -> dict[tuple[str, object], int]:
    """The 0-based line of the first key of each (tag, text) in a mapping, to name it when a key repeats."""
    lines: dict[tuple[str, object], int] = {}
    for key_node, _ in node.value:
        lines.setdefault((key_node.tag, key_node.value), key_node.start_mark.line)
    return lines


def byte_limit(text: str) -> int:
    """How many bytes the documents of ``text`` may stand for, all together, once aliases are expanded."""
    return min(MAX_EXPANDED_BYTES, MIN_EXPANDED_BYTES + BYTES_PER_CHARACTER * len(text))


class Budget:
    """The bytes one input may stand for once aliases and merge keys are expanded (:func:`byte_limit` of its text),
    shared by every text parsed from it: a resource manifest is a string of the file, parsed again once per template
    that holds it, so a manifest aliased into many templates counts each time against the file's budget."""

    def __init__(self, text: str) -> None:
        self.limit = self.remaining = byte_limit(text)

    def charge(self, text: str) -> None:
        """Count ``text``, about to be parsed, or refuse it (a ``yaml.YAMLError``) when it does not fit."""
        self.remaining -= len(text)
        if self.remaining < 0:
            raise yaml.constructor.ConstructorError(None, None, _past(self.limit))


@dataclass(frozen=True)
class DuplicateKey:
    """A key written twice in one mapping: YAML readers keep the last value, Kubernetes' strict decoding (``kubectl
    apply``, ``argo submit``) refuses the object. Lines count from 1."""

    document: int
    key: str
    line: int
    first_line: int


def load_all(text: str, duplicates: list[DuplicateKey] | None = None, budget: Budget | None = None) -> Iterator[Any]:
    """Every document of a YAML stream, as ``yaml.safe_load_all`` gives them, about 1.5x faster.

    With a ``duplicates`` list, every repeated plain key is appended to it (the document still loads, last value
    wins, as with ``yaml.safe_load``). Aliases and merge keys may expand the stream to :func:`byte_limit` bytes (or
    what is left of ``budget``, shared with the other texts of one input); past that it is a ``yaml.YAMLError``.
    Merge keys follow the YAML spec (the map's own keys win, then the first map named), as Go's decoder does."""
    loader = _Loader(text)
    loader.duplicates = duplicates
    loader.budget = Budget(text) if budget is None else budget
    loader.budget.charge(text)
    try:
        while loader.check_data():
            yield loader.get_data()
            loader.document += 1
    finally:
        loader.dispose()


def describe_error(e: BaseException) -> str:
    """One line for a YAML error: what and where (line, column), for a finding or a CLI message."""
    if isinstance(e, RecursionError):
        return "nested too deep to read (Python's recursion limit)"
    if isinstance(e, yaml.MarkedYAMLError):
        text = " ".join(part for part in (e.context, e.problem) if part)
        mark = e.problem_mark or e.context_mark
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        return f"{text or 'cannot parse'}{where}"
    return str(e).splitlines()[0] if str(e) else type(e).__name__
