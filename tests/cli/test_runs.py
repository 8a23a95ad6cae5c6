"""``hera-volcano submit|status|explain|logs|stop|delete`` before any cluster answers: bad input, no configuration,
an API server that is not there. Each is one line on stderr, nothing on stdout, exit code 2 (what they do on a real
cluster is tests/e2e/test_client.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.commands import Result, run


def _one_line(r: Result) -> str:
    assert (r.code, r.out) == (2, ""), r
    [line] = r.err.splitlines()
    assert "Traceback" not in line
    return line


def _kubeconfig(tmp_path: Path, server: str) -> Path:
    path = tmp_path / "kubeconfig"
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": {"server": server, "insecure-skip-tls-verify": True}}],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u", "namespace": "argo"}}],
        "current-context": "x",
    }
    path.write_text(json.dumps(config))
    return path


@pytest.mark.parametrize("command", ["status", "explain", "logs", "stop", "delete"])
def test_a_bad_workflow_name_is_a_usage_error(command: str) -> None:
    line = _one_line(run("hera_volcano", command, "Not_A_Name"))
    assert line.startswith(f"hera-volcano {command}: error:") and "Not_A_Name" in line


def test_no_configuration_is_one_line(tmp_path: Path) -> None:
    line = _one_line(run("hera_volcano", "status", "wf", "--kubeconfig", str(tmp_path / "missing")))
    assert "no usable Kubernetes configuration" in line


def test_an_unreachable_api_server_is_one_line(tmp_path: Path) -> None:
    kubeconfig = _kubeconfig(tmp_path, "https://127.0.0.1:9")  # discard: nothing listens
    line = _one_line(run("hera_volcano", "status", "wf", "--kubeconfig", str(kubeconfig)))
    assert "cannot reach the API server at https://127.0.0.1:9" in line


def test_bad_workflow_input_is_refused_before_anything_is_sent(tmp_path: Path) -> None:
    kubeconfig = _kubeconfig(tmp_path, "https://127.0.0.1:9")
    not_yaml = _one_line(run("hera_volcano", "submit", "-", "--kubeconfig", str(kubeconfig), stdin="a: [1\n"))
    assert "hera-volcano submit: error:" in not_yaml and "cannot reach" not in not_yaml
    template = "apiVersion: argoproj.io/v1alpha1\nkind: WorkflowTemplate\nmetadata: {name: t}\nspec: {}\n"
    kind = _one_line(run("hera_volcano", "submit", "-", "--kubeconfig", str(kubeconfig), stdin=template))
    assert "Workflow" in kind and "cannot reach" not in kind
    missing = _one_line(run("hera_volcano", "submit", str(tmp_path / "nope.yaml"), "--kubeconfig", str(kubeconfig)))
    assert "cannot read" in missing


@pytest.mark.parametrize(("option", "value"), [("--task", "BAD_"), ("--container", "x" * 64), ("--job", "-bad")])
def test_bad_log_options_are_refused_before_connecting(tmp_path: Path, option: str, value: str) -> None:
    line = _one_line(run("hera_volcano", "logs", "wf", option, value, "--kubeconfig", str(tmp_path / "missing")))
    assert f"argument {option}:" in line and "configuration" not in line
