"""Issue 43: ``hera-volcano lint --server`` (and ``submit --server-dry-run``, the same check) as users run it,
against a stand-in API server that serves discovery and answers dry runs (a Volcano Job in queue ``refuse-me`` is
denied as Volcano's webhook denies one); what the real cluster says is tests/e2e/test_lint_corpus.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest

from tests.cli import fake_api
from tests.commands import Result

DENIAL = 'admission webhook "validatejob.volcano.sh" denied the request: queue refuse-me is not open'
SERVED = {
    "/api/v1": [("configmaps", "ConfigMap")],
    "/apis/batch.volcano.sh/v1alpha1": [("jobs", "Job"), ("jobs/status", "Job")],
    "/apis/argoproj.io/v1alpha1": [("workflows", "Workflow"), ("workflowtemplates", "WorkflowTemplate")],
}
JOB_STEP = """apiVersion: argoproj.io/v1alpha1
kind: WorkflowTemplate
metadata:
  name: train
  namespace: ml
spec:
  entrypoint: job
  arguments:
    parameters:
    - name: queue
      value: refuse-me
  templates:
  - name: job
    activeDeadlineSeconds: 3600
    resource:
      action: create
      successCondition: status.state.phase == Completed
      failureCondition: status.state.phase in (Failed, Terminated, Aborted)
      manifest: |
        apiVersion: batch.volcano.sh/v1alpha1
        kind: Job
        metadata:
          generateName: train-
        spec:
          queue: {{=replace(sprig.quote(replace(workflow.parameters['queue'], '$', '$$')), '\\x7b', '\\\\x7b')}}
          tasks:
          - name: main
            replicas: 1
            template:
              spec:
                restartPolicy: Never
                containers:
                - name: main
                  image: busybox:1.37.0
"""
CONFIG_MAP = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  a: b\n"


@dataclass
class Asked:
    """Every dry run the server was sent: (path, query, body)."""

    posts: list[tuple[str, dict[str, list[str]], dict[str, Any]]] = field(default_factory=list)


def _handler(asked: Asked) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _send(self, code: int, body: dict[str, Any]) -> None:
            data = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            listed = SERVED.get(urlparse(self.path).path)
            if listed is None:
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            resources = [{"name": n, "kind": k, "namespaced": True} for n, k in listed]
            self._send(200, {"kind": "APIResourceList", "resources": resources})

        def do_POST(self) -> None:
            url = urlparse(self.path)
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            asked.posts.append((url.path, parse_qs(url.query), body))
            if body.get("kind") == "Job" and body.get("spec", {}).get("queue") == "refuse-me":
                self._send(400, {"kind": "Status", "status": "Failure", "message": DENIAL, "reason": "BadRequest"})
            else:
                self._send(201, body)

    return Handler


@pytest.fixture
def server() -> Iterator[tuple[str, Asked]]:
    asked = Asked()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(asked))
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", asked
    finally:
        httpd.shutdown()
        httpd.server_close()


def lint(tmp_path: Path, *args: str, stdin: str | None = None, command: str = "lint") -> Result:
    """``python -m hera_volcano COMMAND ARGS`` with no namespace or cluster of the machine's."""
    env = {k: v for k, v in os.environ.items() if k not in ("ARGO_NAMESPACE", "KUBECONFIG", "KUBERNETES_SERVICE_HOST")}
    env["HOME"] = str(tmp_path)
    p = subprocess.run(
        [sys.executable, "-m", "hera_volcano", command, *args],
        input=stdin, capture_output=True, text=True, env=env, timeout=120, check=False,
    )  # fmt: skip
    return Result(p.returncode, p.stdout, p.stderr)


def test_a_job_the_webhook_denies_in_a_resource_step_is_a_finding_on_its_manifest(
    tmp_path: Path, server: tuple[str, Asked]
) -> None:
    url, asked = server
    kubeconfig = str(fake_api.kubeconfig(tmp_path / "kubeconfig", url, "team"))
    (tmp_path / "train.yaml").write_text(JOB_STEP)
    r = lint(tmp_path, "--server", "--kubeconfig", kubeconfig, str(tmp_path / "train.yaml"))
    assert r.code == 1, r
    [line] = r.out.splitlines()
    assert line == (
        f"{tmp_path / 'train.yaml'}:19: [0].spec.templates[0].resource.manifest: error: the API server refuses the"
        f" object this step creates (dry run): {DENIAL}"
    )
    # The template, then the job its step creates (the workflow argument in place), both into the template's own
    # namespace, as dry runs that store nothing.
    assert [(path, body["kind"]) for path, _, body in asked.posts] == [
        ("/apis/argoproj.io/v1alpha1/namespaces/ml/workflowtemplates", "WorkflowTemplate"),
        ("/apis/batch.volcano.sh/v1alpha1/namespaces/ml/jobs", "Job"),
    ]
    assert all(q == {"dryRun": ["All"], "fieldValidation": ["Strict"]} for _, q, _ in asked.posts)


def test_accepted_documents_pass_in_the_namespace_n_names(tmp_path: Path, server: tuple[str, Asked]) -> None:
    url, asked = server
    kubeconfig = str(fake_api.kubeconfig(tmp_path / "kubeconfig", url, "team"))
    accepted = JOB_STEP.replace("value: refuse-me", "value: default") + "---\n" + CONFIG_MAP
    r = lint(tmp_path, "--server", "--kubeconfig", kubeconfig, "-n", "other", "-", stdin=accepted)
    assert (r.code, r.out) == (0, ""), r
    assert r.err == "no problems in 1 file\n"
    assert [path.split("/namespaces/")[1] for path, _, _ in asked.posts] == [
        "other/workflowtemplates",
        "other/jobs",
        "other/configmaps",
    ]
    assert {body["metadata"]["namespace"] for _, _, body in asked.posts} == {"other"}


def test_a_document_naming_no_namespace_goes_to_the_kubeconfigs(tmp_path: Path, server: tuple[str, Asked]) -> None:
    url, asked = server
    kubeconfig = str(fake_api.kubeconfig(tmp_path / "kubeconfig", url, "team"))
    assert lint(tmp_path, "--server", "--kubeconfig", kubeconfig, "-", stdin=CONFIG_MAP).code == 0
    assert [path for path, _, _ in asked.posts] == ["/api/v1/namespaces/team/configmaps"]


def test_a_kind_the_server_does_not_serve_is_refused(tmp_path: Path, server: tuple[str, Asked]) -> None:
    url, _ = server
    kubeconfig = str(fake_api.kubeconfig(tmp_path / "kubeconfig", url))
    queue = "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata:\n  name: q\nspec:\n  weight: 1\n"
    r = lint(tmp_path, "--server", "--kubeconfig", kubeconfig, "-", stdin=queue)
    assert r.code == 1, r
    assert "<stdin>:1: [0]: error: the API server refuses it: it serves no kind 'Queue'" in r.out


def test_no_api_server_to_ask_is_one_line_and_exit_code_2_at_once(tmp_path: Path) -> None:
    kubeconfig = str(fake_api.kubeconfig(tmp_path / "kubeconfig", "https://127.0.0.1:9"))  # discard: no listener
    started = time.monotonic()
    r = lint(tmp_path, "--server", "--kubeconfig", kubeconfig, "-", stdin=CONFIG_MAP)
    assert (r.code, r.out) == (2, ""), r
    [line] = r.err.splitlines()
    assert line.startswith("hera-volcano lint: error: --server: cannot reach the API server at https://127.0.0.1:9")
    assert time.monotonic() - started < 20  # not the minute a running workflow's client rides out
    missing = lint(tmp_path, "--server", "--kubeconfig", str(tmp_path / "nothing"), "-", stdin=CONFIG_MAP)
    assert (missing.code, missing.out) == (2, ""), missing
    assert "--server: no usable Kubernetes configuration" in missing.err and len(missing.err.splitlines()) == 1


@pytest.mark.parametrize("option", [["-n", "ml"], ["--kubeconfig", "k"], ["--context", "c"]])
def test_cluster_options_without_server_are_a_usage_error(tmp_path: Path, option: list[str]) -> None:
    r = lint(tmp_path, *option, "-", stdin=CONFIG_MAP)
    assert (r.code, r.out) == (2, ""), r
    assert f"argument {option[0]}: says which API server --server asks; give --server too" in r.err


def test_submit_server_dry_run_is_the_same_check_and_creates_nothing(tmp_path: Path, server: tuple[str, Asked]) -> None:
    url, asked = server
    kubeconfig = str(fake_api.kubeconfig(tmp_path / "kubeconfig", url, "team"))
    workflow = JOB_STEP.replace("kind: WorkflowTemplate", "kind: Workflow").replace("name: train", "generateName: t-")
    refused = lint(tmp_path, "-", "--server-dry-run", "--kubeconfig", kubeconfig, stdin=workflow, command="submit")
    assert (refused.code, refused.out) == (2, ""), refused
    assert refused.err == (
        "hera-volcano submit: error: spec.templates[0].resource.manifest: the API server refuses the object this step"
        f" creates (dry run): {DENIAL}\n"
    )
    accepted = workflow.replace("value: refuse-me", "value: default")
    r = lint(
        tmp_path, "-", "--server-dry-run", "-o", "name", "--kubeconfig", kubeconfig, stdin=accepted, command="submit"
    )
    assert (r.code, r.out, r.err) == (0, "t-\n", ""), r
    # submit's namespace: the context's before the workflow's own (cli.md)
    assert [path for path, _, _ in asked.posts][2:] == [
        "/apis/argoproj.io/v1alpha1/namespaces/team/workflows",
        "/apis/batch.volcano.sh/v1alpha1/namespaces/team/jobs",
    ]
    assert all(q["dryRun"] == ["All"] for _, q, _ in asked.posts)
