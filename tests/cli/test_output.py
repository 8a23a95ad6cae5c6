"""``-o yaml|json`` (the format, as kubectl and argo read ``-o``) and ``--output-file FILE`` (where) on the commands
that print workflows or RBAC: JSON is the YAML's data, and byte-identical from one run to the next."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from hera_volcano.argo.defaults import SERVICE_ACCOUNT
from tests.commands import run

PRINTERS = ["mpi-hello", "pytorch-hello", "steps", "dag", "rbac"]


@pytest.mark.parametrize("command", PRINTERS)
def test_json_is_the_yaml_data_and_byte_identical_across_runs(command: str) -> None:
    options = ["--template"] if command != "rbac" else ["--openshift"]
    as_yaml = run("hera_volcano", command, *options)
    first = run("hera_volcano", command, "-o", "json", *options, env={"PYTHONHASHSEED": "1"})
    again = run("hera_volcano", command, "-o", "json", *options, env={"PYTHONHASHSEED": "2"})
    assert (first.code, first.err) == (0, "") and first.out == again.out
    docs = [d for d in yaml.safe_load_all(as_yaml.out) if d is not None]
    data = json.loads(first.out)
    assert (data["items"] if len(docs) > 1 else [data]) == docs
    if len(docs) > 1:
        assert (data["apiVersion"], data["kind"]) == ("v1", "List")
    assert first.out.endswith("}\n") and '": ' in first.out.splitlines()[1], "indented, one key a line"


def test_yaml_is_the_default_and_the_file_is_named_separately(tmp_path: Path) -> None:
    assert run("hera_volcano", "dag", "-o", "yaml").out == run("hera_volcano", "dag").out
    out = tmp_path / "dag.json"
    r = run("hera_volcano", "dag", "-n", "ml", "-o", "json", "--output-file", str(out))
    assert (r.code, r.out, r.err) == (0, "", "")
    wf = json.loads(out.read_text())
    assert wf["metadata"]["namespace"] == "ml" and wf["spec"]["serviceAccountName"] == SERVICE_ACCOUNT


@pytest.mark.parametrize("command", PRINTERS)
def test_a_file_name_given_to_o_points_to_output_file(command: str, tmp_path: Path) -> None:
    target = tmp_path / "wf.yaml"
    r = run("hera_volcano", command, "-o", str(target))
    assert (r.code, r.out) == (2, "") and len(r.err.splitlines()) == 1
    assert f"argument -o/--output: must be one of yaml, json, got '{target}' (to write a file: --output-file" in r.err
    assert not target.exists()


def test_the_bundled_rbac_creates_the_account_the_bundled_workflows_run_as() -> None:
    objects = list(yaml.safe_load_all(run("hera_volcano", "rbac").out))
    account = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": SERVICE_ACCOUNT, "namespace": "argo"}}
    assert objects[0]["kind"] == "Namespace" and objects[1] == account  # its Pod Security labels first
    [binding] = [o for o in objects if o["kind"] == "RoleBinding"]
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": SERVICE_ACCOUNT, "namespace": "argo"}]
    for module in ("mpi_hello", "pytorch_hello", "steps", "dag"):
        wf = yaml.safe_load(run(f"hera_volcano.{module}").out)
        assert wf["spec"]["serviceAccountName"] == SERVICE_ACCOUNT != "argo"


def test_rbac_prints_the_program_after_the_rbac_unless_no_program() -> None:
    """What ``hera-volcano rbac | kubectl apply -f -`` applies is all a namespace needs; ``--no-program`` is the RBAC
    alone, as ``rbac/rbac.yaml`` holds it."""
    from hera_volcano.pods import program

    kinds = [o["kind"] for o in yaml.safe_load_all(run("hera_volcano", "rbac").out)]
    assert kinds[-1] == "ConfigMap" and kinds.count("ConfigMap") == 1, kinds
    alone = list(yaml.safe_load_all(run("hera_volcano", "rbac", "--no-program").out))
    assert [o["kind"] for o in alone] == kinds[:-1]
    assert program.config_map_name() not in yaml.safe_dump_all(alone)
