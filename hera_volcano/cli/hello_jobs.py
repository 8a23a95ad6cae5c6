"""``hera-volcano steps`` (``hello-1``, then ``hello-2a`` and ``hello-2b`` in parallel) and ``hera-volcano dag``
(``A``, then ``B`` and ``C``, then ``D``): the bundled pipelines of Volcano jobs as Argo Workflows."""

from __future__ import annotations

from collections.abc import Sequence

from hera_volcano.cli import common as c
from hera_volcano.examples.hello_jobs import DAG, STEPS, Bundled


def steps(argv: Sequence[str]) -> int:
    return _print(STEPS, "steps", argv)


def dag(argv: Sequence[str]) -> int:
    return _print(DAG, "dag", argv)


def _print(bundled: Bundled, command: str, argv: Sequence[str]) -> int:
    kind = "Steps" if bundled.as_steps else "DAG"
    p = c.parser(f"hera-volcano {command}", f"Print the {kind} pipeline of Volcano jobs as an Argo Workflow.")
    c.add_common(p)
    args = p.parse_args(argv)
    return c.print_workflow(
        args,
        lambda: bundled.build(namespace=args.namespace, service_account=args.service_account, template=args.template),
        {},
    )
