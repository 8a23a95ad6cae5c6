"""What `make cluster-up` leaves ready and tells a person: the bundled workflows' service account and its RBAC are
applied, and the printed commands work as printed (tests/e2e/test_bundled.py runs exactly them)."""

from __future__ import annotations

import subprocess
import sys

import layout as L
from node import Node
from procs import StartError

#: What to run next, once the exports are in the shell (run from the repository's root).
NEXT = f"make run | argo submit -n {L.ARGO_NAMESPACE} --watch -"


def apply_bundled_rbac(node: Node) -> None:
    """`python -m hera_volcano.rbac | kubectl apply -f -`: the bundled workflows' service account and its Role."""
    rbac = subprocess.run([sys.executable, "-m", "hera_volcano.rbac"], capture_output=True, text=True, check=False)
    if rbac.returncode != 0:
        raise StartError(f"python -m hera_volcano.rbac failed: {rbac.stderr.strip()}")
    applied = subprocess.run(
        [str(L.built("kubectl")), f"--kubeconfig={node.paths.kubeconfig}", "apply", "-f", "-"],
        input=rbac.stdout, capture_output=True, text=True, check=False,
    )  # fmt: skip
    if applied.returncode != 0:
        raise StartError(f"kubectl apply of the bundled RBAC failed: {applied.stderr.strip()}")


def exports(node: Node) -> list[str]:
    """The shell lines that point kubectl and argo at the cluster."""
    return [f"export KUBECONFIG={node.paths.kubeconfig}", f"export PATH={node.paths.bin}:$PATH"]
