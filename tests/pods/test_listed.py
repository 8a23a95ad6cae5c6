"""Every script that runs in a pod is shellchecked by `make check` (tests/pods/shellcheck.py lists them)."""

from __future__ import annotations

from pathlib import Path

from tests.pods.shellcheck import SCRIPTS

PACKAGE = Path(__file__).resolve().parents[2] / "hera_volcano"


def test_every_shell_script_in_the_package_is_checked() -> None:
    found = {
        (str(p.parent.parent.relative_to(PACKAGE.parent)).replace("/", "."), p.name)
        for p in PACKAGE.rglob("scripts/*.sh")
    }
    checked = {(package, name) for package, name, _, _ in SCRIPTS} | {("hera_volcano.kube", "kubectl_prelude.sh")}
    assert found == checked
