"""job_template and follow_logs_template: what the resource step and the log follower promise."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml
from hera.workflows import DAG, Workflow

from hera_volcano import (
    ArgoRetry,
    Pipeline,
    Placeholder,
    ValidationError,
    VolcanoJob,
    VolcanoTask,
    follow_logs_template,
    job_dag,
    job_template,
    mpi_job,
)
from hera_volcano.argo.calls import JobStep
from hera_volcano.argo.selectors import parse_selector
from hera_volcano.builders.pipeline_entries import PipelineJob
from hera_volcano.builders.program import Program
from hera_volcano.kube.images import PYTHON_IMAGE
from hera_volcano.pods import program
from hera_volcano.pods.run import Settings
from hera_volcano.shared.placeholders import substitute_text
from tests.builders import podsim


def step(label: str, **kwargs: Any) -> JobStep:
    """A job step labelled ``label`` (the job's settings from ``kwargs``), to build a follower from."""
    return job_template(simple_job(**kwargs), name=label)


def simple_job(**kwargs: Any) -> VolcanoJob:
    kwargs.setdefault("generate_name", "simple-")
    return VolcanoJob(
        tasks=[
            VolcanoTask(
                name="main",
                replicas=kwargs.pop("replicas", 2),
                template={"spec": {"containers": [{"name": "main", "image": "busybox:1"}], "restartPolicy": "Never"}},
            )
        ],
        **kwargs,
    )


def resource(template: Any) -> dict[str, Any]:
    data: dict[str, Any] = template._build_template().model_dump(by_alias=True, exclude_none=True)
    return data


def test_resource_step_creates_an_owned_job_with_conditions_and_no_time_limit_by_default() -> None:
    r = resource(job_template(simple_job(), name="run"))
    assert r["resource"]["action"] == "create"
    assert r["resource"]["setOwnerReference"] is True
    assert r["resource"]["successCondition"] == "status.state.phase == Completed"
    assert r["resource"]["failureCondition"] == "status.state.phase in (Failed, Terminated, Aborted)"
    # A training run must not be ended for running long: neither the step nor the job's pods get a deadline.
    assert "activeDeadlineSeconds" not in r
    assert "activeDeadlineSeconds" not in r["resource"]["manifest"]
    for condition in (r["resource"]["successCondition"], r["resource"]["failureCondition"]):
        parse_selector(condition)


def test_manifest_is_one_block_yaml_object_with_our_workflow_label_on_every_pod() -> None:
    r = resource(job_template(simple_job(), name="run"))
    manifest = r["resource"]["manifest"]
    assert isinstance(manifest, str)
    docs = list(yaml.safe_load_all(substitute_text(manifest, {})))
    assert len(docs) == 1
    job = docs[0]
    assert job["apiVersion"] == "batch.volcano.sh/v1alpha1" and job["kind"] == "Job"
    assert "ownerReferences" not in job["metadata"], "Argo adds the one controller owner reference itself"
    assert job["metadata"]["labels"] == {"workflows.argoproj.io/workflow": "sample-workflow", "hera-volcano/job": "run"}
    labels = job["spec"]["tasks"][0]["template"]["metadata"]["labels"]
    # Not Argo's own label: `argo logs WF` would ask the job's pods for a container named main.
    assert labels == {"hera-volcano/workflow": "sample-workflow", "hera-volcano/job": "run"}
    # The step's own pod carries the same two, so the log follower sees it too.
    assert r["metadata"]["labels"] == {"hera-volcano/workflow": "{{workflow.name}}", "hera-volcano/job": "run"}
    assert r["outputs"]["parameters"] == [
        {"name": "job-name", "valueFrom": {"jsonPath": "{.metadata.name}"}},
        {"name": "job-phase", "valueFrom": {"jsonPath": "{.status.state.phase}"}},
    ]
    assert "podSpecPatch" not in r


def test_the_step_s_poll_interval_reaches_argoexec_through_its_main_container() -> None:
    r = resource(job_template(simple_job(), name="run", poll_seconds=2))
    assert json.loads(r["podSpecPatch"]) == {
        "containers": [{"name": "main", "env": [{"name": "RESOURCE_STATE_CHECK_INTERVAL", "value": "2s"}]}]
    }
    with pytest.raises(ValidationError) as e:
        job_template(simple_job(), name="run", poll_seconds=0)
    assert e.value.field == "poll_seconds"


def test_a_step_whose_outputs_nothing_reads_can_leave_them_out() -> None:
    """argoexec reads each output with a kubectl call of its own (API discovery each): job_outputs=False saves them."""
    r = resource(job_template(simple_job(), name="run", job_outputs=False))
    assert "outputs" not in r and r["resource"] == resource(job_template(simple_job(), name="run"))["resource"]
    with pytest.raises(ValidationError) as e:
        job_template(simple_job(), name="run", job_outputs="no")  # type: ignore[arg-type]
    assert e.value.field == "job_outputs"


def test_integer_placeholders_stay_integers_after_substitution() -> None:
    job = simple_job(replicas=Placeholder.input("replicas", 2), min_available=Placeholder.input("replicas", 2))
    r = resource(job_template(job, name="run"))
    assert [p["name"] for p in r["inputs"]["parameters"]] == ["replicas"]
    parsed = podsim.parse(r["resource"]["manifest"], {"inputs.parameters.replicas": "4"})
    assert parsed["spec"]["minAvailable"] == 4 and parsed["spec"]["tasks"][0]["replicas"] == 4


def test_placeholder_samples_are_checked_against_volcano_rules() -> None:
    job = simple_job(replicas=Placeholder.input("replicas", 1), min_available=Placeholder.input("min", 5))
    with pytest.raises(ValidationError) as e:
        job_template(job, name="run")
    assert "minAvailable" in e.value.field or "minAvailable" in e.value.rule


def test_the_jobs_deadline_is_its_steps_and_is_validated() -> None:
    assert resource(job_template(simple_job(deadline=60), name="run"))["activeDeadlineSeconds"] == 60
    assert "activeDeadlineSeconds" not in resource(job_template(simple_job(deadline=None), name="run"))
    assert resource(job_template(simple_job(deadline=2**31 - 1), name="run"))["activeDeadlineSeconds"] == 2**31 - 1
    for bad in (0, -5, True, "300", 2**31):  # Argo's field is an int32
        with pytest.raises(ValidationError) as e:
            simple_job(deadline=bad)
        assert e.value.field == "deadline"


def test_argo_retry_of_a_fixed_name_is_rejected_and_generated_names_are_allowed() -> None:
    fixed = simple_job(generate_name=None, name="fixed", retry=ArgoRetry(limit=2))
    with pytest.raises(ValidationError) as e:
        job_template(fixed, name="run")
    assert e.value.field == "retry"
    r = resource(job_template(simple_job(retry=ArgoRetry(limit=2, policy="OnFailure")), name="run"))
    assert r["retryStrategy"] == {"limit": 2, "retryPolicy": "OnFailure"}


def test_owned_job_may_not_name_another_namespace() -> None:
    with pytest.raises(ValidationError) as e:
        job_template(simple_job(namespace="other"), name="run")
    assert e.value.field == "namespace"
    r = resource(job_template(simple_job(namespace="other"), name="run", owned=False))
    assert "setOwnerReference" not in r["resource"]


@pytest.mark.parametrize("name", ["", "bad_name", "-x", "x" * 129, "{{x}}"])
def test_template_names_follow_argo_rules(name: str) -> None:
    with pytest.raises(ValidationError) as e:
        job_template(simple_job(), name=name)
    assert e.value.field == "name"


def test_follower_finds_the_job_and_its_pods_by_labels_and_bounds_itself() -> None:
    f = resource(follow_logs_template(step("mpi-hello"), timeout=600))
    env = {e["name"]: e.get("value") for e in f["container"]["env"]}
    assert env[Settings.JOB_SELECTOR] == "workflows.argoproj.io/workflow={{workflow.name}},hera-volcano/job=mpi-hello"
    assert env[Settings.POD_SELECTOR] == "hera-volcano/workflow={{workflow.name}},hera-volcano/job=mpi-hello"
    for key in (Settings.JOB_SELECTOR, Settings.POD_SELECTOR):
        parse_selector(substitute_text(env[key], {}))
    assert env[Settings.TASK] == "" and env[Settings.CONTAINER] == "", "the job's lead-task annotation decides"
    assert env[Settings.FOLLOW_SECONDS] == "600" and Settings.OUTPUTS not in env
    metrics = {"name": "job-metrics", "valueFrom": {"default": "{}", "path": "/tmp/hera-volcano/outputs/job-metrics"}}
    assert f["outputs"] == {"parameters": [metrics]}, "only the last metrics, {} when rank 0 reported none"
    assert env[Settings.START_SECONDS] == "86400", "a day to start by default"
    [node] = [e for e in f["container"]["env"] if e["name"] == Settings.NODE_NAME]
    # Its own Argo node, from its pod: the step beside it is the one whose job it follows (loops, retries).
    assert node["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.annotations['workflows.argoproj.io/node-name']"
    assert "activeDeadlineSeconds" not in f, "a deadline would fail the step; the script bounds itself"
    assert f["container"]["command"] == ["python3", "-c"] and f["container"]["image"] == PYTHON_IMAGE
    script = f["container"]["args"][0]
    assert script == program.bootstrap(), "a few lines that start the program of hera_volcano/pods"
    assert "{{" not in script and "$" not in script, "constant text: values come from the environment"
    # The program itself comes from the namespace's ConfigMap (rendered with the RBAC), mounted optional: a missing
    # one fails the follower with a message rather than holding its pod in ContainerCreating.
    name = program.config_map_name()
    assert f["volumes"] == [{"name": name, "configMap": {"name": name, "optional": True}}]
    assert f["container"]["volumeMounts"] == [{"name": name, "mountPath": program.MOUNT_DIR}]


def test_follower_built_from_the_job_step_keeps_the_jobs_start_limit_and_the_steps_retries() -> None:
    """Hand-wired, the follower once took its own start_limit (a day) and step_retries (0): a job's
    start_limit=600 and ArgoRetry(2) were dropped without a word."""
    run = step("train", start_limit=600, retry=ArgoRetry(2))
    for follower in (follow_logs_template(run),):
        env = {e["name"]: e.get("value") for e in resource(follower)["container"]["env"]}
        assert (env[Settings.START_SECONDS], env[Settings.STEP_RETRIES]) == ("600", "2")
        assert env[Settings.JOB_SELECTOR].endswith("hera-volcano/job=train")
        assert follower.name == "train-logs"
    none = step("train", start_limit=None)
    assert {e.name: e.value for e in follow_logs_template(none).env if hasattr(e, "value")}[
        Settings.START_SECONDS
    ] == "0"


@pytest.mark.parametrize("given", [None, "train", simple_job()])
def test_follower_is_built_only_from_a_job_step(given: Any) -> None:
    with pytest.raises(ValidationError) as e:
        follow_logs_template(given)
    assert e.value.field == "job_step" and "job_template" in e.value.rule


def test_follower_collects_the_values_rank_0_reports_as_its_outputs() -> None:
    f = resource(follow_logs_template(step("train"), task="master", outputs=["loss", "model"]))
    env = {e["name"]: e.get("value") for e in f["container"]["env"]}
    assert env[Settings.OUTPUTS] == "loss model" and env[Settings.TASK] == "master"
    assert f["outputs"]["parameters"] == [
        {"name": name, "valueFrom": {"path": f"{env[Settings.OUTPUT_DIR]}/{name}", "default": ""}}
        for name in ("loss", "model")
    ] + [{"name": "job-metrics", "valueFrom": {"path": f"{env[Settings.OUTPUT_DIR]}/job-metrics", "default": "{}"}}]
    quiet = resource(follow_logs_template(step("train"), quiet=True))
    assert "outputs" not in quiet, "a quiet follower reads no metrics"


@pytest.mark.parametrize(
    ("outputs", "rule"),
    [("loss", "list of strings"), (["job-name"], "report name"), (["bad name"], "report name"), (["a", "a"], "twice")],
)
def test_follower_refuses_outputs_that_cannot_be_reported(outputs: Any, rule: str) -> None:
    with pytest.raises(ValidationError) as e:
        follow_logs_template(step("train"), outputs=outputs)
    assert e.value.field.startswith("outputs") and rule in e.value.rule


def test_follower_and_job_run_in_parallel_and_the_follower_cannot_fail_the_workflow() -> None:
    from hera_volcano.argo.follow_logs import follower_continue_on

    job = mpi_job(
        image="volcanosh/example-mpi:0.0.3", program=Program.command(["mpi_hello_world"]), service_account="mpi"
    )
    with Workflow(generate_name="w-", entrypoint="main") as w:
        submit = job_template(job, name="submit", job_label="mpi")
        follow = follow_logs_template(submit)
        with DAG(name="main"):
            submit(name="submit")
            follow(name="follow", continue_on=follower_continue_on())
    tasks = next(t for t in w.to_dict()["spec"]["templates"] if t["name"] == "main")["dag"]["tasks"]
    assert all("depends" not in t and "dependencies" not in t for t in tasks)
    assert next(t for t in tasks if t["name"] == "follow")["continueOn"] == {"failed": True, "error": True}


def test_follower_in_a_pipeline_takes_its_job_label_as_an_input() -> None:
    run = job_template(simple_job(), name="run", job_label=Placeholder.input("job", "x"))
    f = resource(follow_logs_template(run, task="main"))
    assert [p["name"] for p in f["inputs"]["parameters"]] == ["job"]


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"task": "Bad"}, "task"),
        ({"follower_image": "a b"}, "follower_image"),
        ({"timeout": 0}, "timeout"),
        ({"grace": -1}, "grace"),
        ({"name": "Bad_name"}, "name"),
    ],
)
def test_follower_rejects_bad_input(kwargs: dict[str, Any], field: str) -> None:
    with pytest.raises(ValidationError) as e:
        follow_logs_template(step("j"), **kwargs)
    assert e.value.field == field


def test_pod_templates_accept_hera_and_kubernetes_models() -> None:
    from hera.workflows.models import Container as ModelContainer
    from kubernetes.client import V1Container, V1PodSpec, V1PodTemplateSpec

    hera_t = {"spec": {"containers": [ModelContainer(name="main", image="busybox:1")]}}
    k8s_t = V1PodTemplateSpec(spec=V1PodSpec(containers=[V1Container(name="main", image="busybox:1")]))
    for template in (hera_t, k8s_t):
        job = VolcanoJob(generate_name="m-", tasks=[VolcanoTask(name="main", template=template)])
        assert job.to_dict()["spec"]["tasks"][0]["template"]["spec"]["containers"] == [
            {"name": "main", "image": "busybox:1"}
        ]
    with pytest.raises(ValidationError):
        VolcanoJob(generate_name="m-", tasks=[VolcanoTask(name="main", template="not a template")]).to_dict()


@pytest.mark.parametrize("ttl", [0, 59])
def test_a_waited_on_job_is_not_deleted_before_the_step_sees_it_finish(ttl: int) -> None:
    with pytest.raises(ValidationError) as e:
        job_template(simple_job(ttl_seconds_after_finished=ttl), name="run")
    assert e.value.field == "ttl_seconds_after_finished" and "NotFound" in str(e.value)


@pytest.mark.parametrize("ttl", [None, 60, 86400])
def test_a_ttl_long_enough_for_the_step_is_kept(ttl: int | None) -> None:
    manifest = resource(job_template(simple_job(ttl_seconds_after_finished=ttl), name="run"))["resource"]["manifest"]
    assert yaml.safe_load(manifest)["spec"].get("ttlSecondsAfterFinished") == ttl


@pytest.mark.parametrize("image", ["busybox:1\n", " busybox:1", "busybox:1 "])
def test_images_with_surrounding_whitespace_are_refused(image: str) -> None:
    with pytest.raises(ValidationError) as e:
        follow_logs_template(step("x"), follower_image=image)
    assert e.value.field == "follower_image"
    job = simple_job()
    job.tasks[0].template["spec"]["containers"][0]["image"] = image
    with pytest.raises(ValidationError) as bad:
        job_template(job, name="run")
    assert bad.value.field.endswith("containers[0].image") and "whitespace" in bad.value.rule


def _by_name(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {t["name"]: t for t in data["spec"]["templates"]}


@pytest.mark.parametrize("build", ["mpi_hello", "pipeline"])
def test_a_workflow_that_does_not_succeed_deletes_exactly_its_own_volcano_jobs(build: str) -> None:
    from hera_volcano.examples import mpi_hello
    from hera_volcano.examples.hello_jobs import STEPS

    data = (mpi_hello.build() if build == "mpi_hello" else STEPS.build()).to_dict()
    templates = _by_name(data)
    [[step]] = templates[data["spec"]["onExit"]]["steps"]
    assert step["when"] == "{{workflow.status}} != Succeeded", "jobs of a workflow that Succeeded are kept"
    delete = templates[step["template"]]["resource"]
    assert delete["action"] == "delete" and "manifest" not in delete
    flags = delete["flags"]
    assert flags[0] == "jobs.batch.volcano.sh" and "--wait=false" in flags
    key, _, value = flags[flags.index("--selector") + 1].partition("=")
    for name in ("wf-1", "wf-2"):
        for t in templates.values():
            if t.get("resource", {}).get("action") == "create":
                job = yaml.safe_load(substitute_text(t["resource"]["manifest"], {"workflow.name": name}))
                selected = substitute_text(value, {"workflow.name": "wf-1"}) == job["metadata"]["labels"][key]
                assert selected == (name == "wf-1"), "the handler deletes this workflow's jobs, no other's"


def test_a_pipeline_may_keep_its_jobs_and_may_not_clash_with_the_handler() -> None:
    from hera_volcano import batch_job

    keep = (
        Pipeline([PipelineJob("a", batch_job(image="x:1", program=Program.command(["a"])))])
        .workflow("p", cleanup=False)
        .to_dict()
    )
    assert "onExit" not in keep["spec"]
    assert all(t.get("resource", {}).get("action") != "delete" for t in keep["spec"]["templates"])
    with pytest.raises(ValidationError) as e:
        Pipeline([PipelineJob("a", batch_job(image="x:1", program=Program.command(["a"])))]).workflow(
            "cleanup-volcano-jobs"
        )
    assert e.value.field == "name"


def test_inputs_read_inside_expressions_are_declared_in_order_of_first_use() -> None:
    env = [
        {
            "name": "A",
            "value": Placeholder("=toJson(replace(inputs.parameters['max-lr'], '$', '$$'))", "x", quoted=False),
        },
        {"name": "B", "value": Placeholder("=inputs.parameters.steps + 1", "2", quoted=False)},
        {"name": "C", "value": Placeholder.input("steps", "1")},
        {"name": "D", "value": Placeholder("=toJson(workflow.parameters['w'])", "x", quoted=False)},
    ]
    job = VolcanoJob(
        generate_name="e-",
        tasks=[VolcanoTask(name="main", template={"spec": {"containers": [{"name": "m", "image": "i", "env": env}]}})],
    )
    template = job_template(job, name="expressions", defaults={"max-lr": "0.1"})
    assert [(p.name, p.default) for p in template.inputs] == [("max-lr", "0.1"), ("steps", None)]


def test_a_job_whose_mpi_master_has_no_account_is_refused_where_it_becomes_a_step() -> None:
    """The master's wait lists pods; a Volcano pod without an account runs as the namespace's default, Forbidden."""
    bare = mpi_job(image="x:1", program=Program.command(["a"]))
    with pytest.raises(ValidationError, match=r"spec\.tasks\[0\]\.template\.spec\.serviceAccountName: is not set"):
        job_template(bare, name="mpi")
    with pytest.raises(ValidationError, match="serviceAccountName"):
        job_dag(bare, name="mpi", outputs=["x"])
    job_template(mpi_job(image="x:1", program=Program.command(["a"]), service_account="mpi"), name="mpi")
