"""Local runs for real (``hv.run_local``): a user's function on local processes under the pods' own launcher, with
the variables the cluster gives each rank; rank 0's report comes back as the job's outputs carry it. PyTorch and MPI
run under an interpreter with torch or mpi4py: this one, else Debian's (``make debian-tools`` installs
``python3-torch``, ``python3-mpi4py`` and ``openmpi-bin``)."""

from __future__ import annotations

import functools
import io
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import hera_volcano as hv
from tests.client import localfuncs

SYSTEM_PYTHON = "/usr/bin/python3"
TRICKY = 'it\'s "quoted" $(HOME) $$ ${X} `id` \\ back ünïcödé {x} }}'


@functools.cache
def python_with(module: str) -> str:
    """An interpreter that imports ``module``: this one, else Debian's."""
    for python in (sys.executable, SYSTEM_PYTHON):
        found = subprocess.run([python, "-c", f"import {module}"], capture_output=True, check=False)
        if found.returncode == 0:
            return python
    pytest.fail(f"no python imports {module}: run `make debian-tools` (Debian's python3-{module})")


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    state = Path(f"/proc/{pid}/stat")
    return not (state.exists() and state.read_text().split(") ")[-1].startswith("Z"))


def pids_in(folder: Path) -> list[int]:
    return [int(p.read_text()) for p in folder.iterdir() if p.read_text().isdigit()]


def test_a_batch_job_runs_every_replica_and_returns_replica_0s_report(tmp_path: Path) -> None:
    job = hv.batch_job(
        image="python:3.11-slim",
        program=hv.Program.function(
            localfuncs.replica_sum, args={"scale": hv.Placeholder.input("scale", 1), "marks": str(tmp_path)}
        ),
        replicas=3,
        pod=hv.PodSettings(env={"EXPECTED_REPLICAS": "3"}),
    )
    output = io.StringIO()
    report = hv.run_local(job, {"scale": 5}, output=output)
    assert report == {"replicas": "3", "value": "5"}, "texts, as the job's outputs carry them"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["0", "1", "2"]
    assert "[rank 0] hera-volcano:output value=5\n" in output.getvalue(), "each line prefixed by its rank"


def test_a_value_with_quotes_and_dollars_arrives_byte_for_byte() -> None:
    job = hv.batch_job(
        image="python:3.11-slim",
        program=hv.Program.function(localfuncs.echo_text, args={"text": hv.Placeholder.input("text", "x")}),
    )
    assert hv.run_local(job, {"text": TRICKY}, output=io.StringIO()) == {"text": TRICKY}


def test_pytorch_runs_torchrun_style_ranks_that_all_reduce_with_gloo_on_cpu() -> None:
    job = hv.pytorch_job(
        image="pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime",
        program=hv.Program.function(localfuncs.torch_sum, args={"scale": hv.Placeholder.input("scale", 1)}),
        workers=1,
    )
    report = hv.run_local(job, {"scale": 3}, python=python_with("torch"), output=io.StringIO(), timeout=300)
    assert report == {"sum": "9", "world": "2", "local-rank": "0"}, "(1 + 2) * 3 over the master and one worker"


def test_mpi_runs_the_ranks_under_mpiexec_and_they_allreduce_with_mpi4py() -> None:
    job = hv.mpi_job(
        image="volcanosh/example-mpi:0.0.3",
        program=hv.Program.function(localfuncs.mpi_sum, args={"scale": hv.Placeholder.input("scale", 1)}),
        workers=3,
    )
    report = hv.run_local(job, {"scale": 2}, python=python_with("mpi4py"), output=io.StringIO(), timeout=300)
    assert report == {"sum": "12", "size": "3"}, "(1 + 2 + 3) * 2 over 3 ranks"


def test_tensorflow_processes_each_get_their_place_in_tf_config(tmp_path: Path) -> None:
    job = hv.tensorflow_job(
        image="tensorflow/tensorflow",
        program=hv.Program.function(localfuncs.tf_config, args={"marks": str(tmp_path)}),
        workers=2,
    )
    report = hv.run_local(job, output=io.StringIO())
    assert report == {"type": "chief", "index": "0", "roles": '{"chief":1,"worker":2}'}, "the chief is rank 0"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["chief-0", "worker-0", "worker-1"]


@pytest.mark.parametrize("kind", ["batch", "pytorch", "mpi"])
def test_a_rank_that_raises_fails_the_run_naming_it_and_no_process_outlives_it(kind: str, tmp_path: Path) -> None:
    program = hv.Program.function(localfuncs.fails_on_rank_1, args={"pids": str(tmp_path)})
    job, python = {
        "batch": (hv.batch_job(image="python:3.11-slim", program=program, replicas=3), sys.executable),
        "pytorch": (hv.pytorch_job(image="pytorch", program=program, workers=2), sys.executable),
        "mpi": (hv.mpi_job(image="mpi", program=program, workers=3), python_with("mpi4py")),
    }[kind]
    started = time.monotonic()
    with pytest.raises(hv.LocalRunError) as e:
        hv.run_local(job, python=python, output=io.StringIO(), timeout=100)
    assert time.monotonic() - started < 60, "the others were stopped, not waited for"
    assert (e.value.rank, e.value.exit_code, e.value.timed_out) == (1, 1, False)
    assert str(e.value).startswith("rank 1 exited with status 1: ")
    assert "ValueError: no data for rank 1" in e.value.lines
    pids = pids_in(tmp_path)
    assert len(pids) == 3
    assert not [p for p in pids if alive(p)], "every rank has ended"


def test_a_run_that_outlasts_its_timeout_is_stopped(tmp_path: Path) -> None:
    job = hv.batch_job(
        image="python:3.11-slim",
        program=hv.Program.function(localfuncs.sleeps, args={"pids": str(tmp_path)}),
        replicas=2,
    )
    with pytest.raises(hv.LocalRunError) as e:
        hv.run_local(job, output=io.StringIO(), timeout=3)
    assert e.value.timed_out and "timeout (3 s)" in str(e.value)
    assert not [p for p in pids_in(tmp_path) if alive(p)]


def test_bad_settings_are_validation_errors() -> None:
    job = hv.batch_job(image="python:3.11-slim", program=hv.Program.command(["true"]))
    for settings, field in (
        ({"python": "/no/such/python"}, "python"),
        ({"timeout": 0}, "timeout"),
        ({"timeout": float("nan")}, "timeout"),
        ({"checkpoints": "/tmp/x"}, "checkpoints"),  # the job keeps none: the folder would be ignored
        ({"processes": 0}, "processes"),
    ):
        with pytest.raises(hv.ValidationError) as e:
            hv.run_local(job, **settings)  # type: ignore[arg-type]
        assert e.value.field == field


def test_without_open_mpi_an_mpi_job_says_what_to_install(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no mpiexec on it
    job = hv.mpi_job(image="mpi", program=hv.Program.function(localfuncs.mpi_sum, args={"scale": 1}), workers=2)
    with pytest.raises(hv.LocalRunError) as e:
        hv.run_local(job, output=io.StringIO())
    assert "install Open MPI (Debian and Ubuntu: apt-get install openmpi-bin python3-mpi4py" in str(e.value)


def test_a_command_that_is_not_there_fails_naming_it() -> None:
    job = hv.batch_job(image="python:3.11-slim", program=hv.Program.command(["no-such-program", "--x"]), replicas=2)
    with pytest.raises(hv.LocalRunError) as e:
        hv.run_local(job, output=io.StringIO())
    assert str(e.value) == "rank 0 cannot start no-such-program: No such file or directory"


def test_a_report_line_the_follower_would_refuse_fails_the_run_naming_the_output() -> None:
    forged = "print('hera-volcano:output ok=1'); print('hera-volcano:output x=a' + chr(123) * 2 + 'b')"
    job = hv.batch_job(image="python:3.11-slim", program=hv.Program.command(["python3", "-c", forged]))
    with pytest.raises(hv.LocalRunError) as e:
        hv.run_local(job, output=io.StringIO())
    assert str(e.value).startswith("rank 0's report: output 'x': the value holds two opening braces")


def test_a_command_reports_as_the_launcher_does() -> None:
    said = "print('hera-volcano:output loss=0.5'); print('hera-volcano:output loss=0.25'); print('other')"
    job = hv.batch_job(image="python:3.11-slim", program=hv.Program.command(["python3", "-c", said]))
    assert hv.run_local(job, output=io.StringIO()) == {"loss": "0.25"}, "the last value of a name, as the follower"


def test_a_value_reported_only_as_a_metric_has_its_last_number_and_a_report_wins_over_a_metric() -> None:
    said = (
        "print('hera-volcano:metric loss=0.5'); print('hera-volcano:metric loss=0.25');"
        " print('hera-volcano:metric acc=0.1'); print('hera-volcano:output acc=0.9');"
        " print('hera-volcano:metric bad=NaN')"  # refused by the follower's rule: ignored, as there
    )
    job = hv.batch_job(image="python:3.11-slim", program=hv.Program.command(["python3", "-c", said]))
    assert hv.run_local(job, output=io.StringIO()) == {"acc": "0.9", "loss": "0.25"}


@pytest.mark.parametrize("python", [sys.executable, SYSTEM_PYTHON], ids=["with-hera-volcano", "bare-python"])
def test_a_job_with_checkpoints_resumes_locally_from_the_folder_given_again(tmp_path: Path, python: str) -> None:
    """A user's training function that checkpoints (``hera_volcano.runtime``) runs here with a folder of its own:
    the first run stops on purpose, the second, given the same folder, resumes after the last checkpoint and ends
    with the uninterrupted sum; an interpreter without hera-volcano gets the runtime the pods get."""
    job = hv.batch_job(
        image="python:3.11-slim",
        program=hv.Program.function(localfuncs.counts_with_checkpoints, args={"steps": 6, "stop_at": 2}),
        checkpoints=hv.Checkpoints("train-state"),
    )
    with pytest.raises(hv.LocalRunError, match="stopped on purpose after step 2"):
        hv.run_local(job, python=python, checkpoints=tmp_path, output=io.StringIO())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["step-000000000000", "step-000000000001", "step-000000000002"]
    assert hv.run_local(job, python=python, checkpoints=tmp_path, output=io.StringIO()) == {
        "resumed_at": "3",
        "total": "21",
    }


def test_a_job_with_checkpoints_starts_afresh_in_a_folder_of_its_own_by_default() -> None:
    job = hv.batch_job(
        image="python:3.11-slim",
        program=hv.Program.function(localfuncs.counts_with_checkpoints, args={"steps": 3, "stop_at": 99}),
        checkpoints=hv.Checkpoints("train-state"),
    )
    first = hv.run_local(job, output=io.StringIO())
    assert first == {"resumed_at": "0", "total": "6"}
    assert hv.run_local(job, output=io.StringIO()) == first, "nothing kept from the run before"
