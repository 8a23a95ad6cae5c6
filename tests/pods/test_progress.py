"""Progress and metric lines, one definition for writer and reader (hera_volcano/pods/progress.py): what the helper
prints the follower reads back as the same progress and numbers; a line that breaks the rule is refused whole (a
tag, a quote, a word, a count out of Argo's range), never read in part; the helper prints on global rank 0 only, by
the launcher's rank rule (pods/ranks), and refuses on every rank what it cannot print."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hera_volcano.pods.progress import (
    METRIC_PREFIX,
    PROGRESS_PREFIX,
    Progress,
    ProgressError,
    annotation_text,
    format_metric,
    format_progress,
    parse_metric,
    parse_progress,
    read_annotation,
)
from hera_volcano.pods.ranks import LAUNCH_VARIABLE
from hera_volcano.runtime import progress

ROOT = Path(__file__).resolve().parents[2]


def test_a_progress_line_reads_back_as_written() -> None:
    line = format_progress(12, 100)
    assert line == "hera-volcano:progress 12/100"
    assert parse_progress(line) == Progress(12, 100) and str(parse_progress(line + "\r")) == "12/100"
    assert parse_progress("hera-volcano:output loss=1") is None and parse_progress("12/100") is None


@given(st.integers(0, 10**18 - 1), st.integers(1, 10**18 - 1))
def test_any_progress_argo_accepts_reads_back(done: int, total: int) -> None:
    if done > total:
        done, total = total, done or 1
    assert parse_progress(format_progress(done, total)) == Progress(done, total)


@pytest.mark.parametrize(
    ("done", "total", "rule"),
    [
        (11, 10, "done must be between 0 and the total 10, not 11"),
        (-1, 10, "done must be between 0 and the total 10, not -1"),
        (0, 0, "total must be at least 1, not 0"),
        (1.5, 10, "done must be a whole number, not 1.5"),
        (True, 10, "done must be a whole number, not True"),
        (1, "10", "total must be a whole number, not '10'"),
        (1, 10**18, "total must have at most 18 digits"),
    ],
)
def test_a_progress_argo_would_ignore_is_refused_by_the_writer(done: object, total: object, rule: str) -> None:
    with pytest.raises(ProgressError, match="progress: " + rule):
        format_progress(done, total)


@pytest.mark.parametrize(
    "text",
    ["11/10", "0/0", "3", "3/", "/3", "-1/3", "+1/3", "01/3", "1/03", "1 /3", "1/3 ", "3/10 extra", "ten/100",
     "{{workflow.name}}/3", "1/{{=1}}", "1.5/3", "\uff11/3", "1/" + "9" * 19, ""],
)  # fmt: skip
def test_a_progress_line_the_writer_would_not_write_is_refused_whole(text: str) -> None:
    with pytest.raises(ProgressError, match="progress line refused"):
        parse_progress(PROGRESS_PREFIX + text)


def test_a_metric_line_reads_back_as_written() -> None:
    assert format_metric("loss", 0.25) == "hera-volcano:metric loss=0.25"
    assert parse_metric(format_metric("val-acc_1", 1e-5)) == ("val-acc_1", 1e-5)
    assert parse_metric(format_metric("step", 7)) == ("step", 7) and isinstance(
        parse_metric("hera-volcano:metric s=7")[1], int
    )  # type: ignore[index]
    assert parse_metric("hera-volcano:metric loss=-2.5E+3\r") == ("loss", -2500.0)
    assert parse_metric("hera-volcano:output loss=1") is None


@given(st.floats(allow_nan=False, allow_infinity=False) | st.integers(-(10**20), 10**20))
def test_any_finite_number_reads_back(value: float) -> None:
    assert parse_metric(format_metric("m", value)) == ("m", value)


@pytest.mark.parametrize(
    ("name", "value", "rule"),
    [
        ('a"b', 1, "letters, digits, _ and - only"),
        ("a'b", 1, "letters, digits, _ and - only"),
        ("", 1, "letters, digits, _ and - only"),
        ("x" * 64, 1, "letters, digits, _ and - only"),
        ("job-metrics", 1, "is reserved"),
        ("loss", float("nan"), "must be a finite number"),
        ("loss", float("inf"), "must be a finite number"),
        ("loss", True, "must be a number, not bool"),
        ("loss", "0.5", "must be a number, not str"),
        ("loss", None, "must be a number, not NoneType"),
        ("big", 10**40, "is over 32 characters"),
    ],
)
def test_a_metric_that_cannot_be_written_is_refused(name: str, value: object, rule: str) -> None:
    with pytest.raises(ProgressError, match=rule):
        format_metric(name, value)


@pytest.mark.parametrize(
    "text",
    ['a"b=1', "a b=1", "loss", "loss=", "loss=0.5 ", "loss= 0.5", "loss=NaN", "loss=Infinity", "loss=1e999",
     "loss=0x10", "loss=.5", "loss=01", "loss=+1", "loss=true", 'loss="0.5"', "loss={{workflow.name}}",
     "loss={{=sprig.upper('x')}}", "{{x}}=1", "loss=1" + "0" * 40, "job-name=1"],
)  # fmt: skip
def test_a_metric_line_the_writer_would_not_write_is_refused_whole(text: str) -> None:
    with pytest.raises(ProgressError, match="refused"):
        parse_metric(METRIC_PREFIX + text)


def test_the_jobs_annotation_reads_back_and_anything_else_reads_as_nothing() -> None:
    text = annotation_text(Progress(3, 10), {"loss": 0.25, "step": 30})
    assert text == '{"progress":"3/10","metrics":{"loss":0.25,"step":30}}'
    assert read_annotation(text) == (Progress(3, 10), {"loss": 0.25, "step": 30})
    assert read_annotation(annotation_text(None, {"loss": 1.0})) == (None, {"loss": 1.0})
    for forged in (None, 3, "", "not json", "[]", '{"progress":"11/10"}', '{"progress":"{{workflow.name}}"}',
                   '{"metrics":{"a\\"b":1}}', '{"metrics":{"a":"1"}}', '{"metrics":{"a":true}}',
                   '{"metrics":[1]}', '{"progress":3}', '{"extra":1}'):  # fmt: skip
        assert read_annotation(forged) == (None, {}), forged


def run_helper(body: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """A user's function calling the helper, in a process of its own (the pod's environment in ``env``)."""
    source = textwrap.dedent(body)
    variables = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(ROOT), **env}
    return subprocess.run([sys.executable, "-c", source], env=variables, cwd=cwd, capture_output=True, text=True)


@pytest.mark.parametrize(
    ("kind", "env", "prints"),
    [
        ("torchrun", {"RANK": "0"}, True),
        ("torchrun", {"RANK": "1"}, False),
        ("mpi", {"OMPI_COMM_WORLD_RANK": "2"}, False),
        ("replica", {"VC_TASK_INDEX": "0"}, True),
        ("replica", {"VC_TASK_INDEX": "1", "RANK": "0"}, False),
        ("", {}, True),  # no launcher: a process alone (a function tried on a laptop)
    ],
)
def test_the_helper_prints_on_global_rank_zero_only(
    tmp_path: Path, kind: str, env: dict[str, str], prints: bool
) -> None:
    body = """
        from hera_volcano.runtime import progress
        print("epoch 3 done")
        progress(3, 10, loss=0.25, acc=0.9)
    """
    result = run_helper(body, {**env, **({LAUNCH_VARIABLE: kind} if kind else {})}, tmp_path)
    assert result.returncode == 0, result.stderr
    marked = ["hera-volcano:metric loss=0.25", "hera-volcano:metric acc=0.9", "hera-volcano:progress 3/10"]
    assert result.stdout.splitlines() == ["epoch 3 done", *(marked if prints else [])]


def test_the_helper_refuses_on_every_rank_what_it_cannot_print(tmp_path: Path) -> None:
    body = """
        from hera_volcano.runtime import progress
        progress(3, 10, loss=float("nan"))
    """
    for rank in ("0", "1"):
        result = run_helper(body, {LAUNCH_VARIABLE: "torchrun", "RANK": rank}, tmp_path)
        assert result.returncode == 1 and result.stdout == ""
        assert "ProgressError: metric 'loss' must be a finite number, not nan" in result.stderr


def test_the_helper_without_a_rank_to_tell_fails_saying_why(tmp_path: Path) -> None:
    body = "from hera_volcano.runtime import progress\nprogress(1, 2)\n"
    result = run_helper(body, {LAUNCH_VARIABLE: "torchrun"}, tmp_path)
    assert "cannot tell the rank of this process: none of RANK is set" in result.stderr


def test_the_helper_in_process_writes_whole_lines(
    capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(LAUNCH_VARIABLE, raising=False)
    progress(0, 1)
    progress(1, 1, step=7)
    out = capfd.readouterr().out
    assert out == "hera-volcano:progress 0/1\nhera-volcano:metric step=7\nhera-volcano:progress 1/1\n"
    assert [json.loads(line.partition("=")[2]) for line in out.splitlines() if "metric" in line] == [7]


def test_a_users_test_that_captures_stdout_in_a_stringio_gets_the_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    """A training function's own unit test redirects stdout to a StringIO (no file behind it): the lines go there."""
    monkeypatch.delenv(LAUNCH_VARIABLE, raising=False)
    with contextlib.redirect_stdout(io.StringIO()) as captured:
        print("epoch 1")
        progress(1, 2, loss=0.5)
    assert captured.getvalue() == "epoch 1\nhera-volcano:metric loss=0.5\nhera-volcano:progress 1/2\n"


def test_gather_gives_a_listed_output_its_report_else_its_last_metric_and_fails_a_refused_one() -> None:
    """The one rule of the follower and a local run (pods/progress.gather)."""
    from hera_volcano.pods.progress import gather

    got = gather(
        {"acc": "0.9", "extra": "x"},
        {"bad": "output 'bad': two braces"},
        {"loss": 0.25, "acc": 0.1},
        ("loss", "acc", "bad", "gone"),
    )
    assert got.values == {"acc": "0.9", "extra": "x", "loss": "0.25"}, "a report wins over a metric"
    assert (got.refused, got.missing) == ({"bad": "output 'bad': two braces"}, ("gone",))
    refused_with_metric = gather({}, {"loss": "refused"}, {"loss": 0.5}, ("loss",))
    assert refused_with_metric.refused == {"loss": "refused"} and "loss" not in refused_with_metric.values
