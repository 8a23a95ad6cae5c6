"""Lint warns of a shell script that would read a run-time value as code (issue 42): ``$(NAME)`` of a variable given
one, in a Volcano Job's container (a resource step's manifest, or a job file) or an Argo container template, and an
Argo parameter tag inside an Argo template's shell script; with the safe form in the message."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml

import hera_volcano as hv
from hera_volcano.tools.lint import lint_document
from tests.tools.test_lint import JOB, M, workflow

UNSAFE = ["sh", "-c", "python3 train.py --lr $(LR)"]
SAFE = [
    ["sh", "-c", 'python3 train.py --lr "$LR"'],
    ["sh", "-c", 'python3 train.py --lr "$1"', "sh", "$(LR)"],
    ["python3", "train.py", "--lr", "$(LR)"],
    ["sh", "-c", "echo $$(LR)"],
]


def shell_warnings(doc: Any) -> dict[str, str]:
    return {f.path: f.message for f in lint_document(doc) if f.severity == "warning" and "shell" in f.message}


def job_with(command: list[str], env_value: str) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(JOB)
    container = data["spec"]["tasks"][0]["template"]["spec"]["containers"][0]
    container["command"] = command
    container["env"] = [{"name": "LR", "value": env_value}]
    return data


def in_workflow(job: dict[str, Any]) -> dict[str, Any]:
    doc = workflow()
    doc["spec"]["templates"][1]["resource"]["manifest"] = yaml.safe_dump(job, sort_keys=False)
    doc["spec"]["templates"][1]["inputs"] = {"parameters": [{"name": "lr"}]}
    return doc


def test_a_manifest_s_shell_script_naming_a_parameter_fed_variable_is_warned() -> None:
    found = shell_warnings(in_workflow(job_with(UNSAFE, "{{inputs.parameters.lr}}")))
    path = f"{M}spec.tasks[0].template.spec.containers[0].command[2]"
    assert list(found) == [path]
    assert "$(LR)" in found[path] and '"$1"' in found[path] and '"$LR"' in found[path]


@pytest.mark.parametrize("command", SAFE)
def test_the_safe_forms_and_constant_variables_are_not_warned(command: list[str]) -> None:
    assert shell_warnings(in_workflow(job_with(command, "{{inputs.parameters.lr}}"))) == {}
    assert shell_warnings(in_workflow(job_with(UNSAFE, "0.1"))) == {}


def test_a_job_file_is_checked_too() -> None:
    found = shell_warnings(job_with(["/bin/bash", "-ec", "run $(LR)"], "{{workflow.parameters.lr}}"))
    assert list(found) == ["spec.tasks[0].template.spec.containers[0].command[2]"]


def test_an_argo_container_template_s_script_is_checked() -> None:
    doc = workflow()
    echo = doc["spec"]["templates"][2]
    echo["inputs"] = {"parameters": [{"name": "msg"}]}
    echo["container"]["command"] = ["sh", "-c"]
    echo["container"]["args"] = ["echo {{inputs.parameters.msg}}"]
    found = shell_warnings(doc)
    assert list(found) == ["spec.templates[2].container.args[0]"], found
    safe = copy.deepcopy(doc)
    safe["spec"]["templates"][2]["container"]["args"] = ['echo "$MSG"']
    safe["spec"]["templates"][2]["container"]["env"] = [{"name": "MSG", "value": "{{inputs.parameters.msg}}"}]
    assert shell_warnings(safe) == {}
    fed = copy.deepcopy(safe)
    fed["spec"]["templates"][2]["container"]["args"] = ["echo $(MSG)"]
    assert list(shell_warnings(fed)) == ["spec.templates[2].container.args[0]"]


def test_a_job_built_with_the_safe_form_lints_clean() -> None:
    from hera.workflows import DAG, Workflow

    lr = hv.Placeholder.input("lr", "0.1")
    job = hv.batch_job(
        image="busybox:1.36",
        program=hv.Program.command(["sh", "-c", 'echo "$1" "$LR"', "sh", lr]),
        pod=hv.PodSettings(env={"LR": lr}),
    )
    with Workflow(generate_name="w-", entrypoint="main") as w:
        run = hv.job_template(job, name="run")
        with DAG(name="main"):
            run(name="run", arguments={"lr": "0.1"})
    assert shell_warnings(w.to_dict()) == {}
