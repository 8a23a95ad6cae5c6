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
from typing import Any, Final

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
_LoaderBase: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


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

    def resolve(self, kind: type[Node], value: Any, implicit: tuple[bool, bool]) -> str:
        """PyYAML's resolution without its per-call list building (safe loaders have no path resolvers)."""
        if kind is ScalarNode:
            if implicit[0]:
                for tag, pattern in self._BY_FIRST.get(value[:1], self._WILDCARD):
                    if pattern.match(value):
                        if tag in _GO_STRINGS or (tag in _BASE_60 and ":" in value):
                            return _STR_TAG
                        return tag
            return _STR_TAG
        return str(super().resolve(kind, value, implicit))

    def descend_resolver(self, current_node: Any, current_index: Any) -> None:
        """No path resolvers: nothing to track."""

    def ascend_resolver(self) -> None:
        """No path resolvers: nothing to track."""

    def construct_document(self, node: Node) -> Any:
        sizes: dict[int, int] = {}
        data = self._build(node, {}, sizes)
        self.constructed_objects.clear()
        self.recursive_objects.clear()
        self.deep_construct = False
        return data

    def _build(self, node: Node, memo: dict[int, Any], sizes: dict[int, int]) -> Any:
        """Build ``node``; ``sizes`` holds how many nodes each one stands for once aliases are expanded, so that a
        few hundred bytes of nested aliases (a "billion laughs") are refused instead of blowing up whoever walks
        the result."""
        cls, tag = node.__class__, node.tag
        if cls is ScalarNode:
            return node.value if tag == _STR_TAG else self.construct_object(node, deep=True)
        known = memo.get(id(node))
        if known is not None:
            return known  # an alias (possibly of a node being built: recursive data)
        size = 1
        if cls is SequenceNode and tag == _SEQ_TAG:
            items: list[Any] = []
            memo[id(node)] = items
            for child in node.value:
                items.append(self._build(child, memo, sizes))
                size += sizes.get(id(child), 1)
            return self._sized(node, items, size, sizes)
        if cls is MappingNode and tag == _MAP_TAG:
            mapping: dict[Any, Any] = {}
            memo[id(node)] = mapping
            for key_node, value_node in node.value:
                key_tag = key_node.tag
                if key_tag in (_STR_TAG, _VALUE_TAG):
                    key = key_node.value
                elif key_tag == _MERGE_TAG:
                    break  # merge keys: PyYAML's constructor flattens them
                else:
                    key = self._build(key_node, memo, sizes)
                if self.duplicates is not None and key in mapping:
                    self._duplicate(node, key_node)
                try:
                    mapping[key] = self._build(value_node, memo, sizes)
                except TypeError:
                    break  # an unhashable key: PyYAML's constructor reports it
                size += sizes.get(id(value_node), 1)
            else:
                return self._sized(node, mapping, size, sizes)
        data = self.construct_object(node, deep=True)
        memo[id(node)] = data
        return data

    def _duplicate(self, node: Node, key_node: Node) -> None:
        assert self.duplicates is not None
        first = next(k for k, _ in node.value if k.tag == key_node.tag and k.value == key_node.value)
        self.duplicates.append(
            DuplicateKey(self.document, str(key_node.value), key_node.start_mark.line + 1, first.start_mark.line + 1)
        )

    @staticmethod
    def _sized(node: Node, data: Any, size: int, sizes: dict[int, int]) -> Any:
        if size > MAX_EXPANDED_NODES:
            raise yaml.constructor.ConstructorError(
                None, None, f"aliases expand this document past {MAX_EXPANDED_NODES:,} nodes", node.start_mark
            )
        sizes[id(node)] = size
        return data


#: More nodes than any real manifest has (a 3000-job pipeline is under a million), far fewer than an alias bomb.
MAX_EXPANDED_NODES: Final = 5_000_000


@dataclass(frozen=True)
class DuplicateKey:
    """A key written twice in one mapping: YAML readers keep the last value, Kubernetes' strict decoding (``kubectl
    apply``, ``argo submit``) refuses the object. Lines count from 1."""

    document: int
    key: str
    line: int
    first_line: int


def load_all(text: str, duplicates: list[DuplicateKey] | None = None) -> Iterator[Any]:
    """Every document of a YAML stream, as ``yaml.safe_load_all`` gives them, about 1.5x faster.

    With a ``duplicates`` list, every repeated plain key is appended to it (the document still loads, last value
    wins, as with ``yaml.safe_load``)."""
    loader = _Loader(text)
    loader.duplicates = duplicates
    try:
        while loader.check_data():
            yield loader.get_data()
            loader.document += 1
    finally:
        loader.dispose()


def describe_error(e: BaseException) -> str:
    """One line for a YAML error: what and where (line, column), for a finding or a CLI message."""
    if isinstance(e, yaml.MarkedYAMLError):
        text = " ".join(part for part in (e.context, e.problem) if part)
        mark = e.problem_mark or e.context_mark
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        return f"{text or 'cannot parse'}{where}"
    return str(e).splitlines()[0] if str(e) else type(e).__name__
