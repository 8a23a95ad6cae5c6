"""`import hera_volcano` stays light: the slow or optional packages load only when used."""

import ast
import importlib
import subprocess
import sys
from pathlib import Path


def imported_after(code: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", f"{code}\nimport sys\nprint('\\n'.join(sys.modules))"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return set(out.split())


def test_import_does_not_load_hera_workflows_kubernetes_or_argo_sdk() -> None:
    modules = imported_after("import hera_volcano")
    assert "hera_volcano" in modules
    for heavy in ("hera.workflows", "kubernetes", "argo_workflows"):
        assert not any(m == heavy or m.startswith(heavy + ".") for m in modules), heavy


def test_model_names_do_not_load_hera_workflows() -> None:
    modules = imported_after(
        "from hera_volcano import VolcanoJob, VolcanoTask, Policy, Plugin, ValidationError, to_yaml"
    )
    assert "hera.workflows" not in modules


def test_lazy_names_resolve_and_unknown_names_fail() -> None:
    import pytest

    import hera_volcano

    assert hera_volcano.job_template.__name__ == "job_template"
    assert issubclass(hera_volcano.ValidationError, ValueError)
    with pytest.raises(AttributeError):
        _ = hera_volcano.no_such_name  # type: ignore[attr-defined]


def test_every_public_name_is_exported_and_resolves_from_its_module() -> None:
    import hera_volcano

    assert hera_volcano.__all__ == sorted(hera_volcano._PUBLIC)
    assert set(hera_volcano._PUBLIC) <= set(dir(hera_volcano))
    for name, module in hera_volcano._PUBLIC.items():
        assert getattr(hera_volcano, name) is getattr(importlib.import_module(module), name), name


def type_checking_imports() -> dict[str, str]:
    """The names ``hera_volcano/__init__.py`` imports under ``if TYPE_CHECKING:``, each with its module."""
    tree = ast.parse(Path(hera_volcano_init()).read_text(encoding="utf-8"))
    blocks = [
        node
        for node in tree.body
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"
    ]
    assert len(blocks) == 1
    imports: dict[str, str] = {}
    for node in blocks[0].body:
        assert isinstance(node, ast.ImportFrom) and node.module, ast.unparse(node)
        for alias in node.names:
            # `X as X` re-exports the name for type checkers (mypy's no_implicit_reexport).
            assert alias.asname == alias.name, ast.unparse(node)
            assert alias.name not in imports, f"{alias.name} imported twice"
            imports[alias.name] = node.module
    return imports


def hera_volcano_init() -> str:
    import hera_volcano

    assert hera_volcano.__file__
    return hera_volcano.__file__


def test_the_type_checkers_imports_are_the_table_of_public_names() -> None:
    import hera_volcano

    assert type_checking_imports() == hera_volcano._PUBLIC
