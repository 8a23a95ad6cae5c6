"""The shell scripts that run in pods (the MPI master's wait for its workers and for their names), kept as files in
the package so that they are linted (shellcheck) and run by tests as they are, and read when a workflow is rendered,
so the YAML stays self-contained.

A script that calls kubectl is the kubectl prelude (``kube/scripts/kubectl_prelude.sh``: an in-cluster kubeconfig,
a writable discovery cache, bounded calls with their errors shown, prompt exit on SIGTERM) followed by its own text.
"""

from __future__ import annotations

from functools import cache
from importlib import resources

PRELUDE = ("hera_volcano.kube", "kubectl_prelude.sh")


@cache
def read(package: str, name: str) -> str:
    """The script ``scripts/NAME`` of ``package``, without its header comment (the file explains; the pod runs)."""
    lines = (
        resources.files(package)
        .joinpath("scripts")
        .joinpath(name)
        .read_text(encoding="utf-8")
        .splitlines(keepends=True)
    )
    start = next((i for i, line in enumerate(lines) if not line.startswith("#")), len(lines))
    return "".join(lines[start:])


def with_kubectl(package: str, name: str) -> str:
    """The prelude, then the script ``scripts/NAME`` of ``package``: what a pod running kubectl gets."""
    return read(*PRELUDE) + read(package, name)
