"""The Argo versions we claim to support are the ones the checks actually use.

The conformance validators (conformance/*/go.mod) and the clusters (cluster/pins.sh: the CRDs of tests/cluster,
the controllers of tests/e2e) pin Argo separately; if they drift apart, "validated against 4.1" and "runs on 4.1"
would mean two different releases.
"""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _go_mod_pin(module_dir: str, module: str) -> str:
    text = (ROOT / "conformance" / module_dir / "go.mod").read_text()
    match = re.search(rf"^\s*{re.escape(module)} (v\S+)$", text, re.MULTILINE)
    assert match, f"{module} not required in conformance/{module_dir}/go.mod"
    return match.group(1)


def _pin(name: str) -> str:
    match = re.search(rf"^{name}=(\S+)$", (ROOT / "cluster" / "pins.sh").read_text(), re.MULTILINE)
    assert match, f"{name} not set in cluster/pins.sh"
    return match.group(1)


def test_validators_link_the_supported_argo_lines() -> None:
    assert _go_mod_pin("argo37", "github.com/argoproj/argo-workflows/v3").startswith("v3.7.")
    assert _go_mod_pin("argo4", "github.com/argoproj/argo-workflows/v4").startswith("v4.1.")


def test_the_clusters_run_the_validated_argo_releases() -> None:
    for line, module_dir in (("ARGO3", "argo37"), ("ARGO4", "argo4")):
        module = _pin(f"{line}_MODULE")
        assert _pin(f"{line}_VERSION") == _go_mod_pin(module_dir, module)


def test_the_e2e_harness_runs_the_pinned_lines() -> None:
    import sys

    sys.path.insert(0, str(ROOT / "cluster" / "e2e"))
    import layout

    assert set(layout.ARGO_LINES) == {_pin("ARGO3_VERSION"), _pin("ARGO4_VERSION")}
