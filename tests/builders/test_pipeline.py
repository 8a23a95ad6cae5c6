"""Pipelines of Volcano jobs: shared templates, argument flow, DAG/Steps layout, composition, retries, limits."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
import yaml
from hera.workflows import DAG, Container, Workflow

from hera_volcano import (
    ArgoRetry,
    Pipeline,
    PipelineJob,
    ValidationError,
    VolcanoRetry,
    batch_job,
    job_template,
    mpi_job,
    to_yaml,
)
from hera_volcano.builders.pod import PodSettings
from hera_volcano.builders.program import Program
from hera_volcano.pods.run import Settings
from hera_volcano.shared.placeholders import Placeholder
from tests.builders import podsim
from tests.builders.userfuncs import typed
from tests.conftest import manifests


def jobs(*specs: tuple[str, list[str]], **kwargs: Any) -> Pipeline:
    return Pipeline(
        [
            PipelineJob(
                name, batch_job(image="python:3.12", program=Program.command(["python", "-c", "print(1)"])), after=after
            )
            for name, after in specs
        ],
        **kwargs,
    )


def renamed(name: str) -> PipelineJob:
    """A followed batch job under a task name longer than a job label may be (Argo allows 128), labelled apart."""
    return dataclasses.replace(
        PipelineJob("b", batch_job(image="x:1", program=Program.command(["a"])), follow_logs=True, job_label="b"),
        name=name,
    )


def templates(wf: Any) -> dict[str, dict[str, Any]]:
    return {t["name"]: t for t in wf.to_dict()["spec"]["templates"]}


def job_templates(wf: Any) -> list[dict[str, Any]]:
    """The templates that create Volcano Jobs (not the exit handler's delete step)."""
    return [t for t in templates(wf).values() if t.get("resource", {}).get("action") == "create"]


def manifest_for(wf: Any, task_name: str) -> dict[str, Any]:
    """The job one task creates: its template's manifest with that task's own arguments substituted."""
    data = wf.to_dict()
    body = next(t for t in data["spec"]["templates"] if t["name"] == data["spec"]["entrypoint"])
    calls = body["dag"]["tasks"] if "dag" in body else [s for g in body["steps"] for s in g]
    call = next(c for c in calls if c["name"] == task_name)
    template = next(t for t in data["spec"]["templates"] if t["name"] == call["template"])
    values = {f"inputs.parameters.{p['name']}": p["value"] for p in call["arguments"]["parameters"]}
    return podsim.parse(template["resource"]["manifest"], values)


def test_jobs_that_render_alike_share_one_template() -> None:
    wf = jobs(("a", []), ("b", ["a"]), ("c", ["a"])).workflow("p")
    [template] = job_templates(wf)
    assert template["name"].startswith("volcano-job-")
    for name in "abc":
        labels = manifest_for(wf, name)["spec"]["tasks"][0]["template"]["metadata"]["labels"]
        assert labels["hera-volcano/job"] == name, "each job's pods are labelled with its entry's name"


def test_different_settings_make_different_templates() -> None:
    p = Pipeline(
        [
            PipelineJob("a", batch_job(image="x:1", program=Program.command(["a"]))),
            PipelineJob("b", batch_job(image="x:1", program=Program.command(["b"]), pod=PodSettings(cpu="2"))),
            PipelineJob("c", batch_job(image="y:1", program=Program.command(["c"]), pod=PodSettings(cpu="2"))),
        ]
    )
    resources = sorted(t["name"] for t in job_templates(p.workflow("p")))
    assert len(resources) == 2 and all(r.startswith("volcano-job-") for r in resources)


def test_arguments_flow_into_manifests_with_their_types() -> None:
    p = Pipeline(
        [
            PipelineJob(
                "prep",
                batch_job(image="python:3.12", program=Program.command(["python", "-c", 'print("a: b")']), replicas=1),
            ),
            PipelineJob(
                "train",
                batch_job(image="example.com/t:2", program=Program.command(["train", "--lr", "1e-5"]), replicas=4),
                after=["prep"],
            ),
        ]
    )
    wf = p.workflow("p")
    train = manifest_for(wf, "train")
    assert train["metadata"]["generateName"] == "batch-job-"
    assert train["spec"]["minAvailable"] == 4 and train["spec"]["tasks"][0]["replicas"] == 4
    container = train["spec"]["tasks"][0]["template"]["spec"]["containers"][0]
    assert container["image"] == "example.com/t:2"
    assert container["command"] == ["train", "--lr", "1e-5"]
    prep = manifest_for(wf, "prep")
    assert prep["spec"]["tasks"][0]["template"]["spec"]["containers"][0]["command"][2] == 'print("a: b")'
    assert prep["spec"]["tasks"][0]["template"]["metadata"]["labels"]["hera-volcano/job"] == "prep"


def test_dag_dependencies_and_steps_levels() -> None:
    p = jobs(("a", []), ("b", ["a"]), ("c", ["a"]), ("d", ["b", "c"]), ("e", []))
    dag = templates(p.workflow("p"))["p"]["dag"]["tasks"]
    depends = {"a": None, "b": "a", "c": "a", "d": "b && c", "e": None}
    # Each job's quiet follower, which keeps its start limit, runs beside it.
    assert {t["name"]: t.get("depends") for t in dag} == {**depends, **{f"{k}-start": v for k, v in depends.items()}}
    steps = templates(p.workflow("p", as_steps=True))["p"]["steps"]
    assert [[s["name"] for s in g] for g in steps] == [
        ["a", "a-start", "e", "e-start"],
        ["b", "b-start", "c", "c-start"],
        ["d", "d-start"],
    ]


def test_optional_log_follower_runs_beside_its_job() -> None:
    p = Pipeline(
        [
            PipelineJob("a", batch_job(image="x:1", program=Program.command(["a"]))),
            PipelineJob("b", batch_job(image="x:1", program=Program.command(["b"])), after=["a"], follow_logs=True),
        ]
    )
    tasks = {t["name"]: t for t in templates(p.workflow("p"))["p"]["dag"]["tasks"]}
    assert tasks["b-logs"]["depends"] == tasks["b"]["depends"] == "a"
    assert tasks["b-logs"]["arguments"]["parameters"] == [{"name": "job", "value": "b"}]
    assert "continueOn" not in tasks["b-logs"], "Argo refuses continueOn beside depends"
    steps = templates(p.workflow("p", as_steps=True))["p"]["steps"]
    assert [[s["name"] for s in g] for g in steps] == [["a", "a-start"], ["b", "b-logs"]]


def test_a_job_nobody_follows_still_has_its_start_limit_kept_by_a_quiet_follower() -> None:
    """A PipelineJob without follow_logs had no start limit at all: its gang could wait for ever."""
    quick = batch_job(image="x:1", program=Program.command(["a"]), start_limit=60)
    p = Pipeline(
        [
            PipelineJob("a", quick),
            PipelineJob("b", batch_job(image="x:1", program=Program.command(["b"]), start_limit=None)),
        ]
    )
    found = templates(p.workflow("p"))
    tasks = {t["name"]: t for t in found["p"]["dag"]["tasks"]}
    assert set(tasks) == {"a", "a-start", "b"}, "no limit, nothing to keep"
    env = {e["name"]: e.get("value") for e in found[tasks["a-start"]["template"]]["container"]["env"]}
    assert (env[Settings.START_SECONDS], env[Settings.QUIET]) == ("60", "true")
    assert tasks["a-start"]["arguments"]["parameters"] == [{"name": "job", "value": "a"}]


def test_composes_with_the_users_own_hera_tasks() -> None:
    p = jobs(("train", []), ("evaluate", ["train"]))
    with Workflow(generate_name="mine-", entrypoint="main") as w:
        prep = Container(name="prep", image="alpine:3", command=["echo", "prep"])
        publish = Container(name="publish", image="alpine:3", command=["echo", "done"])
        job = mpi_job(image="volcanosh/example-mpi:0.0.3", program=Program.command(["hello"]), service_account="mpi")
        mpi = job_template(job, name="mpi")
        with DAG(name="main"):
            first = prep(name="prep")
            tasks = p.add_tasks()
            last = publish(name="publish", when="{{tasks.evaluate.status}} == Succeeded")
            first >> tasks["train"]
            tasks["evaluate"] >> [last, mpi(name="mpi")]
    dag = {t["name"]: t for t in templates(w)["main"]["dag"]["tasks"]}
    assert dag["train"]["depends"] == "prep"
    assert dag["publish"]["depends"] == "evaluate" and dag["mpi"]["depends"] == "evaluate"
    assert len(manifests(w)) == 2
    assert yaml.safe_load(to_yaml(w)) == w.to_dict()


def test_argo_retry_goes_on_the_template_and_volcano_retry_into_the_job() -> None:
    argo = Pipeline(
        [PipelineJob("a", batch_job(image="x:1", program=Program.command(["a"]), retry=ArgoRetry(limit=3)))]
    ).workflow("p")
    template = next(t for t in templates(argo).values() if "resource" in t)
    assert template["retryStrategy"]["limit"] == 3
    assert "maxRetry" not in manifests(argo)[0]["spec"]
    volcano = Pipeline(
        [PipelineJob("a", batch_job(image="x:1", program=Program.command(["a"]), retry=VolcanoRetry(max_retry=2)))]
    ).workflow("p")
    template = next(t for t in templates(volcano).values() if "resource" in t)
    assert "retryStrategy" not in template
    job = manifests(volcano)[0]["spec"]
    assert job["maxRetry"] == 2
    assert {"event": "PodEvicted", "action": "RestartJob"} in job["policies"]


@pytest.mark.parametrize(
    ("build", "field"),
    [
        (lambda: ArgoRetry(limit=0), "retry.limit"),
        (lambda: VolcanoRetry(max_retry=0), "retry.max_retry"),
        (lambda: jobs(("a", ["b"]), ("b", ["a"])), "jobs"),
        (lambda: jobs(("a", ["missing"])), "jobs[0].after"),
        (lambda: jobs(("a", ["a"])), "jobs[0].after"),
        (lambda: jobs(("a", []), ("a", [])), "jobs[1].name"),
        (lambda: Pipeline([]), "jobs"),
        (
            lambda: Pipeline([PipelineJob("a.b", batch_job(image="x:1", program=Program.command(["a"])))]),
            "jobs[0].name",
        ),
        (lambda: PipelineJob("a", batch_job(image="x:1", program=Program.command(["a"])), job_label="-x"), "job_label"),
        (lambda: PipelineJob("a", object()), "job"),  # type: ignore[arg-type]
        (lambda: PipelineJob("a", batch_job(image="", program=Program.command(["a"]))), "image"),
        (lambda: PipelineJob("a", batch_job(image="x:1", program=Program.command([]))), "command"),
        (lambda: PipelineJob("a", batch_job(image="x:1", program=Program.command(["a"]), replicas=0)), "replicas"),
        (
            lambda: Pipeline([PipelineJob("a" * 64, batch_job(image="x:1", program=Program.command(["a"])))]),
            "jobs[0].name",  # its pods' label: at most 63 characters
        ),
        (
            lambda: Pipeline([PipelineJob("a", batch_job(image="x:1", name="a" * 60, program=Program.command(["a"])))]),
            "jobs[0] (a): spec.tasks",  # the pods' names would be too long
        ),
        # Argo's int32 fields: a bigger number fails Argo's decoding of the whole workflow.
        (lambda: ArgoRetry(limit=2**31), "retry.limit"),
        (lambda: PipelineJob("a", batch_job(image="x:1", program=Program.command(["a"]), deadline=2**31)), "deadline"),
        (lambda: PipelineJob("a", batch_job(image="x:1\n", program=Program.command(["a"]))), "image"),
        (lambda: jobs(("a", []), ("b", ["a", "a"])), "after"),
        (lambda: Pipeline([renamed("b" * 124)]), "jobs[0].name"),
        (
            lambda: Pipeline(
                [
                    PipelineJob("a", batch_job(image="x:1", program=Program.command(["a"])), follow_logs=True),
                    PipelineJob("a-logs", batch_job(image="x:1", program=Program.command(["a"]))),
                ]
            ),
            "jobs[0].follow_logs",
        ),
    ],
)
def test_bad_pipelines_are_rejected_naming_the_field(build: Any, field: str) -> None:
    with pytest.raises(ValidationError) as e:
        build()
    assert e.value.field.startswith(field), e.value


def test_cycle_message_names_the_cycle() -> None:
    with pytest.raises(ValidationError) as e:
        jobs(("a", ["c"]), ("b", ["a"]), ("c", ["b"]))
    assert "a -> c -> b -> a" in e.value.rule


def test_argo_expressions_cannot_be_injected_through_arguments() -> None:
    with pytest.raises(ValidationError) as e:
        Program.command(["echo", "{{workflow.uid}}"])
    assert e.value.field == "command[1]"
    job = batch_job(image="x:1", program=Program.function(typed, args={"lr": Placeholder.input("lr", 0.1)}))
    with pytest.raises(ValidationError) as e:
        Pipeline([PipelineJob("a", job, {"lr": "{{workflow.uid}}"})])
    assert e.value.field == "jobs[0].arguments.lr"


def test_argo4_dag_task_limit_is_enforced_unless_disabled() -> None:
    many = [(f"j{i}", []) for i in range(201)]
    with pytest.raises(ValidationError) as e:
        jobs(*many).workflow("p")
    assert "200" in e.value.rule
    wf = jobs(*many, max_dag_tasks=None).workflow("p")
    assert len(templates(wf)["p"]["dag"]["tasks"]) == 402, "each job and its quiet follower"
    assert len(templates(jobs(*many).workflow("p", as_steps=True))["p"]["steps"]) == 1


def test_workflow_or_template() -> None:
    p = jobs(("a", []))
    assert p.workflow("p").to_dict()["metadata"] == {"generateName": "p-", "namespace": "argo"}
    assert p.workflow("p", template=True).to_dict()["metadata"] == {"name": "p", "namespace": "argo"}


def test_long_chains_in_any_order_do_not_hit_the_recursion_limit() -> None:
    chain = [(f"j{i}", [f"j{i - 1}"] if i else []) for i in range(3000)]
    p = jobs(*reversed(chain), max_dag_tasks=None)
    assert [g[0].name for g in p.levels[:3]] == ["j0", "j1", "j2"] and len(p.levels) == 3000


def test_a_job_name_up_to_the_follower_limit_is_kept() -> None:
    name = "b" * 123
    wf = Pipeline([renamed(name)]).workflow("p")
    tasks = {t["name"] for t in templates(wf)["p"]["dag"]["tasks"]}
    assert tasks == {name, f"{name}-logs"}


@pytest.mark.parametrize("as_steps", [False, True])
def test_the_pipeline_template_name_cannot_shadow_a_job_template(as_steps: bool) -> None:
    pipeline = Pipeline([PipelineJob("a", batch_job(image="x:1", program=Program.command(["a"])), follow_logs=True)])
    shared = next(iter(pipeline.templates()[0]))
    for taken in (shared, f"{shared}-logs"):
        with pytest.raises(ValidationError) as e:
            pipeline.workflow(taken, as_steps=as_steps)
        assert e.value.field == "name" and "also a template" in e.value.rule
    with Workflow(name="w"), pytest.raises(ValidationError) as bad:
        pipeline.steps("Bad_name") if as_steps else pipeline.dag("Bad_name")
    assert bad.value.field == "name"


def test_a_pipelines_own_steps_get_no_api_token_unless_they_ask() -> None:
    """A user's step runs their code and its dependencies: no token for them; Argo's containers report its outputs
    as the workflow's account."""
    from hera_volcano import PipelineStep

    def step(name: str, **extra: Any) -> Container:
        return Container(name=name, image="busybox", command=["true"], **extra)

    pipeline = Pipeline(
        [
            PipelineStep("plain", step("plain")),
            PipelineStep("caller", step("caller"), api_token=True),
            PipelineStep("own", step("own", automount_service_account_token=True)),
        ]
    )
    templates = {t["name"]: t for t in yaml.safe_load(to_yaml(pipeline.workflow("p")))["spec"]["templates"]}
    assert templates["plain"]["automountServiceAccountToken"] is False
    assert templates["plain"]["executor"] == {"serviceAccountName": "{{workflow.serviceAccountName}}"}
    assert "automountServiceAccountToken" not in templates["caller"] and "executor" not in templates["caller"]
    assert templates["own"]["automountServiceAccountToken"] is True and "executor" not in templates["own"]
    with pytest.raises(ValidationError, match="api_token: must be True or False"):
        PipelineStep("x", step("x"), api_token="yes")  # type: ignore[arg-type]


def _reading_who(**workflow: Any) -> Any:
    from hera_volcano import Placeholder, batch_job

    who = Placeholder.workflow_parameter("who", "x")
    job = batch_job(image="busybox:1.37.0", program=Program.command(["echo", who]))
    return Pipeline([PipelineJob("a", job)]).workflow("p", **workflow)


@pytest.mark.parametrize("template", [False, True])
def test_a_workflow_parameter_the_jobs_read_must_be_declared(template: bool) -> None:
    with pytest.raises(ValidationError, match=r"^arguments: the jobs read \{\{workflow\.parameters\.who\}\}, which"):
        _reading_who(template=template)
    with pytest.raises(ValidationError, match=r"^arguments: the jobs read \{\{workflow\.parameters\.who\}\}"):
        _reading_who(template=template, arguments={"other": "1"})
    spec = _reading_who(template=template, arguments={"who": "me"}).to_dict()["spec"]
    assert spec["arguments"] == {"parameters": [{"name": "who", "value": "me"}]}


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"who": "{{workflow.name}}"}, r"^arguments\.who: holds '\{\{'"),
        ({"who": 1}, r"^arguments\.who: must be a string"),
        ({"bad name": "x"}, r"^arguments: 'bad name' is not an Argo parameter name"),
        (["who"], r"^arguments: must be a mapping"),
    ],
)
def test_workflow_arguments_are_checked(arguments: Any, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        _reading_who(arguments=arguments)
