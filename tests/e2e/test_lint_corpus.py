"""Issue 34, item 5: the real cluster gives every document of the lint corpus (tests/lint_corpus.py) the verdict its
label gives, the verdict tests/test_lint_corpus.py holds lint to. Nothing is created:

- each Volcano Job goes to the API server as a server-side dry run (``kubectl create --dry-run=server``): the Job
  CRD's schema, then Volcano's admission webhooks (mutating, then ``validatejob.volcano.sh``, which runs Kubernetes'
  pod-template validation on every task; they declare ``sideEffects: NoneOnDryRun``, so a dry run reaches them);
- each Workflow goes through ``argo submit --server-dry-run`` of the running Argo line: Argo's strict decoding and
  validation, then the API server's dry run of the Workflow (its object-metadata rules).

Each test gathers every disagreement before it fails, so one run shows them all with what the cluster said.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable

import pytest
from harness import NAMESPACE, Cluster, Run

from tests.lint_corpus import JOBS, WORKFLOWS, Case

#: What kubectl prints when the API server (its validation or an admission webhook) refused the object: a webhook's
#: or another error, and the schema's 422 (`The Job "x" is invalid: ...`).
SERVER_REFUSED = "Error from server"
SERVER_INVALID = " is invalid: "


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
