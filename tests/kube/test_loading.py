"""The fast loader reports keys written twice (Kubernetes' strict decoding refuses them) and still loads the data."""

from __future__ import annotations

import itertools

import pytest
import yaml

from hera_volcano.kube.loading import DuplicateKey, load_all, node_limit
from tests.steps import within


def test_repeated_keys_are_reported_with_their_document_and_lines() -> None:
    text = "a: 1\nb: {x: 1, x: 2}\na: 3\n---\nq: 1\n---\nq: 1\nq: 2\n"
    found: list[DuplicateKey] = []
    docs = list(load_all(text, found))
    assert docs == [{"a": 3, "b": {"x": 2}}, {"q": 1}, {"q": 2}]  # the last value wins, as with yaml.safe_load
    assert found == [
        DuplicateKey(document=0, key="x", line=2, first_line=2),
        DuplicateKey(document=0, key="a", line=3, first_line=1),
        DuplicateKey(document=2, key="q", line=8, first_line=7),
    ]


def test_merge_keys_and_distinct_keys_are_not_duplicates() -> None:
    found: list[DuplicateKey] = []
    list(load_all("base: &b {x: 1}\nmerged: {<<: *b, x: 2}\nlist: [{k: 1}, {k: 2}]\n", found))
    assert found == []


def test_without_a_list_nothing_is_looked_for() -> None:
    assert list(load_all("a: 1\na: 2\n")) == [{"a": 2}]


def merge_bomb() -> str:
    """The security review's shape: each level merges an empty map (so PyYAML's constructor built it, uncounted)
    and lists the level below ten times; eight levels in under 600 bytes stand for a billion nodes."""
    levels = "abcdefghi"
    lines = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"{b}: &{b} {{<<: {{}}, k: [{', '.join([f'*{a}'] * 10)}]}}" for a, b in itertools.pairwise(levels)]
    return "\n".join(lines) + "\n"


def test_a_merge_bomb_is_refused_within_a_small_budget() -> None:
    text = merge_bomb()
    assert len(text) <= 609
    with pytest.raises(yaml.YAMLError, match=r"aliases and merge keys \(<<\) expand this YAML past \d\d,\d\d\d nodes"):
        within(200_000, lambda: list(load_all(text)))


def test_maps_that_merge_many_times_are_refused_within_a_small_budget() -> None:
    # Each level merges the one below ten times: PyYAML before 6.0.4 flattened that into 10**n entries.
    lines = ["a0: &a0 {" + ", ".join(f"k{i}: 0" for i in range(10)) + "}"]
    lines += [f"a{i}: &a{i} {{<<: [{', '.join([f'*a{i - 1}'] * 10)}]}}" for i in range(1, 11)]
    text = "\n".join(lines) + "\n"
    with pytest.raises(yaml.YAMLError, match="expand this YAML past"):
        within(200_000, lambda: list(load_all(text)))


def test_tagged_collections_count_toward_the_limit() -> None:
    lines = ["x0: &x0 [a, a, a, a, a, a, a, a, a, a]"]
    lines += [f"x{i}: &x{i} !!omap [k: [{', '.join([f'*x{i - 1}'] * 10)}]]" for i in range(1, 10)]
    with pytest.raises(yaml.YAMLError, match="expand this YAML past"):
        within(200_000, lambda: list(load_all("\n".join(lines) + "\n")))


def test_the_limit_is_for_the_whole_stream_not_each_document() -> None:
    # One document stands for about 25,700 nodes, under its limit; forty of them, over a million, are not.
    c = "a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
    c += "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
    document = c + f"d: [{', '.join(['*c'] * 22)}]\n"
    assert len(list(load_all(document))) == 1
    text = "---\n".join([document] * 40)
    assert node_limit(text) < 40 * 25_000
    with pytest.raises(yaml.YAMLError, match="expand this YAML past"):
        list(load_all(text))


def test_merge_keys_follow_the_yaml_spec_as_go_does() -> None:
    text = (
        "one: &one {k: 1, only1: a}\ntwo: &two {k: 2, only2: b}\n"
        "both: {<<: [*one, *two]}\nown: {k: 0, <<: [*two, *one]}\nnested: {<<: {<<: *one, k: 5}}\n"
    )
    [doc] = load_all(text)
    assert doc["both"] == {"k": 1, "only1": "a", "only2": "b"}  # the first map named wins
    assert doc["own"] == {"k": 0, "only1": "a", "only2": "b"}  # the map's own keys win wherever they are
    assert doc["nested"] == {"k": 5, "only1": "a"}


@pytest.mark.parametrize("text", ["a: {<<: 1}\n", "a: {<<: [1]}\n", "a: {<<: [{x: 1}, [2]]}\n"])
def test_merging_what_is_not_a_map_is_a_yaml_error(text: str) -> None:
    with pytest.raises(yaml.YAMLError, match="for merging"):
        list(load_all(text))


def test_two_thousand_repeated_keys_are_found_in_one_pass() -> None:
    text = "".join(f"key{i}: {i}\n" for i in range(1000)) * 2
    found: list[DuplicateKey] = []
    docs, _ = within(100_000, lambda: list(load_all(text, found)))
    assert docs == [{f"key{i}": i for i in range(1000)}]
    assert len(found) == 1000
    assert found[0] == DuplicateKey(document=0, key="key0", line=1001, first_line=1)
    assert found[-1] == DuplicateKey(document=0, key="key999", line=2000, first_line=1000)
