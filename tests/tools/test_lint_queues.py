"""`hera-volcano lint` of Volcano Queue documents: the queue rules, the same ones the Queue model checks."""

from __future__ import annotations

from pathlib import Path

from hera_volcano import Queue, to_yaml
from hera_volcano.tools.lint import lint_text
from tests.commands import run

GOOD = to_yaml(
    Queue("gpu-team", weight=2, capability={"cpu": "64", "nvidia.com/gpu": 8}, deserved={"nvidia.com/gpu": 4})
)
BAD = """\
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata:
  name: gpu-team
  namespace: argo
spec:
  weight: 0
  capability:
    cpu: 0.5
    nvidia.com/gpu: "8"
  deserved:
    nvidia.com/gpu: "9"
  guarantee:
    resource:
      memory: 1Gi
"""


def test_a_rendered_queue_lints_clean() -> None:
    assert lint_text(GOOD, "queue.yaml") == []


def test_a_bad_queue_gets_every_finding_with_its_path() -> None:
    found = [(f.path, f.severity, f.message) for f in lint_text(BAD, "queue.yaml")]
    assert [(path, severity) for path, severity, _ in found] == [
        ("[0].spec.capability.cpu", "error"),
        ("[0].metadata.namespace", "warning"),
        ("[0].spec.weight", "error"),
        ("[0].spec.deserved.memory", "error"),
        ("[0].spec.deserved[nvidia.com/gpu]", "error"),
    ]
    assert "the CRD refuses a decimal number" in found[0][2]
    assert found[3][2] == "is required: the queue's guarantee of memory (1Gi) needs it"
    assert found[4][2] == "must not exceed the capability of nvidia.com/gpu (8)"


def test_queues_beside_other_documents_in_one_file() -> None:
    text = GOOD + "---\n" + BAD.replace("name: gpu-team", "name: Other")
    paths = {f.path for f in lint_text(text, "all.yaml")}
    assert "[1].metadata.name" in paths and not any(p.startswith("[0]") for p in paths)


def test_the_cli_fails_on_a_bad_queue_and_passes_a_good_one(tmp_path: Path) -> None:
    (tmp_path / "good.yaml").write_text(GOOD)
    (tmp_path / "bad.yaml").write_text(BAD)
    good = run("hera_volcano", "lint", str(tmp_path / "good.yaml"))
    assert good.code == 0, good.out + good.err
    bad = run("hera_volcano", "lint", str(tmp_path / "bad.yaml"))
    assert bad.code == 1
    assert f"{tmp_path / 'bad.yaml'}:7: [0].spec.weight: error: must be between 1 and 65535" in bad.out
