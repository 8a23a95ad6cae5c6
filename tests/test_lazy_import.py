"""`import hera_volcano` stays light: the slow or optional packages load only when used."""

import subprocess
import sys


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


def test_every_public_name_is_exported_and_resolves() -> None:
    import hera_volcano

    for name in hera_volcano.__all__:
        assert getattr(hera_volcano, name) is not None
    assert set(hera_volcano.__all__) == {"ValidationError", *hera_volcano._LAZY}
