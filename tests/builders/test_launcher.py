"""The in-pod launcher (``hera_volcano/pods/launcher.py``), run for real as pods run it (``python3 -u -c BOOTSTRAP
KIND``, the bootstrap running the file the pods' ConfigMap holds, without hera_volcano importable): its report lines
follow ``pods/reports`` case by case, only global rank 0 reports, and anything wrong fails the rank with a message
or the function's own traceback."""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

import hera_volcano as hv
from hera_volcano.builders import program
from hera_volcano.pods import launcher, reports
from hera_volcano.pods import program as pods_program
from hera_volcano.pods.checkpoints import CheckpointSettings
from hera_volcano.pods.launcher import LaunchError, LaunchSettings
from tests.builders import podsim, userfuncs

PYTHON = getattr(sys, "_base_executable", sys.executable)  # hera_volcano is not installed in a pod


def launch(
    source: str,
    *,
    kind: str = "replica",
    args: dict[str, Any] | None = None,
    env: dict[str, str] | None = None,
    run: dict[str, Any] | None = None,
    cwd: Path,
) -> subprocess.CompletedProcess[bytes]:
    """The launcher running ``source``'s function ``f`` (rank 0 unless ``env`` says otherwise)."""
    variables = {
        "PATH": os.environ.get("PATH", ""),
        LaunchSettings.RUN: json.dumps(run or {"function": "f", "file": "job.py", "line": 1}),
        LaunchSettings.SOURCE: textwrap.dedent(source),
        LaunchSettings.ARGS: json.dumps(args or {}),
        "HERA_VOLCANO_LAUNCHER": str(podsim.launcher_file()),  # where the pod's ConfigMap puts it
        **({"VC_TASK_INDEX": "0"} if env is None else env),
    }
    rendered = program.Launch("", None, (), "").command(kind) if kind in program.KINDS else ["", kind]
    command = [PYTHON, "-u", "-c", pods_program.launcher_bootstrap(), rendered[-1]]
    assert rendered in ([program.PYTHON, *command[1:]], ["", kind]), "as rendered into pods"
    return subprocess.run(command, env=variables, cwd=cwd, capture_output=True, timeout=60)


def lines(result: subprocess.CompletedProcess[bytes]) -> list[str]:
    return result.stdout.decode().split("\n")[:-1]


def failure(result: subprocess.CompletedProcess[bytes]) -> str:
    """The launcher's one-line message of a failed rank."""
    assert result.returncode == 1, result
    return result.stderr.decode().splitlines()[-1]


def test_the_config_maps_launcher_writes_by_the_report_rules_the_follower_reads() -> None:
    """One definition of the report line: the launcher's file in the ConfigMap is the launcher joined with the rules
    the follower's program reads by (no copy)."""
    text = pods_program.launcher_source()
    assert pods_program.LAUNCHER_MODULES == ("ranks", "reports", "progress", "launcher")
    assert text.index("def format_line(") < text.index("def report(") and "def parse_line(" in text
    assert "from hera_volcano" not in text and "import hera_volcano" not in text, "hera_volcano is not in the pod"
    assert "def parse_line(" in pods_program.source()


def test_what_a_job_carries_of_the_launcher_reads_the_same_in_a_command_and_in_a_shell_script() -> None:
    text = pods_program.launcher_bootstrap()
    for char in ("$", "{{", "'"):
        assert char not in text, f"{char!r} would need escaping in a pod command or in the MPI master's script"
    assert pods_program.launcher_source() == podsim.launcher_file().read_text(), "the file the tests run"


def test_without_its_config_map_a_rank_fails_at_once_naming_it(tmp_path: Path) -> None:
    env = {"PATH": os.environ.get("PATH", ""), "HERA_VOLCANO_LAUNCHER": str(tmp_path / "not-mounted.py")}
    done = subprocess.run(
        [PYTHON, "-u", "-c", pods_program.launcher_bootstrap(), "replica"], env=env, capture_output=True, text=True
    )
    assert done.returncode == 1 and done.stdout == "" and "Traceback" not in done.stderr
    assert f"ConfigMap {pods_program.config_map_name()} (the program of the hera-volcano pods) is not" in done.stderr


#: (name, value the function returns): each reported exactly as ``reports.format_line`` writes it, or refused
#: where it refuses.
CASES: list[tuple[Any, Any]] = [
    ("loss", 0.25),
    ("path", "/data/model.pt"),
    ("equals", "a=b=c"),
    ("unicode", "ünï 😀 \u2028"),
    ("object", {"a": [1, 2.5, None, True], "s": "line\nbreak \u2028"}),
    ("empty", ""),
    ("spaces", "  trailing  "),
    ("n-1_X", 7),
    ("x" * 63, "longest name"),
    ("long", "v" * (reports.MAX_LINE - len(reports.PREFIX) - len("long="))),
    ("too-long", "v" * reports.MAX_LINE),
    ("job-name", "reserved"),
    ("job-phase", "reserved"),
    ("bad name", 1),
    ("x" * 64, 1),
    ("", 1),
    ("dot.ted", 1),
    ("multi", "a\nb"),
    ("carriage", "a\rb"),
    ("tag", "{{workflow.name}}"),  # the next step's template would substitute it
    ("expression", "x {{=1}}"),
    ("nul", "a\x00b"),
    ("json-tag", {"a": "{{x}} {{{"}),  # JSON: written with an escape, the same value
    ("json-nul", ["a\x00b"]),
    ("del", "a\x7fb"),
    ("bell", "\x07"),
    ("plane-16", "\U0010fffd"),
    ("json-controls", ["a\x7f\x07\U0010fffd b"]),  # JSON: written as escapes, the same value
    ("nel", "a\x85b"),  # a C1 control: a job's manifest cannot hold it
    ("json-nel", ["a\x85\x9fb"]),
]


def expected(name: str, value: Any) -> str | None:
    """The report line the convention gives (JSON separators escaped as the launcher does), None if it refuses."""
    text = value if isinstance(value, str) else json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    if not isinstance(value, str):
        text = text.replace("\u2028", "\\u2028").replace("{{", "{\\u007b")
        text = text.replace("\x7f", "\\u007f").replace("\U0010fffd", "\\udbff\\udffd")
        text = text.replace("\x85", "\\u0085").replace("\x9f", "\\u009f")
    try:
        return reports.format_line(name, text)
    except ValueError:
        return None


@pytest.mark.parametrize(("name", "value"), CASES)
def test_each_report_follows_the_convention(tmp_path: Path, name: str, value: Any) -> None:
    result = launch(
        "def f(name, value):\n    return {name: value}\n", args={"name": name, "value": value}, cwd=tmp_path
    )
    line = expected(name, value)
    if line is None:
        assert failure(result).startswith("hera-volcano: output")
        assert result.stdout == b"", "nothing is reported when one value is refused"
    else:
        assert result.returncode == 0, result.stderr
        assert lines(result) == [line]
        parsed = reports.parse_line(line)
        assert parsed is not None and parsed[0] == name
        assert (parsed[1] if isinstance(value, str) else json.loads(parsed[1])) == value


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("return [1]", "the function returned list: return a dict of names to JSON values, or None"),
        ("return 'done'", "the function returned str: return a dict of names to JSON values, or None"),
        ("return {1: 2}", "output name 1: letters, digits, _ and - only, 1 to 63 of them"),
        ("return {'x': float('nan')}", "output 'x' is not a JSON value: Out of range float values are not JSON"),
        ("return {'x': object()}", "output 'x' is not a JSON value: Object of type object is not JSON serializable"),
        ("return {'x': chr(0xD800)}", "output 'x': the value is not valid Unicode text"),
    ],
)
def test_a_report_that_cannot_be_made_fails_the_rank(tmp_path: Path, body: str, message: str) -> None:
    result = launch(f"def f():\n    {body}\n", cwd=tmp_path)
    assert failure(result).startswith("hera-volcano: " + message)
    assert result.stdout == b""


def test_several_values_report_in_order_and_none_reports_nothing(tmp_path: Path) -> None:
    result = launch("def f():\n    print('working')\n    return {'b': 1, 'a': 'x'}\n", cwd=tmp_path)
    assert lines(result) == ["working", "hera-volcano:output b=1", "hera-volcano:output a=x"]
    assert lines(launch("def f():\n    print('quiet')\n", cwd=tmp_path)) == ["quiet"]


#: What Volcano's tensorflow plugin sets in a pod of a job with a chief, a parameter server and two workers.
TF_CONFIG = (
    '{"cluster": {"chief": ["j-chief-0.j:2222"], "ps": ["j-ps-0.j:2222"], '
    '"worker": ["j-worker-0.j:2222", "j-worker-1.j:2222"]}, "task": {"type": "%s", "index": %d}}'
)
WORKERS_ONLY = '{"cluster": {"worker": ["j-w-0.j:2222", "j-w-1.j:2222"]}, "task": {"type": "worker", "index": %d}}'


@pytest.mark.parametrize(
    ("kind", "env", "reports"),
    [
        ("torchrun", {"RANK": "0", "LOCAL_RANK": "0"}, True),
        ("torchrun", {"RANK": "3", "LOCAL_RANK": "0"}, False),
        ("mpi", {"OMPI_COMM_WORLD_RANK": "0"}, True),
        ("mpi", {"OMPI_COMM_WORLD_RANK": "1"}, False),
        ("mpi", {"PMIX_RANK": "0"}, True),
        ("mpi", {"PMI_RANK": "2"}, False),
        ("replica", {"VC_TASK_INDEX": "0"}, True),
        ("replica", {"VC_TASK_INDEX": "1"}, False),
        ("replica", {"VC_TASK_INDEX": "1", "RANK": "0"}, False),  # each kind reads only its own variables
        ("tensorflow", {"TF_CONFIG": TF_CONFIG % ("chief", 0)}, True),
        ("tensorflow", {"TF_CONFIG": TF_CONFIG % ("worker", 0)}, False),  # the chief reports, not worker 0
        ("tensorflow", {"TF_CONFIG": TF_CONFIG % ("ps", 0)}, False),
        ("tensorflow", {"TF_CONFIG": WORKERS_ONLY % 0}, True),  # without a chief, worker 0 is rank 0
        ("tensorflow", {"TF_CONFIG": WORKERS_ONLY % 1}, False),
    ],
)
def test_only_global_rank_zero_reports(tmp_path: Path, kind: str, env: dict[str, str], reports: bool) -> None:
    result = launch("def f():\n    return {'done': 'yes'}\n", kind=kind, env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert lines(result) == (["hera-volcano:output done=yes"] if reports else [])


def test_other_ranks_ignore_what_they_return(tmp_path: Path) -> None:
    result = launch(
        "def f():\n    return 'not a report'\n", kind="mpi", env={"OMPI_COMM_WORLD_RANK": "1"}, cwd=tmp_path
    )
    assert result.returncode == 0 and result.stdout == b""


@pytest.mark.parametrize(
    ("kind", "env", "message"),
    [
        ("torchrun", {}, "cannot tell the rank of this process: none of RANK is set"),
        ("mpi", {}, "cannot tell the rank of this process: none of OMPI_COMM_WORLD_RANK, PMIX_RANK, PMI_RANK is set"),
        ("replica", {"VC_TASK_INDEX": "first"}, "VC_TASK_INDEX is not a rank: 'first'"),
        ("tensorflow", {}, "TF_CONFIG is not set"),
        (
            "tensorflow",
            {"TF_CONFIG": '{"task": {"type": "boss"}}'},
            "TF_CONFIG names no task of chief, worker, ps, evaluator",
        ),
        ("local", {}, "unknown launch 'local': one of mpi, replica, tensorflow, torchrun"),
    ],
)
def test_a_report_without_a_known_rank_fails(tmp_path: Path, kind: str, env: dict[str, str], message: str) -> None:
    result = launch("def f():\n    return {'x': 1}\n", kind=kind, env=env, cwd=tmp_path)
    assert failure(result) == "hera-volcano: " + message


def test_an_exception_prints_the_functions_traceback_and_fails_the_rank(tmp_path: Path) -> None:
    source = "def f(n):\n    return helper(n)\n\ndef helper(n):\n    return 1 / n\n"
    result = launch(source, args={"n": 0}, run={"function": "f", "file": "train.py", "line": 10}, cwd=tmp_path)
    assert failure(result) == "hera-volcano: f raised ZeroDivisionError"
    stderr = result.stderr.decode()
    assert stderr.startswith("Traceback (most recent call last):\n")
    # Numbered as in the user's file, with the code shown; none of the launcher's own frames.
    assert 'File "train.py", line 11, in f\n    return helper(n)' in stderr
    assert 'File "train.py", line 14, in helper\n    return 1 / n' in stderr
    assert "<string>" not in stderr and "ZeroDivisionError: division by zero" in stderr


def test_exit_status_and_output_of_the_function_are_its_own(tmp_path: Path) -> None:
    result = launch("def f():\n    import sys\n    print('bye')\n    sys.exit(3)\n", cwd=tmp_path)
    assert result.returncode == 3 and lines(result) == ["bye"]


def test_arguments_known_at_run_time_join_the_rendered_ones(tmp_path: Path) -> None:
    env = {
        LaunchSettings.RUNTIME_ARGS: json.dumps({"text": "text", "config": "json"}),
        "HERA_VOLCANO_ARG_text": '{"not": "parsed"}',
        "HERA_VOLCANO_ARG_config": '{"lr": 0.1}',
        "VC_TASK_INDEX": "0",
    }
    source = "def f(**kw):\n    return {'kw': kw}\n"
    result = launch(source, args={"epochs": 2}, env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    [line] = lines(result)
    assert json.loads(line.partition("=")[2]) == {"epochs": 2, "text": '{"not": "parsed"}', "config": {"lr": 0.1}}


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({LaunchSettings.RUNTIME_ARGS: '{"lr": "json"}'}, "argument 'lr': HERA_VOLCANO_ARG_lr is not set"),
        (
            {LaunchSettings.RUNTIME_ARGS: '{"lr": "json"}', "HERA_VOLCANO_ARG_lr": "fast"},
            "argument 'lr' is not JSON (Expecting value: line 1 column 1 (char 0)): 'fast'",
        ),
        ({LaunchSettings.RUNTIME_ARGS: "[1]"}, "HERA_VOLCANO_ARGS and HERA_VOLCANO_RUNTIME_ARGS must be JSON objects"),
        (
            {LaunchSettings.RUNTIME_ARGS: "{"},
            "HERA_VOLCANO_RUNTIME_ARGS is not JSON: Expecting property name enclosed in",
        ),
    ],
)
def test_missing_or_broken_arguments_fail_the_rank(tmp_path: Path, env: dict[str, str], message: str) -> None:
    result = launch("def f(**kw):\n    return None\n", env=env, cwd=tmp_path)
    assert failure(result).startswith("hera-volcano: " + message)


def test_a_run_spec_without_anything_to_run_fails(tmp_path: Path) -> None:
    result = launch("", run={"nothing": 1}, cwd=tmp_path)
    assert failure(result) == "hera-volcano: HERA_VOLCANO_RUN names no function, script or module"


def test_the_function_runs_as_main_so_what_it_defines_pickles(tmp_path: Path) -> None:
    source = """\
    def f():
        import pickle
        return {"same": pickle.loads(pickle.dumps(helper)) is helper, "name": __name__}

    def helper():
        pass
    """
    assert lines(launch(source, cwd=tmp_path)) == ["hera-volcano:output same=true", "hera-volcano:output name=__main__"]


def test_annotations_follow_the_functions_module(tmp_path: Path) -> None:
    source = "def f() -> Unknown:\n    return {'ok': 1}\n"
    lazy = launch(source, run={"function": "f", "file": "m.py", "line": 1, "future": ["annotations"]}, cwd=tmp_path)
    assert lines(lazy) == ["hera-volcano:output ok=1"]
    eager = launch(source, cwd=tmp_path)  # without the future import the module had, the annotation is evaluated
    assert "NameError: name 'Unknown' is not defined" in eager.stderr.decode()


def test_a_script_runs_as_main_with_the_merged_arguments(tmp_path: Path) -> None:
    source = """\
    import json, os, sys
    print(__name__, sys.argv, json.loads(os.environ["HERA_VOLCANO_ARGS"]))
    print("hera-volcano:output done=1")
    """
    env = {LaunchSettings.RUNTIME_ARGS: '{"late": "text"}', "HERA_VOLCANO_ARG_late": "x", "VC_TASK_INDEX": "0"}
    result = launch(source, run={"script": "prep.py"}, args={"early": 1}, env=env, cwd=tmp_path)
    assert lines(result) == ["__main__ ['prep.py'] {'early': 1, 'late': 'x'}", "hera-volcano:output done=1"]


def test_a_module_runs_as_main_from_the_image(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "train.py").write_text("import os, sys\nprint(__name__, sys.argv[0], os.environ['HERA_VOLCANO_ARGS'])\n")
    env = {"PYTHONPATH": str(tmp_path), "VC_TASK_INDEX": "0"}
    result = launch("", run={"module": "pkg.train"}, args={"a": "b"}, env=env, cwd=tmp_path)
    assert lines(result) == [f'__main__ {package / "train.py"} {{"a": "b"}}']
    missing = launch("", run={"module": "pkg.absent"}, env=env, cwd=tmp_path)
    assert failure(missing) == "hera-volcano: pkg.absent raised ImportError"


def test_the_function_imports_the_runtime_the_config_map_ships_beside_the_launcher(tmp_path: Path) -> None:
    """hera_volcano is not importable in the pod: both import forms give the function the runtime made from the file
    beside the launcher (the same code as ``hera_volcano.runtime`` here), and nothing else of the package."""
    source = """\
    def f():
        import hera_volcano.runtime
        from hera_volcano import runtime
        with runtime.save_checkpoint(4) as folder:
            open(folder + "/w", "w").close()
        try:
            import hera_volcano.builders
        except ImportError:
            other = "absent"
        step = runtime.latest_checkpoint().step
        return {"same": runtime is hera_volcano.runtime, "file": runtime.__file__, "step": step, "other": other}
    """
    env = {"VC_TASK_INDEX": "0", CheckpointSettings.DIRECTORY: str(tmp_path / "run")}
    result = launch(source, env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert lines(result) == [
        "hera-volcano:output same=true",
        f"hera-volcano:output file={podsim.launcher_file().parent / launcher.RUNTIME_FILE}",
        "hera-volcano:output step=4",
        "hera-volcano:output other=absent",
    ]
    assert pods_program.runtime_source().count("def latest_checkpoint(") == 1, "one implementation, joined as it is"


def test_a_script_finds_the_runtime_and_without_checkpoints_fails_saying_why(tmp_path: Path) -> None:
    source = "from hera_volcano import runtime\nruntime.checkpoint_dir()\n"
    result = launch(source, run={"script": "train.py"}, cwd=tmp_path)
    assert failure(result) == "hera-volcano: train.py raised CheckpointError"
    assert f"CheckpointError: {CheckpointSettings.DIRECTORY} is not set: give the job checkpoints=" in (
        result.stderr.decode()
    )


def test_the_settings_a_builder_writes_are_those_the_launcher_reads() -> None:
    """``LaunchSettings.to_env`` in a rendered job, through Argo's substitution (run-time values holding quotes,
    ``$(...)``, line breaks, unicode) and the kubelet's expansion, read back by ``from_env`` in the pod: the same
    run spec, source and arguments."""
    from tests.builders.test_program_runs import BUILD_ARGS, EXPECTED_ARGS, VALUES, manifest_of, runtime_args

    made = hv.Program.function(userfuncs.echo, args={**BUILD_ARGS, **runtime_args()})
    assert made.launch is not None
    job = hv.pytorch_job(image="img", program=made, workers=1)
    _, env = podsim.process(podsim.container(podsim.parse(manifest_of(job)[0], VALUES), "master"))
    settings = LaunchSettings.from_env(env)
    run = {"function": "echo", "file": "userfuncs.py", "line": 6, "future": ["annotations"]}
    assert launcher.what_to_run(settings) == run
    assert settings.source == inspect.getsource(userfuncs.echo)
    assert launcher.arguments(settings) == {**EXPECTED_ARGS, "env": runtime_args()["env"]}
    assert [n for n in env if n.startswith(LaunchSettings.PREFIX)] == [e["name"] for e in made.launch.env()]


def test_the_settings_read_back_what_they_wrote() -> None:
    given = LaunchSettings('{"module": "m"}', '{"a": 1}', "src", (("x", "text", "{{not a tag}}"), ("y", "json", "2")))
    env = {str(e["name"]): str(e["value"]) for e in given.to_env()}
    assert LaunchSettings.from_env(env) == given
    assert launcher.arguments(given) == {"a": 1, "x": "{{not a tag}}", "y": 2}
    assert LaunchSettings.from_env({LaunchSettings.RUN: "{}"}) == LaunchSettings("{}", "{}")
    with pytest.raises(LaunchError, match="is not set"):
        LaunchSettings.from_env({})
