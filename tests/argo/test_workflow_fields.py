"""The snapshot of Argo's workflow field names matches the installed Hera, and holds together with pod_fields'."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hera_volcano.argo import workflow_fields
from hera_volcano.kube import pod_fields

SNAPSHOT = Path(workflow_fields.__file__).with_name(workflow_fields.FILE)


def test_snapshot_matches_the_installed_hera_models() -> None:
    assert SNAPSHOT.read_text() == workflow_fields.render(), (
        f"regenerate: python -m hera_volcano.argo.workflow_fields > {SNAPSHOT}"
    )


def refs(kind: Any) -> list[str]:
    if isinstance(kind, dict):
        return [kind["model"]] if "model" in kind else [r for v in kind.values() for r in refs(v)]
    return []


def test_every_referenced_model_is_in_this_table_or_pod_fields_and_none_is_in_both() -> None:
    table, pods = workflow_fields.table(), pod_fields.table()
    assert not set(table) & set(pods), "a model in both tables: model() could return the wrong one"
    for _, root in workflow_fields.ROOTS:
        assert root in table
    for fields in table.values():
        for kind in fields.values():
            for ref in refs(kind):
                assert workflow_fields.model(ref) is not None


def test_the_tables_know_the_fields_people_get_wrong() -> None:
    assert workflow_fields.model("Template")["podSpecPatch"] == "str"
    assert "entrypoint" in workflow_fields.model("WorkflowSpec")
    # Steps are a list of lists of steps: the inner steps are checked field by field too.
    assert workflow_fields.model("Template")["steps"] == {"list": {"list": {"model": "WorkflowStep"}}}
    assert workflow_fields.model("Template")["container"] == {"model": "Container"}  # pod_fields' Container


def test_version_specific_fields_name_real_models_and_are_not_in_hera_as_both() -> None:
    for name, removed in workflow_fields.ARGO_37_ONLY.items():
        fields = workflow_fields.model(name)
        for field, replacement in removed.items():
            assert field not in fields, f"{name}.{field} is in Hera's models: Argo 4 still has it"
            assert replacement.split()[0] in fields, f"{name}: the replacement {replacement} is not a field"
    for name, added in workflow_fields.ARGO_4_ONLY.items():
        assert workflow_fields.model(name) is not None
        assert set(added).isdisjoint(workflow_fields.ARGO_37_ONLY.get(name, {}))
