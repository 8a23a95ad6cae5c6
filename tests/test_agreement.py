"""Lint and Argo's own validators (3.7 and 4.1 lines, linked from Argo's Go modules) agree on the Argo rules lint
claims to cover: each invalid workflow in tests/agreement/invalid is rejected by all three, each valid one accepted.

The validators are built by conformance/run.sh (Go's build cache makes reruns take a second).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from hera_volcano.tools.lint import has_errors, lint_file
from tests.conftest import ROOT

CORPUS = ROOT / "tests" / "agreement"
BIN = ROOT / ".cache" / "conformance" / "bin"
VALIDATORS = ("argo37-validate", "argo4-validate")


@pytest.fixture(scope="session")
def validators() -> list[Path]:
    build = subprocess.run(["bash", "conformance/run.sh", "--build"], cwd=ROOT, capture_output=True, text=True)
    assert build.returncode == 0, f"building Argo's validators failed:\n{build.stdout}{build.stderr}"
    return [BIN / name for name in VALIDATORS]


def argo_accepts(validator: Path, path: Path) -> tuple[bool, str]:
    p = subprocess.run([str(validator), str(path)], capture_output=True, text=True, timeout=60)
    return p.returncode == 0, p.stdout + p.stderr


@pytest.mark.parametrize("path", sorted((CORPUS / "invalid").glob("*.yaml")), ids=lambda p: p.stem)
def test_both_reject_invalid(path: Path, validators: list[Path]) -> None:
    findings = lint_file(path)
    assert has_errors(findings), f"lint accepts {path.name}"
    for validator in validators:
        ok, _ = argo_accepts(validator, path)
        assert not ok, f"{validator.name} accepts {path.name} but lint says: {findings}"


@pytest.mark.parametrize("path", sorted((CORPUS / "valid").glob("*.yaml")), ids=lambda p: p.stem)
def test_both_accept_valid(path: Path, validators: list[Path]) -> None:
    findings = lint_file(path)
    assert not has_errors(findings), findings
    for validator in validators:
        ok, out = argo_accepts(validator, path)
        assert ok, out


def test_the_corpus_is_not_empty() -> None:
    assert len(list((CORPUS / "invalid").glob("*.yaml"))) >= 20
