"""Rendered function jobs, run: every builder's manifest goes through Argo's substitution (with hostile values),
YAML, Volcano's plugin variables and the kubelet's ``$(VAR)`` expansion (``podsim``), then its command runs for
real (torchrun and mpiexec faked), and the function reports exactly the bytes it was given."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import hera_volcano as hv
from hera_volcano.pods.reports import parse_line
from tests.builders import podsim, userfuncs

#: Everything that could break out of a YAML string, a shell word, Kubernetes' expansion or Argo's templating.
TRICKY = (
    'it\'s "quoted" $(HOME) $(X $$ $HOME ${X} `id` {{inputs.parameters.x}} {{=1}} }} \\ back\\slash\n'
    "line two\r\n\ttab ünïcödé 中文 😀 \u2028 <>& \x01 end $("
)
#: A run-time value: Argo substitutes the tags a value holds wherever it is used (so the sources refuse '{{'), and
#: everything else arrives exactly: NEL, DEL, C1 controls, a byte-order mark, braces, '}}'.
RUN_TIME = TRICKY.replace("{{inputs.parameters.x}} {{=1}} ", "{ {x} {=1} ") + " \x85 \x7f \x9b \ufeff {"
#: JSON values known when the workflow is rendered, the same hostile text among them.
BUILD_ARGS: dict[str, Any] = {"text": TRICKY, "number": 0.1, "nested": {"list": [1, None, True, "{{x}}"]}}


@pytest.fixture
def bin_dir(tmp_path: Path) -> Path:
    return podsim.fakes(tmp_path)


def reports(stdout: str) -> list[tuple[str, str]]:
    """The report lines of a log, split as the log follower splits it (at line feeds only)."""
    return [r for r in map(parse_line, stdout.split("\n")) if r is not None]


def only_report(result: Any) -> dict[str, Any]:
    """What ``userfuncs.echo`` reported: its arguments and the variables it looked at."""
    assert result.returncode == 0, result.stderr
    found = dict(reports(result.stdout))
    return {"args": json.loads(found["args"]), "env": json.loads(found["env"])}


def runtime_args() -> dict[str, Any]:
    return {
        "from_input": hv.Placeholder.input("text", "sample"),
        "from_workflow": hv.Placeholder.workflow_parameter("wtext", "sample"),
        "count": hv.Placeholder.input("count", 1),  # not a string sample: parsed as JSON
        "env": ["FROM_INPUT", "FROM_WORKFLOW_JSON", "PLAIN"],
    }


def pod_env() -> hv.PodSettings:
    return hv.PodSettings(
        env={
            "FROM_INPUT": hv.Placeholder.input("text", "sample"),
            "FROM_WORKFLOW_JSON": hv.Placeholder.workflow_parameter("wtext", "sample"),
            "PLAIN": "plain",
        }
    )


VALUES = {
    "inputs.parameters.text": RUN_TIME,
    "inputs.parameters.count": '[1, {"a": "$(b)"}]',
    "workflow.parameters.wtext": RUN_TIME[::-1],
}
EXPECTED_ARGS = {**BUILD_ARGS, "from_input": RUN_TIME, "from_workflow": RUN_TIME[::-1], "count": [1, {"a": "$(b)"}]}
EXPECTED_ENV = {"FROM_INPUT": RUN_TIME, "FROM_WORKFLOW_JSON": RUN_TIME[::-1], "PLAIN": "plain"}


def manifest_of(job: hv.VolcanoJob) -> tuple[str, list[str]]:
    template = hv.job_template(job, name="run")
    inputs = template.inputs if isinstance(template.inputs, list) else []
    return str(template.manifest), [str(getattr(p, "name", "")) for p in inputs]


def test_a_pytorch_function_gets_every_value_byte_for_byte(tmp_path: Path, bin_dir: Path) -> None:
    job = hv.pytorch_job(
        image="img",
        program=hv.Program.function(userfuncs.echo, args={**BUILD_ARGS, **runtime_args()}),
        workers=1,
        nproc_per_node=2,
        pod=pod_env(),
    )
    manifest, inputs = manifest_of(job)
    assert set(inputs) == {"text", "count"}, "the job's template declares the inputs its values come from"
    data = podsim.parse(manifest, VALUES)
    outputs: list[tuple[str, str]] = []
    for task, index in (("master", 0), ("worker", 1)):
        plugin = {"MASTER_ADDR": "job-master-0.job", "MASTER_PORT": "23456", "WORLD_SIZE": "2", "RANK": str(index)}
        argv, env = podsim.process(podsim.container(data, task), plugin)
        result = podsim.run(argv, env, bin_dir, tmp_path)
        assert result.returncode == 0, result.stderr
        outputs += reports(result.stdout)
        if task == "master":
            seen = only_report(result)
    assert seen == {"args": EXPECTED_ARGS, "env": EXPECTED_ENV}
    assert [name for name, _ in outputs] == ["args", "env"], "only global rank 0 (of 4 processes) reports"


def test_an_mpi_function_gets_every_value_on_every_rank_through_mpiexec(tmp_path: Path, bin_dir: Path) -> None:
    job = hv.mpi_job(
        image="img",
        program=hv.Program.function(userfuncs.echo, args={**BUILD_ARGS, **runtime_args()}),
        pod=pod_env(),
        service_account="mpi",
    )
    manifest, inputs = manifest_of(job)
    assert set(inputs) == {"text", "count"}
    data = podsim.parse(manifest, VALUES)
    argv, env = podsim.process(podsim.container(data, "mpimaster"))
    script = argv[2]
    assert argv[:2] == ["/bin/sh", "-c"]
    # The master's own set-up (sshd, DNS) cannot run here: run its last command, mpiexec, as the shell would.
    launch = script[script.index("exec mpiexec") :]
    # The ranks' command is the script's own arguments ("$@"), after $0.
    result = podsim.run(["/bin/sh", "-c", 'HOSTS="w-0:1,w-1:1"\n' + launch, *argv[3:]], env, bin_dir, tmp_path)
    assert only_report(result) == {"args": EXPECTED_ARGS, "env": EXPECTED_ENV}
    assert len(reports(result.stdout)) == 2, "rank 1 ran too and reported nothing"


def test_a_batch_function_in_a_pipeline_gets_its_per_job_arguments(tmp_path: Path, bin_dir: Path) -> None:
    pipeline = hv.Pipeline(
        [
            hv.PipelineJob(
                "one",
                hv.batch_job(image="img", program=hv.Program.function(userfuncs.echo, args=BUILD_ARGS), replicas=2),
            ),
            hv.PipelineJob(
                "two", hv.batch_job(image="img", program=hv.Program.function(userfuncs.echo, args={"text": "second"}))
            ),
        ]
    )
    workflow = pipeline.workflow("funcs").to_dict()
    templates = {t["name"]: t for t in workflow["spec"]["templates"]}
    tasks = {t["name"]: t for t in templates["funcs"]["dag"]["tasks"]}
    assert tasks["one"]["template"] == tasks["two"]["template"], "one function, one template"
    manifest = templates[tasks["one"]["template"]]["resource"]["manifest"]
    for job, expected in (("one", BUILD_ARGS), ("two", {"text": "second"})):
        values = {f"inputs.parameters.{p['name']}": p["value"] for p in tasks[job]["arguments"]["parameters"]}
        data = podsim.parse(manifest, values)
        assert data["spec"]["plugins"] == {"env": []}, "VC_TASK_INDEX tells replica 0, which reports"
        for index in range(data["spec"]["tasks"][0]["replicas"]):
            argv, env = podsim.process(podsim.container(data, "main"), {"VC_TASK_INDEX": str(index)})
            result = podsim.run(argv, env, bin_dir, tmp_path)
            if index == 0:
                assert only_report(result)["args"] == expected
            else:
                assert result.returncode == 0 and reports(result.stdout) == []


def test_source_with_braces_and_dollars_runs_unchanged(tmp_path: Path, bin_dir: Path) -> None:
    manifest, _ = manifest_of(
        hv.pytorch_job(image="img", program=hv.Program.function(userfuncs.braces_and_dollars), workers=1)
    )
    assert "{{inputs.parameters.x" not in manifest, "Argo finds no expression in the source"
    argv, env = podsim.process(podsim.container(podsim.parse(manifest, {}), "master"), {"WORLD_SIZE": "2", "RANK": "0"})
    env.update(MASTER_ADDR="localhost", MASTER_PORT="1")
    result = podsim.run(argv, env, bin_dir, tmp_path)
    assert result.returncode == 0, result.stderr
    [(name, text)] = reports(result.stdout)
    assert (name, json.loads(text)) == ("text", userfuncs.braces_and_dollars()["text"])


def test_a_failing_function_fails_the_rank_with_its_traceback(tmp_path: Path, bin_dir: Path) -> None:
    job = hv.PipelineJob(
        "boom",
        hv.batch_job(
            image="img", program=hv.Program.function(userfuncs.fails, args={"message": "no data in /workspace"})
        ),
    )
    workflow = hv.Pipeline([job]).workflow("boom", cleanup=False).to_dict()
    [template] = [t for t in workflow["spec"]["templates"] if "resource" in t]
    [task] = [t for t in workflow["spec"]["templates"][0]["dag"]["tasks"] if t["name"] == "boom"]
    values = {f"inputs.parameters.{p['name']}": p["value"] for p in task["arguments"]["parameters"]}
    data = podsim.parse(template["resource"]["manifest"], values)
    argv, env = podsim.process(podsim.container(data, "main"), {"VC_TASK_INDEX": "0"})
    result = podsim.run(argv, env, bin_dir, tmp_path)
    assert result.returncode == 1
    assert reports(result.stdout) == []
    lines = result.stderr.splitlines()
    assert lines[0] == "Traceback (most recent call last):"
    assert 'File "userfuncs.py", line' in result.stderr and "raise RuntimeError(message)" in result.stderr
    assert "RuntimeError: no data in /workspace" in lines
    assert lines[-1] == "hera-volcano: fails raised RuntimeError"
