"""Wrong types at the public API are ValidationErrors naming the argument, never deep TypeErrors or silently
split strings."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import hera_volcano as hv
from hera_volcano import ValidationError

IMAGE = "busybox:1"
TEMPLATE = {"spec": {"containers": [{"name": "c", "image": IMAGE}]}}


def task(**kwargs: Any) -> hv.VolcanoTask:
    return hv.VolcanoTask(**{"name": "t", "template": TEMPLATE, **kwargs})


CASES: list[tuple[Callable[[], Any], str]] = [
    (lambda: hv.mpi_job(image=IMAGE, program=hv.Program.command("echo hi")), "command"),
    (lambda: hv.mpi_job(image=IMAGE, program=hv.Program.command(["x"]), slots_per_worker=10**9), "slots_per_worker"),
    (
        lambda: hv.mpi_job(image=IMAGE, program=hv.Program.command(["x"]), worker_pod=hv.PodSettings(gpus="2")),
        "gpus",
    ),
    (lambda: hv.mpi_job(image=IMAGE, program=hv.Program.command(["x"]), working_dir="home"), "working_dir"),
    (lambda: hv.mpi_job(image=IMAGE, program=hv.Program.command(["x"]), generate_name=5), "generate_name"),
    (lambda: hv.PipelineJob("a", hv.batch_job(image=IMAGE, program=hv.Program.command("true"))), "command"),
    (lambda: hv.PipelineJob("a", hv.batch_job(image=IMAGE, program=hv.Program.command(["x"])), after="ba"), "after"),
    (
        lambda: hv.PipelineJob(
            "a", hv.batch_job(image=IMAGE, program=hv.Program.command(["x"]), pod=hv.PodSettings(cpu=[1]))
        ),
        "cpu",
    ),
    (
        lambda: hv.PipelineJob("a", hv.batch_job(image=IMAGE, program=hv.Program.command(["x"])), follow_logs="yes"),
        "follow_logs",
    ),
    (lambda: hv.PipelineJob("a", hv.batch_job(image=IMAGE, program=hv.Program.command(["x"]), retry=3)), "retry"),
    (lambda: hv.Plugin("ssh", "--x"), "plugins.ssh"),
    (lambda: hv.Plugin.ssh(port="x"), "port"),
    (lambda: hv.Plugin.mpi(port=-1), "port"),
    (lambda: hv.Plugin.mpi(master="m --x"), "master"),
    (lambda: hv.Plugin.pytorch(worker=""), "worker"),
    (lambda: hv.Plugin.tensorflow(port="x; rm"), "port"),
    (lambda: hv.Plugin.tensorflow(ps="Ps"), "ps"),
    (lambda: hv.Plugin.tensorflow(chief=5), "chief"),
    (lambda: hv.Policy(action="RestartJob", events="PodFailed"), "policy.events"),
    (lambda: hv.VolcanoRetry(max_retry=2, restart_on="PodFailed"), "retry.restart_on"),
    (lambda: task(depends_on="other"), "depends_on"),
    (lambda: task(policies=[{"event": "x"}]), "policies[0]"),
    (lambda: hv.VolcanoJob(tasks=None), "tasks"),
    (lambda: hv.VolcanoJob(tasks=[5]), "tasks[0]"),
    (lambda: hv.VolcanoJob(tasks=[task()], plugins=["ssh"]), "plugins[0]"),
    (lambda: hv.VolcanoJob(tasks=[task()], labels=5), "labels"),
    (lambda: hv.Placeholder.input("a b}}", 1), "placeholder"),
    (lambda: hv.Placeholder.workflow_parameter("a'b", "x"), "placeholder"),
    (lambda: hv.mpi_job(image=IMAGE, program=hv.Program.command(["x"]), mpi_plugin="yes"), "mpi_plugin"),
    (lambda: hv.VolcanoJob(tasks=[task()], scheduler_name=None), "scheduler_name"),
    (lambda: task(replicas=None), "replicas"),
    (lambda: hv.follow_logs_template(None), "job_step"),
    (lambda: hv.job_template(None, name="t"), "job"),
    (lambda: hv.job_template(hv.VolcanoJob(tasks=[task()]), name="t", defaults=[1]), "defaults"),
    (lambda: hv.VolcanoJob(tasks=[task()], retry="x"), "retry"),
    (
        lambda: hv.job_template(hv.VolcanoJob(tasks=[task(template={**TEMPLATE, "metadata": "x"})]), name="t"),
        "spec.tasks[0].template.metadata",
    ),
    (
        lambda: hv.job_template(
            hv.VolcanoJob(tasks=[task(template={**TEMPLATE, "metadata": {"labels": [1]}})]), name="t"
        ),
        "spec.tasks[0].template.metadata",
    ),
    (lambda: hv.Pipeline(None), "jobs"),
    (lambda: hv.Pipeline([5]), "jobs[0]"),
    (
        lambda: hv.Pipeline(
            [hv.PipelineJob("a", hv.batch_job(image=IMAGE, program=hv.Program.command(["x"])))], max_dag_tasks="5"
        ),
        "max_dag_tasks",
    ),
    (
        lambda: hv.Pipeline(
            [hv.PipelineJob("a", hv.batch_job(image=IMAGE, program=hv.Program.command(["x"])))]
        ).workflow("a.b"),
        "name",
    ),
    (
        lambda: hv.Pipeline(
            [hv.PipelineJob("a", hv.batch_job(image=IMAGE, program=hv.Program.command(["x"])))]
        ).workflow("a" * 60),
        "name",
    ),
    (lambda: hv.to_yaml({"a": {"x", "y"}}), "objects"),
]


@pytest.mark.parametrize(("call", "field"), CASES, ids=[f for _, f in CASES])
def test_wrong_arguments_name_the_field(call: Callable[[], Any], field: str) -> None:
    with pytest.raises(ValidationError) as e:
        call()
    assert e.value.field == field


def test_a_job_with_placeholders_renders_them_as_text() -> None:
    job = hv.mpi_job(
        name=hv.Placeholder.workflow_parameter("name", "x"), image=IMAGE, program=hv.Program.command(["x"])
    )
    assert "name: '{{workflow.parameters.name}}'" in hv.to_yaml(job.to_dict())
