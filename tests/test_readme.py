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
