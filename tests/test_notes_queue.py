"""The runnable example of notes/queue.md runs and prints what it says."""

from __future__ import annotations

import contextlib
import io
import re

import yaml

from hera_volcano.tools.render import queue_files
from hera_volcano.volcano.queue_rules import check_queues
from tests.conftest import ROOT


def test_the_queue_notes_example_runs() -> None:
    [code] = re.findall(r"```python\n(.*?)```", (ROOT / "notes" / "queue.md").read_text(), flags=re.S)
    out = io.StringIO()
    names: dict[str, object] = {}
    with contextlib.redirect_stdout(out):
        exec(compile(code, "notes/queue.md", "exec"), names)
    *documents, last = out.getvalue().rstrip("\n").split("\n")
    assert last == "spec.deserved.cpu: must not exceed the capability of cpu (4)"
    queues = list(yaml.safe_load_all("\n".join(documents)))
    assert [(q["kind"], q["metadata"]["name"], q["spec"].get("parent")) for q in queues] == [
        ("Queue", "ml-org", None),
        ("Queue", "research", "ml-org"),
    ]
    assert queues[1]["spec"]["capability"]["nvidia.com/gpu"] == 8
    assert check_queues(queues) == [], "the example's hierarchy is one Volcano accepts"
    assert sorted(queue_files([names["org"], names["research"]])) == [  # type: ignore[list-item]
        "kustomization.yaml",
        "ml-org.yaml",
        "research.yaml",
    ]
