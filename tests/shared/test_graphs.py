"""Cycle detection shared by the Argo DAG and Volcano dependsOn rules."""

from hera_volcano.shared.graphs import cycles


def test_no_cycle_in_a_dag() -> None:
    assert list(cycles({"a": [], "b": ["a"], "c": ["a", "b"], "d": ["unknown"]})) == []


def test_cycles_are_closed_paths() -> None:
    assert list(cycles({"a": ["b"], "b": ["c"], "c": ["a"]})) == [["a", "b", "c", "a"]]
    assert list(cycles({"a": ["a"]})) == [["a", "a"]]


def test_long_chains_do_not_recurse() -> None:
    chain = {f"n{i}": [f"n{i + 1}"] for i in range(20_000)}
    assert list(cycles(chain)) == []
    chain["n20000"] = ["n0"]
    assert len(next(cycles(chain))) == 20_002
