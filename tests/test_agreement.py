"""Lint and Argo's own validators (3.7 and 4.1 lines, linked from Argo's Go modules) agree on the rules lint claims
to cover: each invalid file in tests/agreement/invalid is rejected by all three for the reason the file names, each
valid one accepted.

Every invalid file starts with comment lines naming the rule it breaks:

    # lint: <part of lint's error message>
    # argo: <part of what both validators print>        (or # argo37: / # argo4: for one validator)

Lint's errors must all be that rule (one `# lint:` line each when a mistake breaks several), and each validator's
output must hold its expected message: a validator or a lint rule that fails for another reason (a crash, a
"malformed document", a decoding error elsewhere) does not count as agreeing.

The validators are built by conformance/run.sh (Go's build cache makes reruns take a second); the tests that run
them are marked ``go`` and run in `make conformance`, the lint half in `make unit`.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from hera_volcano.tools.lint import has_errors, lint_file
from tests.conftest import ROOT
from tests.conftest import VALIDATORS as VALIDATOR_PATHS

CORPUS = ROOT / "tests" / "agreement"
VALIDATORS = tuple(path.name for path in VALIDATOR_PATHS)
INVALID = sorted((CORPUS / "invalid").glob("*.yaml"))


@dataclass
class Expected:
    """What an invalid file says about itself: lint's messages, and each validator's."""

    lint: list[str] = field(default_factory=list)
    argo: dict[str, str] = field(default_factory=dict)


def expected(path: Path) -> Expected:
    found = Expected()
    for line in path.read_text().splitlines():
        if not line.startswith("#"):
            break
        tag, _, text = line.lstrip("# ").partition(": ")
        if tag == "lint":
            found.lint.append(text)
        elif tag == "argo":
            found.argo.update(dict.fromkeys(VALIDATORS, text))
        elif tag in ("argo37", "argo4"):
            found.argo[f"{tag}-validate"] = text
    return found


def argo_accepts(validator: Path, path: Path) -> tuple[bool, str]:
    p = subprocess.run([str(validator), str(path)], capture_output=True, text=True, timeout=60)
    return p.returncode == 0, p.stdout + p.stderr


@pytest.mark.parametrize("path", INVALID, ids=lambda p: p.stem)
def test_lint_rejects_invalid_for_the_rule_it_names(path: Path) -> None:
    want = expected(path)
    assert want.lint and set(want.argo) == set(VALIDATORS), f"{path.name}: name the rule (# lint: ..., # argo: ...)"
    errors = [f for f in lint_file(path) if f.severity == "error"]
    assert errors, f"lint accepts {path.name}"
    for f in errors:
        assert any(text in f.message for text in want.lint), f"lint says something else about {path.name}: {f}"
    for text in want.lint:
        assert any(text in f.message for f in errors), f"lint does not say {text!r} about {path.name}: {errors}"


@pytest.mark.go
@pytest.mark.parametrize("path", INVALID, ids=lambda p: p.stem)
def test_argo_rejects_invalid_for_the_rule_it_names(path: Path, argo_validators: tuple[Path, ...]) -> None:
    want = expected(path)
    for validator in argo_validators:
        ok, out = argo_accepts(validator, path)
        assert not ok, f"{validator.name} accepts {path.name}, which breaks {want.lint}"
        assert want.argo[validator.name] in out, f"{validator.name} rejects {path.name} for another reason:\n{out}"


VALID = sorted((CORPUS / "valid").glob("*.yaml"))


@pytest.mark.parametrize("path", VALID, ids=lambda p: p.stem)
def test_lint_accepts_valid(path: Path) -> None:
    findings = lint_file(path)
    assert not has_errors(findings), findings


@pytest.mark.go
@pytest.mark.parametrize("path", VALID, ids=lambda p: p.stem)
def test_argo_accepts_valid(path: Path, argo_validators: tuple[Path, ...]) -> None:
    for validator in argo_validators:
        ok, out = argo_accepts(validator, path)
        assert ok, out


def test_the_corpus_is_not_empty_and_every_invalid_file_names_its_rule() -> None:
    assert len(INVALID) >= 50
    unnamed = [p.name for p in INVALID if not expected(p).lint or set(expected(p).argo) != set(VALIDATORS)]
    assert not unnamed


def test_a_file_that_names_the_wrong_rule_is_caught(tmp_path: Path) -> None:
    """The header is read as documented: a wrong `# lint:` line would fail the agreement test."""
    path = tmp_path / "x.yaml"
    path.write_text("# lint: something else\n# argo37: one\n# argo4: two\napiVersion: v1\n")
    want = expected(path)
    assert want.lint == ["something else"]
    assert want.argo == {"argo37-validate": "one", "argo4-validate": "two"}
    errors = [f.message for f in lint_file(path) if f.severity == "error"]
    assert errors and not any("something else" in m for m in errors)


def test_make_conformance_runs_the_tests_that_need_go_and_make_unit_leaves_them_out() -> None:
    """The checks that build Go moved from `make unit` to `make conformance`: moved, not dropped."""
    makefile = (ROOT / "Makefile").read_text()
    recipes = dict(re.findall(r"^([\w-]+): .*\n((?:\t.*\n)+)", makefile, re.MULTILINE))
    assert "pytest tests --ignore=tests/cluster --ignore=tests/e2e -m go" in recipes["conformance"]
    assert "pytest" in recipes["unit"] and " -m " not in recipes["unit"]
    assert re.search(r"^addopts = .*-m 'not go'", (ROOT / "pyproject.toml").read_text(), re.MULTILINE)
