"""Shared fixtures: sample substitution and parsing of the manifests inside rendered workflows."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from hera_volcano.argo.samples import resolved_manifests

ROOT = Path(__file__).resolve().parent.parent
#: Argo's own validators (conformance/, one per Argo line), built into .cache by conformance/run.sh.
VALIDATORS = tuple(ROOT / ".cache" / "conformance" / "bin" / name for name in ("argo37-validate", "argo4-validate"))


def manifests(workflow: Any) -> list[dict[str, Any]]:
    """The Volcano Job of every resource step, with sample values substituted, parsed as Argo would."""
    data = workflow if isinstance(workflow, dict) else workflow.to_dict()
    out = []
    for _, _, text in resolved_manifests(data):
        docs = list(yaml.safe_load_all(text))
        assert len(docs) == 1, "a resource manifest holds exactly one object"
        out.append(docs[0])
    return out


@pytest.fixture(scope="session")
def upstream() -> Path:
    """The upstream Volcano examples, from the path `.ci/run` passes in (absent in a user's clone)."""
    path = os.environ.get("HERA_VOLCANO_UPSTREAM")
    if not path:
        pytest.skip("HERA_VOLCANO_UPSTREAM is not set: the upstream Volcano examples are absent, nothing to compare")
    root = Path(path)
    assert root.is_dir(), f"HERA_VOLCANO_UPSTREAM={path} does not exist"
    return root


@pytest.fixture(scope="session")
def refused() -> Path:
    """The documents a real cluster refuses, each naming its rule, from the path `.ci/run` passes in (absent in a
    user's clone)."""
    path = os.environ.get("HERA_VOLCANO_REFUSED")
    if not path:
        pytest.skip("HERA_VOLCANO_REFUSED is not set: the documents a cluster refuses are absent, nothing to compare")
    root = Path(path)
    assert root.is_dir(), f"HERA_VOLCANO_REFUSED={path} does not exist"
    return root


@pytest.fixture(scope="session")
def _built_validators() -> tuple[Path, ...]:
    build = subprocess.run(["bash", "conformance/run.sh", "--build"], cwd=ROOT, capture_output=True, text=True)
    assert build.returncode == 0, f"building Argo's validators failed:\n{build.stdout}{build.stderr}"
    return VALIDATORS


@pytest.fixture
def argo_validators(request: pytest.FixtureRequest) -> tuple[Path, ...]:
    """Argo's own validators, built with Go: only for tests marked ``go``, which `make conformance` runs and
    `make unit` leaves out (pyproject's ``-m 'not go'``), so the unit suite needs no Go."""
    assert request.node.get_closest_marker("go"), f"{request.node.name} builds Go: mark it @pytest.mark.go"
    built: tuple[Path, ...] = request.getfixturevalue("_built_validators")
    return built
