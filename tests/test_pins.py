"""The Argo versions we claim to support are the ones the checks actually use.

The conformance validators (conformance/*/go.mod) and the cluster tests' CRDs (cluster/build.sh) pin Argo
separately; if they drift apart, "validated against 4.1" would mean two different releases.
"""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _go_mod_pin(module_dir: str, module: str) -> str:
    text = (ROOT / "conformance" / module_dir / "go.mod").read_text()
    match = re.search(rf"^\s*{re.escape(module)} (v\S+)$", text, re.MULTILINE)
    assert match, f"{module} not required in conformance/{module_dir}/go.mod"
    return match.group(1)


def _build_sh_var(name: str) -> str:
    match = re.search(rf"^{name}=(\S+)$", (ROOT / "cluster" / "build.sh").read_text(), re.MULTILINE)
    assert match, f"{name} not set in cluster/build.sh"
    return match.group(1)


def test_validators_link_the_supported_argo_lines() -> None:
    assert _go_mod_pin("argo37", "github.com/argoproj/argo-workflows/v3").startswith("v3.7.")
    assert _go_mod_pin("argo4", "github.com/argoproj/argo-workflows/v4").startswith("v4.1.")


def test_cluster_crds_come_from_the_validated_argo_release() -> None:
    assert _build_sh_var("ARGO_MODULE") == "github.com/argoproj/argo-workflows/v4"
    assert _build_sh_var("ARGO_VERSION") == _go_mod_pin("argo4", "github.com/argoproj/argo-workflows/v4")
