"""The CLI at the edges of its input and output: closed or full streams, unreadable folders, FIFOs, read-only
folders halfway through a render. Bad input is one line on stderr, exit 2, and changes nothing."""

from __future__ import annotations

import json
import os
import resource
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from hera_volcano.cli.files import WriteError, write_files
from hera_volcano.tools.render import HEADER
from tests.commands import Result, run

BROKEN = "a: [1\n"  # one error finding


def _shell(redirect: str, *args: str, timeout: float = 60) -> Result:
    """``python -m ARGS REDIRECT`` through ``sh``, e.g. with stdout closed (``>&-``) or full (``>/dev/full``)."""
    p = subprocess.run(
        ["sh", "-c", f'exec "$0" "$@" {redirect}', sys.executable, "-m", *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return Result(p.returncode, p.stdout, p.stderr)


def _one_line(r: Result) -> bool:
    return r.code == 2 and r.out == "" and len(r.err.splitlines()) == 1 and "Traceback" not in r.err


def _unprivileged() -> list[str]:
    """A command prefix under which file permissions bind: root's override capabilities dropped (``setpriv``)."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    prefix = [setpriv or "setpriv", "--bounding-set=-dac_override,-dac_read_search", "--"]
    if setpriv is None or subprocess.run([*prefix, "true"], capture_output=True).returncode != 0:
        pytest.skip("running as root without a working setpriv: permissions cannot be made to bind")
    return prefix


def _run_unprivileged(*args: str, cwd: Path) -> Result:
    p = subprocess.run(
        [*_unprivileged(), sys.executable, "-m", *args], capture_output=True, text=True, cwd=cwd, timeout=120
    )
    return Result(p.returncode, p.stdout, p.stderr)


def _tree(root: Path) -> dict[str, bytes | None]:
    """Every path under ``root`` (hidden ones too) with its bytes (None for a folder)."""
    return {p.relative_to(root).as_posix(): p.read_bytes() if p.is_file() else None for p in root.rglob("*")}


# ---- render: all or nothing ------------------------------------------------------------------------------------------


@pytest.fixture
def rendered(tmp_path: Path) -> Path:
    assert run("hera_volcano", "render", "--bundled", "--out", str(tmp_path)).code == 0
    return tmp_path


def _drift(root: Path, *files: str) -> None:
    for drifted in files:
        with (root / drifted).open("a") as f:
            f.write("# drifted\n")


def _render_with_read_only_workflows(root: Path) -> tuple[Result, dict[str, bytes | None]]:
    """Render into ``root`` while ``workflows/`` is read-only; the result and the tree as it was before."""
    before = _tree(root)
    (root / "workflows").chmod(0o555)
    try:
        return _run_unprivileged("hera_volcano", "render", "--bundled", cwd=root), before
    finally:
        (root / "workflows").chmod(0o755)


def test_a_render_that_cannot_write_one_file_changes_none(rendered: Path) -> None:
    _drift(rendered, "rbac/rbac.yaml", "workflows/volcano-dag-job.yaml")
    r, before = _render_with_read_only_workflows(rendered)
    assert _tree(rendered) == before, "rbac/rbac.yaml is not rewritten and no temporary file is left behind"
    assert _one_line(r), r
    assert "workflows/volcano-dag-job.yaml: Permission denied" in r.err


def test_a_render_that_cannot_remove_a_stale_file_changes_none(rendered: Path) -> None:
    (rendered / "workflows" / "stale.yaml").write_text(HEADER + "kind: x\n")  # rendered once, gone from the code
    _drift(rendered, "rbac/rbac.yaml")
    r, before = _render_with_read_only_workflows(rendered)
    assert _tree(rendered) == before, "rbac/rbac.yaml is not rewritten"
    assert _one_line(r), r
    assert "cannot remove workflows/stale.yaml" in r.err


def test_a_render_into_a_new_folder_that_fails_leaves_no_folders(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "workflows").mkdir(mode=0o555)
    r = _run_unprivileged("hera_volcano", "render", "--bundled", "--out", "out", cwd=tmp_path)
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["workflows"], "rbac/ is not left behind"
    assert _one_line(r), r
    assert "cannot write out/workflows/" in r.err


# ---- closed and full standard streams -----------------------------------------------------------------------------


@pytest.mark.parametrize("redirect", [">&-", ">/dev/full"])
@pytest.mark.parametrize("fmt", ["text", "json"])
def test_lint_to_a_closed_or_full_stdout_is_one_line(redirect: str, fmt: str, tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text(BROKEN)
    r = _shell(redirect, "hera_volcano", "lint", "--format", fmt, str(tmp_path / "bad.yaml"))
    assert _one_line(r), r
    assert "standard output" in r.err


def test_a_clean_lint_with_stdout_closed_has_nothing_to_lose(tmp_path: Path) -> None:
    (tmp_path / "ok.yaml").write_text("apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: a}\n")
    r = _shell(">&-", "hera_volcano", "lint", str(tmp_path / "ok.yaml"))
    assert (r.code, r.err) == (0, "no problems in 1 file\n")


@pytest.mark.parametrize("command", ["lint", "rbac"])
def test_reading_a_closed_stdin_is_one_line(command: str) -> None:
    r = _shell("<&-", "hera_volcano", command, "-")
    assert _one_line(r), r
    assert r.err == f"hera-volcano {command}: error: standard input is closed\n"


@pytest.mark.parametrize("redirect", [">&-", ">/dev/full"])
def test_help_to_a_closed_or_full_stdout_is_one_line(redirect: str) -> None:
    assert _one_line(_shell(redirect, "hera_volcano", "--help"))


def test_render_check_to_a_closed_stdout_is_one_line(tmp_path: Path) -> None:
    r = _shell(">&-", "hera_volcano", "render", "--bundled", "--check", "--out", str(tmp_path))
    assert _one_line(r), r


# ---- lint: folders that cannot be read, files that are not files ------------------------------------------------


def test_an_unreadable_folder_is_a_finding(tmp_path: Path) -> None:
    locked = tmp_path / "d" / "locked"
    locked.mkdir(parents=True)
    (locked / "bad.yaml").write_text(BROKEN)
    locked.chmod(0)
    try:
        top = _run_unprivileged("hera_volcano", "lint", "d", cwd=tmp_path)
        named = _run_unprivileged("hera_volcano", "lint", "d/locked", cwd=tmp_path)
    finally:
        locked.chmod(0o755)
    for r in (top, named):
        assert (r.code, r.err) == (1, "1 error, 0 warnings in 1 of 1 file\n"), r
        assert r.out == "d/locked: [0]: error: cannot read directory: Permission denied\n"


def test_a_fifo_in_a_folder_is_skipped_not_read(tmp_path: Path) -> None:
    (tmp_path / "pipe.yaml").unlink(missing_ok=True)
    os.mkfifo(tmp_path / "pipe.yaml")
    (tmp_path / "bad.yaml").write_text(BROKEN)
    r = _shell("", "hera_volcano", "lint", str(tmp_path), timeout=60)
    assert r.code == 1 and r.err == "1 error, 0 warnings in 1 of 1 file\n"
    assert [line.split(": ")[0].rpartition(":")[0] for line in r.out.splitlines()] == [str(tmp_path / "bad.yaml")]


def test_a_named_fifo_is_read_like_cat_reads_it(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.yaml"
    os.mkfifo(fifo)
    p = subprocess.run(
        ["bash", "-c", 'printf "a: [1\\n" > "$1" & exec "$0" -m hera_volcano lint "$1"', sys.executable, str(fifo)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (p.returncode, p.stderr) == (1, "1 error, 0 warnings in 1 of 1 file\n")
    assert p.stdout.startswith(f"{fifo}:2: [0]: error: not valid YAML") and len(p.stdout.splitlines()) == 1


# ---- option names and output paths ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("option", "value"),
    [("--slots-per-worker", "5000"), ("--gpus-per-worker", "999999999"), ("--rdma-per-worker", "1025")],
)
def test_model_limits_name_the_option(option: str, value: str) -> None:
    r = run("hera_volcano.mpi_hello", option, value)
    assert _one_line(r), r
    assert r.err.startswith(f"hera-volcano mpi-hello: error: argument {option}: must be at most ")


@pytest.mark.parametrize("command", ["mpi_hello", "pytorch_hello", "data_pipeline"])
def test_every_option_of_a_bundled_workflow_with_a_value_maps_model_errors_to_itself(command: str) -> None:
    import importlib
    from dataclasses import fields

    from hera_volcano.cli.common import COMMON_OPTIONS

    cli = importlib.import_module(f"hera_volcano.cli.{command}")
    model = {f.name for f in fields(importlib.import_module(f"hera_volcano.examples.{command}").Options)}
    options = {**COMMON_OPTIONS, **cli._OPTION}
    checked = 0
    for action in cli._parser()._actions:
        if action.dest in model and action.nargs != 0:
            assert options.get(action.dest) == action.option_strings[-1], action.dest
            checked += 1
    assert checked >= 5


def test_output_under_a_file_says_not_a_directory(tmp_path: Path) -> None:
    (tmp_path / "keep.yaml").write_text("x\n")
    r = run("hera_volcano.mpi_hello", "--output-file", str(tmp_path / "keep.yaml" / "sub"))
    assert _one_line(r), r
    assert r.err.endswith(": Not a directory\n")
    assert (tmp_path / "keep.yaml").read_text() == "x\n"


def test_output_through_a_symlink_loop_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "loop.yaml").symlink_to(tmp_path / "loop.yaml")
    r = run("hera_volcano.mpi_hello", "--output-file", str(tmp_path / "loop.yaml"))
    assert _one_line(r), r
    assert (tmp_path / "loop.yaml").is_symlink()


def test_a_rename_that_fails_after_others_puts_every_file_back(tmp_path: Path) -> None:
    # `a` is staged as a file, then `a/b` needs a folder `a`: renaming `a` into place fails after `x` was replaced.
    x = tmp_path / "x"
    x.write_text("old\n")
    with pytest.raises(WriteError) as e:
        write_files({x: "new\n", tmp_path / "a": "A\n", tmp_path / "a" / "b": "B\n"})
    assert "cannot write" in str(e.value)
    assert _tree(tmp_path) == {"x": b"old\n"}, "x is restored, a/ is removed, no temporary file is left"


def test_a_successful_write_leaves_no_backup_or_removed_file(tmp_path: Path) -> None:
    x, gone = tmp_path / "x", tmp_path / "gone"
    x.write_text("old\n")
    x.chmod(0o640)
    gone.write_text("stale\n")
    write_files({x: "new\n", gone: None})
    assert _tree(tmp_path) == {"x": b"new\n"} and (x.stat().st_mode & 0o777) == 0o640


# ---- hostile or odd input: one line, a documented exit code ---------------------------------------------------------


@pytest.mark.parametrize("files", [[], ["notes.txt", "README.md"]])
def test_linting_a_folder_with_no_yaml_is_a_usage_error(files: list[str], tmp_path: Path) -> None:
    for name in files:
        (tmp_path / name).write_text("kind: Workflow\n")
    r = run("hera_volcano", "lint", str(tmp_path))
    assert _one_line(r), r
    assert r.err == f"hera-volcano lint: error: {tmp_path}: no YAML files (*.yaml, *.yml) in this folder\n"


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_a_file_name_that_is_not_utf8_is_printed_escaped(fmt: str, tmp_path: Path) -> None:
    (tmp_path / os.fsdecode(b"caf\xe9.yaml")).write_text(BROKEN)  # Latin-1, as an old archive may hold
    r = run("hera_volcano", "lint", "--format", fmt, str(tmp_path), env={"PYTHONIOENCODING": "utf-8"})
    assert r.code == 1 and "Traceback" not in r.err, r
    if fmt == "text":
        [line] = r.out.splitlines()
        assert line.startswith(f"{tmp_path}/caf\\udce9.yaml:2: [0]: error: not valid YAML")
    else:
        [finding] = json.loads(r.out)["findings"]
        assert finding["file"] == str(tmp_path / os.fsdecode(b"caf\xe9.yaml"))


def _with_memory_limit(limit: int) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


@pytest.mark.parametrize("command", [["lint"], ["submit", "--dry-run"]])
def test_a_file_larger_than_memory_is_one_line(command: list[str], tmp_path: Path) -> None:
    huge = tmp_path / "huge.yaml"
    with huge.open("wb") as f:
        f.truncate(3 << 30)  # sparse: 3 GiB that take no disk
    p = subprocess.run(
        [sys.executable, "-m", "hera_volcano", *command, str(huge)],
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=lambda: _with_memory_limit(1536 << 20),
    )
    assert "Traceback" not in p.stderr and "larger than the memory available" in p.stdout + p.stderr, p
    if command == ["lint"]:
        assert (
            p.returncode == 1
            and p.stdout == f"{huge}: [0]: error: cannot read: the file is larger than the memory available\n"
        )
    else:
        assert (p.returncode, p.stdout) == (2, "")


def test_ctrl_c_is_one_line_and_exit_130(tmp_path: Path) -> None:
    fifo = tmp_path / "slow.yaml"
    os.mkfifo(fifo)
    child = subprocess.Popen(
        [sys.executable, "-m", "hera_volcano", "lint", str(fifo)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # As a terminal's Ctrl-C finds it, whatever started this suite: a shell's background job (`make test &`)
        # ignores SIGINT, and Python keeps an ignored SIGINT ignored, so the child would wait forever.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    with fifo.open("w"):  # opens once lint has opened it to read: it is running, and waits for the text
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=60)
    assert (child.returncode, out, err) == (130, "", "hera-volcano lint: interrupted\n")


@pytest.mark.parametrize("fmt", ["yaml", "json"])
def test_a_parameter_that_is_not_utf8_is_one_line(fmt: str, tmp_path: Path) -> None:
    workflow = tmp_path / "mpi.yaml"
    workflow.write_text(run("hera_volcano", "mpi-hello").out)
    value = os.fsdecode(b"caf\xe9")  # Latin-1 from an old shell script
    r = run("hera_volcano", "submit", "--dry-run", "-o", fmt, "-p", f"job-name={value}", str(workflow))
    assert _one_line(r), r
    assert "parameters[job-name]: must be valid Unicode text (it holds a lone surrogate)" in r.err


@pytest.mark.parametrize("name", ["two\nlines.yaml", os.fsdecode(b"caf\xe9.yaml")])
def test_an_error_quoting_an_odd_file_name_is_one_line(name: str, tmp_path: Path) -> None:
    r = run("hera_volcano", "lint", str(tmp_path / name), env={"PYTHONIOENCODING": "utf-8:strict"})
    assert _one_line(r), r
    assert r.err.endswith(": no such file or directory\n")


@pytest.mark.parametrize("command", [["submit", "--dry-run"], ["rbac"]])
def test_a_merge_key_bomb_is_one_line(command: list[str], tmp_path: Path) -> None:
    from tests.bombs import merge_bomb

    bomb = tmp_path / "bomb.yaml"
    bomb.write_text("apiVersion: argoproj.io/v1alpha1\nkind: Workflow\nmetadata: {name: x}\n" + merge_bomb())
    r = run("hera_volcano", *command, str(bomb))
    assert _one_line(r), r
    assert "aliases and merge keys (<<) expand this YAML past" in r.err
