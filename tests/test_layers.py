"""The package is laid out as its architecture: each layer imports only itself and the layers below it, no modules
import each other in a circle, and only the command-line edge (and the ``python -m`` entry points on top of it)
imports ``hera_volcano.cli``.

Imports are read from the source (inside functions too, and under ``TYPE_CHECKING``), so a lazy import that runs
the wrong way fails here even if no test happens to call it.
"""

from __future__ import annotations

import ast
import functools
import subprocess
import sys
from pathlib import Path

import pytest

from hera_volcano.shared.graphs import cycles
from tests.conftest import ROOT

PACKAGE = "hera_volcano"
#: Lowest first: a module imports its own layer and the layers below it, never one above.
LAYERS = ("pods", "shared", "kube", "volcano", "argo", "client", "builders", "examples", "tools", "cli")
#: What users run: ``python -m hera_volcano[.NAME]``, each only a call into the command-line edge.
ENTRY_POINTS = frozenset(
    f"{PACKAGE}.{name}"
    for name in ("__main__", "mpi_hello", "pytorch_hello", "data_pipeline", "steps", "dag", "rbac", "lint")
)
#: What a job's function imports inside itself, in the pod (re-exports of ``pods``).
RUNTIME = f"{PACKAGE}.runtime"
CLI = f"{PACKAGE}.cli"
#: The ground floor: code that runs in pods.
POD_CODE = f"{PACKAGE}.pods"


@functools.cache
def modules() -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its own name)."""
    found = {}
    for path in sorted((ROOT / PACKAGE).rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _module_of(name: str) -> str | None:
    """The package's module that importing ``name`` loads (``pkg.mod.attr`` is ``pkg.mod``), if any."""
    while name and name not in modules():
        name = name.rpartition(".")[0]
    return name or None


def imports(module: str) -> set[str]:
    """The package's modules that ``module`` imports anywhere in its source."""
    found = set()
    for node in ast.walk(ast.parse(modules()[module].read_text())):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module is not None:
            assert node.level == 0, f"{module}: relative import of {node.module}"
            names = [f"{node.module}.{alias.name}" for alias in node.names]
        else:
            continue
        found.update(m for m in map(_module_of, names) if m is not None and m != module)
    return found


def layer(module: str) -> int:
    """The module's place from the bottom: a layer's index, or above them all for the package's face and entry
    points."""
    parts = module.split(".")
    return LAYERS.index(parts[1]) if len(parts) > 1 and parts[1] in LAYERS else len(LAYERS)


def test_every_layer_is_a_subpackage_and_nothing_else_stands_beside_them() -> None:
    top = {m for m in modules() if m.count(".") == 1 and m.split(".")[1] not in LAYERS}
    assert top == ENTRY_POINTS | {RUNTIME}, "only the python -m entry points and the runtime stand beside the layers"
    assert {f"{PACKAGE}.{name}" for name in LAYERS} <= set(modules())


def test_layers_import_downwards_only() -> None:
    upwards = [
        f"{module} -> {target}"
        for module in modules()
        for target in sorted(imports(module))
        if layer(target) > layer(module) or (layer(target) == len(LAYERS) and target not in ENTRY_POINTS)
    ]
    assert not upwards, "imports of a higher layer (or of the package's face from inside):\n" + "\n".join(upwards)


def test_the_code_pods_run_imports_the_standard_library_and_itself_only() -> None:
    """hera_volcano/pods runs in a pod whose image has Python and nothing else: not even the rest of the package. What
    an image may have besides (the launcher asks mpi4py for the rank) is imported under ``except ImportError``."""
    found = []
    for module in (m for m in modules() if m == POD_CODE or m.startswith(POD_CODE + ".")):
        tree = ast.parse(modules()[module].read_text())
        optional = {
            id(inner)
            for node in ast.walk(tree)
            if isinstance(node, ast.Try)
            and any(isinstance(h.type, ast.Name) and h.type.id == "ImportError" for h in node.handlers)
            for statement in node.body
            for inner in ast.walk(statement)
        }
        for node in ast.walk(tree):
            if id(node) in optional:
                continue
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module is not None:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                ours = name == POD_CODE or name.startswith(POD_CODE + ".")
                if not ours and (top == PACKAGE or top not in sys.stdlib_module_names):
                    found.append(f"{module} -> {name}")
    assert not found, "\n".join(found)


def test_only_the_command_line_edge_imports_the_cli() -> None:
    outside = [
        f"{module} -> {target}"
        for module in modules()
        if layer(module) != LAYERS.index("cli") and module not in ENTRY_POINTS
        for target in sorted(imports(module))
        if target == CLI or target.startswith(CLI + ".")
    ]
    assert not outside, "\n".join(outside)


def test_entry_points_only_call_into_the_cli() -> None:
    for module in ENTRY_POINTS:
        assert imports(module) == {CLI}, module


def test_no_modules_import_each_other_in_a_circle() -> None:
    graph = {module: sorted(imports(module)) for module in modules()}
    assert not [" -> ".join(c) for c in cycles(graph)]


@pytest.mark.parametrize("module", sorted(modules()))
def test_each_module_imports_on_its_own_in_a_fresh_interpreter(module: str) -> None:
    """Imported first, a module still finds everything it needs initialised (what an import cycle would break)."""
    r = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
