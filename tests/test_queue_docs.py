"""The queue example of docs/queues.md prints a hierarchy Volcano accepts and render writes it as files (the docs
tests run and lint every example; this one checks what it says)."""

from __future__ import annotations

import contextlib
import io
import runpy
from pathlib import Path

import yaml

from hera_volcano.tools.render import queue_files
from hera_volcano.volcano.queue_rules import check_queues
from tests.conftest import ROOT
from tests.doc_blocks import blocks


def test_the_queues_page_example_is_a_hierarchy_volcano_accepts(tmp_path: Path) -> None:
    [block] = blocks("python", "offline", pages=(ROOT / "docs" / "queues.md",))
    script = tmp_path / "queues_example.py"
    script.write_text(block.text)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        names = runpy.run_path(str(script))
    queues = list(yaml.safe_load_all(out.getvalue()))
    assert [(q["kind"], q["metadata"]["name"], q["spec"].get("parent")) for q in queues] == [
        ("Queue", "ml-org", None),
        ("Queue", "research", "ml-org"),
    ]
    assert queues[1]["spec"]["capability"]["nvidia.com/gpu"] == 8
    assert check_queues(queues) == [], "the example's hierarchy is one Volcano accepts"
    assert sorted(queue_files([names["org"], names["research"]])) == [
        "kustomization.yaml",
        "ml-org.yaml",
        "research.yaml",
    ]
