"""The fast loader reports keys written twice (Kubernetes' strict decoding refuses them) and still loads the data."""

from __future__ import annotations

from hera_volcano.kube.loading import DuplicateKey, load_all


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
