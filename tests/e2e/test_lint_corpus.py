"""Issue 34, item 5: the real cluster gives every document of the lint corpus (tests/lint_corpus.py) the verdict its
label gives, the verdict tests/test_lint_corpus.py holds lint to. Nothing is created:

- each Volcano Job goes to the API server as a server-side dry run (``kubectl create --dry-run=server``): the Job
  CRD's schema, then Volcano's admission webhooks (mutating, then ``validatejob.volcano.sh``, which runs Kubernetes'
  pod-template validation on every task; they declare ``sideEffects: NoneOnDryRun``, so a dry run reaches them);
- each Workflow goes through ``argo submit --server-dry-run`` of the running Argo line: Argo's strict decoding and
  validation, then the API server's dry run of the Workflow (its object-metadata rules).

Each test gathers every disagreement before it fails, so one run shows them all with what the cluster said.

Issue 43: ``hera-volcano lint --server`` (its offline rules, then a server-side dry run of each document and of the
Volcano Job each resource step creates) refuses every document a real cluster refuses (``HERA_VOLCANO_REFUSED``,
which `.ci/run` passes in; skipped, saying so, without it), and passes the bundled workflows. Dry runs only.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from harness import NAMESPACE, Cluster, Run

from tests.conftest import ROOT
from tests.lint_corpus import JOBS, WORKFLOWS, Case

#: What kubectl prints when the API server (its validation or an admission webhook) refused the object: a webhook's
#: or another error, and the schema's 422 (`The Job "x" is invalid: ...`).
SERVER_REFUSED = "Error from server"
SERVER_INVALID = " is invalid: "
#: How lint --server's findings of the API server start (hera_volcano.client.dry_run.MARK).
SERVER_FINDING = "the API server refuses"


def _disagreements(cases: tuple[Case, ...], judge: Callable[[Case], tuple[bool, str]]) -> list[str]:
    out = []
    for case in cases:
        refused, said = judge(case)
        if refused != case.refused:
            verdict = "refuses" if refused else "accepts"
            label = f"refused ({case.rule})" if case.refused else "accepted"
            out.append(f"{case.name}: the cluster {verdict} it, the corpus says {label}: {said.strip()[:400]}")
    return out


#: What kubectl prints when a webhook could not be called (a controller restarted by an earlier scenario is coming
#: back): no verdict yet, asked again.
WEBHOOK_UNREACHABLE = "failed calling webhook"


def _job_verdict(cluster: Cluster, case: Case) -> tuple[bool, str]:
    deadline = time.monotonic() + 120
    while True:
        run: Run = cluster.kubectl(
            "create", "--dry-run=server", "-n", NAMESPACE, "-o", "name", "-f", "-", input=json.dumps(case.document)
        )
        if WEBHOOK_UNREACHABLE not in run.err or time.monotonic() > deadline:
            break
        time.sleep(2)
    if run.code != 0 and SERVER_REFUSED not in run.err and SERVER_INVALID not in run.err:
        run.ok()  # kubectl itself failed (not the API server's verdict): say so
    return run.code != 0, run.err or run.out


def _workflow_verdict(cluster: Cluster, case: Case) -> tuple[bool, str]:
    # JSON on stdin: Argo parses it strictly too, and YAML 1.1 would read a bare n or y as a boolean.
    run = cluster.argo("submit", "--server-dry-run", "-o", "name", "-", input=json.dumps(case.document), timeout=120)
    return run.code != 0, run.err or run.out


@pytest.mark.scenario("34.5 the lint corpus's Volcano Jobs: the API server and Volcano's webhook give each its label")
def test_the_cluster_judges_each_job_as_labelled(cluster: Cluster) -> None:
    wrong = _disagreements(JOBS, lambda case: _job_verdict(cluster, case))
    assert not wrong, f"{len(wrong)} of {len(JOBS)} Volcano Jobs:\n" + "\n".join(wrong)


@pytest.mark.both_lines("each line's controller and CRDs validate Workflows their way")
@pytest.mark.scenario("34.5 the lint corpus's Workflows: argo submit --server-dry-run gives each its label")
def test_the_cluster_judges_each_workflow_as_labelled(cluster: Cluster) -> None:
    wrong = _disagreements(WORKFLOWS, lambda case: _workflow_verdict(cluster, case))
    assert not wrong, f"{len(wrong)} of {len(WORKFLOWS)} Workflows:\n" + "\n".join(wrong)


def _lint_server(cluster: Cluster, *paths: str) -> dict[str, list[dict[str, object]]]:
    """``hera-volcano lint --server --format json PATHS`` against the cluster (each document in its own namespace,
    else the kubeconfig's): the findings by file."""
    argv = [sys.executable, "-m", "hera_volcano", "lint", "--server", "--format", "json", *paths]
    run = cluster.run(argv, timeout=300)
    assert run.code in (0, 1), f"lint --server failed ({run.code}): {run.err}"
    by_file: dict[str, list[dict[str, object]]] = {}
    for finding in json.loads(run.out)["findings"]:
        by_file.setdefault(str(finding["file"]), []).append(finding)
    return by_file


@pytest.mark.scenario("43 lint --server refuses every document a real cluster refuses")
def test_lint_server_refuses_every_document_the_cluster_refuses(cluster: Cluster) -> None:
    path = os.environ.get("HERA_VOLCANO_REFUSED")
    if not path:
        pytest.skip("HERA_VOLCANO_REFUSED is not set: the documents a cluster refuses are absent, nothing to compare")
    documents = sorted(Path(path).glob("*.yaml"))
    by_file = _lint_server(cluster, path)
    errors = {d.name: [f for f in by_file.get(str(d), []) if f["severity"] == "error"] for d in documents}
    passed = [name for name, found in errors.items() if not found]
    by_server = [name for name, found in errors.items() if any(SERVER_FINDING in str(f["message"]) for f in found)]
    print(f"lint --server: the API server itself refuses {len(by_server)} of {len(documents)}")
    assert not passed, f"lint --server passes {len(passed)} of {len(documents)} refused documents:\n" + "\n".join(
        passed
    )


@pytest.mark.scenario("43 lint --server passes the bundled workflows and the jobs their steps create")
def test_lint_server_passes_the_bundled_workflows(cluster: Cluster) -> None:
    by_file = _lint_server(cluster, str(ROOT / "workflows"))
    found = [f for fs in by_file.values() for f in fs if f["severity"] == "error"]
    assert not found, "\n".join(f"{f['file']}:{f['line']}: {f['path']}: {f['message']}" for f in found)
