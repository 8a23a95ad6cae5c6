"""``hera-volcano run-local MODULE:NAME``: rank 0's report as JSON on stdout, every rank's lines on stderr prefixed by
its rank; bad input is one line on stderr and exit 2, a failed rank exit 1, a timeout exit 4."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from tests.commands import Result, run
from tests.conftest import ROOT

MODULE = textwrap.dedent(
    """
    from hera.workflows import Workflow

    import hera_volcano as hv


    def greet(name: str, times: int) -> dict:
        import os

        index = int(os.environ["VC_TASK_INDEX"])
        print("hello from", index)
        return {"greeting": " ".join([name] * times), "index": index}


    def fails() -> None:
        raise RuntimeError("broken on purpose")


    def sleeps() -> None:
        import time

        time.sleep(60)


    args = {"name": hv.Placeholder.input("name", "x"), "times": hv.Placeholder.input("times", 1)}
    job = hv.batch_job(image="python:3.11-slim", program=hv.Program.function(greet, args=args), replicas=2)
    failing = hv.batch_job(image="python:3.11-slim", program=hv.Program.function(fails), replicas=2)
    sleeping = hv.batch_job(image="python:3.11-slim", program=hv.Program.function(sleeps))
    not_a_job = 3


    def score(x: int) -> dict:
        if x == 3:
            raise ValueError("three diverges")
        return {"loss": (x - 2) ** 2 + 1}


    scored = hv.batch_job(
        image="python:3.11-slim", program=hv.Program.function(score, args={"x": hv.Placeholder.input("x", 1)})
    )
    with Workflow(generate_name="tune-", entrypoint="tune"):
        tune = hv.sweep(scored, hv.Grid({"x": [1, 2, 3, 4]}), name="tune", objective="loss", max_failures=1)
        strict = hv.sweep(scored, hv.Grid({"x": [1, 2, 3, 4]}), name="strict", objective="loss")
    """
)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "jobs.py").write_text(MODULE)
    return tmp_path


def run_local(folder: Path, *args: str) -> Result:
    # From the user's folder, this checkout's package (not whichever one is installed).
    return run("hera_volcano", "run-local", *args, cwd=str(folder), env={"PYTHONPATH": str(ROOT)})


def test_the_report_is_json_on_stdout_and_every_rank_speaks_on_stderr(folder: Path) -> None:
    r = run_local(folder, "jobs.py:job", "-a", 'name=it\'s "me" $(HOME)', "-a", "times=2")
    assert r.code == 0, r.err
    assert json.loads(r.out) == {"greeting": 'it\'s "me" $(HOME) it\'s "me" $(HOME)', "index": "0"}
    assert "[rank 0] hello from 0\n" in r.err and "[rank 1] hello from 1\n" in r.err


def test_a_dotted_module_from_the_current_folder_works_too(folder: Path) -> None:
    r = run_local(folder, "jobs:job", "-a", "name=a", "-a", "times=1", "--processes", "1")
    assert (r.code, json.loads(r.out)) == (0, {"greeting": "a", "index": "0"}), r.err
    assert "[rank 1]" not in r.err, "--processes 1: one replica"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ("jobs.py:job", "-a", "nmae=a", "-a", "times=1"),
            "arguments.nmae: names no input of the job (did you mean 'name'?)",
        ),
        (("jobs.py:job", "-a", "name=a"), "must give the input times of the job"),
        (("jobs.py:job", "-a", "name=a", "-a", "times=two"), "arguments.times: must be JSON"),
        (("jobs.py:job", "-a", "name"), "must be KEY=VALUE"),
        (("jobs.py:job", "-a", "name=a", "-a", "name=b", "-a", "times=1"), "name is given twice"),
        (
            ("jobs.py:jobb",),
            "jobs.py has no jobb (did you mean 'job'?); its jobs and sweeps are failing, job, scored, sleeping, strict,"
            " tune",
        ),
        (("jobs.py:not_a_job",), "is a int, not a VolcanoJob"),
        (("missing.py:job",), "cannot read missing.py"),
        (("jobs.py",), "must be MODULE:NAME"),
        (
            ("jobs.py:job", "--python", "/no/such/python", "-a", "name=a", "-a", "times=1"),
            "python: must be an executable",
        ),
    ],
)
def test_bad_input_is_one_line_on_stderr_and_exit_2(folder: Path, args: tuple[str, ...], message: str) -> None:
    r = run_local(folder, *args)
    assert (r.code, r.out) == (2, ""), r
    assert r.err.count("\n") == 1 and r.err.startswith("hera-volcano run-local: error: ")
    assert message in r.err


def test_a_failed_rank_is_exit_1_naming_it_after_its_lines(folder: Path) -> None:
    r = run_local(folder, "jobs.py:failing")
    assert (r.code, r.out) == (1, ""), r
    assert "RuntimeError: broken on purpose" in r.err
    last = r.err.splitlines()[-1]
    assert last.startswith("hera-volcano run-local: error: rank ") and "exited with status 1" in last


def test_a_timeout_is_exit_4(folder: Path) -> None:
    r = run_local(folder, "jobs.py:sleeping", "--timeout", "2s")
    assert (r.code, r.out) == (4, ""), r
    assert r.err.splitlines()[-1].startswith("hera-volcano run-local: error: the run outlasted its timeout (2 s)")


def test_a_sweep_runs_trial_by_trial_and_prints_its_outputs_as_json(folder: Path) -> None:
    r = run_local(folder, "jobs.py:tune")
    assert r.code == 0, r.err
    outputs = json.loads(r.out)
    assert (outputs["best-params"], outputs["best-trial"], outputs["best-loss"]) == ('{"x":2}', "1", "1")
    trials = json.loads(outputs["trials"])
    assert [t["phase"] for t in trials] == ["Succeeded", "Succeeded", "Failed", "Succeeded"]
    assert "ValueError: three diverges" in trials[2]["reason"]
    assert r.err.splitlines()[-1] == "hera-volcano: best: trial 1 (x=2), loss=1 (min)"


def test_a_sweep_with_more_failures_than_allowed_is_exit_1_saying_why(folder: Path) -> None:
    r = run_local(folder, "jobs.py:strict")
    assert (r.code, r.out) == (1, ""), r
    assert r.err.splitlines()[-1].startswith(
        "hera-volcano run-local: error: the sweep 'strict' failed: 1 of 4 trials failed, more than max_failures=0:"
        " trial 2 (x=3): rank 0 exited with status 1: ValueError: three diverges"
    )


def test_an_argument_a_sweep_has_no_input_for_is_exit_2(folder: Path) -> None:
    r = run_local(folder, "jobs.py:tune", "-a", "x=1")
    assert (r.code, r.out) == (2, ""), r
    assert r.err == "hera-volcano run-local: error: arguments.x: names no input of the sweep 'tune'; it has no inputs\n"


def test_a_users_file_named_like_a_standard_module_does_not_replace_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The user's jobs live in json.py: loading it leaves the standard json module what every later import gets."""
    import sys

    from hera_volcano.cli.user_module import module_job

    (tmp_path / "json.py").write_text(MODULE)
    monkeypatch.chdir(tmp_path)
    standard = sys.modules["json"]
    assert type(module_job("json.py:job")).__name__ == "VolcanoJob"
    assert sys.modules["json"] is standard and hasattr(sys.modules["json"], "dumps")
