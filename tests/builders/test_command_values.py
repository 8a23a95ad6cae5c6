"""Run-time values in a command's argv (issue 42): ``Program.command`` takes a placeholder as a whole element or a
tag inside one, and through a rendered job (Argo's two passes, argoexec's and the pod's ``$(VAR)`` expansion:
``podsim``) the process's argv holds the value byte for byte; a shell script that would read a run-time value as
code is refused, with the safe form."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hera_volcano as hv
from hera_volcano.shared.placeholders import refusal
from tests.argo.test_values import CARRIED
from tests.builders import podsim

#: The issue's value, and what breaks a shell word, a YAML string, Kubernetes' expansion or Argo's templating. Values
#: holding '{{' are refused where they enter (docs/security.md): '{ {x} }' is what Argo can carry.
HOSTILE = [
    "it's $(touch /tmp/x) { {x} } ; rm -rf /",
    *CARRIED,
    "$(X) $$ $$(X) $",
    "trailing $",
    "ends in $(",
    '"; echo injected',
]
LR = hv.Placeholder.input("lr", "0.1")
WHO = hv.Placeholder.workflow_parameter("who", "x")


def argv_of(job: hv.VolcanoJob, task: str, values: dict[str, str], plugin: dict[str, str] | None = None) -> list[str]:
    """The argv the first container of ``task`` runs, the job's template substituted with ``values``."""
    manifest = str(hv.job_template(job, name="run").manifest)
    argv, _ = podsim.process(podsim.container(podsim.parse(manifest, values), task), plugin or {})
    return argv


def command(*argv: str | hv.Placeholder) -> hv.Program:
    return hv.Program.command(list(argv))


@pytest.mark.parametrize("text", HOSTILE)
def test_a_placeholder_in_a_pytorch_command_arrives_byte_for_byte(text: str) -> None:
    program = command("python3", "train.py", "--lr", LR, f"--who={WHO}!", "$(RANK)")
    job = hv.pytorch_job(image="img", program=program, workers=1)
    argv = argv_of(job, "master", {"inputs.parameters.lr": text, "workflow.parameters.who": text}, {"RANK": "0"})
    assert argv == ["python3", "train.py", "--lr", text, f"--who={text}!", "0"], "the literal $(RANK) stays Kubernetes'"


@pytest.mark.parametrize("text", HOSTILE)
def test_a_placeholder_in_a_tensorflow_command_arrives_byte_for_byte(text: str) -> None:
    job = hv.tensorflow_job(image="img", program=command("python3", "train.py", LR), workers=1)
    assert argv_of(job, "worker", {"inputs.parameters.lr": text}) == ["python3", "train.py", text]


@pytest.mark.parametrize("text", HOSTILE)
def test_a_placeholder_in_a_batch_command_arrives_byte_for_byte(text: str) -> None:
    job = hv.batch_job(image="img", program=command("echo", LR, f"[{LR}]"))
    assert argv_of(job, "main", {"inputs.parameters.lr": text}) == ["echo", text, f"[{text}]"]


@pytest.mark.parametrize("text", ["(RANK)", "$(RANK)", "$$(RANK)", "(HOME)", "x", ""])
def test_a_literal_ending_in_a_dollar_joined_to_a_value_reads_no_variable(text: str) -> None:
    """The literal's last ``$`` is a ``$`` at the pod: it does not join the value's ``(RANK)`` or ``$`` into a
    variable the kubelet expands; what the literal means on its own (``$$`` is ``$``, ``$(RANK)`` expands) stays."""
    program = command("echo", f"price${LR}", f"a$$b${LR}", f"$(RANK)$({LR}", f"{LR}$")
    argv = argv_of(hv.batch_job(image="img", program=program), "main", {"inputs.parameters.lr": text}, {"RANK": "0"})
    assert argv == ["echo", f"price${text}", f"a$b${text}", f"0$({text}", f"{text}$"]


def test_batch_commands_with_values_share_a_template_in_a_pipeline_and_take_step_outputs() -> None:
    jobs = [
        hv.PipelineJob(
            name, hv.batch_job(image="img", program=command("echo", LR)), arguments={"lr": value}, follow_logs=False
        )
        for name, value in (("a", "it's $(x)"), ("b", hv.StepOutput("a", "job-name")))
    ]
    workflow = hv.Pipeline(jobs).workflow("p", cleanup=False).to_dict()
    templates = {t["name"]: t for t in workflow["spec"]["templates"]}
    tasks = {t["name"]: t for t in templates["p"]["dag"]["tasks"]}
    assert tasks["a"]["template"] == tasks["b"]["template"], "one template for the jobs"
    given_b = {p["name"]: p["value"] for p in tasks["b"]["arguments"]["parameters"]}
    assert given_b["lr"] == "{{tasks.a.outputs.parameters.job-name}}", "a step's output feeds the command"
    manifest = templates[tasks["a"]["template"]]["resource"]["manifest"]
    given = {f"inputs.parameters.{p['name']}": p["value"] for p in tasks["a"]["arguments"]["parameters"]}
    argv, _ = podsim.process(podsim.container(podsim.parse(manifest, given), "main"))
    assert argv == ["echo", "it's $(x)"]


def test_a_plain_batch_command_is_still_the_job_s_argument() -> None:
    job = hv.batch_job(image="img", program=command("echo", "hi"))
    assert job.arguments["command"] == ["echo", "hi"]
    assert "command" not in hv.batch_job(image="img", program=command("echo", LR)).arguments


@pytest.mark.parametrize("text", HOSTILE)
def test_a_placeholder_in_an_mpi_command_reaches_mpiexec_exactly(text: str, tmp_path: Path) -> None:
    job = hv.mpi_job(image="img", program=command("prog", LR), service_account="mpi")
    argv = argv_of(job, "mpimaster", {"inputs.parameters.lr": text})
    script = argv[2].rstrip("\n").splitlines()[-1]
    # mpiexec stands in as a program printing its arguments, one NUL-terminated each: the script passes "$@" on.
    printer = script.replace(script[: script.index('"$@"')], "printf '%s\\0' ")
    shown = podsim.run(["/bin/sh", "-c", printer, *argv[3:]], {}, podsim.fakes(tmp_path), tmp_path)
    assert shown.stdout.split("\0")[:-1] == ["prog", text]
    assert not (tmp_path / "x").exists()


@settings(max_examples=60, deadline=None)
@given(st.text())
def test_any_value_argo_carries_arrives_as_one_exact_argument(text: str) -> None:
    if refusal(text) is not None:
        return  # refused where it enters (submit, Pipeline, ...): tests/argo/test_values.py
    job = hv.pytorch_job(image="img", program=command("prog", LR, f"-x{WHO}$"), workers=1)
    values = {"inputs.parameters.lr": text, "workflow.parameters.who": text}
    assert argv_of(job, "worker", values) == ["prog", text, f"-x{text}$"]


def test_a_value_reaches_a_script_s_argument_not_its_code(tmp_path: Path) -> None:
    """The safe form: the script reads the value as "$1"; the shell never parses it."""
    text = "it's $(touch x) `touch y` ; touch z"
    job = hv.batch_job(image="img", program=command("sh", "-c", 'printf "%s" "$1"', "sh", LR))
    argv = argv_of(job, "main", {"inputs.parameters.lr": text})
    done = podsim.run(argv, {}, podsim.fakes(tmp_path), tmp_path)
    assert done.stdout == text and not list(tmp_path.glob("[xyz]"))


@pytest.mark.parametrize(
    ("argv", "field"),
    [
        (["sh", "-c", LR], "command[2]"),
        (["/bin/bash", "-ec", f"python3 train.py --lr {LR}"], "command[2]"),
        (["env", "sh", "-xc", f"echo {LR}"], "command[3]"),
        (["busybox", "sh", "-o", "pipefail", "-c", f"echo {WHO}"], "command[5]"),
    ],
)
def test_a_run_time_value_in_shell_code_is_refused(argv: list[Any], field: str) -> None:
    with pytest.raises(hv.ValidationError) as e:
        hv.Program.command(argv)
    assert e.value.field == field
    assert "shell" in e.value.rule and '"$1"' in e.value.rule, "the safe form is in the message"


@pytest.mark.parametrize("shell", [["sh", "-c"], ["/bin/sh", "-ec"], ["bash", "-lc"]])
def test_a_shell_script_naming_a_placeholder_fed_variable_is_refused(shell: list[str]) -> None:
    pod = hv.PodSettings(env={"LR": LR, "PLAIN": "1"})
    program = command(*shell, "python3 train.py --lr $(LR) --n $(PLAIN) $(date)")
    for build in (
        lambda: hv.batch_job(image="img", program=program, pod=pod),
        lambda: hv.pytorch_job(image="img", program=program, workers=1, pod=pod),
        lambda: hv.mpi_job(image="img", program=program, master_pod=pod),
    ):
        with pytest.raises(hv.ValidationError) as e:
            build()
        assert e.value.field == f"program.command[{len(shell)}]"
        assert "$(LR)" in e.value.rule and "env['LR']" in e.value.rule and '"$LR"' in e.value.rule


def test_what_no_shell_reads_as_code_is_accepted() -> None:
    pod = hv.PodSettings(env={"LR": LR})
    for argv in (
        ["sh", "-c", 'python3 train.py --lr "$LR"'],  # the shell's own variable: the kubelet leaves it
        ["sh", "-c", "echo $$(LR)"],  # $$ is the kubelet's escape: the shell runs the command LR
        ["python3", "train.py", "--lr", "$(LR)"],  # no shell: the kubelet's value is one argument
        ["sh", "script.sh", "$(LR)"],  # a script file, the value its argument
    ):
        hv.batch_job(image="img", program=command(*argv), pod=pod)


@pytest.mark.parametrize(
    "arg", ["{{workflow.name}}", "{{=1}}", "a {{inputs.parameters.x}} {{pod.name}}", "{{inputs.parameters.x"]
)
def test_other_argo_expressions_in_a_command_are_refused(arg: str) -> None:
    with pytest.raises(hv.ValidationError) as e:
        command("echo", arg)
    assert e.value.field == "command[1]"


def test_an_argo_variable_placeholder_is_not_a_run_time_value() -> None:
    with pytest.raises(hv.ValidationError) as e:
        command("echo", hv.Placeholder("workflow.name", "x"))
    assert e.value.field == "command[1]"
    with pytest.raises(hv.ValidationError) as e:
        command("echo", 3)  # type: ignore[arg-type]
    assert e.value.field == "command[1]"


def test_torchrun_takes_run_time_values() -> None:
    job = hv.pytorch_job(image="img", program=command(*hv.torchrun("train.py", "--lr", LR)), workers=1)
    plugin = {"WORLD_SIZE": "2", "RANK": "0", "MASTER_ADDR": "m", "MASTER_PORT": "1"}
    argv = argv_of(job, "master", {"inputs.parameters.lr": "$(RANK)"}, plugin)
    assert argv[-3:] == ["train.py", "--lr", "$(RANK)"] and "--node_rank=0" in argv


#: Issue 42's value for a command's argument (tests/e2e/test_values.py submits it with `argo submit -p`, which lets
#: its '{{x}}' through): quotes, command substitution, an Argo tag, a shell's separator.
ARGV_VALUE = "it's $(touch /tmp/x) {{x}} ; rm -rf /"
#: Python reporting its argv as JSON ('{' escaped: a report holds no Argo tag) and whether /tmp/x exists.
REPORT_ARGV = (
    "import json, os, sys\n"
    "print('hera-volcano:output argv=' + json.dumps(sys.argv[1:]).replace('{', '\\\\u007b'))\n"
    "print('hera-volcano:output created=' + json.dumps(os.path.exists('/tmp/x')))\n"
)


def reporting_program(value: hv.Placeholder, marker: str = "/tmp/x") -> hv.Program:
    """The safe form: a shell passes the value on as "$2" to Python, which reports its argv."""
    code = REPORT_ARGV.replace("/tmp/x", marker)
    return hv.Program.command(["sh", "-c", 'exec python3 -c "$1" "$2"', "sh", code, value])


def test_the_end_to_end_job_reports_the_value_exactly(tmp_path: Path) -> None:
    """The job of tests/e2e/test_values.py's issue-42 workflow, simulated and run."""
    import json

    from hera_volcano.pods.reports import parse_line

    marker = tmp_path / "x"
    job = hv.batch_job(image="img", program=reporting_program(WHO, str(marker)))
    argv, env = podsim.process(
        podsim.container(
            podsim.parse(
                str(hv.job_template(job, name="run").manifest),
                {
                    "workflow.parameters.who": ARGV_VALUE.replace("/tmp/x", str(marker)),
                    **{f"inputs.parameters.{k}": str(v) for k, v in job.arguments.items()},
                },
            ),
            "main",
        )
    )
    done = podsim.run(argv, env, podsim.fakes(tmp_path), tmp_path)
    assert done.returncode == 0, done.stderr
    reports = dict(r for r in map(parse_line, done.stdout.split("\n")) if r is not None)
    assert json.loads(reports["argv"]) == [ARGV_VALUE.replace("/tmp/x", str(marker))]
    assert reports["created"] == "false" and not marker.exists()
