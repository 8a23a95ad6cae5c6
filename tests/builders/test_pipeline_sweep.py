"""A sweep as an entry of a pipeline, as a user writes it: prep -> sweep -> evaluate reading the best trial's
parameters and loss, two sweeps of one job, a list an earlier step makes, the Steps form, a typo in `after` or in an
output's name. Every rendered workflow passes lint (and Argo's own validators, in the go-marked test)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from hera.workflows import DAG, Container, Parameter, Workflow
from hera.workflows.models import ValueFrom

import hera_volcano as hv
from hera_volcano.pods.sweep import PickSettings
from hera_volcano.tools.lint import has_errors, lint_text
from tests.conftest import manifests
from tests.test_agreement import argo_accepts


def train(lr: float, batch: int, epochs: int) -> dict[str, float]:
    """The user's training function (module level, so its source can be inlined)."""
    return {"loss": (lr - 0.3) ** 2 + batch / 1000, "acc": 1 - lr + epochs}


def job(image: str = "python:3.11-slim") -> hv.VolcanoJob:
    args = {
        "lr": hv.Placeholder.input("lr", 0.1),
        "batch": hv.Placeholder.input("batch", 32),
        "epochs": hv.Placeholder.input("epochs", 3),
    }
    return hv.batch_job(image=image, program=hv.Program.function(train, args=args))


GRID = hv.Grid({"lr": [0.1, 0.3], "batch": [32, 64]})


def prep() -> Container:
    """A step that decides how many epochs the trials run (an output parameter of its own)."""
    return Container(
        name="prep",
        image="busybox:1.37.0",
        command=["sh", "-c", "echo 4 > /tmp/epochs"],
        outputs=[Parameter(name="epochs", value_from=ValueFrom(path="/tmp/epochs"))],
    )


def evaluate() -> Container:
    return Container(
        name="evaluate",
        image="busybox:1.37.0",
        command=["echo", "{{inputs.parameters.params}}", "{{inputs.parameters.loss}}"],
        inputs=[Parameter(name="params"), Parameter(name="loss")],
    )


def pipeline(**sweep: Any) -> hv.Pipeline:
    """prep -> tune (a sweep whose trials run prep's epochs) -> evaluate (the best trial's parameters and loss)."""
    settings: dict[str, Any] = {"objective": "loss", "outputs": ["acc"], "parallelism": 2, "max_failures": 1, **sweep}
    return hv.Pipeline(
        [
            hv.PipelineStep("prep", prep()),
            hv.PipelineSweep("tune", job(), GRID, arguments={"epochs": hv.StepOutput("prep", "epochs")}, **settings),
            hv.PipelineStep(
                "evaluate",
                evaluate(),
                arguments={"params": hv.StepOutput("tune", "best-params"), "loss": hv.StepOutput("tune", "best-loss")},
            ),
        ]
    )


def rendered(w: Any) -> dict[str, Any]:
    text = hv.to_yaml(w)
    findings = lint_text(text, "pipeline.yaml")
    assert not has_errors(findings), [str(f) for f in findings]
    return dict(yaml.safe_load(text))


def templates(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {t["name"]: t for t in doc["spec"]["templates"]}


def values(call: dict[str, Any]) -> dict[str, str]:
    return {p["name"]: p["value"] for p in call.get("arguments", {}).get("parameters", [])}


def test_prep_then_a_sweep_then_evaluate_reading_the_best_params_and_loss() -> None:
    doc = rendered(pipeline().workflow("tune"))
    t = templates(doc)
    calls = {c["name"]: c for c in t["tune"]["dag"]["tasks"]}
    assert list(calls) == ["prep", "tune", "evaluate"]
    assert calls["tune"]["depends"] == "prep" and calls["evaluate"]["depends"] == "tune"
    assert values(calls["tune"]) == {"epochs": "{{tasks.prep.outputs.parameters.epochs}}"}
    assert values(calls["evaluate"]) == {
        "params": "{{tasks.tune.outputs.parameters.best-params}}",
        "loss": "{{tasks.tune.outputs.parameters.best-loss}}",
    }
    sweep = t[calls["tune"]["template"]]
    assert sweep["name"].startswith("sweep-") and sweep["parallelism"] == 2
    trials, pick = sweep["dag"]["tasks"]
    assert len(trials["withItems"]) == 4 and trials["template"] == f"{sweep['name']}-trial"
    assert [p["name"] for p in sweep["outputs"]["parameters"]] == [
        "trials",
        "best-params",
        "best-trial",
        "best-loss",
        "best-acc",
    ]
    assert t[pick["template"]]["container"]["args"][1:] == ["pick-best"]
    assert len(manifests(doc)) == 1, "one job template: every trial creates its own job from it"
    role = next(o for o in hv.rbac_for(pipeline().workflow("tune")) if o["kind"] == "Role")
    assert {"apiGroups": ["argoproj.io"], "resources": ["workflows"], "verbs": ["get"]} in role["rules"]


def test_the_same_pipeline_renders_byte_identical_yaml_in_both_forms() -> None:
    for as_steps in (False, True):
        assert hv.to_yaml(pipeline().workflow("tune", as_steps=as_steps)) == hv.to_yaml(
            pipeline().workflow("tune", as_steps=as_steps)
        )


def test_in_steps_the_sweep_runs_in_its_own_group_and_later_steps_read_it_as_steps() -> None:
    doc = rendered(pipeline().workflow("tune", as_steps=True))
    groups = templates(doc)["tune"]["steps"]
    assert [[s["name"] for s in g] for g in groups] == [["prep"], ["tune"], ["evaluate"]]
    assert values(groups[1][0]) == {"epochs": "{{steps.prep.outputs.parameters.epochs}}"}
    assert values(groups[2][0])["loss"] == "{{steps.tune.outputs.parameters.best-loss}}"


def test_made_inside_your_own_dag_its_tasks_chain_with_yours_and_only_the_templates_it_uses_are_added() -> None:
    with Workflow(
        generate_name="tune-", namespace="argo", entrypoint="main", service_account_name="volcano-workflows"
    ) as w:
        publish = Container(name="publish", image="busybox:1.37.0", command=["echo", "done"])
        with DAG(name="main"):
            tasks = pipeline().add_tasks()  # the pipeline made here, inside your DAG: its checks add nothing
            tasks["evaluate"] >> publish(name="publish")
    doc = rendered(w)
    names = sorted(t["name"] for t in doc["spec"]["templates"])
    sweep = next(c["template"] for c in templates(doc)["main"]["dag"]["tasks"] if c["name"] == "tune")
    assert names == sorted(
        [
            "main",
            "prep",
            "evaluate",
            "publish",
            *(f"{sweep}{s}" for s in ("", "-trial", "-trial-job", "-trial-logs", "-pick")),
        ]
    )


def test_two_sweeps_of_one_job_share_one_set_of_templates_and_another_space_has_its_own() -> None:
    p = hv.Pipeline(
        [
            hv.PipelineSweep("short", job(), GRID, objective="loss", arguments={"epochs": 1}),
            hv.PipelineSweep("long", job(), GRID, objective="loss", arguments={"epochs": 9}, after=["short"]),
            hv.PipelineSweep(
                "fine", job(), hv.Trials([{"lr": 0.2, "batch": 32}]), objective="loss", arguments={"epochs": 9}
            ),
        ]
    )
    doc = rendered(p.workflow("tune"))
    calls = {c["name"]: c for c in templates(doc)["tune"]["dag"]["tasks"]}
    assert calls["short"]["template"] == calls["long"]["template"] != calls["fine"]["template"]
    assert (values(calls["short"]), values(calls["long"])) == ({"epochs": "1"}, {"epochs": "9"})
    names = [t["name"] for t in doc["spec"]["templates"]]
    for sweep in (calls["short"]["template"], calls["fine"]["template"]):
        ours = [n for n in names if n.startswith(sweep)]
        assert sorted(ours) == sorted(f"{sweep}{s}" for s in ("", "-trial", "-trial-job", "-trial-logs", "-pick"))
    assert len(names) == len(set(names))


def from_a_step() -> hv.Pipeline:
    """A sweep over the list an earlier step writes to its output parameter."""
    grid = Container(
        name="grid",
        image="python:3.11-slim",
        command=["python3", "-c", "import json; print(json.dumps([{'lr': 0.1, 'batch': 32}]))"],
        outputs=[Parameter(name="trials", value_from=ValueFrom(path="/tmp/trials"))],
    )
    space = hv.TrialsFrom("{{tasks.grid.outputs.parameters.trials}}", ["lr", "batch"])
    return hv.Pipeline(
        [
            hv.PipelineStep("grid", grid),
            hv.PipelineSweep("tune", job(), space, objective="loss", arguments={"epochs": 2}),
        ]
    )


def test_a_list_an_earlier_step_makes_is_the_sweeps_trials_in_a_dag_and_in_steps() -> None:
    p = from_a_step()
    dag = {c["name"]: c for c in templates(rendered(p.workflow("tune")))["tune"]["dag"]["tasks"]}
    assert dag["tune"]["depends"] == "grid", "the step that makes the list runs first, without an `after`"
    assert values(dag["tune"]) == {"epochs": "2", "sweep-trials": "{{tasks.grid.outputs.parameters.trials}}"}
    steps = templates(rendered(p.workflow("tune", as_steps=True)))["tune"]["steps"]
    assert values(steps[1][0])["sweep-trials"] == "{{steps.grid.outputs.parameters.trials}}"
    with pytest.raises(hv.ValidationError, match=r"^jobs\[0\]\.space\.expression: in a pipeline, must be an earlier"):
        hv.Pipeline([hv.PipelineSweep("tune", job(), hv.TrialsFrom("{{workflow.name}}", ["lr"]), objective="loss")])
    given = {"epochs": 1, "sweep-trials": hv.StepOutput("grid", "trials")}  # a second list, beside the space's
    space = hv.TrialsFrom("{{tasks.grid.outputs.parameters.trials}}", ["lr"])
    with pytest.raises(hv.ValidationError, match=r"^jobs\[0\]\.arguments\.sweep-trials: is the sweep's own"):
        hv.Pipeline([hv.PipelineSweep("tune", job(), space, objective="loss", arguments=given)])


def test_with_the_workspace_every_trials_pods_mount_it() -> None:
    p = hv.Pipeline(
        [hv.PipelineSweep("tune", job(), GRID, objective="loss", arguments={"epochs": 1})],
        workspace=hv.Workspace("data", "/work"),
    )
    [manifest] = manifests(rendered(p.workflow("tune")))
    spec = manifest["spec"]["tasks"][0]["template"]["spec"]
    assert {"name": "workspace", "persistentVolumeClaim": {"claimName": "data"}} in spec["volumes"]
    assert {"name": "workspace", "mountPath": "/work"} in spec["containers"][0]["volumeMounts"]


def entries(**change: Any) -> list[Any]:
    """prep -> tune -> evaluate, one of the sweep's settings changed."""
    sweep: dict[str, Any] = {
        "space": GRID,
        "objective": "loss",
        "arguments": {"epochs": 1},
        "after": ["prep"],
        **change,
    }
    read = change.pop("read", "best-loss")
    return [
        hv.PipelineStep("prep", prep()),
        hv.PipelineSweep("tune", job(), sweep.pop("space"), **{k: v for k, v in sweep.items() if k != "read"}),
        hv.PipelineStep(
            "evaluate",
            evaluate(),
            arguments={"params": hv.StepOutput("tune", "best-params"), "loss": hv.StepOutput("tune", read)},
        ),
    ]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"after": ["prepp"]}, r"^jobs\[1\]\.after: unknown job 'prepp'"),
        ({"read": "best-los"}, r"^jobs\[2\]\.arguments\.loss: step 'tune' has no output 'best-los'.*'best-loss'"),
        ({"read": "best-acc"}, r"^jobs\[2\]\.arguments\.loss: step 'tune' has no output 'best-acc'"),
        ({"arguments": {"epoch": 1}}, r"^jobs\[1\]\.arguments\.epoch: the sweep has no input 'epoch'.*'epochs'"),
        ({"arguments": {"epochs": 1, "lr": 0.5}}, r"^jobs\[1\]\.arguments\.lr: is swept by the space"),
        ({"arguments": {}}, r"^jobs\[1\]\.arguments: missing epochs"),
        ({"arguments": {"epochs": "{{workflow.uid}}"}}, r"^jobs\[1\]\.arguments\.epochs: "),
        ({"space": hv.Grid({"lrr": [0.1]})}, r"^jobs\[1\] \(tune\): space\.parameters\.lrr: .*'lr'"),
        ({"direction": "down"}, r"^jobs\[1\] \(tune\): direction: "),
        ({"max_failures": -1}, r"^jobs\[1\] \(tune\): max_failures"),
        ({"objective": "lo ss"}, r"^jobs\[1\] \(tune\): objective"),
        ({"objective": "trial"}, r"^jobs\[1\] \(tune\): objective: 'trial' would be the sweep's output best-trial"),
    ],
)
def test_a_typo_is_refused_naming_the_entry_and_the_field(change: dict[str, Any], message: str) -> None:
    with pytest.raises(hv.ValidationError, match=message):
        hv.Pipeline(entries(**change))


def test_two_sweeps_that_render_differently_cannot_name_one_template() -> None:
    one = hv.PipelineSweep("a", job(), GRID, objective="loss", arguments={"epochs": 1}, template="tune")
    other = hv.PipelineSweep(
        "b", job(), GRID, objective="loss", direction="max", arguments={"epochs": 1}, template="tune"
    )
    with pytest.raises(hv.ValidationError, match=r"^jobs\[1\]\.template: two sweeps that render differently"):
        hv.Pipeline([one, other])
    with pytest.raises(hv.ValidationError, match=r"^after: names 'a' more than once"):
        hv.PipelineSweep("b", job(), GRID, objective="loss", after=["a", "a"])


@pytest.mark.go
def test_argo_accepts_every_pipeline_with_a_sweep(argo_validators: tuple[Path, ...], tmp_path: Path) -> None:
    for i, (made, as_steps) in enumerate((p, s) for p in (pipeline, from_a_step) for s in (False, True)):
        path = tmp_path / f"pipeline-{i}.yaml"
        path.write_text(hv.to_yaml(made().workflow("tune", as_steps=as_steps)))
        for validator in argo_validators:
            accepted, out = argo_accepts(validator, path)
            assert accepted, out


def test_the_best_params_are_a_json_map_a_later_step_can_read() -> None:
    """The pick writes best-params as JSON; the evaluate step gets it whole, not a Python repr."""
    doc = rendered(pipeline().workflow("tune"))
    pick = next(t for n, t in templates(doc).items() if n.endswith("-pick"))
    env = {e["name"]: e.get("value") for e in pick["container"]["env"]}
    assert json.loads(env[PickSettings.TRIALS])[0] == {"lr": 0.1, "batch": 32}
