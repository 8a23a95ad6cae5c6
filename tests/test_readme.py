"""The README's Python examples run and produce what it says."""

from __future__ import annotations

import contextlib
import io
import re

import yaml

from tests.conftest import ROOT


def blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), flags=re.S)


def test_readme_examples_run_and_print_workflows() -> None:
    assert len(blocks()) >= 2
    for code in blocks():
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(code, "README.md", "exec"), {})
        docs = [d for d in yaml.safe_load_all(out.getvalue()) if d]
        assert docs and all(d["kind"] == "Workflow" for d in docs)
        assert len(docs) == code.count("Workflow(") + code.count(".workflow("), "one document per workflow built"


def test_cluster_examples_compile_and_are_left_to_the_end_to_end_suite() -> None:
    """The "Run it from Python" examples need a cluster: tests/e2e/test_client.py runs them; here they must parse."""
    cluster = re.findall(r"```python cluster\n(.*?)```", (ROOT / "README.md").read_text(), flags=re.S)
    assert len(cluster) >= 2
    for code in cluster:
        compile(code, "README.md", "exec")
        assert code not in blocks() and "hv.Client(" in code
