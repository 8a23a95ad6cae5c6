"""Workflows a user writes with the library, from the README and docs (issue 32): a DDP job after a prep step with
its loss passed on, a sweep, a misspelt or forgotten argument, a run longer than any default. Each either is
refused with a ValidationError naming the field, or renders to YAML that lint passes without errors and that holds
no silent default (no ``null`` the user did not write, no time limit that ends a running job)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
import yaml
from hera.workflows import DAG, Container, Parameter, Steps, Workflow

import hera_volcano as hv
from hera_volcano.pods.run import Settings
from hera_volcano.tools.lint import has_errors, lint_text


def train(data_dir: str, lr: float) -> dict[str, float]:
    """The user's training function (module level, so its source can be inlined)."""
    return {"loss": lr / 10, "seen": len(data_dir)}


def ddp_job() -> hv.VolcanoJob:
    """A DDP job whose data folder is known at run time (an input of its template)."""
    return hv.pytorch_job(
        image="python:3.11-slim",
        program=hv.Program.function(train, args={"data_dir": hv.Placeholder.input("data-dir", "/data"), "lr": 0.1}),
        workers=1,
    )


def rendered(w: Workflow) -> tuple[str, dict[str, Any]]:
    text = hv.to_yaml(w)
    return text, yaml.safe_load(text)


def templates(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {t["name"]: t for t in doc["spec"]["templates"]}


def nulls(node: object, path: str = "") -> Iterator[str]:
    """Where a value is null, or the text 'null' (what Hera writes for an explicit None)."""
    if node is None or node == "null":
        yield path
    elif isinstance(node, dict):
        for key, value in node.items():
            yield from nulls(value, f"{path}.{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from nulls(value, f"{path}[{i}]")


def lint_errors(text: str) -> list[str]:
    findings = lint_text(text, "user.yaml")
    return [str(f) for f in findings] if has_errors(findings) else []


def test_a_ddp_job_after_a_prep_step_passes_its_loss_on_with_nothing_silent() -> None:
    with Workflow(generate_name="ddp-", entrypoint="main") as w:
        prep = Container(
            name="prep",
            image="busybox:1.37.0",
            command=["sh", "-c", "echo /data/v2 > /tmp/dir"],
            outputs=[Parameter(name="dir", value_from={"path": "/tmp/dir"})],
        )
        run = hv.job_dag(ddp_job(), name="train", outputs=["loss"])
        report = Container(
            name="report",
            image="busybox:1.37.0",
            command=["echo", "{{inputs.parameters.loss}}"],
            inputs=[Parameter(name="loss")],
        )
        with DAG(name="main"):
            p = prep(name="prep")
            t = run(name="train", arguments={"data-dir": "{{tasks.prep.outputs.parameters.dir}}"})
            r = report(name="report", arguments={"loss": "{{tasks.train.outputs.parameters.loss}}"})
            p >> t >> r
    text, doc = rendered(w)
    assert lint_errors(text) == []
    assert not list(nulls(doc)), f"no null the user did not write: {list(nulls(doc))}"
    dag = templates(doc)["train"]
    assert dag["inputs"]["parameters"] == [{"name": "data-dir"}], "a required input: no default"
    # A training run longer than an hour is not ended by a default: no deadline on the step or its pods.
    assert "activeDeadlineSeconds" not in text
    follower = {e["name"]: e.get("value") for e in templates(doc)["train-logs"]["container"]["env"]}
    assert follower[Settings.FOLLOW_SECONDS] == "0", "the follower lasts as long as the job's step"
    assert int(follower[Settings.START_SECONDS]) >= 3600, "a gang may wait its turn in a queue for hours"


@pytest.mark.parametrize(
    ("arguments", "field", "hint"),
    [
        ({"data_dir": "/x"}, "arguments.data_dir", "did you mean 'data-dir'?"),
        ([Parameter(name="datadir", value="/x")], "arguments.datadir", "did you mean 'data-dir'?"),
        ({"data-dir": "/x", "epochs": "3"}, "arguments.epochs", "its inputs are data-dir"),
        ({}, "arguments", "data-dir"),
        (None, "arguments", "data-dir"),
    ],
)
def test_a_misspelt_or_forgotten_argument_is_refused_naming_the_input(arguments: object, field: str, hint: str) -> None:
    with Workflow(generate_name="typo-", entrypoint="main"):
        run = hv.job_dag(ddp_job(), name="train", outputs=["loss"])
        with DAG(name="main"), pytest.raises(hv.ValidationError) as e:
            run(name="train", arguments=arguments)
    assert e.value.field == field
    assert hint in str(e.value)


def test_the_job_step_alone_refuses_a_misspelt_argument_too() -> None:
    with Workflow(generate_name="typo-", entrypoint="main"):
        step = hv.job_template(ddp_job(), name="train")
        with Steps(name="main"), pytest.raises(hv.ValidationError) as e:
            step(name="train", arguments={"data_dir": "/x"})
    assert e.value.field == "arguments.data_dir" and "data-dir" in str(e.value)


def test_an_input_with_a_default_may_be_left_out() -> None:
    with Workflow(generate_name="defaults-", entrypoint="main") as w:
        run = hv.job_dag(ddp_job(), name="train", outputs=["loss"], defaults={"data-dir": "/data/v1"})
        with DAG(name="main"):
            run(name="train")
    text, doc = rendered(w)
    assert templates(doc)["train"]["inputs"]["parameters"] == [{"name": "data-dir", "default": "/data/v1"}]
    assert lint_errors(text) == []


def test_a_sweep_passes_each_item_to_its_own_task() -> None:
    with Workflow(generate_name="sweep-", entrypoint="main") as w:
        run = hv.job_dag(ddp_job(), name="trial", outputs=["loss"])
        with DAG(name="main"):
            run(name="trial", arguments={"data-dir": "{{item}}"}, with_items=["/data/a", "/data/b", "/data/c"])
    text, doc = rendered(w)
    [task] = templates(doc)["main"]["dag"]["tasks"]
    assert task["arguments"]["parameters"] == [{"name": "data-dir", "value": "{{item}}"}]
    assert len(task["withItems"]) == 3
    assert lint_errors(text) == []


def test_a_value_with_quotes_passes_through_a_call_unchanged() -> None:
    value = 'it\'s "quoted": $(HOME)'
    with Workflow(generate_name="quotes-", entrypoint="main") as w:
        run = hv.job_dag(ddp_job(), name="train", outputs=["loss"])
        with DAG(name="main"):
            run(name="train", arguments={"data-dir": value})
    _, doc = rendered(w)
    [task] = templates(doc)["main"]["dag"]["tasks"]
    assert task["arguments"]["parameters"] == [{"name": "data-dir", "value": value}]


def test_an_explicit_deadline_still_limits_the_step_and_its_pods() -> None:
    with Workflow(generate_name="limited-", entrypoint="main") as w:
        run = hv.job_dag(replace(ddp_job(), deadline=7200, start_limit=None), name="train", outputs=["loss"])
        with DAG(name="main"):
            run(name="train", arguments={"data-dir": "/d"})
    _, doc = rendered(w)
    step = templates(doc)["train-job"]
    assert step["activeDeadlineSeconds"] == 7200
    assert "activeDeadlineSeconds: 7200" in step["resource"]["manifest"]
    follower = {e["name"]: e.get("value") for e in templates(doc)["train-logs"]["container"]["env"]}
    assert follower[Settings.START_SECONDS] == "0"


def test_a_retried_job_step_tells_its_follower_how_many_attempts_to_wait_for() -> None:
    job = hv.pytorch_job(
        image="python:3.11-slim",
        program=hv.Program.function(train, args={"data_dir": "/d", "lr": 0.1}),
        workers=1,
        generate_name="train-",
        retry=hv.ArgoRetry(limit=2),
    )
    with Workflow(generate_name="retried-", entrypoint="main") as w:
        run = hv.job_dag(job, name="train", outputs=["loss"])
        with DAG(name="main"):
            run(name="train")
    text, doc = rendered(w)
    follower = {e["name"]: e.get("value") for e in templates(doc)["train-logs"]["container"]["env"]}
    assert follower[Settings.STEP_RETRIES] == "2"
    assert templates(doc)["train-job"]["retryStrategy"]["limit"] == 2
    assert lint_errors(text) == []


def test_a_pipeline_job_takes_its_start_limit_to_its_follower() -> None:
    job = hv.PipelineJob(
        "train",
        hv.batch_job(image="busybox:1.37.0", program=hv.Program.command(["true"]), start_limit=600),
        follow_logs=True,
    )
    plain = hv.PipelineJob(
        "other", hv.batch_job(image="busybox:1.37.0", program=hv.Program.command(["true"])), follow_logs=True
    )
    _, doc = rendered(hv.Pipeline([job, plain]).workflow("limits"))
    found = {}
    for t in doc["spec"]["templates"]:
        env = {e["name"]: e.get("value") for e in (t.get("container") or {}).get("env", [])}
        if Settings.START_SECONDS in env:
            found[t["name"]] = env[Settings.START_SECONDS]
    assert sorted(found.values()) == ["600", "86400"], found
    assert "activeDeadlineSeconds" not in hv.to_yaml(hv.Pipeline([job]).workflow("limits"))
