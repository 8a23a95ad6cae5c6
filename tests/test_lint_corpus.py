"""Lint refuses what the cluster refuses, and accepts what it accepts: every document of the lint corpus
(tests/lint_corpus.py) gets lint's verdict its label gives, a refusal for the rule the label names; the Workflows
Argo judges get the same verdict from Argo's own validators (conformance/, both lines). The real cluster's verdict
on every document (Volcano's webhook, the API server) is held to the same labels by tests/e2e/test_lint_corpus.py.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from hera_volcano.tools.lint import lint_document
from tests.lint_corpus import CASES, JOBS, WORKFLOWS, Case


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c.kind}-{c.name}")
def test_lint_gives_the_clusters_verdict(case: Case) -> None:
    errors = [f for f in lint_document(case.document) if f.severity == "error"]
    if not case.refused:
        assert not errors, f"the cluster accepts {case.name}, lint refuses it: {errors}"
        return
    assert errors, f"the cluster refuses {case.name} ({case.rule}), lint accepts it"
    others = [f for f in errors if case.rule not in f.message]
    assert not others, f"lint refuses {case.name} for another reason than {case.rule!r}: {others}"


def test_the_corpus_covers_each_kind_of_refusal() -> None:
    names = [c.name for c in CASES]
    assert len(names) == len(set(names)) and len(CASES) >= 70
    accepted = [c for c in CASES if not c.refused]
    assert len(accepted) >= 20
    rules = {c.rule for c in JOBS if c.refused}
    assert {
        "environment variable name",
        "DNS-1123 subdomain",
        "exactly one handler",
        "between 1 and 2147483647",
    } <= rules
    judges = {c.judge for c in WORKFLOWS if c.refused}
    assert judges == {"argo", "apiserver"}


@pytest.mark.go
@pytest.mark.parametrize("case", WORKFLOWS, ids=lambda c: c.name)
def test_argos_validators_give_the_labelled_verdict(
    case: Case, argo_validators: tuple[Path, ...], tmp_path: Path
) -> None:
    """Argo refuses the Workflows labelled with its name and accepts the rest (the API server's metadata rules are
    not Argo's: the validators accept those documents, the end-to-end test sees the API server refuse them)."""
    path = tmp_path / f"{case.name}.json"  # JSON: YAML 1.1 would read a bare n or y as a boolean in Go
    path.write_text(json.dumps(case.document))
    for validator in argo_validators:
        p = subprocess.run([str(validator), str(path)], capture_output=True, text=True, timeout=60)
        refused = p.returncode != 0
        assert refused == (case.judge == "argo"), f"{validator.name} on {case.name}:\n{p.stdout}{p.stderr}"
