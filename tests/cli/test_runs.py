"""``hera-volcano submit|list|status|wait|explain|logs|stop|delete`` as users run them: bad input, the namespace each
one picks, the output formats and exit codes, against a stand-in API server (tests/cli/fake_api.py) or none at all
(what they do on a real cluster is tests/e2e/test_client.py)."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from collections.abc import Iterator, Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cli import fake_api
from tests.cli.fake_api import World
from tests.commands import Result

#: Variables that would let the environment of whoever runs the tests choose a namespace or a cluster.
AMBIENT = ("ARGO_NAMESPACE", "KUBECONFIG", "KUBERNETES_SERVICE_HOST")
WORKFLOW = {
    "apiVersion": "argoproj.io/v1alpha1",
    "kind": "Workflow",
    "metadata": {"generateName": "hello-"},
    "spec": {
        "entrypoint": "main",
        "arguments": {"parameters": [{"name": "size", "value": "1"}]},
        "templates": [{"name": "main", "container": {"image": "busybox"}}],
    },
}


def hv(*args: str, env: Mapping[str, str] | None = None, stdin: str | None = None, home: Path | None = None) -> Result:
    """``python -m hera_volcano ARGS`` in an environment of the test's choosing (no ambient namespace or cluster)."""
    clean = {k: v for k, v in os.environ.items() if k not in AMBIENT}
    if home is not None:
        clean["HOME"] = str(home)  # no ~/.kube/config of the machine's
    p = subprocess.run(
        [sys.executable, "-m", "hera_volcano", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env={**clean, **(env or {})},
        timeout=120,
    )
    return Result(p.returncode, p.stdout, p.stderr)


def _one_line(r: Result, code: int = 2) -> str:
    assert (r.code, r.out) == (code, ""), r
    [line] = r.err.splitlines()
    assert "Traceback" not in line
    return line


def _workflow(namespace: str | None = None, **spec: Any) -> str:
    wf = json.loads(json.dumps(WORKFLOW))
    if namespace:
        wf["metadata"]["namespace"] = namespace
    wf["spec"].update(spec)
    return yaml.safe_dump(wf)


@pytest.fixture
def world() -> World:
    return World()


@pytest.fixture
def server(world: World) -> Iterator[str]:
    yield from fake_api.serve(world)


@pytest.fixture
def config(tmp_path: Path, server: str) -> Path:
    """A kubeconfig for the stand-in server whose context names no namespace."""
    return fake_api.kubeconfig(tmp_path / "kubeconfig", server)


# ---- bad input, no configuration, no server ----------------------------------------------------------------------


@pytest.mark.parametrize("command", ["status", "wait", "explain", "logs", "stop", "delete"])
def test_a_bad_workflow_name_is_a_usage_error(command: str) -> None:
    line = _one_line(hv(command, "Not_A_Name"))
    assert line.startswith(f"hera-volcano {command}: error:") and "Not_A_Name" in line


def test_no_configuration_is_one_line_with_exit_code_3(tmp_path: Path) -> None:
    line = _one_line(hv("status", "wf", "--kubeconfig", str(tmp_path / "missing")), 3)
    assert "no usable Kubernetes configuration" in line


def test_an_unreachable_api_server_is_one_line_with_exit_code_3(tmp_path: Path) -> None:
    kubeconfig = fake_api.kubeconfig(tmp_path / "kubeconfig", "https://127.0.0.1:9", "argo")  # discard: no listener
    line = _one_line(hv("status", "wf", "--kubeconfig", str(kubeconfig)), 3)
    assert "cannot reach the API server at https://127.0.0.1:9" in line


def test_bad_workflow_input_is_refused_before_anything_is_sent(tmp_path: Path) -> None:
    kubeconfig = str(fake_api.kubeconfig(tmp_path / "kubeconfig", "https://127.0.0.1:9"))
    not_yaml = _one_line(hv("submit", "-", "--kubeconfig", kubeconfig, stdin="a: [1\n"))
    assert "hera-volcano submit: error:" in not_yaml and "cannot reach" not in not_yaml
    template = "apiVersion: argoproj.io/v1alpha1\nkind: WorkflowTemplate\nmetadata: {name: t}\nspec: {}\n"
    kind = _one_line(hv("submit", "-", "--kubeconfig", kubeconfig, stdin=template))
    assert "Workflow" in kind and "cannot reach" not in kind
    missing = _one_line(hv("submit", str(tmp_path / "nope.yaml"), "--kubeconfig", kubeconfig))
    assert "cannot read" in missing
    undeclared = _one_line(hv("submit", "-", "-p", "nope=1", "--kubeconfig", kubeconfig, stdin=_workflow()))
    assert "nope: not declared by hello- (it declares size)" in undeclared
    for value in ("{{=1}}", "{{workflow.parameters.size}}x"):  # (no argv holds NUL)
        tag = _one_line(hv("submit", "-", "-p", f"size={value}", "--kubeconfig", kubeconfig, stdin=_workflow()))
        assert "parameters[size]:" in tag and "cannot reach" not in tag


@pytest.mark.parametrize(
    ("option", "value"), [("--task", "BAD_"), ("--container", "x" * 64), ("--job", "-bad"), ("--job-name", "Bad_Name")]
)
def test_bad_log_options_are_refused_before_connecting(tmp_path: Path, option: str, value: str) -> None:
    line = _one_line(hv("logs", "wf", option, value, "--kubeconfig", str(tmp_path / "missing")))
    assert f"argument {option}:" in line and "configuration" not in line


@pytest.mark.parametrize(
    ("args", "says"),
    [
        ([], "give a FILE"),
        (["-", "--from", "workflowtemplate/t"], "not both"),
        (["--from", "cron/t"], "must be workflowtemplate/NAME or cronworkflow/NAME"),
        (["--from", "cronwf/Bad_Name"], "Bad_Name"),
        (["--from", "workflowtemplate/Bad_Name"], "Bad_Name"),
        (["-", "-p", "novalue"], "must be KEY=VALUE"),
        (["-", "-p", "a=1", "-p", "a=2"], "a is given twice"),
        (["-", "--timeout", "5m"], "--timeout: bounds --wait or --follow"),
        (["-", "--wait", "--timeout", "soon"], "must be a duration"),
        (["-", "--wait", "--timeout", "0s"], "longer than 0"),
        (["-", "--dry-run", "--wait"], "--dry-run"),
        (["-", "-o", "wide"], "must be one of name, yaml, json"),
    ],
)
def test_submit_usage_errors(tmp_path: Path, args: list[str], says: str) -> None:
    line = _one_line(hv("submit", *args, "--kubeconfig", str(tmp_path / "missing"), stdin=_workflow()))
    assert line.startswith("hera-volcano submit: error: ") and says in line, line


# ---- the namespace: -n, $ARGO_NAMESPACE, the kubeconfig context's, the workflow's own, default ------------------


@pytest.mark.parametrize(
    ("flag", "env", "context", "own", "chosen"),
    [
        ("flag", "env", "ctx", "own", "flag"),
        (None, "env", "ctx", "own", "env"),
        (None, None, "ctx", "own", "ctx"),
        (None, None, None, "own", "own"),
        (None, None, None, None, "default"),
    ],
)
def test_the_namespace_comes_from_flag_env_context_workflow_then_default(
    tmp_path: Path, flag: str | None, env: str | None, context: str | None, own: str | None, chosen: str
) -> None:
    kubeconfig = fake_api.kubeconfig(tmp_path / "kubeconfig", "https://127.0.0.1:9", context)  # never contacted
    args = ["submit", "-", "--dry-run", "-o", "json", "--kubeconfig", str(kubeconfig)] + (["-n", flag] if flag else [])
    r = hv(*args, env={"ARGO_NAMESPACE": env} if env else None, stdin=_workflow(own))
    assert (r.code, r.err) == (0, ""), r
    assert json.loads(r.out)["metadata"]["namespace"] == chosen


def test_a_dry_run_needs_no_kubeconfig_at_all(tmp_path: Path) -> None:
    r = hv("submit", "-", "--dry-run", "-p", "size=3", stdin=_workflow("ml"), home=tmp_path)
    assert (r.code, r.err) == (0, ""), r
    wf = yaml.safe_load(r.out)
    assert wf["metadata"] == {"generateName": "hello-", "namespace": "ml"}
    assert wf["spec"]["arguments"]["parameters"] == [{"name": "size", "value": "3"}]
    named = hv("submit", "-", "--dry-run", "-o", "name", stdin=_workflow(), home=tmp_path)
    assert (named.code, named.out) == (0, "hello-\n")
    template = hv("submit", "--from", "workflowtemplate/t", "-p", "a=1", "--dry-run", "-o", "json", home=tmp_path)
    assert template.code == 0, template
    assert json.loads(template.out)["spec"] == {
        "arguments": {"parameters": [{"name": "a", "value": "1"}]},
        "workflowTemplateRef": {"name": "t"},
    }


def test_a_bad_argo_namespace_variable_is_a_usage_error(tmp_path: Path) -> None:
    line = _one_line(hv("submit", "-", "--dry-run", env={"ARGO_NAMESPACE": "Not OK"}, stdin=_workflow(), home=tmp_path))
    assert "$ARGO_NAMESPACE" in line and "Not OK" in line


def test_a_dry_run_sends_nothing_and_submit_creates_in_the_chosen_namespace(world: World, config: Path) -> None:
    dry = hv("submit", "-", "--dry-run", "--kubeconfig", str(config), stdin=_workflow("argo"))
    assert dry.code == 0 and world.created == []
    r = hv("submit", "-", "--kubeconfig", str(config), env={"ARGO_NAMESPACE": "ml"}, stdin=_workflow("argo"))
    assert (r.code, r.out, r.err) == (0, "hello-x7k2p\n", ""), r
    [(namespace, body)] = world.created
    assert namespace == "ml" and body["metadata"]["namespace"] == "ml"


def test_submit_from_a_template_with_parameters(world: World, config: Path) -> None:
    declared = {"apiVersion": "argoproj.io/v1alpha1", "kind": "WorkflowTemplate", "metadata": {"name": "t"}}
    world.put("workflowtemplates", "argo", {**declared, "spec": {"arguments": {"parameters": [{"name": "a"}]}}})
    r = hv("submit", "--from", "workflowtemplate/t", "-p", "a=x=1", "-n", "argo", "--kubeconfig", str(config))
    assert (r.code, r.out, r.err) == (0, "t-x7k2p\n", ""), r
    [(namespace, body)] = world.created
    assert namespace == "argo" and body["spec"]["arguments"]["parameters"] == [{"name": "a", "value": "x=1"}]
    unknown = _one_line(hv("submit", "--from", "wftmpl/t", "-p", "b=1", "-n", "argo", "--kubeconfig", str(config)))
    assert "b: not declared by t (it declares a)" in unknown
    missing = _one_line(hv("submit", "--from", "workflowtemplate/u", "-n", "argo", "--kubeconfig", str(config)))
    assert "not found" in missing
    assert len(world.created) == 1


def _users_cron(path: Path) -> Path:
    """A CronWorkflow as a user writes it with Hera, saved as YAML."""
    from hera.workflows import Container, CronWorkflow

    with CronWorkflow(
        name="nightly-train",
        schedules=["0 2 * * *"],
        entrypoint="train",
        arguments={"size": "1"},
        labels={"team": "ml"},
    ) as cron:
        Container(name="train", image="python:3.12", command=["python", "train.py", "{{workflow.parameters.size}}"])
    path.write_text(cron.to_yaml())
    return path


def test_a_users_cron_workflow_is_created_then_run_once_with_from(world: World, config: Path, tmp_path: Path) -> None:
    cron_file = _users_cron(tmp_path / "cron.yaml")
    made = hv("submit", str(cron_file), "-n", "argo", "--kubeconfig", str(config))
    assert (made.code, made.out, made.err) == (0, "nightly-train\n", ""), made
    [(namespace, cron)] = world.created
    assert (namespace, cron["kind"], cron["metadata"]["namespace"]) == ("argo", "CronWorkflow", "argo")
    assert cron["spec"]["schedules"] == ["0 2 * * *"]

    before = datetime.now(timezone.utc).replace(microsecond=0)
    r = hv("submit", "--from", "cronwf/nightly-train", "-p", "size=4", "-n", "argo", "--kubeconfig", str(config))
    assert (r.code, r.out, r.err) == (0, "nightly-train-x7k2p\n", ""), r
    [_, (namespace, run)] = world.created
    assert (namespace, run["kind"]) == ("argo", "Workflow")
    meta = run["metadata"]
    assert (meta["generateName"], meta["namespace"]) == ("nightly-train-", "argo")
    assert meta["labels"] == {"workflows.argoproj.io/cron-workflow": "nightly-train"}
    due = datetime.fromisoformat(meta["annotations"]["workflows.argoproj.io/scheduled-time"].replace("Z", "+00:00"))
    assert before <= due <= datetime.now(timezone.utc), "due now: {{workflow.scheduledTime}} reads it"
    assert meta["ownerReferences"] == [
        {
            "apiVersion": "argoproj.io/v1alpha1",
            "kind": "CronWorkflow",
            "name": "nightly-train",
            "uid": "uid-of-nightly-train",
            "controller": True,
        }
    ]
    expected_spec = copy.deepcopy(cron["spec"]["workflowSpec"])
    expected_spec["arguments"]["parameters"] = [{"name": "size", "value": "4"}]
    assert run["spec"] == expected_spec

    dry = hv("submit", "--from", "cronworkflow/nightly-train", "--dry-run", "-n", "argo", "--kubeconfig", str(config))
    assert dry.code == 0 and len(world.created) == 2, "a dry run reads the CronWorkflow and creates nothing"
    assert yaml.safe_load(dry.out)["spec"]["arguments"]["parameters"] == [{"name": "size", "value": "1"}]
    undeclared = hv("submit", "--from", "cronwf/nightly-train", "-p", "epochs=3", "-n", "argo", "--kubeconfig",
                    str(config))  # fmt: skip
    assert "epochs: not declared by nightly-train (it declares size)" in _one_line(undeclared)
    assert "not found" in _one_line(hv("submit", "--from", "cronwf/nope", "-n", "argo", "--kubeconfig", str(config)))
    assert len(world.created) == 2


def test_a_cron_workflow_file_cannot_be_waited_for_and_nothing_is_sent(tmp_path: Path) -> None:
    kubeconfig = fake_api.kubeconfig(tmp_path / "kubeconfig", "https://127.0.0.1:9")  # never contacted
    line = _one_line(hv("submit", str(_users_cron(tmp_path / "c.yaml")), "--wait", "--kubeconfig", str(kubeconfig)))
    assert "runs on its schedule" in line and "--from cronworkflow/NAME --wait" in line and "reach" not in line


def test_a_cron_workflow_dry_run_takes_its_parameters_and_sends_nothing(tmp_path: Path) -> None:
    cron_file = _users_cron(tmp_path / "c.yaml")
    r = hv("submit", str(cron_file), "-p", "size=2", "--dry-run", "-n", "ml", home=tmp_path)
    assert (r.code, r.err) == (0, ""), r
    cron = yaml.safe_load(r.out)
    assert (cron["kind"], cron["metadata"]["namespace"]) == ("CronWorkflow", "ml")
    assert cron["spec"]["workflowSpec"]["arguments"]["parameters"] == [{"name": "size", "value": "2"}]


# ---- list, status, wait: formats and exit codes --------------------------------------------------------------------


def test_list_shows_name_phase_age_newest_first(world: World, config: Path) -> None:
    world.put("workflows", "argo", fake_api.workflow("old", "Succeeded", "2024-05-01T10:00:00Z"))
    world.put("workflows", "argo", fake_api.workflow("new", None, "2024-05-02T10:00:00Z"))
    world.put("workflows", "ml", fake_api.workflow("elsewhere", "Running"))
    table = hv("list", "-n", "argo", "--kubeconfig", str(config))
    assert table.code == 0 and table.err == "", table
    lines = table.out.splitlines()
    assert [line.split()[:2] for line in lines] == [["NAME", "PHASE"], ["new", "Pending"], ["old", "Succeeded"]]
    assert all(line.split()[2].endswith("d") for line in lines[1:]), "created days ago"
    names = hv("list", "-n", "argo", "-o", "name", "--kubeconfig", str(config))
    assert names.out == "new\nold\n"
    data = json.loads(hv("list", "-n", "argo", "-o", "json", "--kubeconfig", str(config)).out)
    assert data["namespace"] == "argo"
    assert [(w["name"], w["phase"], w["finished"]) for w in data["workflows"]] == [
        ("new", "Pending", ""),
        ("old", "Succeeded", "2024-05-01T10:00:00Z"),
    ]
    empty = hv("list", "--kubeconfig", str(config))  # the context names no namespace: default, which holds none
    assert (empty.code, empty.out, empty.err) == (0, "", "no workflows in namespace default\n")


def test_status_formats_and_exit_codes(world: World, config: Path) -> None:
    world.put("workflows", "argo", fake_api.workflow("bad", "Failed"))
    report = hv("status", "bad", "-n", "argo", "--kubeconfig", str(config))
    assert report.code == 1 and report.out.startswith("Workflow bad in argo: Failed"), report
    data = yaml.safe_load(hv("status", "bad", "-n", "argo", "-o", "yaml", "--kubeconfig", str(config)).out)
    assert (data["name"], data["namespace"], data["phase"], data["jobs"]) == ("bad", "argo", "Failed", [])
    name = hv("status", "bad", "-n", "argo", "-o", "name", "--kubeconfig", str(config))
    assert (name.code, name.out) == (1, "bad\n")
    missing = _one_line(hv("status", "nope", "-n", "argo", "--kubeconfig", str(config)))
    assert "nope not found in namespace argo" in missing


def test_status_shows_each_jobs_progress_and_latest_metrics(world: World, config: Path) -> None:
    world.put("workflows", "argo", fake_api.workflow("train", "Running"))
    progress = '{"progress":"12/100","metrics":{"loss":0.25}}'
    job = {
        "metadata": {
            "name": "train-job-x7k2p",
            "namespace": "argo",
            "creationTimestamp": "2024-05-01T10:00:01Z",
            "labels": {"workflows.argoproj.io/workflow": "train", "hera-volcano/job": "train"},
            "annotations": {"hera-volcano/progress": progress},
        },
        "status": {"state": {"phase": "Running"}, "running": 2},
    }
    world.put("jobs", "argo", job)
    report = hv("status", "train", "-n", "argo", "--kubeconfig", str(config))
    assert report.code == 0, report
    assert "  job train-job-x7k2p (train): Running, pods 2 running, 0 pending; progress 12/100, loss 0.25" in report.out
    data = json.loads(hv("status", "train", "-n", "argo", "-o", "json", "--kubeconfig", str(config)).out)
    [listed] = data["jobs"]
    assert (listed["progress"], listed["metrics"]) == ("12/100", {"loss": 0.25})


def test_wait_for_a_finished_workflow_prints_its_result(world: World, config: Path) -> None:
    world.put("workflows", "argo", fake_api.workflow("done", "Succeeded"))
    r = hv("wait", "done", "-n", "argo", "-q", "-o", "json", "--kubeconfig", str(config))
    assert (r.code, r.err) == (0, ""), r
    assert json.loads(r.out)["phase"] == "Succeeded"


def test_a_timeout_is_one_line_with_exit_code_4_and_the_workflow_keeps_running(world: World, config: Path) -> None:
    world.put("workflows", "argo", fake_api.workflow("slow", "Running"))
    line = _one_line(hv("wait", "slow", "-n", "argo", "-q", "--timeout", "1s", "--kubeconfig", str(config)), 4)
    assert line == (
        "hera-volcano wait: error: workflow slow has not finished within --timeout 1s; it keeps running"
        " (hera-volcano wait slow -n argo waits again)"
    )
    r = hv(
        "submit", "-", "-n", "argo", "--wait", "-q", "--timeout", "1s", "--kubeconfig", str(config), stdin=_workflow()
    )
    assert (r.code, r.out) == (4, "hello-x7k2p\n"), r
    assert "has not finished within --timeout 1s" in r.err


def test_forbidden_is_one_line_with_exit_code_3(config: Path) -> None:
    for args in (["list"], ["status", "wf"], ["delete", "wf"]):
        line = _one_line(hv(*args, "-n", fake_api.FORBIDDEN, "--kubeconfig", str(config)), 3)
        assert "forbidden: system:serviceaccount:ci:robot may not" in line and "--submitter" in line
