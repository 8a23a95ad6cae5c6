"""The fast loader reports keys written twice (Kubernetes' strict decoding refuses them) and still loads the data."""

from __future__ import annotations

import pytest
import yaml

from hera_volcano.kube.loading import Budget, DuplicateKey, byte_limit, load_all
from tests.bombs import BOMBS, merge_bomb, string_alias, tagged
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


def test_a_merge_bomb_is_refused_within_a_small_budget() -> None:
    text = merge_bomb()
    assert len(text) <= 609
    refused = r"aliases and merge keys \(<<\) expand this YAML past 532,560 bytes \(16 a character"
    with pytest.raises(yaml.YAMLError, match=refused):
        within(200_000, lambda: list(load_all(text)))


@pytest.mark.parametrize(
    "name",
    sorted(
        set(BOMBS) - {"deep-flow", "deep-blocks", "deep-values", "long-key", "aliased-manifest", "manifest-with-tags"}
    ),
)
def test_every_bomb_is_refused_within_a_budget_of_calls_linear_in_its_size(name: str) -> None:
    text = BOMBS[name]()
    with pytest.raises(yaml.YAMLError, match="expand this YAML past"):
        within(5 * len(text) + 100_000, lambda: list(load_all(text)))


def test_an_alias_costs_the_bytes_of_what_it_stands_for() -> None:
    # Each node costs one byte plus its characters; the text its characters. Counted, never timed.
    text = "s: &s xxxxxxxxxx\nl: [*s, *s, *s]\n"
    budget = Budget(text)
    assert list(load_all(text, budget=budget)) == [{"s": "x" * 10, "l": ["x" * 10] * 3}]
    mapping = 1 + (1 + 1) + (1 + 10) + (1 + 1) + (1 + 3 * (1 + 10))
    assert budget.limit - budget.remaining == len(text) + mapping
    keyed = "k: &k kkkkkkkkkk\nm: {*k : 1}\n"
    keys = Budget(keyed)
    list(load_all(keyed, budget=keys))  # a key costs as much as a value
    assert keys.limit - keys.remaining == len(keyed) + 1 + (2 + 11) + (2 + 1 + 11 + 2)


def test_a_long_string_aliased_many_times_stops_the_loader_at_its_budget() -> None:
    # The file: 222 KB standing for 4 GB. The loader stops after about limit / 100 KiB aliases.
    text = string_alias()
    assert 222_000 <= len(text) <= 223_000
    with pytest.raises(yaml.YAMLError, match=f"expand this YAML past {byte_limit(text):,} bytes") as e:
        within(len(text), lambda: list(load_all(text)))
    column = e.value.problem_mark.column  # type: ignore[attr-defined]
    assert e.value.problem_mark.line == 6  # type: ignore[attr-defined]
    assert column == 5  # the list, refused while its items are counted


def test_the_budget_is_16_bytes_a_character_between_half_a_mebibyte_and_128_mebibytes() -> None:
    assert byte_limit("") == 512 * 1024
    assert byte_limit("x" * 1_000_000) == 512 * 1024 + 16_000_000
    assert byte_limit("x" * 10_000_000) == 128 * 1024 * 1024


def test_one_budget_counts_every_text_parsed_from_one_input() -> None:
    # A manifest is a string of its file, parsed once per template that holds it: each parse draws on the file's.
    manifest = "a: &a [x, x, x, x, x, x, x, x, x, x]\nb: [" + ", ".join(["*a"] * 100) + "]\n"
    budget = Budget(manifest * 2)
    parses = 0
    with pytest.raises(yaml.YAMLError, match="expand this YAML past"):
        while True:
            list(load_all(manifest, budget=budget))
            parses += 1
    assert 0 < parses < byte_limit(manifest * 2) // len(manifest)


def test_recursive_data_is_refused_as_go_refuses_it() -> None:
    for text in ("a: &r [*r]\n", "a: &r {k: *r}\n", "a: &r !!omap [k: *r]\n", "a: &r {<<: *r}\n"):
        with pytest.raises(yaml.YAMLError, match=r"an alias inside the node it names \(recursive data\)"):
            list(load_all(text))
    assert list(load_all("a: &a []\nb: [*a, *a]\n")) == [{"a": [], "b": [[], []]}]  # shared, not recursive


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


def test_a_bomb_inside_a_tag_is_counted_once_a_node_and_stops_at_the_budget() -> None:
    # Nothing of it passes through the fast constructor: before, each alias was counted again (10**12 steps).
    with pytest.raises(yaml.YAMLError, match="expand this YAML past"):
        within(200_000, lambda: list(load_all(tagged())))


def test_the_limit_is_for_the_whole_stream_not_each_document() -> None:
    # One document stands for about 130,000 bytes, under its limit; forty of them, over five million, are not.
    c = "a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
    c += "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
    document = c + f"d: [{', '.join(['*c'] * 50)}]\n"
    assert len(list(load_all(document))) == 1
    text = "---\n".join([document] * 40)
    assert byte_limit(text) < 40 * 130_000
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
