"""GitOps carries everything a workflow needs (issue 42): a fresh namespace, set up only by ``kubectl apply -k`` of the
folder ``hera-volcano render --module`` writes (the workflows, their RBAC and admission policy, the pods' program),
runs a rendered WorkflowTemplate to Succeeded.

It runs alone (not in the batch: its namespace is set up before anything is submitted) and on Argo 4.1 only: what
it proves is the folder, and the WorkflowTemplate path on both lines is scenario 3's.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import layout
import pytest
import yaml
from harness import Cluster

from hera_volcano.pods import program
from hera_volcano.tools.job_policy import policy_name

#: A namespace nothing else uses: only the folder's objects are in it.
FRESH = "gitops-fresh"
ACCOUNT = "gitops-runner"
#: The user's module: the MPI hello world as a WorkflowTemplate of that namespace and account (one worker: the
#: follower, the master's wait and the admission policy are what matter here).
MODULE = f"""
from hera_volcano.examples.mpi_hello import Options, build

hello = build(Options(namespace="{FRESH}", service_account="{ACCOUNT}", workers=1, template=True))
"""


def _render(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "hera_volcano", "render", "--module", "gitops_hello", "--out", "deploy", *args]
    return subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False)


@pytest.fixture
def folder(cluster: Cluster, tmp_path: Path) -> Iterator[Path]:
    """The rendered folder, in a fresh namespace; afterwards the folder's objects and the namespace are gone."""
    (tmp_path / "gitops_hello.py").write_text(MODULE)
    rendered = _render(tmp_path, "--with-service-account")
    assert rendered.returncode == 0, rendered.stderr
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": FRESH}}
    cluster.kubectl("apply", "-f", "-", input=json.dumps(namespace)).ok()  # a run kept alive may have left it
    yield tmp_path / "deploy"
    cluster.kubectl("delete", "-k", str(tmp_path / "deploy"), "--ignore-not-found", "--wait=false")
    cluster.kubectl("delete", "namespace", FRESH, "--ignore-not-found", "--wait=false")


@pytest.mark.scenario("42 GitOps: a fresh namespace set up by kubectl apply -k of render's folder runs a template")
def test_a_fresh_namespace_set_up_by_kubectl_apply_k_runs_a_rendered_template(cluster: Cluster, folder: Path) -> None:
    assert _render(folder.parent, "--with-service-account", "--check").returncode == 0, "in sync before the apply"
    applied = cluster.kubectl("apply", "-k", str(folder)).ok()
    for made in (
        "workflowtemplate.argoproj.io/volcano-mpi-hello",
        f"configmap/{program.config_map_name()}",
        f"serviceaccount/{ACCOUNT}",
        f"role.rbac.authorization.k8s.io/{ACCOUNT}-hera-volcano",
        f"validatingadmissionpolicy.admissionregistration.k8s.io/{policy_name(FRESH, ACCOUNT)}",
    ):
        assert made in applied.out, f"kubectl apply -k applied no {made}:\n{applied.out}"
    argo = [str(layout.argo_binary(cluster.line, "argo")), "-n", FRESH]
    run = cluster.run([*argo, "submit", "--from", "workflowtemplate/volcano-mpi-hello", "--wait", "-o", "json"])
    assert run.out.strip().startswith("{"), f"argo submit printed no workflow:\n{run.out}\n{run.err}"
    name = json.loads(run.out)["metadata"]["name"]
    workflow = yaml.safe_load(cluster.kubectl("get", "workflow", name, "-n", FRESH, "-o", "yaml").ok().out)
    status = workflow.get("status", {})
    if status.get("phase") != "Succeeded":
        steps = {n.get("displayName"): (n.get("phase"), n.get("message")) for n in status.get("nodes", {}).values()}
        logs = cluster.run([*argo, "logs", name]).out[-4000:]
        phase = f"{status.get('phase')} ({status.get('message')})"
        pytest.fail(f"workflow {name} in {FRESH}: {phase}; steps {steps}\n{logs}")
    assert "Hello world from processor" in cluster.run([*argo, "logs", name]).out, "the follower streamed the ranks"
