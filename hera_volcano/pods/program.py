"""The log follower as one Python program, for a container to run with ``python3 -c``: the modules of this package
it needs, joined in order, their imports of each other taken out (they share one namespace), so that the workflow
holds readable source and the pod needs no package but Python's own.

The program must survive two substitutions on its way into the container: Argo replaces ``{{...}}`` tags in every
template field, and Kubernetes expands ``$(NAME)`` (and ``$$``) in a container's command and arguments. Neither
appears in the source (:func:`source` checks).
"""

from __future__ import annotations

import ast
from functools import cache
from importlib import resources

#: The modules of the program, each after those it imports.
MODULES = ("labels", "reports", "kubeapi", "follow", "run")
#: The program's first line: how a rendered workflow's follower is recognised (RBAC grants it its declared calls).
MARKER = "# hera-volcano log follower: hera_volcano/pods"
_FUTURE = "from __future__ import annotations"


def module_source(name: str) -> str:
    return resources.files("hera_volcano.pods").joinpath(f"{name}.py").read_text(encoding="utf-8")


def _joinable(text: str) -> str:
    """``text`` without ``from __future__``, its imports of this package's modules and its docstrings (the modules
    say why; the program runs, and stays well under the 128 KiB an argument may have)."""
    lines = text.splitlines(keepends=True)
    drop: set[int] = set()
    tree = ast.parse(text)
    for node in tree.body:
        own = isinstance(node, ast.ImportFrom) and node.module is not None and node.module.startswith("hera_volcano")
        if own or (isinstance(node, ast.ImportFrom) and node.module == "__future__"):
            drop.update(range(node.lineno - 1, node.end_lineno or node.lineno))
    scopes = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    for scope in ast.walk(tree):
        # A body of a docstring alone keeps it: it is the body's statement.
        first = scope.body[0] if isinstance(scope, scopes) and len(scope.body) > 1 else None
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
            drop.update(range(first.lineno - 1, first.end_lineno or first.lineno))
    return "".join(line for i, line in enumerate(lines) if i not in drop)


@cache
def source() -> str:
    """The follower's program: a header, ``from __future__ import annotations``, then each module in turn."""
    parts = [
        f"{MARKER} (hera-volcano generated this from its modules {', '.join(MODULES)}; edit those, not this)\n",
        _FUTURE + "\n",
    ]
    for name in MODULES:
        parts.append(f"\n# ---- hera_volcano/pods/{name}.py\n")
        parts.append(_joinable(module_source(name)))
    text = "".join(parts)
    for forbidden, why in (("{{", "Argo substitutes it"), ("$", "Kubernetes expands $(NAME) and $$")):
        if forbidden in text:
            raise AssertionError(f"the follower's program holds {forbidden!r}, which {why}")
    return text
