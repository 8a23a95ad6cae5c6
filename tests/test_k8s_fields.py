"""The snapshot of Kubernetes field names matches the installed Hera, and linting never imports hera.workflows."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from hera_volcano import k8s_fields

SNAPSHOT = Path(k8s_fields.__file__).with_name(k8s_fields.FILE)


def test_snapshot_matches_the_installed_hera_models() -> None:
    assert SNAPSHOT.read_text() == k8s_fields.render(), "regenerate: python -m hera_volcano.k8s_fields > " + str(
        SNAPSHOT
    )


def test_every_model_the_table_references_is_in_it() -> None:
    table = k8s_fields.table()
    for root in k8s_fields.ROOTS:
        assert k8s_fields.key(*root) in table

    def refs(kind: object) -> list[str]:
        if isinstance(kind, dict):
            return [kind["model"]] if "model" in kind else [r for v in kind.values() for r in refs(v)]
        return []

    assert all(r in table for fields in table.values() for kind in fields.values() for r in refs(kind))


def test_linting_a_job_does_not_import_hera_workflows(tmp_path: Path) -> None:
    job = tmp_path / "job.yaml"
    job.write_text(
        "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: j}\nspec:\n  tasks:\n  - name: t\n"
        "    replicas: 1\n    template:\n      spec:\n        containers:\n        - name: c\n          image: x\n"
        "          bogus: 1\n"
    )
    code = (
        "import sys\nfrom hera_volcano.lint import lint_file\n"
        f"print([f.message for f in lint_file({str(job)!r})])\n"
        "print('hera.workflows' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.splitlines()
    assert "unknown field 'bogus'" in out[0]
    assert out[1] == "False"
