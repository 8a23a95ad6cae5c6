"""batch_job: a job like any other (to_dict, job_template), whose per-job values are its own arguments, so that the
jobs of a pipeline that agree on the rest share one template."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml
from hera.workflows import Workflow

from hera_volcano import (
    Pipeline,
    PipelineJob,
    PodSettings,
    PodVolume,
    Program,
    ValidationError,
    VolcanoRetry,
    batch_job,
    job_template,
    to_yaml,
)
from tests.conftest import manifests


def job_templates(wf: Any) -> list[str]:
    templates = yaml.safe_load(to_yaml(wf))["spec"]["templates"]
    return [t["name"] for t in templates if "kind: Job" in t.get("resource", {}).get("manifest", "")]


def test_jobs_that_differ_only_in_image_command_and_replicas_share_one_template() -> None:
    pipeline = Pipeline(
        [
            PipelineJob("a", batch_job(image="x:1", program=Program.command(["a"]), pod=PodSettings(cpu="1"))),
            PipelineJob("b", batch_job(image="y:2", program=Program.command(["b", "c"]), replicas=3)),
            PipelineJob("c", batch_job(image="z:3", program=Program.command(["c"]), pod=PodSettings(cpu="1"))),
        ]
    )
    wf = pipeline.workflow("p")
    names = job_templates(wf)
    assert len(names) == 2, names
    jobs = {j["spec"]["tasks"][0]["template"]["spec"]["containers"][0]["image"]: j for j in manifests(wf)}
    assert jobs["x:1"]["spec"]["tasks"][0]["template"]["spec"]["containers"][0]["resources"] == {
        "requests": {"cpu": "1"}
    }
    assert jobs["y:2"]["spec"]["tasks"][0]["replicas"] == 3 and jobs["y:2"]["spec"]["minAvailable"] == 3


def test_pod_settings_reach_the_pipeline_pods() -> None:
    settings = PodSettings(
        cpu="1",
        gpus=1,
        env={"A": "1"},
        volumes=[PodVolume.empty_dir("scratch", "/scratch")],
        node_selector={"pool": "batch"},
    )
    wf = Pipeline([PipelineJob("a", batch_job(image="x:1", program=Program.command(["a"]), pod=settings))]).workflow(
        "p"
    )
    [job] = manifests(wf)
    pod = job["spec"]["tasks"][0]["template"]["spec"]
    [container] = pod["containers"]
    assert container["resources"] == {
        "requests": {"cpu": "1", "nvidia.com/gpu": 1},
        "limits": {"nvidia.com/gpu": 1},
    }
    assert container["env"] == [{"name": "A", "value": "1"}]
    assert container["volumeMounts"] == [{"name": "scratch", "mountPath": "/scratch"}]
    assert pod["nodeSelector"] == {"pool": "batch"} and pod["restartPolicy"] == "Never"
    assert pod["automountServiceAccountToken"] is False, "user code gets API credentials only with service_account"


def test_a_batch_job_alone_is_a_job_with_its_values_written_in() -> None:
    job = batch_job(
        image="busybox:1.37.0",
        program=Program.command(["echo", "hello"]),
        replicas=2,
        generate_name="hello-",
        service_account="runner",
        deadline=300,
    )
    data = job.to_dict()
    assert data["metadata"]["generateName"] == "hello-"
    [task] = data["spec"]["tasks"]
    assert task["replicas"] == 2 and data["spec"]["minAvailable"] == 2
    assert task["template"]["spec"]["containers"][0]["command"] == ["echo", "hello"]
    assert task["template"]["spec"]["serviceAccountName"] == "runner"
    with Workflow(generate_name="alone-", entrypoint="hello") as w:
        step = job_template(job, name="hello")
    [manifest] = manifests(w)
    assert manifest["spec"]["tasks"][0]["template"]["spec"]["containers"][0]["image"] == "busybox:1.37.0"
    assert step.inputs is None, "nothing left for the caller to give"
    assert step.active_deadline_seconds == 300


def test_a_volcano_retry_restarts_the_job_on_its_events() -> None:
    job = batch_job(image="x:1", program=Program.command(["a"]), retry=VolcanoRetry(2, restart_on=["PodEvicted"]))
    spec = job.to_dict()["spec"]
    assert spec["maxRetry"] == 2
    assert spec["policies"] == [
        {"event": "PodEvicted", "action": "RestartJob"},
        {"event": "PodFailed", "action": "TerminateJob"},
    ], "the events it does not restart on still end the job"


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"pod": {"cpu": "1"}}, "pod"),
        ({"retry": VolcanoRetry(1), "pod": "x"}, "pod"),
        ({"retry": 3}, "retry"),
        ({"replicas": 0}, "replicas"),
        ({"min_available": 0}, "min_available"),
        ({"deadline": 0}, "deadline"),
        ({"start_limit": -1}, "start_limit"),
        ({"name": "Bad_Name"}, "name"),
        ({"service_account": "Bad SA"}, "service_account"),
        ({"working_dir": "relative"}, "working_dir"),
        ({"program": ["echo", "a"]}, "program"),
    ],
)
def test_settings_are_checked_naming_the_field(kwargs: dict[str, Any], field: str) -> None:
    kwargs.setdefault("program", Program.command(["a"]))
    with pytest.raises(ValidationError) as e:
        batch_job(image="x:1", **kwargs)
    assert e.value.field == field


@pytest.mark.parametrize("text", ["x$$y", "$(VC_TASK_INDEX)", "$(HOME) $z $", "it's {{x}}"])
def test_function_arguments_arrive_exactly_under_job_template_as_in_a_pipeline(text: str) -> None:
    """A batch job's function arguments are its own argument: bound into its manifest (job_template) or passed as a
    Pipeline's parameter, the process gets the same JSON, ``$$`` and ``$(VAR)`` as they are."""
    from hera_volcano.pods.launcher import LaunchSettings
    from tests.builders import podsim
    from tests.builders.userfuncs import echo

    job = batch_job(image="img", program=Program.function(echo, args={"a": text}))
    plugin = {"VC_TASK_INDEX": "0", "HOME": "/root"}

    def launcher_args(manifest: str, given: dict[str, str]) -> object:
        _, env = podsim.process(podsim.container(podsim.parse(manifest, given), "main"), plugin)
        return json.loads(env[LaunchSettings.ARGS])

    alone = launcher_args(str(job_template(job, name="run").manifest), {})
    workflow = Pipeline([PipelineJob("a", job, follow_logs=False)]).workflow("p", cleanup=False).to_dict()
    templates = {t["name"]: t for t in workflow["spec"]["templates"]}
    [task] = [t for t in templates["p"]["dag"]["tasks"] if t["name"] == "a"]
    given = {f"inputs.parameters.{p['name']}": p["value"] for p in task["arguments"]["parameters"]}
    in_pipeline = launcher_args(templates[task["template"]]["resource"]["manifest"], given)
    assert alone == in_pipeline == {"a": text}
