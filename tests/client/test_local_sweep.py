"""A sweep run here, trial by trial (``hv.run_local(tune)``), as a user tries one before spending a cluster on it: a
grid of their own function with one trial failing on purpose, too many failures, a list given at run time, a typo,
and the outputs the same as the cluster's pick gives for the same trials."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from hera.workflows import Workflow

import hera_volcano as hv
from hera_volcano.argo.sweep import SweepDAG
from tests.client import localfuncs
from tests.pods.test_sweep import FakeApi, run, settings, trial_nodes, workflow

GRID = hv.Grid({"a": [2, 3], "b": [2, 3]})
#: What the cluster's follower carries for each trial of GRID with epochs=1 (trial_loss's formula), or its failure.
ON_THE_CLUSTER = [
    ("Succeeded", {"loss": "7", "size": "4", "job-name": "j0", "job-phase": "Completed"}, ""),
    ("Succeeded", {"loss": "3", "size": "6", "job-name": "j1", "job-phase": "Completed"}, ""),
    ("Succeeded", {"loss": "4", "size": "6", "job-name": "j2", "job-phase": "Completed"}, ""),
    ("Failed", {}, "The job's rank 0 raised ValueError: a=3, b=3 diverges"),
]


def sweep(space: hv.Grid | hv.TrialsFrom, **kw: Any) -> SweepDAG:
    """The user's sweep of their own function, made in their workflow as on the cluster."""
    args = {name: hv.Placeholder.input(name, 1) for name in ("a", "b", "epochs")}
    job = hv.batch_job(image="python:3.11-slim", program=hv.Program.function(localfuncs.trial_loss, args=args))
    with Workflow(generate_name="tune-", entrypoint="tune"):
        return hv.sweep(job, space, name="tune", objective="loss", outputs=["size"], **kw)


def test_a_grid_of_four_with_one_trial_failing_on_purpose_finds_the_best_and_lists_the_failure() -> None:
    said = io.StringIO()
    outputs = hv.run_local(sweep(GRID, max_failures=1), arguments={"epochs": 1}, output=said)
    assert set(outputs) == {"trials", "best-params", "best-trial", "best-loss", "best-size"}
    assert json.loads(outputs["best-params"]) == {"a": 2, "b": 3}
    assert (outputs["best-trial"], outputs["best-loss"], outputs["best-size"]) == ("1", "3", "6")
    trials = json.loads(outputs["trials"])
    assert [t["parameters"] for t in trials] == [{"a": 2, "b": 2}, {"a": 2, "b": 3}, {"a": 3, "b": 2}, {"a": 3, "b": 3}]
    assert [t["phase"] for t in trials] == ["Succeeded", "Succeeded", "Succeeded", "Failed"]
    assert trials[0]["values"] == {"loss": "7", "size": "4"}
    assert "ValueError: a=3, b=3 diverges" in trials[3]["reason"]
    lines = said.getvalue().splitlines()
    assert "hera-volcano: trial 3 (a=3, b=3): running" in lines
    assert lines[-1] == "hera-volcano: best: trial 1 (a=2, b=3), loss=3 (min)"


def test_more_failed_trials_than_allowed_fail_the_sweep_saying_how_many_and_why() -> None:
    with pytest.raises(hv.LocalRunError) as failed:
        hv.run_local(sweep(GRID), arguments={"epochs": 1}, output=io.StringIO())
    message = str(failed.value)
    assert message.startswith("the sweep 'tune' failed: 1 of 4 trials failed, more than max_failures=0: ")
    assert "trial 3 (a=3, b=3): rank 0 exited with status 1: ValueError: a=3, b=3 diverges" in message
    trials = json.loads(failed.value.outputs["trials"])
    assert [t["phase"] for t in trials] == ["Succeeded", "Succeeded", "Succeeded", "Failed"]
    assert set(failed.value.outputs) == {"trials"}, "no best trial when the sweep fails"


def test_a_list_made_at_run_time_is_given_as_the_sweep_trials_argument() -> None:
    tune = sweep(hv.TrialsFrom("{{tasks.grid.outputs.result}}", ["a", "b"]), defaults={"epochs": 2}, max_failures=1)
    listed = [{"a": 3, "b": 2}, {"a": 2, "b": 3}, {"a": "x", "b": 1}]
    outputs = hv.run_local(tune, arguments={"sweep-trials": listed}, output=io.StringIO())
    assert (outputs["best-trial"], outputs["best-loss"], json.loads(outputs["best-params"])) == ("1", "4", listed[1])
    refused = json.loads(outputs["trials"])[2]
    assert refused["phase"] == "Failed" and "its arguments are refused: arguments.a: must be JSON" in refused["reason"]
    as_text = hv.run_local(tune, arguments={"sweep-trials": json.dumps(listed), "epochs": 2}, output=io.StringIO())
    assert as_text == outputs, "the list as the JSON text an earlier step outputs, the defaults given or not"
    with pytest.raises(hv.LocalRunError, match="the sweep has no trials"):
        hv.run_local(tune, arguments={"sweep-trials": "[]"}, output=io.StringIO())
    with pytest.raises(hv.ValidationError, match="must give the input sweep-trials of the sweep 'tune'"):
        hv.run_local(tune, output=io.StringIO())
    with pytest.raises(hv.ValidationError, match=r"arguments\.sweep-trials: trial 1 of the list gives no b"):
        hv.run_local(tune, arguments={"sweep-trials": [{"a": 1, "b": 1}, {"a": 1}]}, output=io.StringIO())


def test_a_typo_in_an_argument_is_refused_before_any_trial_runs() -> None:
    said = io.StringIO()
    with pytest.raises(hv.ValidationError) as refused:
        hv.run_local(sweep(GRID), arguments={"epochz": 1}, output=said)
    assert str(refused.value) == (
        "arguments.epochz: names no input of the sweep 'tune' (did you mean 'epochs'?); its inputs are epochs"
    )
    assert said.getvalue() == "", "no trial ran"
    with pytest.raises(hv.ValidationError, match=r"arguments\.a: names no input of the sweep 'tune'"):
        hv.run_local(sweep(GRID), arguments={"a": 1, "epochs": 1}, output=said)  # a swept name is the trial's
    with pytest.raises(hv.ValidationError, match="must give the input epochs of the sweep 'tune'"):
        hv.run_local(sweep(GRID), output=said)
    with pytest.raises(hv.ValidationError, match="checkpoints: is a job's: a sweep's trials each keep theirs"):
        hv.run_local(sweep(GRID), arguments={"epochs": 1}, checkpoints="/tmp/shared", output=said)
    assert said.getvalue() == "", "no trial ran"


def test_the_local_outputs_are_what_the_clusters_pick_outputs_for_the_same_trials(tmp_path: Path) -> None:
    local = hv.run_local(sweep(GRID, max_failures=1), arguments={"epochs": 1}, output=io.StringIO())
    s = settings(
        tmp_path,
        trials=GRID.trials_list(),
        max_failures=1,
        outputs=("loss", "size"),
        parameters=("a", "b"),
    )
    code, _, cluster = run(FakeApi(workflow(trial_nodes(ON_THE_CLUSTER))), s)
    assert code == 0
    assert {k: v for k, v in local.items() if k != "trials"} == {k: v for k, v in cluster.items() if k != "trials"}

    def without_reasons(text: str) -> list[dict[str, Any]]:
        return [{k: v for k, v in t.items() if k != "reason"} for t in json.loads(text)]

    # The reasons differ in wording (the cluster's are its failed steps' messages), never in where they are.
    assert without_reasons(local["trials"]) == without_reasons(cluster["trials"])
    reasons = [["reason" in t for t in json.loads(trials)] for trials in (local["trials"], cluster["trials"])]
    assert reasons[0] == reasons[1] == [False, False, False, True]


def test_a_trial_that_outlasts_the_timeout_is_a_failed_trial_and_the_others_still_count() -> None:
    job = hv.batch_job(
        image="python:3.11-slim",
        program=hv.Program.function(localfuncs.sleeps_for, args={"seconds": hv.Placeholder.input("seconds", 0)}),
    )
    with Workflow(generate_name="slow-", entrypoint="slow"):
        slow = hv.sweep(
            job, hv.Trials([{"seconds": 60}, {"seconds": 0}]), name="slow", objective="loss", max_failures=1
        )
    outputs = hv.run_local(slow, timeout=2, output=io.StringIO())
    assert (outputs["best-trial"], outputs["best-loss"]) == ("1", "0")
    first = json.loads(outputs["trials"])[0]
    assert first["phase"] == "Failed" and first["reason"].startswith("the run outlasted its timeout (2 s)")


def test_an_objective_reported_only_as_a_metric_is_the_trials_value_as_on_the_cluster() -> None:
    """The user's trial reports its loss with ``runtime.progress`` and returns nothing: the follower gives a listed
    output reported only as a metric its last value, and so does the local run."""
    job = hv.batch_job(
        image="python:3.11-slim",
        program=hv.Program.function(localfuncs.loss_as_metric, args={"lr": hv.Placeholder.input("lr", 0.1)}),
    )
    with Workflow(generate_name="tune-", entrypoint="tune"):
        tune = hv.sweep(job, hv.Grid({"lr": [0.1, 0.3, 0.7]}), name="tune", objective="loss")
    outputs = hv.run_local(tune, output=io.StringIO())
    assert (outputs["best-trial"], outputs["best-loss"], json.loads(outputs["best-params"])) == (
        "1",
        "0.0",
        {"lr": 0.3},
    )
    assert [t["values"] for t in json.loads(outputs["trials"])] == [{"loss": "0.04"}, {"loss": "0.0"}, {"loss": "0.16"}]


def test_a_refused_line_fails_a_trial_only_for_a_value_the_sweep_gathers_as_on_the_cluster() -> None:
    job = hv.batch_job(
        image="python:3.11-slim",
        program=hv.Program.function(localfuncs.forges_an_extra_line, args={"lr": hv.Placeholder.input("lr", 0.1)}),
    )
    with Workflow(generate_name="tune-", entrypoint="tune"):
        tune = hv.sweep(job, hv.Grid({"lr": [0.1, 0.5]}), name="tune", objective="loss", max_failures=1)
    trials = json.loads(hv.run_local(tune, output=io.StringIO())["trials"])
    assert [t["phase"] for t in trials] == ["Succeeded", "Failed"]
    assert "reported a value that is refused" in trials[1]["reason"] and "'loss'" in trials[1]["reason"]


def test_a_trial_whose_values_break_a_volcano_rule_is_a_failed_trial_and_the_others_run() -> None:
    """The swept value names the job: "Bad_Name" breaks Volcano's rules (the cluster refuses that trial's job), the
    other trial still runs."""
    job = hv.batch_job(
        image="python:3.11-slim",
        program=hv.Program.function(localfuncs.sleeps_for, args={"seconds": 0}),
        name=hv.Placeholder.input("run", "a"),
    )
    with Workflow(generate_name="tune-", entrypoint="tune"):
        tune = hv.sweep(job, hv.Grid({"run": ["Bad_Name", "good"]}), name="tune", objective="loss", max_failures=1)
    trials = json.loads(hv.run_local(tune, output=io.StringIO())["trials"])
    assert [t["phase"] for t in trials] == ["Failed", "Succeeded"]
    assert "breaks Volcano's rules" in trials[0]["reason"], trials[0]
