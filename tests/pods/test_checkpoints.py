"""A function's checkpoints as it uses them through ``hera_volcano.runtime``: the directory it was given (created), the
newest complete checkpoint of several, a half-written one never read, none on a first run, a write that fails leaving
the last good one, and a clear error where the job has no checkpoint directory."""

from __future__ import annotations

from pathlib import Path

import pytest

from hera_volcano import runtime
from hera_volcano.pods.checkpoints import CheckpointSettings


@pytest.fixture
def directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The run's directory as the job's pods are told it (not there yet: the first rank creates it)."""
    where = tmp_path / "claim" / "0000-uid" / "digest"
    monkeypatch.setenv(CheckpointSettings.DIRECTORY, str(where))
    return where


def save(step: int, text: str) -> None:
    with runtime.save_checkpoint(step) as folder:
        Path(folder, "model.txt").write_text(text)


def test_a_first_run_finds_no_checkpoint_and_the_directory_is_made(directory: Path) -> None:
    assert runtime.latest_checkpoint() is None
    assert runtime.checkpoint_dir() == str(directory) and directory.is_dir()


def test_the_latest_of_several_is_the_highest_step_not_the_last_written(directory: Path) -> None:
    for step in (3, 12, 7):
        save(step, f"weights after {step}")
    latest = runtime.latest_checkpoint()
    assert latest is not None and latest.step == 12
    assert Path(latest.path, "model.txt").read_text() == "weights after 12"
    assert [c.step for c in runtime.checkpoints()] == [3, 7, 12]


def test_a_half_written_checkpoint_is_never_read(directory: Path) -> None:
    save(4, "good")
    with pytest.raises(KeyboardInterrupt), runtime.save_checkpoint(5) as folder:  # the rank killed mid-write
        Path(folder, "model.txt").write_text("half")
        raise KeyboardInterrupt
    # A rank killed by SIGKILL leaves its folder behind: still never read.
    (directory / ".partial-step-6-abc").mkdir()
    (directory / ".partial-step-6-abc" / "model.txt").write_text("half")
    (directory / "step-000000000009.tmp").mkdir()
    latest = runtime.latest_checkpoint()
    assert latest is not None and latest.step == 4 and Path(latest.path, "model.txt").read_text() == "good"
    assert not any(p.name.startswith(".partial-step-5") for p in directory.iterdir()), "a failed write cleans up"


def test_the_same_step_written_again_after_a_restart_replaces_it_whole(directory: Path) -> None:
    save(8, "first run")
    save(8, "after the restart")
    assert [c.step for c in runtime.checkpoints()] == [8]
    assert Path(runtime.checkpoints()[0].path, "model.txt").read_text() == "after the restart"
    assert sorted(p.name for p in directory.iterdir()) == ["step-000000000008"]


def test_keep_removes_the_oldest_complete_checkpoints(directory: Path) -> None:
    for step in range(5):
        with runtime.save_checkpoint(step, keep=2) as folder:
            Path(folder, "model.txt").write_text(str(step))
    assert [c.step for c in runtime.checkpoints()] == [3, 4]


@pytest.mark.parametrize("step", [-1, 1.5, "3", True])
def test_a_step_is_an_integer_from_zero(directory: Path, step: object) -> None:
    with pytest.raises(runtime.CheckpointError, match="integer from 0"), runtime.save_checkpoint(step):  # type: ignore[arg-type]
        pass
    assert not directory.exists(), "nothing written"


def test_without_checkpoints_the_error_says_what_to_give_the_job(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(CheckpointSettings.DIRECTORY, raising=False)
    with pytest.raises(runtime.CheckpointError) as error:
        runtime.latest_checkpoint()
    assert str(error.value).startswith(f"{CheckpointSettings.DIRECTORY} is not set: give the job checkpoints=")


@pytest.mark.parametrize(
    ("value", "says"),
    [("relative/dir", "must be an absolute path"), ("/c/" + "{" * 2 + "workflow.uid}}/x", "Argo did not replace")],
)
def test_a_directory_that_cannot_be_the_runs_is_refused(monkeypatch: pytest.MonkeyPatch, value: str, says: str) -> None:
    monkeypatch.setenv(CheckpointSettings.DIRECTORY, value)
    with pytest.raises(runtime.CheckpointError, match=says):
        runtime.checkpoint_dir()


def test_the_settings_read_back_what_they_write() -> None:
    env = {e["name"]: e["value"] for e in CheckpointSettings("/checkpoints/uid/key").to_env()}
    assert CheckpointSettings.from_env(env) == CheckpointSettings("/checkpoints/uid/key")
    assert set(env) == set(CheckpointSettings.NAMES)
