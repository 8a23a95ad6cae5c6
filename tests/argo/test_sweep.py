"""hv.sweep as a user writes it: their own function over a grid, a typo in a parameter's name, the same sweep called
twice, inside their own DAG with a later step reading the best value, a list made at run time, in Steps and in a
CronWorkflow. Every rendered workflow passes lint (and Argo's own validators, in the go-marked test)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from hera.workflows import DAG, Container, CronWorkflow, Parameter, Steps, Workflow

import hera_volcano as hv
from hera_volcano.pods import program
from hera_volcano.pods.run import Settings
from hera_volcano.pods.sweep import PickSettings
from hera_volcano.tools.lint import has_errors, lint_text
from tests.test_agreement import argo_accepts


def train(lr: float, batch: int, epochs: int) -> dict[str, float]:
    """The user's training function (module level, so its source can be inlined)."""
    return {"loss": (lr - 0.3) ** 2 + batch / 1000, "acc": 1 - lr + epochs}


def job() -> hv.VolcanoJob:
    args = {
        "lr": hv.Placeholder.input("lr", 0.1),
        "batch": hv.Placeholder.input("batch", 32),
        "epochs": hv.Placeholder.input("epochs", 3),
    }
    return hv.batch_job(image="python:3.11-slim", program=hv.Program.function(train, args=args))


GRID = hv.Grid({"lr": [0.1, 0.3], "batch": [32, 64]})


def show() -> Container:
    return Container(
        name="show",
        image="busybox:1.37.0",
        command=["echo", "{{inputs.parameters.loss}}", "{{inputs.parameters.params}}"],
        inputs=[Parameter(name="loss"), Parameter(name="params")],
    )


def rendered(w: Workflow | CronWorkflow) -> tuple[str, dict[str, Any]]:
    text = hv.to_yaml(w)
    findings = lint_text(text, "sweep.yaml")
    assert not has_errors(findings), [str(f) for f in findings]
    return text, yaml.safe_load(text)


def templates(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {t["name"]: t for t in doc["spec"].get("templates") or doc["spec"]["workflowSpec"]["templates"]}


def env_of(template: dict[str, Any]) -> dict[str, Any]:
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in template["container"]["env"]}


def grid_workflow(**sweep: Any) -> Workflow:
    with Workflow(
        generate_name="tune-", namespace="argo", entrypoint="main", service_account_name="volcano-workflows"
    ) as w:
        tune = hv.sweep(job(), GRID, name="tune", objective="loss", outputs=["acc"], **sweep)
        with DAG(name="main"):
            best = "{{tasks.tune.outputs.parameters.best-loss}}"
            params = "{{tasks.tune.outputs.parameters.best-params}}"
            tune(name="tune", arguments={"epochs": "5"}) >> show()(
                name="show", arguments={"loss": best, "params": params}
            )
        w.on_exit = hv.cleanup_on_failure()
    return w


def test_a_grid_of_four_runs_four_trials_at_most_two_at_once_and_a_later_step_reads_the_best() -> None:
    _, doc = rendered(grid_workflow(parallelism=2, max_failures=1))
    t = templates(doc)
    sweep = t["tune"]
    assert sweep["parallelism"] == 2
    assert [p["name"] for p in sweep["inputs"]["parameters"]] == ["epochs"]  # not swept: the sweep's own input
    trials, pick = sweep["dag"]["tasks"]
    assert trials["template"] == "tune-trial" and len(trials["withItems"]) == 4
    assert {json.dumps(i, sort_keys=True) for i in trials["withItems"]} == {
        json.dumps({"lr": lr, "batch": b}, sort_keys=True) for lr in (0.1, 0.3) for b in (32, 64)
    }
    given = {p["name"]: p["value"] for p in trials["arguments"]["parameters"]}
    assert given == {"lr": "{{item.lr}}", "batch": "{{item.batch}}", "epochs": "{{inputs.parameters.epochs}}"}
    assert pick["depends"] == "trials.Succeeded || trials.Failed || trials.Errored || trials.Skipped"
    outputs = [p["name"] for p in sweep["outputs"]["parameters"]]
    assert outputs == ["trials", "best-params", "best-trial", "best-loss", "best-acc"]
    # Each trial is job_dag's: its own job and follower, the follower collecting the objective and the outputs.
    follower = env_of(t["tune-trial-logs"])
    assert follower[Settings.OUTPUTS] == "loss acc"
    # The pick: the pods' program, its part's annotation (its calls), told the list the loop iterates.
    pick_t = t["tune-pick"]
    assert pick_t["container"]["args"][1:] == ["pick-best"]
    assert pick_t["metadata"]["annotations"] == program.pod_annotations(program.PICK)
    env = env_of(pick_t)
    assert json.loads(env[PickSettings.TRIALS]) == GRID.trials_list()
    assert (env[PickSettings.OBJECTIVE], env[PickSettings.DIRECTION], env[PickSettings.MAX_FAILURES]) == (
        "loss",
        "min",
        "1",
    )
    role = next(o for o in hv.rbac_for(grid_workflow()) if o["kind"] == "Role")
    assert {"apiGroups": ["argoproj.io"], "resources": ["workflows"], "verbs": ["get"]} in role["rules"]


def test_a_typo_in_a_parameter_name_is_refused_naming_it_and_the_inputs() -> None:
    with Workflow(generate_name="tune-", entrypoint="main"):
        with pytest.raises(hv.ValidationError, match=r"space\.parameters\.lrr: is no input of the job .*'lr'"):
            hv.sweep(job(), hv.Grid({"lrr": [0.1], "batch": [32]}), name="tune", objective="loss")
        with pytest.raises(hv.ValidationError, match=r"space\.parameters\.btach"):
            hv.sweep(job(), hv.TrialsFrom("{{tasks.g.outputs.result}}", ["btach"]), name="tune", objective="loss")
        with pytest.raises(hv.ValidationError, match=r"space\.trials\[1\]: must give the same names"):
            hv.sweep(job(), hv.Trials([{"lr": 0.1}, {"lr": 0.2, "batch": 3}]), name="t", objective="loss")


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"objective": "lo ss"}, "objective"),
        ({"direction": "down"}, "direction"),
        ({"max_failures": -1}, "max_failures"),
        ({"parallelism": 0}, "parallelism"),
        ({"space": hv.Grid({"lr": []})}, "space.parameters.lr"),
        ({"space": hv.Grid({"lr": ["{{workflow.name}}"]})}, r"space.parameters.lr\[0\]"),
        ({"space": hv.Grid({"lr": [float("nan")]})}, r"space.parameters.lr\[0\]"),
        ({"space": {"lr": [0.1]}}, "space"),
        ({"objective": "trial"}, "objective"),  # its best-trial would be the pick's own best-trial
        ({"outputs": ["params"]}, "outputs"),
        ({"defaults": {"lr": 5}}, r"defaults\.lr"),  # a swept input's default would never be used
        ({"parallelism": 2**70}, "parallelism"),
        ({"max_failures": 2**64}, "max_failures"),
        ({"space": hv.RandomSearch({"lr": hv.Uniform(-1e308, 1e308)}, samples=2, seed=1)}, r"space\.parameters\.lr"),
        ({"space": hv.RandomSearch({"lr": [0.1]}, samples=10**9, seed=1)}, r"space\.samples"),
        ({"space": hv.Grid({"lr": list(range(200)), "batch": list(range(100))})}, r"space\.parameters"),
        ({"space": hv.Trials([{"lr": 0.1}] * 10001)}, r"space\.trials"),
        ({"space": hv.Trials([{"lr": "x" * 100}] * 500)}, "space"),  # 55 KB of JSON: the pick's variable
        ({"space": hv.Grid({"lr": [2**64]})}, r"space\.parameters\.lr\[0\]"),
        ({"space": hv.RandomSearch({"lr": hv.IntRange(0, 2**64)}, samples=1, seed=1)}, r"space\.parameters\.lr\.high"),
        ({"space": hv.RandomSearch({"lr": hv.Uniform(0, 10**400)}, samples=1, seed=1)}, r"space\.parameters\.lr\.high"),
    ],
)
def test_bad_settings_are_refused_naming_the_field(change: dict[str, Any], field: str) -> None:
    given: dict[str, Any] = {"space": GRID, "name": "tune", "objective": "loss", **change}
    with Workflow(generate_name="tune-", entrypoint="main"), pytest.raises(hv.ValidationError, match=f"^{field}:"):
        hv.sweep(job(), given.pop("space"), **given)


def test_the_same_sweep_called_twice_renders_one_set_of_templates_and_two_tasks() -> None:
    with Workflow(
        generate_name="tune-", namespace="argo", entrypoint="main", service_account_name="volcano-workflows"
    ) as w:
        tune = hv.sweep(job(), GRID, name="tune", objective="loss", direction="max")
        with DAG(name="main"):
            a = tune(name="short", arguments={"epochs": "1"})
            b = tune(name="long", arguments={"epochs": "9"})
            a >> b
    _, doc = rendered(w)
    names = [t["name"] for t in doc["spec"]["templates"]]
    assert sorted(n for n in names if n.startswith("tune")) == [
        "tune",
        "tune-pick",
        "tune-trial",
        "tune-trial-job",
        "tune-trial-logs",
    ]
    calls = templates(doc)["main"]["dag"]["tasks"]
    assert [(c["name"], c["template"]) for c in calls] == [("short", "tune"), ("long", "tune")]


def test_a_forgotten_or_misspelt_argument_of_the_sweep_is_refused() -> None:
    with Workflow(generate_name="tune-", entrypoint="main"):
        tune = hv.sweep(job(), GRID, name="tune", objective="loss")
        with DAG(name="main"), pytest.raises(hv.ValidationError, match=r"arguments\.epoch: names no input of"):
            tune(name="x", arguments={"epoch": "1", "epochs": "1"})


def run_time_workflow() -> Workflow:
    """A sweep over the list a step prints at run time, its best value read by a later step."""
    grid = Container(
        name="grid",
        image="python:3.11-slim",
        command=["python3", "-c", "import json; print(json.dumps([{'lr': 0.1, 'batch': 32}]))"],
    )
    space = hv.TrialsFrom("{{tasks.grid.outputs.result}}", ["lr", "batch"])
    with Workflow(
        generate_name="tune-", namespace="argo", entrypoint="main", service_account_name="volcano-workflows"
    ) as w:
        tune = hv.sweep(job(), space, name="tune", objective="loss", max_failures=1, defaults={"epochs": 3})
        with DAG(name="main"):
            best = "{{tasks.tune.outputs.parameters.best-loss}}"
            params = "{{tasks.tune.outputs.parameters.best-params}}"
            grid(name="grid") >> tune(name="tune") >> show()(name="show", arguments={"loss": best, "params": params})
    return w


def test_a_list_made_at_run_time_is_looped_over_and_given_to_the_pick() -> None:
    w = run_time_workflow()
    _, doc = rendered(w)
    t = templates(doc)
    call = next(c for c in t["main"]["dag"]["tasks"] if c["name"] == "tune")
    assert {p["name"]: p["value"] for p in call["arguments"]["parameters"]} == {
        "sweep-trials": "{{tasks.grid.outputs.result}}"
    }
    trials, pick = t["tune"]["dag"]["tasks"]
    assert trials["withParam"] == "{{inputs.parameters.sweep-trials}}"
    assert {p["name"]: p["value"] for p in pick["arguments"]["parameters"]} == {
        "sweep-trials": "{{inputs.parameters.sweep-trials}}"
    }
    assert env_of(t["tune-pick"])[PickSettings.TRIALS] == "{{inputs.parameters.sweep-trials}}"
    assert {p["name"]: p.get("default") for p in t["tune"]["inputs"]["parameters"]} == {
        "epochs": "3",
        "sweep-trials": None,
    }


def test_random_search_draws_the_same_trials_for_the_same_seed_within_their_ranges() -> None:
    space = hv.RandomSearch(
        {"lr": hv.Uniform(1e-4, 1.0, log=True), "batch": [32, 64, 128], "epochs": hv.IntRange(1, 5)}, samples=6, seed=7
    )
    first, again = space.trials_list(), space.trials_list()
    assert first == again and len(first) == 6
    assert all(1e-4 <= t["lr"] <= 1.0 and t["batch"] in (32, 64, 128) and 1 <= t["epochs"] <= 5 for t in first)
    other = hv.RandomSearch(space.parameters, samples=6, seed=8).trials_list()
    assert other != first
    with Workflow(
        generate_name="tune-", namespace="argo", entrypoint="main", service_account_name="volcano-workflows"
    ) as w:
        tune = hv.sweep(job(), space, name="tune", objective="loss")
        with DAG(name="main"):
            tune(name="tune")
    _, doc = rendered(w)
    assert templates(doc)["tune"]["dag"]["tasks"][0]["withItems"] == first
    with pytest.raises(hv.ValidationError, match=r"^space\.parameters\.lr: low must be below high"):
        hv.RandomSearch({"lr": hv.Uniform(1, 0)}, samples=1, seed=0).trials_list()


def test_in_steps_and_in_a_cron_workflow_a_later_step_reads_the_best_value() -> None:
    with Workflow(
        generate_name="tune-", namespace="argo", entrypoint="main", service_account_name="volcano-workflows"
    ) as w:
        tune = hv.sweep(job(), hv.Trials([{"lr": 0.1}, {"lr": 0.5}]), name="tune", objective="loss")
        with Steps(name="main"):
            tune(name="tune", arguments={"batch": "32", "epochs": "1"})
            show()(
                name="show",
                arguments={
                    "loss": "{{steps.tune.outputs.parameters.best-loss}}",
                    "params": "{{steps.tune.outputs.parameters.best-params}}",
                },
            )
    rendered(w)
    with CronWorkflow(
        name="nightly-tune",
        namespace="argo",
        schedules=["0 2 * * *"],
        entrypoint="main",
        service_account_name="volcano-workflows",
    ) as cron:
        tune = hv.sweep(job(), GRID, name="tune", objective="loss")
        with DAG(name="main"):
            tune(name="tune", arguments={"epochs": "2"})
    _, doc = rendered(cron)
    assert "tune-pick" in templates(doc)


def test_the_same_input_renders_byte_identical_yaml() -> None:
    assert hv.to_yaml(grid_workflow(parallelism=2)) == hv.to_yaml(grid_workflow(parallelism=2))


@pytest.mark.go
def test_argo_accepts_every_sweep_workflow(argo_validators: tuple[Path, ...], tmp_path: Path) -> None:
    for i, w in enumerate([grid_workflow(parallelism=2, max_failures=1), run_time_workflow()]):
        path = tmp_path / f"sweep-{i}.yaml"
        path.write_text(hv.to_yaml(w))
        for validator in argo_validators:
            accepted, out = argo_accepts(validator, path)
            assert accepted, out


def test_beside_a_pipelines_tasks_in_the_users_own_dag_the_sweep_runs_after_its_step() -> None:
    prep = Container(name="prep", image="busybox:1.37.0", command=["echo", "prep"])
    pipeline = hv.Pipeline([hv.PipelineStep("prep", prep)])
    with Workflow(
        generate_name="tune-", namespace="argo", entrypoint="main", service_account_name="volcano-workflows"
    ) as w:
        tune = hv.sweep(job(), GRID, name="tune", objective="loss")
        with DAG(name="main"):
            tasks = pipeline.add_tasks()
            tasks["prep"] >> tune(name="tune", arguments={"epochs": "1"})
    _, doc = rendered(w)
    call = next(t for t in templates(doc)["main"]["dag"]["tasks"] if t["name"] == "tune")
    assert call["depends"] == "prep"
