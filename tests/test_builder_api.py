"""The builders as a user reaches for them (issue 32): every builder returns the same job value, which goes unchanged
into job_template, job_dag, a Pipeline and to_dict(); the program is one value given the same way to each; a
setting they share has one name and one meaning. Each workflow either renders to YAML that lint accepts, holding
what the user asked for, or is refused with a ValidationError naming the field."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import yaml
from hera.workflows import DAG, Workflow

import hera_volcano as hv
from hera_volcano.pods.launcher import LaunchSettings
from hera_volcano.pods.run import Settings
from hera_volcano.shared.placeholders import substitute_text
from hera_volcano.tools.lint import has_errors, lint_text

IMAGE = "python:3.12-slim"


def train(lr: float) -> dict[str, float]:
    """The user's function (module level, so its source can travel)."""
    return {"loss": lr / 10}


#: Each builder, with what it takes beyond the settings they share.
BUILDERS: dict[str, Callable[..., hv.VolcanoJob]] = {
    "mpi": lambda **kw: hv.mpi_job(**{"image": IMAGE, "workers": 2, "service_account": "mpi", **kw}),
    "pytorch": lambda **kw: hv.pytorch_job(**{"image": IMAGE, "workers": 2, **kw}),
    "tensorflow": lambda **kw: hv.tensorflow_job(**{"image": IMAGE, "workers": 2, **kw}),
    "batch": lambda **kw: hv.batch_job(**{"image": IMAGE, "replicas": 3, **kw}),
}
#: The pods each kind's gang holds, and the role the per-role settings below apply to.
GANG = {"mpi": 3, "pytorch": 3, "tensorflow": 3, "batch": 3}
LEAD = {"mpi": "mpimaster", "pytorch": "master", "tensorflow": "chief", "batch": "main"}
kinds = pytest.mark.parametrize("kind", list(BUILDERS))


def command() -> hv.Program:
    return hv.Program.command(["python3", "-c", "print('hello')"])


def documents(w: Any) -> tuple[str, dict[str, Any]]:
    text = hv.to_yaml(w)
    findings = lint_text(text, "user.yaml")
    assert not has_errors(findings), [str(f) for f in findings]
    return text, yaml.safe_load(text)


def templates(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {t["name"]: t for t in doc["spec"]["templates"]}


def jobs_in(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """The Volcano Jobs the workflow's steps create, Argo's expressions given sample values."""
    found = []
    for template in doc["spec"]["templates"]:
        manifest = template.get("resource", {}).get("manifest", "")
        if "kind: Job" in manifest:
            found.append(yaml.safe_load(substitute_text(manifest, {})))
    return found


def pods(job: dict[str, Any]) -> list[dict[str, Any]]:
    return [t["template"]["spec"] for t in job["spec"]["tasks"]]


@kinds
def test_every_builder_s_job_goes_unchanged_into_every_use(kind: str) -> None:
    job = BUILDERS[kind](program=command())
    assert isinstance(job, hv.VolcanoJob)
    data = job.to_dict()
    assert data["spec"]["minAvailable"] == GANG[kind]
    assert data["metadata"]["annotations"]["hera-volcano/lead-task"] == LEAD[kind]
    with Workflow(generate_name="user-", entrypoint="main", service_account_name="volcano-workflows") as w:
        step = hv.job_template(job, name="step")
        task = hv.job_dag(job, name="task")
        with DAG(name="main"):
            step(name="step") >> task(name="task")
    _, doc = documents(w)
    assert {"step", "task", "task-job", "task-logs"} <= set(templates(doc))
    assert "inputs" not in templates(doc)["step"], "a built job needs no argument from its caller"
    pipeline = hv.Pipeline([hv.PipelineJob("first", job), hv.PipelineJob("second", job, after=["first"])])
    _, doc = documents(pipeline.workflow("user"))
    assert len(jobs_in(doc)) == 1, "two jobs that render alike share one template"


@kinds
def test_a_python_function_is_the_same_program_on_every_builder(kind: str) -> None:
    program = hv.Program.function(train, args={"lr": hv.Placeholder.input("lr", 0.1)})
    job = BUILDERS[kind](program=program)
    with Workflow(generate_name="fn-", entrypoint="main", service_account_name="volcano-workflows") as w:
        run = hv.job_dag(job, name="train", outputs=["loss"])
        with DAG(name="main"):
            run(name="train", arguments={"lr": "0.5"})
    text, doc = documents(w)
    assert templates(doc)["train"]["inputs"]["parameters"] == [{"name": "lr"}]
    [manifest] = jobs_in(doc)
    envs = [{e["name"] for e in c.get("env", [])} for p in pods(manifest) for c in p["containers"]]
    assert any(LaunchSettings.RUN in env for env in envs), "the launcher runs the function"
    assert "def train(lr: float)" in text
    pipeline = hv.Pipeline([hv.PipelineJob("train", job, {"lr": 0.5}, outputs=["loss"])])
    _, doc = documents(pipeline.workflow("fn"))
    [task] = templates(doc)["fn"]["dag"]["tasks"]
    assert {"name": "lr", "value": "0.5"} in task["arguments"]["parameters"]


@kinds
def test_the_shared_settings_mean_the_same_on_every_builder(kind: str) -> None:
    job = BUILDERS[kind](
        program=command(),
        generate_name="nightly-",
        queue=hv.Queue("research"),
        priority_class_name="batch-low",
        service_account="trainer",
        pod=hv.PodSettings(gpus=1, env={"MODE": "fast"}),
        deadline=7200,
        start_limit=1800,
        retry=hv.ArgoRetry(limit=2),
    )
    with Workflow(generate_name="settings-", entrypoint="main", service_account_name="volcano-workflows") as w:
        run = hv.job_dag(job, name="train", service_account="volcano-workflows")
        with DAG(name="main"):
            run(name="train")
    _, doc = documents(w)
    [manifest] = jobs_in(doc)
    assert manifest["metadata"]["generateName"] == "nightly-"
    assert (manifest["spec"]["queue"], manifest["spec"]["priorityClassName"]) == ("research", "batch-low")
    assert "trainer" in {p.get("serviceAccountName") for p in pods(manifest)}
    for pod in pods(manifest):
        main = pod["containers"][0]
        assert main["resources"]["limits"]["nvidia.com/gpu"] == 1 and {"name": "MODE", "value": "fast"} in main["env"]
        assert pod["activeDeadlineSeconds"] == 7200
    step = templates(doc)["train-job"]
    assert step["activeDeadlineSeconds"] == 7200 and step["retryStrategy"]["limit"] == 2
    assert step["serviceAccountName"] == "volcano-workflows"
    follower = {e["name"]: e.get("value") for e in templates(doc)["train-logs"]["container"]["env"]}
    assert (follower[Settings.START_SECONDS], follower[Settings.STEP_RETRIES]) == ("1800", "2")


@kinds
def test_a_volcano_retry_restarts_the_job_on_every_builder(kind: str) -> None:
    job = BUILDERS[kind](program=command(), retry=hv.VolcanoRetry(max_retry=4, restart_on=["PodEvicted"]))
    spec = job.to_dict()["spec"]
    assert spec["maxRetry"] == 4
    actions = {p.get("event"): p["action"] for p in spec["policies"]}
    assert actions["PodEvicted"] == "RestartJob" and actions["PodFailed"] == "TerminateJob"
    with Workflow(generate_name="retry-", entrypoint="train") as w:
        hv.job_template(job, name="train")
    _, doc = documents(w)
    assert "retryStrategy" not in templates(doc)["train"], "Volcano restarts the job; Argo does not retry the step"


@kinds
@pytest.mark.parametrize(
    ("settings", "field"),
    [
        ({"program": ["python3", "train.py"]}, "program"),
        ({"name": "Train_1"}, "name"),
        ({"generate_name": "Nightly-"}, "generate_name"),
        ({"service_account": "Trainer Account"}, "service_account"),
        ({"queue": 7}, "queue"),
        ({"pod": {"gpus": 1}}, "pod"),
        ({"deadline": 0}, "deadline"),
        ({"start_limit": 2**31}, "start_limit"),
        ({"retry": 3}, "retry"),
        ({"image": "My/Image"}, "image"),
    ],
)
def test_a_wrong_setting_is_refused_naming_it_on_every_builder(kind: str, settings: dict[str, Any], field: str) -> None:
    settings.setdefault("program", command())
    with pytest.raises(hv.ValidationError) as e:
        BUILDERS[kind](**settings)
    assert e.value.field == field


@kinds
@pytest.mark.parametrize(
    "old", [{"command": ["true"]}, {"func": train}, {"gpus_per_worker": 1}, {"cpu": "1"}, {"service_account_name": "a"}]
)
def test_the_old_spellings_are_gone_not_aliased(kind: str, old: dict[str, Any]) -> None:
    with pytest.raises(TypeError):
        BUILDERS[kind](program=command(), **old)


@kinds
def test_an_argo_retry_of_a_job_with_a_fixed_name_is_refused_wherever_it_goes(kind: str) -> None:
    job = BUILDERS[kind](program=command(), name="fixed", retry=hv.ArgoRetry(limit=2))
    uses: list[Callable[[], object]] = [
        lambda: hv.job_template(job, name="run"),
        lambda: hv.job_dag(job, name="run"),
        lambda: hv.Pipeline([hv.PipelineJob("run", job)]).workflow("p"),
    ]
    for use in uses:
        with Workflow(generate_name="fixed-", entrypoint="run"), pytest.raises(hv.ValidationError) as e:
            use()
        assert e.value.field == "retry"


def test_a_pipeline_takes_a_job_only_as_an_entry_naming_it() -> None:
    job = hv.batch_job(image=IMAGE, program=command())
    with pytest.raises(hv.ValidationError) as e:
        hv.Pipeline([job])  # type: ignore[list-item]
    assert e.value.field == "jobs[0]" and "PipelineJob(name, job)" in e.value.rule
    with pytest.raises(hv.ValidationError) as e:
        hv.Pipeline([hv.PipelineJob("prep", job, {"image": "other:1"})])
    assert e.value.field == "jobs[0].arguments.image", "a built job's own values are set once, where it is built"


def test_a_batch_job_s_values_are_written_in_alone_and_passed_in_a_pipeline() -> None:
    a = hv.batch_job(image="busybox:1.37.0", program=hv.Program.command(["echo", "a"]), replicas=2)
    b = hv.batch_job(image="alpine:3.20", program=hv.Program.command(["echo", "b"]))
    assert a.to_dict()["spec"]["tasks"][0]["template"]["spec"]["containers"][0]["image"] == "busybox:1.37.0"
    _, doc = documents(hv.Pipeline([hv.PipelineJob("a", a), hv.PipelineJob("b", b, after=["a"])]).workflow("ab"))
    [template] = [t for t in templates(doc).values() if "kind: Job" in t.get("resource", {}).get("manifest", "")]
    assert "inputs.parameters['replicas']" in template["resource"]["manifest"], "the size, the task's input"
    tasks = {
        t["name"]: {p["name"]: p["value"] for p in t["arguments"]["parameters"]}
        for t in templates(doc)["ab"]["dag"]["tasks"]
    }
    assert tasks["a"]["image"] == "busybox:1.37.0" and tasks["b"]["image"] == "alpine:3.20"
    assert (tasks["a"]["replicas"], tasks["b"]["replicas"]) == ("2", "1")
    assert (tasks["a"]["job"], tasks["b"]["job"]) == ("a", "b"), "each job's pods carry its entry's name"
