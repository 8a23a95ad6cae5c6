"""What `make cluster-up` leaves ready and tells a person: the bundled workflows' service account and its RBAC are
applied, the data pipeline's workspace claim exists, and the printed commands work as printed
(tests/e2e/test_bundled.py runs exactly them; tests/e2e/test_data.py runs the data pipeline on the workspace)."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import layout as L
import yaml
from node import Node
from procs import StartError

#: What to run next, once the exports are in the shell (run from the repository's root): in a terminal, `make run`
#: submits the MPI hello world to this cluster and watches it (cluster/e2e/run.py).
NEXT = "make run"


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


def workspace(node: Node) -> list[dict[str, Any]]:
    """The claim the bundled data pipeline mounts (`hera-volcano data-pipeline`'s default `--claim`), bound to a
    hostPath PersistentVolume under the cluster's state folder: the one node is this machine, and the cluster has
    no provisioner."""
    from hera_volcano.examples.data_pipeline import CLAIM

    volume = {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": CLAIM},
        "spec": {
            "capacity": {"storage": "1Gi"},
            "accessModes": ["ReadWriteOnce"],
            "persistentVolumeReclaimPolicy": "Retain",
            "storageClassName": "",
            "hostPath": {"path": str(node.paths.state / "workspace"), "type": "DirectoryOrCreate"},
            "claimRef": {"namespace": L.ARGO_NAMESPACE, "name": CLAIM},
        },
    }
    claim = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": CLAIM, "namespace": L.ARGO_NAMESPACE},
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": "",
            "volumeName": CLAIM,
            "resources": {"requests": {"storage": "1Gi"}},
        },
    }
    return [volume, claim]


def apply_workspace(node: Node) -> None:
    """`kubectl apply` of :func:`workspace` (the claim binds by itself: it names its volume)."""
    applied = subprocess.run(
        [str(L.built("kubectl")), f"--kubeconfig={node.paths.kubeconfig}", "apply", "-f", "-"],
        input=yaml.safe_dump_all(workspace(node)), capture_output=True, text=True, check=False,
    )  # fmt: skip
    if applied.returncode != 0:
        raise StartError(f"kubectl apply of the data pipeline's workspace failed: {applied.stderr.strip()}")


def exports(node: Node) -> list[str]:
    """The shell lines that point kubectl and argo at the cluster."""
    return [f"export KUBECONFIG={node.paths.kubeconfig}", f"export PATH={node.paths.bin}:$PATH"]
