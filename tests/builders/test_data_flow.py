"""Values and files flowing through a pipeline (issue 20): a job's reported values as outputs of the task that runs
it (job_dag), a later step's arguments taken from them (StepOutput), ordinary steps beside the jobs, and a
workspace mounted in every pod."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from hera.workflows import Container, Env, Parameter, Workflow

import hera_volcano as hv
from hera_volcano.pods import program
from hera_volcano.pods.launcher import LaunchSettings
from hera_volcano.pods.run import Settings
from hera_volcano.shared.placeholders import substitute_text
from tests.builders.podsim import parse, process

IMAGE = "python:3.12-slim"


def report(lr: float, note: str) -> dict[str, Any]:
    return {"loss": lr / 2, "note": note}


def templates(w: Workflow) -> dict[str, dict[str, Any]]:
    return {t["name"]: t for t in w.to_dict()["spec"]["templates"]}


def manifest(template: dict[str, Any]) -> dict[str, Any]:
    job: dict[str, Any] = yaml.safe_load(substitute_text(template["resource"]["manifest"], {}))
    return job


def a_job(**kwargs: Any) -> hv.VolcanoJob:
    program = hv.Program.function(report, args={"lr": 0.1, "note": "n"})
    return hv.pytorch_job(image=IMAGE, program=program, workers=1, **kwargs)


def template_of(w: Workflow, task: str) -> str:
    """The name of the template a task of the workflow's entry DAG calls."""
    entry = templates(w)[w.to_dict()["spec"]["entrypoint"]]
    return str(next(t["template"] for t in entry["dag"]["tasks"] if t["name"] == task))


def trains(outputs: tuple[str, ...]) -> hv.PipelineJob:
    """The training job as a pipeline entry whose task carries ``outputs``, its template named ``train``."""
    return hv.PipelineJob("train", a_job(), outputs=outputs, template="train")


def test_a_job_dag_carries_what_rank_0_reports_and_the_job_s_name_and_phase() -> None:
    with Workflow(generate_name="w-", entrypoint="train") as w:
        hv.job_dag(a_job(), name="train", outputs=["loss", "note"])
    found = templates(w)
    dag = found["train"]
    assert [(t["name"], t["template"]) for t in dag["dag"]["tasks"]] == [("job", "train-job"), ("logs", "train-logs")]
    assert all("depends" not in t and "continueOn" not in t for t in dag["dag"]["tasks"]), "a missing value fails it"
    assert {p["name"]: p["valueFrom"]["parameter"] for p in dag["outputs"]["parameters"]} == {
        "loss": "{{tasks.logs.outputs.parameters.loss}}",
        "note": "{{tasks.logs.outputs.parameters.note}}",
        "job-metrics": "{{tasks.logs.outputs.parameters.job-metrics}}",
        "job-name": "{{tasks.job.outputs.parameters.job-name}}",
        "job-phase": "{{tasks.job.outputs.parameters.job-phase}}",
    }
    defaults = {p["name"]: p["valueFrom"].get("default") for p in dag["outputs"]["parameters"]}
    assert defaults["job-metrics"] == "{}" and defaults["loss"] is None, "only the metrics have a value without it"
    follower = found["train-logs"]
    env = {e["name"]: e.get("value") for e in follower["container"]["env"]}
    assert env[Settings.OUTPUTS] == "loss note"
    assert follower["container"]["args"] == [program.bootstrap()]
    assert manifest(found["train-job"])["metadata"]["labels"]["hera-volcano/job"] == "train"


def test_a_job_dag_without_values_to_collect_never_fails_for_its_follower() -> None:
    with Workflow(generate_name="w-", entrypoint="run") as w:
        hv.job_dag(a_job(), name="run")
    [logs] = [t for t in templates(w)["run"]["dag"]["tasks"] if t["name"] == "logs"]
    assert logs["continueOn"] == {"failed": True, "error": True}


def test_a_job_dag_passes_its_inputs_on_to_the_job_and_its_follower() -> None:
    job = hv.pytorch_job(
        image=IMAGE,
        program=hv.Program.function(report, args={"lr": 0.1, "note": hv.Placeholder.input("note", "x")}),
        workers=1,
    )
    with Workflow(generate_name="w-", entrypoint="run") as w:
        hv.job_dag(job, name="run", outputs=["loss"], job_label=hv.Placeholder.input("label", "run"))
    dag = templates(w)["run"]
    assert [p["name"] for p in dag["inputs"]["parameters"]] == ["label", "note"]
    by_task = {t["name"]: t.get("arguments", {}).get("parameters", []) for t in dag["dag"]["tasks"]}
    assert {p["name"]: p["value"] for p in by_task["job"]} == {
        "label": "{{inputs.parameters.label}}",
        "note": "{{inputs.parameters.note}}",
    }
    assert {p["name"]: p["value"] for p in by_task["logs"]} == {"label": "{{inputs.parameters.label}}"}


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [({"name": "x" * 125}, "name"), ({"outputs": "loss"}, "outputs"), ({"outputs": ["job-name"]}, "outputs[0]")],
)
def test_a_job_dag_refuses_what_it_cannot_render(kwargs: dict[str, Any], field: str) -> None:
    with pytest.raises(hv.ValidationError) as e:
        hv.job_dag(a_job(), **{"name": "run", **kwargs})
    assert e.value.field == field


def evaluate() -> Container:
    return Container(
        name="evaluate",
        image=IMAGE,
        command=["sh", "-c", 'echo "$LOSS"'],
        inputs=[Parameter(name="loss"), Parameter(name="note", default="none")],
        env=[Env(name="LOSS", value="{{inputs.parameters.loss}}")],
        outputs=[Parameter(name="verdict", value_from={"path": "/tmp/verdict"})],
    )


def data_pipeline(**kwargs: Any) -> hv.Pipeline:
    prep = Container(name="prep", image=IMAGE, command=["true"])
    train = hv.PipelineJob("train", a_job(), after=["prep"], outputs=["loss", "note"], template="train")
    return hv.Pipeline(
        [
            hv.PipelineStep("prep", prep),
            train,
            hv.PipelineStep("evaluate", evaluate(), {"loss": hv.StepOutput("train", "loss")}),
            hv.PipelineStep("report", evaluate(), {"loss": hv.StepOutput("evaluate", "verdict")}),
        ],
        **kwargs,
    )


def test_a_pipeline_hands_reported_values_to_later_steps_in_a_dag_and_in_steps() -> None:
    pipeline = data_pipeline()
    dag = templates(pipeline.workflow("flow"))["flow"]["dag"]["tasks"]
    by_name = {t["name"]: t for t in dag}
    assert by_name["train"]["template"] == "train" and by_name["train"]["depends"] == "prep"
    assert by_name["evaluate"]["depends"] == "train", "taking a value runs after the step that gives it"
    assert by_name["evaluate"]["arguments"]["parameters"] == [
        {"name": "loss", "value": "{{tasks.train.outputs.parameters.loss}}"}
    ]
    steps = templates(pipeline.workflow("flow", as_steps=True))["flow"]["steps"]
    assert [[s["name"] for s in group] for group in steps] == [["prep"], ["train"], ["evaluate"], ["report"]]
    assert steps[2][0]["arguments"]["parameters"] == [
        {"name": "loss", "value": "{{steps.train.outputs.parameters.loss}}"}
    ]


def test_a_workspace_is_mounted_in_every_job_pod_and_every_ordinary_step() -> None:
    pipeline = data_pipeline(workspace=hv.Workspace("datasets", "/data"))
    found = templates(pipeline.workflow("flow"))
    job = manifest(found["train-job"])
    for task in job["spec"]["tasks"]:
        spec = task["template"]["spec"]
        assert {"name": "workspace", "persistentVolumeClaim": {"claimName": "datasets"}} in spec["volumes"]
        assert {"name": "workspace", "mountPath": "/data"} in spec["containers"][0]["volumeMounts"]
    for step in ("prep", "evaluate"):
        assert found[step]["volumes"] == [{"name": "workspace", "persistentVolumeClaim": {"claimName": "datasets"}}]
        assert found[step]["container"]["volumeMounts"] == [{"name": "workspace", "mountPath": "/data"}]
    assert "volumes" not in templates(data_pipeline().workflow("flow"))["prep"], "the user's template is left as it was"


@pytest.mark.parametrize(
    ("change", "field", "rule"),
    [
        ({"evaluate": {"loss": hv.StepOutput("nowhere", "loss")}}, "jobs[1].after", "unknown job 'nowhere'"),
        ({"evaluate": {"loss": hv.StepOutput("train", "accuracy")}}, "jobs[1].arguments.loss", "has no output"),
        ({"evaluate": {"loss": hv.StepOutput("train", "los")}}, "jobs[1].arguments.loss", "(did you mean 'loss'?)"),
        ({"evaluate": {"typo": "x", "loss": "1"}}, "jobs[1].arguments", "has no input typo"),
        ({"evaluate": {}}, "jobs[1].arguments", "missing loss"),
        ({"evaluate": {"loss": ["a list"]}}, "jobs[1].arguments.loss", "text, a number"),
    ],
)
def test_a_pipeline_refuses_arguments_its_steps_cannot_take(change: dict[str, Any], field: str, rule: str) -> None:
    with pytest.raises(hv.ValidationError) as e:
        hv.Pipeline([trains(("loss",)), hv.PipelineStep("evaluate", evaluate(), change["evaluate"])])
    assert e.value.field == field and rule in e.value.rule, e.value


def test_a_value_known_at_run_time_reaches_only_what_the_job_reads_at_run_time() -> None:
    image = hv.Placeholder.input("image", "busybox:1")
    job = hv.VolcanoJob(tasks=[hv.VolcanoTask("main", {"spec": {"containers": [{"name": "main", "image": image}]}})])
    taking = hv.PipelineJob("tune", job, {"image": hv.StepOutput("train", "loss")})
    with pytest.raises(hv.ValidationError) as e:
        hv.Pipeline([trains(("loss",)), taking])
    assert e.value.field == "jobs[1].arguments.image" and "known only at run time" in e.value.rule
    own = hv.PipelineJob("tune", hv.batch_job(image=IMAGE, program=hv.Program.command(["echo"])), {"image": "x:1"})
    with pytest.raises(hv.ValidationError) as e:
        hv.Pipeline([trains(("loss",)), own])
    assert e.value.field == "jobs[1].arguments.image" and "the job's own argument" in e.value.rule


def test_a_job_reading_a_value_at_run_time_gets_the_reported_text_byte_for_byte() -> None:
    """A job of a pipeline takes an earlier job's report through a run-time input: Argo substitutes it into the
    manifest, the kubelet expands $(...), and the function still gets the exact text."""
    tricky = 'a "quoted" $(HOME) $$ {x} }}\x85 \x7f\nsecond line \\ end'
    tune = hv.PipelineJob(
        "tune",
        hv.batch_job(
            image=IMAGE,
            program=hv.Program.function(report, args={"lr": 0.2, "note": hv.Placeholder.input("note", "x")}),
        ),
        arguments={"note": hv.StepOutput("train", "note")},
    )
    pipeline = hv.Pipeline([trains(("note",)), tune])
    w = pipeline.workflow("flow")
    [task] = [t for t in templates(w)["flow"]["dag"]["tasks"] if t["name"] == "tune"]
    arguments = {p["name"]: p["value"] for p in task["arguments"]["parameters"]}
    assert arguments["note"] == "{{tasks.train.outputs.parameters.note}}"
    values = {f"inputs.parameters.{k}": v for k, v in arguments.items()} | {"inputs.parameters.note": tricky}
    job = parse(templates(w)[template_of(w, "tune")]["resource"]["manifest"], values)
    spec = job["spec"]["tasks"][0]["template"]["spec"]["containers"][0]
    _, env = process(spec, {"VC_TASK_INDEX": "0"})
    assert env[LaunchSettings.ARG_PREFIX + "note"] == tricky


def test_a_batch_job_reports_values_that_a_later_step_takes() -> None:
    check = hv.PipelineJob(
        "check",
        hv.batch_job(image=IMAGE, program=hv.Program.function(report, args={"lr": 0.1, "note": "n"})),
        outputs=["loss"],
    )
    plain = hv.PipelineJob(
        "plain", hv.batch_job(image=IMAGE, program=hv.Program.function(report, args={"lr": 0.1, "note": "n"}))
    )
    show = Container(
        name="show", image=IMAGE, command=["echo", "{{inputs.parameters.loss}}"], inputs=[Parameter(name="loss")]
    )
    w = hv.Pipeline([check, plain, hv.PipelineStep("show", show, {"loss": hv.StepOutput("check", "loss")})]).workflow(
        "flow"
    )
    found = templates(w)
    assert template_of(w, "check") != template_of(w, "plain"), "the reports change the task"
    outputs = [p["name"] for p in found[template_of(w, "check")]["outputs"]["parameters"]]
    assert outputs == ["loss", "job-metrics", "job-name", "job-phase"]
    assert "resource" in found[template_of(w, "plain")], "a job that reports nothing is the resource step itself"
    tasks = {t["name"]: t for t in found["flow"]["dag"]["tasks"]}
    assert tasks["show"]["depends"] == "check"
    assert tasks["show"]["arguments"]["parameters"] == [
        {"name": "loss", "value": "{{tasks.check.outputs.parameters.loss}}"}
    ]


@pytest.mark.parametrize(
    ("kwargs", "field", "rule"),
    [
        ({"outputs": "loss"}, "outputs", "not the string"),
        ({"outputs": ["job-name"]}, "outputs[0]", "not a report name"),
        ({"arguments": ["x"]}, "arguments", "must be a mapping"),
        ({"job": hv.batch_job}, "job", "must be a VolcanoJob"),
    ],
)
def test_a_pipeline_job_refuses_bad_outputs_and_arguments(kwargs: dict[str, Any], field: str, rule: str) -> None:
    kwargs.setdefault(
        "job", hv.batch_job(image=IMAGE, program=hv.Program.function(report, args={"lr": 0.1, "note": "n"}))
    )
    with pytest.raises(hv.ValidationError) as e:
        hv.PipelineJob("check", **kwargs)
    assert e.value.field == field and rule in e.value.rule, e.value


def test_a_batch_job_s_run_time_inputs_must_all_be_given() -> None:
    needs = hv.PipelineJob(
        "needs",
        hv.batch_job(
            image=IMAGE,
            program=hv.Program.function(report, args={"lr": 0.1, "note": hv.Placeholder.input("note", "x")}),
        ),
    )
    with pytest.raises(hv.ValidationError) as e:
        hv.Pipeline([needs])
    assert e.value.field == "jobs[0].arguments" and e.value.rule == "missing note"
    extra = hv.PipelineJob(
        "extra", hv.batch_job(image=IMAGE, program=hv.Program.command(["true"])), arguments={"nothing": "x"}
    )
    with pytest.raises(hv.ValidationError) as e:
        hv.Pipeline([extra])
    assert e.value.field == "jobs[0].arguments" and "no input parameter nothing" in e.value.rule


def test_the_bundled_data_pipeline_prepares_trains_and_evaluates() -> None:
    from hera_volcano.examples.data_pipeline import CLAIM, WORKSPACE, build

    w = build()
    found = templates(w)
    tasks = {t["name"]: t for t in found["volcano-data-pipeline"]["dag"]["tasks"]}
    assert list(tasks) == ["prep", "train", "evaluate"]
    assert (tasks["train"]["depends"], tasks["evaluate"]["depends"]) == ("prep", "train")
    assert {p["name"]: p["value"] for p in tasks["evaluate"]["arguments"]["parameters"]} == {
        "loss": "{{tasks.train.outputs.parameters.loss}}",
        "model": "{{tasks.train.outputs.parameters.model}}",
    }
    job = manifest(found["train-job"])
    assert [t["name"] for t in job["spec"]["tasks"]] == ["master", "worker"] and job["spec"]["minAvailable"] == 3
    for name in ("prep", "evaluate"):
        assert found[name]["container"]["volumeMounts"] == [{"name": "workspace", "mountPath": WORKSPACE}]
        assert found[name]["volumes"][0]["persistentVolumeClaim"] == {"claimName": CLAIM}
    env = {e["name"]: e.get("value") for e in found["train-logs"]["container"]["env"]}
    assert env[Settings.OUTPUTS] == "loss model"


def test_a_pipeline_job_with_outputs_gives_its_last_metrics_to_later_steps() -> None:
    metrics = {"loss": hv.StepOutput("train", "job-metrics")}
    pipeline = hv.Pipeline([trains(("loss",)), hv.PipelineStep("evaluate", evaluate(), metrics)])
    [evaluate_task] = [
        t for t in templates(pipeline.workflow("flow"))["flow"]["dag"]["tasks"] if t["name"] == "evaluate"
    ]
    assert evaluate_task["arguments"]["parameters"] == [
        {"name": "loss", "value": "{{tasks.train.outputs.parameters.job-metrics}}"}
    ]
    silent = hv.PipelineJob("train", a_job())  # no outputs: a job step alone, nothing lifts its follower's metrics
    with pytest.raises(hv.ValidationError) as e:
        hv.Pipeline([silent, hv.PipelineStep("evaluate", evaluate(), metrics)])
    assert "has no output 'job-metrics'" in e.value.rule
