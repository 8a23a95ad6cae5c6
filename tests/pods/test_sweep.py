"""A sweep's pick (pods/sweep.py), as it runs in its pod: it reads a Workflow whose trials have ended and picks the
best by the objective, or fails the sweep saying how many failed and why."""

from __future__ import annotations

import base64
import gzip
import io
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from hera_volcano.pods.kubeapi import WORKFLOWS, ApiError, Kind
from hera_volcano.pods.sweep import PickSettings, decide, pick, read_trials

SWEEP = "wf-abc.tune"
GRID = [{"lr": 0.1}, {"lr": 0.3}, {"lr": 0.5}, {"lr": 0.7}]


def trial_nodes(results: list[tuple[str, dict[str, str], str]]) -> dict[str, dict[str, Any]]:
    """The nodes Argo records for a sweep whose trial i ended as ``results[i]``: (phase, outputs, message of its
    failed follower)."""
    group = f"{SWEEP}.trials"
    nodes: dict[str, dict[str, Any]] = {
        "g": {"id": "g", "name": group, "type": "TaskGroup", "phase": "Succeeded", "children": []},
        "p": {"id": "p", "name": f"{SWEEP}.pick", "type": "Pod", "phase": "Running"},
    }
    for i, (phase, outputs, message) in enumerate(results):
        item = json.dumps(GRID[i % len(GRID)]).replace("{", "").replace("}", "")
        node: dict[str, Any] = {"id": f"t{i}", "name": f"{group}({i}:{item})", "type": "DAG", "phase": phase}
        node["children"] = [f"t{i}-job", f"t{i}-logs"]
        node["outputs"] = {"parameters": [{"name": k, "value": v} for k, v in outputs.items()]}
        nodes[f"t{i}-job"] = {"id": f"t{i}-job", "name": f"{node['name']}.job", "displayName": "job", "type": "Pod"}
        nodes[f"t{i}-job"]["phase"] = "Failed" if phase == "Failed" else "Succeeded"
        if phase == "Failed":
            nodes[f"t{i}-job"]["message"] = "job tune-trial-x Failed"
        nodes[f"t{i}-logs"] = {
            "id": f"t{i}-logs",
            "name": f"{node['name']}.logs",
            "displayName": "logs",
            "type": "Pod",
            "phase": "Failed" if message else "Succeeded",
            **({"message": message} if message else {}),
        }
        nodes["g"]["children"].append(f"t{i}")
        if phase == "Failed":
            nodes["g"]["phase"] = "Failed"
        nodes[f"t{i}"] = node
    return nodes


def workflow(nodes: dict[str, Any]) -> dict[str, Any]:
    return {"metadata": {"name": "wf-abc"}, "status": {"nodes": nodes}}


def settings(tmp_path: Path, trials: list[dict[str, Any]] = GRID, **kw: Any) -> PickSettings:
    given: dict[str, Any] = {
        "workflow": "wf-abc",
        "objective": "loss",
        "direction": "min",
        "max_failures": 0,
        "outputs": ("loss", "acc"),
        "parameters": ("lr",),
        "trials": json.dumps(trials),
        "node": f"{SWEEP}.pick",
        "output_dir": str(tmp_path / "out"),
        "termination_log": str(tmp_path / "termination-log"),
    }
    return PickSettings(**{**given, **kw})


class FakeApi:
    """The pod's API client, answering each get with the next of ``answers`` (the last one again and again)."""

    namespace = "argo"

    def __init__(self, *answers: dict[str, Any] | ApiError) -> None:
        self.answers = list(answers)
        self.asked: list[tuple[Kind, str]] = []

    def get(self, kind: Kind, name: str) -> dict[str, Any]:
        self.asked.append((kind, name))
        answer = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        if isinstance(answer, ApiError):
            raise answer
        return answer


def run(api: FakeApi, s: PickSettings) -> tuple[int, str, dict[str, str]]:
    out = io.StringIO()
    now = [0.0]
    code = pick(api, s, out, clock=lambda: now[0], sleep=lambda t: now.__setitem__(0, now[0] + t))
    written = {p.name: p.read_text() for p in Path(s.output_dir).glob("*")} if Path(s.output_dir).exists() else {}
    return code, out.getvalue(), written


def ok(loss: str, acc: str = "0.9") -> tuple[str, dict[str, str], str]:
    return ("Succeeded", {"loss": loss, "acc": acc, "job-name": "j", "job-phase": "Completed"}, "")


FAILED = ("Failed", {}, "The job's rank 0 raised ValueError: lr 0.5 diverges")


def test_the_best_trial_by_min_is_picked_with_its_parameters_and_values(tmp_path: Path) -> None:
    api = FakeApi(workflow(trial_nodes([ok("0.04"), ok("0.0"), ok("0.04"), ok("0.16")])))
    code, out, written = run(api, settings(tmp_path))
    assert code == 0, out
    assert api.asked == [(WORKFLOWS, "wf-abc")]
    assert json.loads(written["best-params"]) == {"lr": 0.3}
    assert (written["best-trial"], written["best-loss"], written["best-acc"]) == ("1", "0.0", "0.9")
    trials = json.loads(written["trials"])
    assert [t["parameters"]["lr"] for t in trials] == [0.1, 0.3, 0.5, 0.7]
    assert trials[1] == {
        "trial": 1,
        "parameters": {"lr": 0.3},
        "phase": "Succeeded",
        "values": {"loss": "0.0", "acc": "0.9"},
    }
    assert "best: trial 1 (lr=0.3), loss=0.0 (min)" in out


def test_a_retried_pick_finds_its_sweep_through_its_attempts_node_name(tmp_path: Path) -> None:
    """A user's Workflow retries every template (``templateDefaults.retryStrategy``): the pick's node is
    ``SWEEP.pick(1)``, and it still reads its own sweep's trials."""
    api = FakeApi(workflow(trial_nodes([ok("0.04"), ok("0.0"), ok("0.04"), ok("0.16")])))
    code, out, written = run(api, settings(tmp_path, node=f"{SWEEP}.pick(1)"))
    assert code == 0, out
    assert written["best-trial"] == "1"


def test_max_picks_the_largest_and_a_tie_goes_to_the_first_trial(tmp_path: Path) -> None:
    api = FakeApi(workflow(trial_nodes([ok("0.5"), ok("0.9"), ok("0.9"), ok("0.1")])))
    code, _, written = run(api, settings(tmp_path, direction="max"))
    assert code == 0
    assert written["best-trial"] == "1"
    api = FakeApi(workflow(trial_nodes([ok("0.2"), ok("0.1"), ok("0.1"), ok("0.3")])))
    code, _, written = run(api, settings(tmp_path))
    assert (code, written["best-trial"]) == (0, "1")


def test_a_failed_trial_within_max_failures_is_listed_with_its_reason_and_the_rest_picked(tmp_path: Path) -> None:
    api = FakeApi(workflow(trial_nodes([ok("0.04"), ok("0.01"), FAILED, ok("0.16")])))
    code, out, written = run(api, settings(tmp_path, max_failures=1))
    assert code == 0, out
    assert written["best-trial"] == "1"
    failed = json.loads(written["trials"])[2]
    assert failed["phase"] == "Failed" and failed["parameters"] == {"lr": 0.5}
    assert "job: job tune-trial-x Failed" in failed["reason"]
    assert "logs: The job's rank 0 raised ValueError: lr 0.5 diverges" in failed["reason"]


def test_more_failures_than_allowed_fail_the_sweep_naming_how_many_and_why(tmp_path: Path) -> None:
    api = FakeApi(workflow(trial_nodes([ok("0.04"), FAILED, FAILED, ok("0.16")])))
    code, _, written = run(api, settings(tmp_path, max_failures=1))
    assert code == 1
    message = (tmp_path / "termination-log").read_text()
    assert "2 of 4 trials failed, more than max_failures=1" in message
    assert "trial 1 (lr=0.3)" in message and "lr 0.5 diverges" in message
    assert "best-loss" not in written and len(json.loads(written["trials"])) == 4


def test_none_succeeded_fails_the_sweep_even_when_failures_are_tolerated(tmp_path: Path) -> None:
    api = FakeApi(workflow(trial_nodes([FAILED, FAILED, FAILED, FAILED])))
    code, _, _ = run(api, settings(tmp_path, max_failures=10))
    assert code == 1
    assert "no trial succeeded (4 failed" in (tmp_path / "termination-log").read_text()


def test_a_trial_that_succeeded_without_the_objective_or_with_a_non_number_is_a_failed_trial(tmp_path: Path) -> None:
    silent = ("Succeeded", {"acc": "0.9"}, "")
    api = FakeApi(workflow(trial_nodes([ok("0.5"), silent, ok("low"), ok("nan")])))
    code, _, written = run(api, settings(tmp_path, max_failures=3))
    assert (code, written["best-trial"]) == (0, "0")
    trials = json.loads(written["trials"])
    assert [t["phase"] for t in trials] == ["Succeeded", "Failed", "Failed", "Failed"]
    assert trials[1]["reason"] == "it Succeeded without reporting loss"
    assert trials[2]["reason"] == "loss is not a number: 'low'"
    assert trials[3]["reason"] == "loss is not a finite number: 'nan'"
    code, _, _ = run(FakeApi(workflow(trial_nodes([ok("0.5"), ok("low"), ok("1"), ok("2")]))), settings(tmp_path))
    assert code == 1
    assert "1 of 4 trials failed, more than max_failures=0" in (tmp_path / "termination-log").read_text()


def test_values_with_quotes_and_braces_pass_through_as_json_argo_leaves_alone(tmp_path: Path) -> None:
    trials = [{"lr": 'say "hi" {{x}}'}, {"lr": "it's"}]
    api = FakeApi(workflow(trial_nodes([ok("1", 'a "quoted" acc'), ok("2")])))
    code, out, written = run(api, settings(tmp_path, trials=trials))
    assert code == 0, out
    assert "{{" not in written["trials"] and "{{" not in written["best-params"]
    assert json.loads(written["best-params"]) == {"lr": 'say "hi" {{x}}'}
    assert written["best-acc"] == 'a "quoted" acc'
    assert json.loads(written["trials"])[0]["values"]["acc"] == 'a "quoted" acc'


def test_the_pick_waits_for_the_controller_to_record_every_trial_then_reads_again(tmp_path: Path) -> None:
    running = trial_nodes([ok("0.3"), ok("0.2"), ok("0.1"), ok("0.4")])
    running["t3"]["phase"] = "Running"
    running["g"]["phase"] = "Running"
    api = FakeApi(workflow(running), workflow(trial_nodes([ok("0.3"), ok("0.2"), ok("0.1"), ok("0.4")])))
    code, _, written = run(api, settings(tmp_path))
    assert (code, written["best-trial"]) == (0, "2")
    assert len(api.asked) == 2
    code, out, _ = run(FakeApi(workflow(running)), settings(tmp_path, wait=10))
    assert code == 1 and "have not all ended after 10 s" in out


def test_a_loop_that_ran_other_trials_than_listed_fails_at_once(tmp_path: Path) -> None:
    nodes = trial_nodes([ok("0.3"), ok("0.2")])
    api = FakeApi(workflow(nodes))
    code, out, _ = run(api, settings(tmp_path))
    assert code == 1 and "the loop ran 2 trials of the 4 listed" in out
    assert len(api.asked) == 1


def test_an_empty_run_time_list_fails_the_sweep_without_reading_anything(tmp_path: Path) -> None:
    api = FakeApi(workflow({}))
    code, _, written = run(api, settings(tmp_path, trials=[]))
    assert code == 1 and api.asked == []
    assert "the sweep has no trials" in (tmp_path / "termination-log").read_text()
    assert json.loads(written["trials"]) == []


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("not json", "is not JSON"),
        ('{"lr": 1}', "must be a JSON list of maps"),
        ("[1, 2]", "trial 0 of the list is not a map"),
        ('[{"lr": 1}, {"batch": 2}]', "trial 1 of the list gives no lr"),
    ],
)
def test_a_run_time_list_that_is_not_a_list_of_parameter_maps_fails_naming_the_item(
    tmp_path: Path, text: str, said: str
) -> None:
    code, out, _ = run(FakeApi(workflow({})), replace(settings(tmp_path), trials=text))
    assert code == 1 and said in out


def test_compressed_nodes_are_read_and_offloaded_ones_refused(tmp_path: Path) -> None:
    nodes = trial_nodes([ok("0.3"), ok("0.2"), ok("0.1"), ok("0.4")])
    packed = base64.b64encode(gzip.compress(json.dumps(nodes).encode())).decode()
    code, _, written = run(FakeApi({"status": {"compressedNodes": packed}}), settings(tmp_path))
    assert (code, written["best-trial"]) == (0, "2")
    code, out, _ = run(FakeApi({"status": {"offloadNodeStatusVersion": "abc"}}), settings(tmp_path))
    assert code == 1 and "offloaded to Argo's database" in out


def test_an_api_refusal_fails_the_pick_saying_so(tmp_path: Path) -> None:
    forbidden = ApiError(403, "Forbidden", 'workflows.argoproj.io "wf-abc" is forbidden')
    code, out, _ = run(FakeApi(forbidden), settings(tmp_path))
    assert code == 1 and "Forbidden" in out


def test_the_settings_come_back_from_the_environment_they_write(tmp_path: Path) -> None:
    s = settings(tmp_path, direction="max", max_failures=2, wait=5.0)
    assert PickSettings.from_env(s.to_env()) == s
    plain = PickSettings("wf", "loss", "min", 0, ("loss",), ("lr",), "[]")
    assert list(plain.to_env()) == list(PickSettings.NAMES[:7])
    with pytest.raises(ValueError, match="min or max"):
        PickSettings.from_env({**plain.to_env(), PickSettings.DIRECTION: "down"})


def test_decide_and_read_trials_agree_with_the_nodes_order_not_the_children_order(tmp_path: Path) -> None:
    nodes = trial_nodes([ok("0.3"), ok("0.2"), ok("0.1"), ok("0.4")])
    nodes["g"]["children"].reverse()
    trials = read_trials(workflow(nodes), settings(tmp_path), GRID)
    assert [t.index for t in trials] == [0, 1, 2, 3]
    assert decide(trials, "loss", "min", 0).best == trials[2]


def test_the_program_starts_the_pick_with_pick_best_and_says_what_its_environment_lacks(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from hera_volcano.pods.entry import start

    assert start(["follower.py", "pick-best"], {}) == 1
    assert "hera-volcano pick-best: 'SWEEP_DIRECTION'" in capsys.readouterr().err


def test_the_pods_program_picks_over_https_as_the_pod_runs_it(tmp_path: Path) -> None:
    """The joined program from its ConfigMap file, started by the container's lines with ``pick-best``, reading the
    Workflow from a stand-in API server as the service account."""
    from tests.pods.https_server import Reply, Request, serving
    from tests.pods.test_program import start

    nodes = trial_nodes([ok("0.04"), ok("0.0"), FAILED, ok("0.16")])

    def answer(request: Request) -> Reply:
        if request.path == "/apis/argoproj.io/v1alpha1/namespaces/ns/workflows/wf-abc":
            return Reply(200, workflow(nodes))
        return Reply(404)

    s = settings(tmp_path, max_failures=1)
    (tmp_path / "api").mkdir()
    with serving(tmp_path / "api") as server:
        server.handler = answer
        proc = start(server, tmp_path, "pick-best", **s.to_env())
        stdout, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 0, stderr
    assert "best: trial 1 (lr=0.3), loss=0.0 (min)" in stdout
    assert (Path(s.output_dir) / "best-params").read_text() == '{"lr":0.3}'
    assert [r.path for r in server.requests] == ["/apis/argoproj.io/v1alpha1/namespaces/ns/workflows/wf-abc"]
