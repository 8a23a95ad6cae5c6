"""A job's checkpoints, as its program sees them: where they live (:class:`CheckpointSettings`, one directory per run
of one job, the same across Volcano's restarts and Argo's retries), the newest complete one (:func:`latest_checkpoint`),
and writing one whole or not at all (:func:`save_checkpoint`).

A checkpoint is a folder ``step-N`` of that directory (N the training step it holds, twelve digits), written under
another name and renamed when complete: a rank killed in the middle of a write leaves a ``.partial-`` folder that
nothing reads, and the last complete checkpoint as it was. The user's function imports this module as
``hera_volcano.runtime`` (in a pod, the launcher makes it from the pods' ConfigMap, where this file is joined as it
is); a program in any language reads the variable. Standard library only.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import ClassVar, Generic, TypeVar

#: A checkpoint's folder: ``step-`` and its step, padded so that names sort as steps do.
STEP_NAME = "step-"
STEP_DIGITS = 12
_STEP = re.compile(r"step-([0-9]+)")
#: What starts a folder being written (never read as a checkpoint).
PARTIAL = ".partial-"
#: An Argo tag that Argo did not replace (written so that this file holds none: it runs in pods as it is).
_TAG = "{" * 2


class CheckpointError(Exception):
    """The job has no checkpoint directory, or it cannot be used: one line that says why."""


#: What stands for a text in :class:`CheckpointSettings`: ``str`` in the pod; the builders' value holds Argo tags,
#: which Argo replaces before the pod starts.
Text = TypeVar("Text")


@dataclass(frozen=True)
class CheckpointSettings(Generic[Text]):
    """Where a job's checkpoints live, as the environment variable that carries it: the one place that names it. The
    builders write it with :meth:`to_env` (``checkpoints=`` of every builder), the program reads it with
    :meth:`from_env`.

    - ``directory`` (HERA_VOLCANO_CHECKPOINTS): an absolute path on the mounted volume, the run's and the job's own.
    """

    directory: Text

    DIRECTORY: ClassVar[str] = "HERA_VOLCANO_CHECKPOINTS"
    NAMES: ClassVar[tuple[str, ...]] = (DIRECTORY,)

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> CheckpointSettings[str]:
        """The directory the job was given (CheckpointError says why there is none)."""
        directory = env.get(cls.DIRECTORY)
        if not directory:
            raise CheckpointError(
                cls.DIRECTORY + " is not set: give the job checkpoints=hv.Checkpoints(...) (or set it to a folder"
                " when running the function yourself)"
            )
        if _TAG in directory:
            raise CheckpointError(cls.DIRECTORY + " holds an Argo tag Argo did not replace: " + repr(directory))
        if not os.path.isabs(directory):
            raise CheckpointError(cls.DIRECTORY + " must be an absolute path, not " + repr(directory))
        return CheckpointSettings(directory)

    def to_env(self) -> list[dict[str, str | Text]]:
        """The containers' ``env`` entry that :meth:`from_env` reads back."""
        return [{"name": self.DIRECTORY, "value": self.directory}]


@dataclass(frozen=True)
class Checkpoint:
    """A complete checkpoint: the step it holds and its folder."""

    step: int
    path: str


def checkpoint_dir() -> str:
    """The job's checkpoint directory (created if need be): the same for every rank, every Volcano restart and every
    Argo retry of this run of the job, another for another run, another job, another trial of a sweep."""
    directory = CheckpointSettings.from_env(os.environ).directory
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError as e:
        raise CheckpointError("cannot create " + directory + ": " + (e.strerror or str(e))) from None
    return directory


def checkpoints() -> list[Checkpoint]:
    """Every complete checkpoint, oldest step first."""
    directory = checkpoint_dir()
    found = []
    for name in os.listdir(directory):
        match = _STEP.fullmatch(name)
        path = os.path.join(directory, name)
        if match is not None and os.path.isdir(path):
            found.append(Checkpoint(int(match.group(1)), path))
    return sorted(found, key=lambda c: c.step)


def latest_checkpoint() -> Checkpoint | None:
    """The complete checkpoint of the highest step, or None (the first run of this job): where to resume from."""
    found = checkpoints()
    return found[-1] if found else None


def _sync(path: str) -> None:
    """Flush a file or a folder to the volume (where the platform allows it), so a rename never lands first."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _put(partial: str, target: str) -> None:
    """Rename the complete folder ``partial`` to ``target``; a checkpoint of the same step already there (written
    again after a restart) is replaced, never left half."""
    try:
        os.rename(partial, target)
        return
    except OSError:
        if not os.path.isdir(target):
            raise
    old = tempfile.mkdtemp(prefix=PARTIAL + "old-", dir=os.path.dirname(target))
    os.rename(target, os.path.join(old, "step"))
    os.rename(partial, target)
    shutil.rmtree(old, ignore_errors=True)


@contextmanager
def save_checkpoint(step: int, *, keep: int | None = None) -> Iterator[str]:
    """Write the checkpoint of ``step``: the block writes its files into the folder it is given, which becomes
    ``step-N`` only when the block ends without an exception (else it is removed). Call it on one rank (rank 0).

    :param step: the step the checkpoint holds (an integer from 0).
    :param keep: keep only this many complete checkpoints, those of the highest steps (None: all).
    """
    if isinstance(step, bool) or not isinstance(step, int) or step < 0:
        raise CheckpointError("the step of a checkpoint is an integer from 0, not " + repr(step))
    if keep is not None and (isinstance(keep, bool) or not isinstance(keep, int) or keep < 1):
        raise CheckpointError("keep is a number of checkpoints from 1 (or None: all), not " + repr(keep))
    directory = checkpoint_dir()
    partial = tempfile.mkdtemp(prefix=PARTIAL + STEP_NAME + str(step) + "-", dir=directory)
    try:
        yield partial
        for root, _, files in os.walk(partial):
            for name in files:
                _sync(os.path.join(root, name))
        _sync(partial)
        _put(partial, os.path.join(directory, STEP_NAME + str(step).zfill(STEP_DIGITS)))
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    _sync(directory)
    if keep is not None:
        for old in checkpoints()[:-keep]:
            shutil.rmtree(old.path, ignore_errors=True)
