"""The snapshot of Kubernetes field names matches the installed Hera, and linting never imports hera.workflows."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from hera_volcano.kube import pod_fields

SNAPSHOT = Path(pod_fields.__file__).with_name(pod_fields.FILE)


def test_snapshot_matches_the_installed_hera_models() -> None:
    assert SNAPSHOT.read_text() == pod_fields.render(), "regenerate: python -m hera_volcano.kube.pod_fields > " + str(
        SNAPSHOT
    )


def test_every_model_the_table_references_is_in_it() -> None:
    table = pod_fields.table()
    for root in pod_fields.ROOTS:
        assert pod_fields.key(*root) in table

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
        "import sys\nfrom hera_volcano.tools.lint import lint_file\n"
        f"print([f.message for f in lint_file({str(job)!r})])\n"
        "print('hera.workflows' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.splitlines()
    assert "unknown field 'bogus'" in out[0]
    assert out[1] == "False"
