"""`make run`: the main job, the MPI hello world, in the one command a newcomer types.

In a terminal, with `make cluster-up`'s cluster up, it is submitted there and watched to its end (`argo watch`;
exit 0 only when it Succeeded). Otherwise, into a pipe or without a cluster, the Workflow is printed for
`argo submit -` (`make run | argo submit -n argo --watch -`), and nothing else is written to stdout.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import layout as L  # noqa: E402
from node import Node  # noqa: E402


def workflow() -> str:
    """The bundled MPI hello world, exactly as `python -m hera_volcano.mpi_hello` prints it (its error, if any, is
    its one line on stderr, and `make run` exits with its code)."""
    made = subprocess.run([sys.executable, "-m", "hera_volcano.mpi_hello"], stdout=subprocess.PIPE, text=True)
    if made.returncode != 0:
        raise SystemExit(made.returncode)
    return made.stdout


def running_cluster() -> Node | None:
    """`make cluster-up`'s cluster, when it runs: its kubeconfig is there and its recorded processes are alive."""
    if not (L.HOME / "kubeconfig").is_file():
        return None
    node = Node()
    return node if node.procs.running() else None


def main() -> int:
    node = running_cluster() if sys.stdout.isatty() else None
    if node is None:
        text = workflow()
        if sys.stdout.isatty():
            print("no cluster is up (`make cluster-up` starts one): the Workflow, for `argo submit -`", file=sys.stderr)
        sys.stdout.write(text)
        return 0
    line = node.current_argo_line() or L.DEFAULT_ARGO_LINE
    argo = L.argo_binary(line, "argo")
    env = {**os.environ, "KUBECONFIG": str(node.paths.kubeconfig), "PATH": f"{node.paths.bin}:{os.environ['PATH']}"}
    print(f"running the MPI hello world on make cluster-up's cluster (Argo {line}):", file=sys.stderr)
    namespace = ["-n", L.ARGO_NAMESPACE]
    submit = [str(argo), "submit", *namespace, "-o", "name", "-"]
    submitted = subprocess.run(submit, input=workflow(), stdout=subprocess.PIPE, text=True, env=env)
    if submitted.returncode != 0:
        return submitted.returncode
    name = submitted.stdout.strip()
    # `argo watch` shows it to its end but exits 0 whatever the end: the phase decides the exit code.
    subprocess.run([str(argo), "watch", *namespace, name], env=env)
    got = subprocess.run([str(argo), "get", *namespace, name, "-o", "json"], stdout=subprocess.PIPE, text=True, env=env)
    phase = json.loads(got.stdout or "{}").get("status", {}).get("phase") if got.returncode == 0 else None
    if phase != "Succeeded":
        print(f"{name}: {phase or 'unknown'} (argo logs -n {L.ARGO_NAMESPACE} {name})", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
