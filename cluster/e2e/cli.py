"""`make cluster-up` / `make cluster-down`: the test cluster for a person to try things on.

python cluster/e2e/cli.py up [--argo v4.1.4|v3.7.18]   start it (prints what to export)
python cluster/e2e/cli.py down                           stop it and restore the host
python cluster/e2e/cli.py argo LINE                      switch the running cluster to another Argo line
python cluster/e2e/cli.py status                         what runs
python cluster/e2e/cli.py check                          can this host run it (root, Linux)? one line if not
"""

from __future__ import annotations

import argparse
import sys

import layout as L
import welcome
from host import HostError, require_root_and_linux
from node import Node
from procs import StartError


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="cluster/e2e/cli.py", description="The single-node test cluster.")
    sub = p.add_subparsers(dest="command", required=True)
    up = sub.add_parser("up", help="start the cluster (from wiped state)")
    up.add_argument("--argo", default=L.DEFAULT_ARGO_LINE, choices=L.ARGO_LINES)
    sub.add_parser("down", help="stop the cluster and restore the host")
    argo = sub.add_parser("argo", help="switch the Argo line")
    argo.add_argument("line", choices=L.ARGO_LINES)
    sub.add_parser("status", help="which components run")
    sub.add_parser("check", help="exit 2 with one line unless this host can run the cluster (root, Linux)")
    args = p.parse_args(argv)
    node = Node()
    try:
        if args.command == "up":
            node.up(args.argo)
            welcome.apply_bundled_rbac(node)
            welcome.apply_workspace(node)
            print(
                f"Cluster up (Argo {args.argo}, Volcano, Kubernetes), with the bundled workflows' service account"
                " and RBAC applied (python -m hera_volcano.rbac | kubectl apply -f -) and the data pipeline's"
                " workspace claim created. In your shell:",
                file=sys.stderr,
            )
            print("\n".join(welcome.exports(node)))
            print(f"Then: {welcome.NEXT}   (and `make cluster-down` when done)", file=sys.stderr)
        elif args.command == "down":
            problems = node.down()
            if problems:
                print("cluster-down: could not restore everything:\n  " + "\n  ".join(problems), file=sys.stderr)
                return 1
            print("cluster-down: stopped; the host is as it was", file=sys.stderr)
        elif args.command == "check":
            require_root_and_linux()
        elif args.command == "argo":
            node.use_argo(args.line)
            print(f"Argo {args.line} is running", file=sys.stderr)
        else:
            running = node.procs.running()
            for name in node.procs.names():
                print(f"{name}: {f'running (pid {running[name]})' if name in running else 'stopped'}")
            if not running:
                print("no cluster running", file=sys.stderr)
                return 1
    except (HostError, StartError) as e:
        print(f"cluster: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
