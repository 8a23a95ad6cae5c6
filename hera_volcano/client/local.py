"""A job's program run on processes of this machine (:func:`run_local`), before spending a cluster on it.

What runs is decided in :mod:`hera_volcano.client.local_plan` (no I/O): the pods' own launcher with the variables the
cluster gives each rank. This module starts the processes (each in a process group of its own; MPI ranks under
Open MPI's ``mpiexec``), streams their output prefixed by rank, stops them all when one fails or the time runs out
(no process outlives the run), and reads rank 0's report by the rule the log follower reads it by
(:func:`hera_volcano.pods.reports.parse_line`).

A sweep runs locally too, trial by trial (:func:`run_local` given what ``hv.sweep`` returns): each trial one run of
the job as here, the best decided by the sweep's pick's own code (:mod:`hera_volcano.client.local_sweep`).
"""

from __future__ import annotations

import collections
import contextlib
import math
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, TYPE_CHECKING, Final, cast

from hera_volcano.argo.sweep_spec import SweepSpec, spec_of
from hera_volcano.client import local_plan
from hera_volcano.client.local_report import RankZero, read_rank_zero
from hera_volcano.client.local_sweep import run_sweep
from hera_volcano.pods import program as pods_program
from hera_volcano.pods.checkpoints import CheckpointSettings
from hera_volcano.pods.launcher import RUNTIME_FILE
from hera_volcano.shared.errors import LocalRunError, ValidationError
from hera_volcano.volcano.job import VolcanoJob

if TYPE_CHECKING:
    from hera_volcano.argo.sweep import SweepDAG

#: Seconds a process has to end after SIGTERM before it is killed.
GRACE: Final = 5.0
#: Seconds between looks at the processes and their output.
TICK: Final = 0.05
#: The lines of a rank's error output a failure quotes.
LAST_LINES: Final = 20
#: What to install when ``mpiexec`` is missing.
OPEN_MPI: Final = (
    "an MPI job runs locally under Open MPI's mpiexec, which is not on PATH: install Open MPI (Debian and Ubuntu:"
    " apt-get install openmpi-bin python3-mpi4py; macOS: brew install open-mpi) and mpi4py for the python that runs"
    " the ranks"
)
#: Where mpiexec says which rank failed first, and how.
_MPI_FAILED: Final = re.compile(r"Process name: \[\[\d+,\d+\],(\d+)\]\s+Exit code:\s+(\d+)")


def run_local(
    job: VolcanoJob | SweepDAG | SweepSpec,
    arguments: Mapping[str, object] | None = None,
    *,
    processes: int | None = None,
    python: str | None = None,
    timeout: float | None = None,
    output: IO[str] | None = None,
    checkpoints: str | os.PathLike[str] | None = None,
) -> dict[str, str]:
    """Run ``job``'s program on processes of this machine, as its pods would (PyTorch: ``torchrun``'s variables on one
    node, gloo on CPU; MPI: ``mpiexec``; batch: one process per replica; TensorFlow: ``TF_CONFIG``), and return rank
    0's report: each name it reported with the value's text, as the job's outputs carry it (a name it reported only
    as a metric, with ``runtime.progress``, with its last number).

    Given a sweep (what :func:`~hera_volcano.sweep` returns), run its trials one after another, each as above with
    the trial's parameters, and return the outputs its template has on the cluster (``trials``, ``best-params``,
    ``best-trial``, ``best-NAME``), decided by the same code as its pick: a trial that fails is a failed trial with
    its reason (``timeout`` bounds each trial), and the sweep raises :class:`LocalRunError` when its pick would fail.

    :param job: the job (what every builder returns), or a sweep of one.
    :param arguments: the values of the job's inputs (``Placeholder.input``), as a call of its template gives them;
        a misspelt, missing or mistyped one is a :class:`~hera_volcano.ValidationError`. A sweep's: the inputs it
        does not sweep, and for :class:`~hera_volcano.TrialsFrom` the list of trials as ``sweep-trials``.
    :param processes: how many processes (default: the job's size on the cluster: its ranks, or a PyTorch command's
        or a batch job's pods; TensorFlow: all roles, workers making up the rest).
    :param python: the interpreter that runs a Python program (default: this one), such as one with torch or mpi4py.
    :param timeout: seconds the run may take (none by default).
    :param output: where each line of every rank goes, prefixed by its rank (default: ``sys.stderr``).
    :param checkpoints: for a job with ``checkpoints=``, the folder its program keeps them in here (default: a
        fresh folder removed after the run); give the same folder again to resume from what a run left there.
    :raises LocalRunError: a rank failed (its rank and last error lines), the run timed out, or the report is bad.
    """
    chosen = sys.executable if python is None else python
    found = shutil.which(chosen) if isinstance(chosen, str) and chosen else None
    if found is None:
        raise ValidationError("python", f"must be an executable interpreter, got {chosen!r}")
    if timeout is not None and (
        isinstance(timeout, bool) or not isinstance(timeout, int | float) or not 0 < timeout < math.inf
    ):
        raise ValidationError("timeout", f"must be a positive number of seconds, got {timeout!r}")
    out = sys.stderr if output is None else output
    spec = spec_of(job)
    if spec is None:  # a job: the plan refuses anything else, naming it
        plan = local_plan.plan(cast(VolcanoJob, job), arguments, python=found, free_port=free_port, processes=processes)
        if checkpoints is not None and not _keeps_checkpoints(plan):
            raise ValidationError("checkpoints", "is for a job built with checkpoints=hv.Checkpoints(...), not this")
        report = run_plan(plan, timeout=timeout, output=out, checkpoints=checkpoints)
        if report.refused:  # no task lists this job's outputs here: any refused line fails the run, naming it
            raise LocalRunError(f"rank 0's report: {next(iter(report.refused.values()))}", rank=0)
        return report.outputs(tuple(report.metrics)).values
    if checkpoints is not None:
        raise ValidationError("checkpoints", "is a job's: a sweep's trials each keep theirs in a fresh folder")
    swept = spec.job
    return run_sweep(
        spec,
        arguments,
        plan=lambda given: local_plan.plan(swept, given, python=found, free_port=free_port, processes=processes),
        run=lambda plan: run_plan(plan, timeout=timeout, output=out),
        output=out,
    )


def free_port() -> int:
    """A TCP port of the loopback address that nothing listens on now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((local_plan.LOOPBACK, 0))
        return int(s.getsockname()[1])


def run_plan(
    plan: local_plan.LocalPlan,
    *,
    timeout: float | None,
    output: IO[str],
    checkpoints: str | os.PathLike[str] | None = None,
) -> RankZero:
    """Start the plan's processes, follow them to their end (or the first failure, or ``timeout``), stop them all,
    and return what rank 0 reported."""
    with tempfile.TemporaryDirectory(prefix="hera-volcano-local-") as folder:
        base = dict(os.environ)
        if plan.launcher:
            # The launcher and, beside it, the runtime it makes hera_volcano.runtime from (as in the pods' ConfigMap).
            launcher = Path(folder, pods_program.LAUNCHER_FILE)
            launcher.write_text(pods_program.launcher_source(), encoding="utf-8")
            Path(folder, RUNTIME_FILE).write_text(pods_program.runtime_source(), encoding="utf-8")
            base[pods_program.LAUNCHER_PATH] = str(launcher)
        plan = _with_checkpoints(plan, Path(folder, "checkpoints") if checkpoints is None else Path(checkpoints))
        for note in plan.notes:
            _write(output, f"hera-volcano: {note}\n")
        streams = [_Stream(f"rank {r.rank}", Path(folder, f"{r.rank}.{kind}")) for r in plan.ranks for kind in _KINDS]
        mpi = plan.kind == "mpi"
        if mpi:
            streams += [_Stream("mpiexec", Path(folder, f"mpiexec.{kind}")) for kind in _KINDS]
        tail = _Tail(streams, output)
        tail.start()
        started: list[_Process] = []
        try:
            (_start_mpi if mpi else _start)(plan, folder, base, started)
            failed = _wait(started, None if timeout is None else time.monotonic() + timeout)
        finally:
            _stop(started, folder if mpi else None)
            tail.close()
        if isinstance(failed, str):
            raise LocalRunError(
                f"the run outlasted its timeout ({timeout:g} s): every process was stopped", timed_out=True
            )
        if failed is not None:
            raise _failure(failed, tail, mpi)
        out = Path(folder, "0.out")
        return read_rank_zero(out.read_bytes().decode("utf-8", errors="replace") if out.exists() else "")


_KINDS: Final = ("out", "err")


def _with_checkpoints(plan: local_plan.LocalPlan, folder: Path) -> local_plan.LocalPlan:
    """The plan with a job's checkpoint folder (``checkpoints=``, a claim's path and Argo's run and node on the
    cluster) here instead: ``folder``, made absolute, which the runtime creates."""
    if not _keeps_checkpoints(plan):
        return plan
    here = str(folder.resolve())
    variable = CheckpointSettings.DIRECTORY
    return replace(plan, ranks=tuple(replace(r, env={**r.env, variable: here}) for r in plan.ranks))


def _keeps_checkpoints(plan: local_plan.LocalPlan) -> bool:
    """Whether the job was built with ``checkpoints=``: its ranks are told where they keep them."""
    return any(CheckpointSettings.DIRECTORY in r.env for r in plan.ranks)


@dataclass
class _Process:
    """A started process: the rank it is (None: ``mpiexec``, which runs them all) and its handle."""

    rank: int | None
    popen: subprocess.Popen[bytes]


def _start(plan: local_plan.LocalPlan, folder: str, base: Mapping[str, str], started: list[_Process]) -> None:
    """Each rank in a process group of its own, its output in ``folder/RANK.out`` and ``.err``; each process is in
    ``started`` as soon as it runs (to be stopped whatever happens next)."""
    for rank in plan.ranks:
        with open(Path(folder, f"{rank.rank}.out"), "wb") as out, open(Path(folder, f"{rank.rank}.err"), "wb") as err:
            started.append(_Process(rank.rank, _popen(rank.argv, {**base, **rank.env}, out, err, rank.rank)))


def _start_mpi(plan: local_plan.LocalPlan, folder: str, base: Mapping[str, str], started: list[_Process]) -> None:
    """``mpiexec`` (Open MPI's), starting every rank."""
    mpiexec = shutil.which("mpiexec")
    if mpiexec is None:
        raise LocalRunError(OPEN_MPI)
    version = subprocess.run([mpiexec, "--version"], capture_output=True, text=True, check=False, timeout=60)
    if "Open MPI" not in version.stdout and "OpenRTE" not in version.stdout:
        raise LocalRunError(f"{mpiexec} is not Open MPI's mpiexec: {OPEN_MPI.partition(': ')[2]}")
    argv = local_plan.mpiexec_command(mpiexec, plan, folder, root=os.geteuid() == 0)
    with open(Path(folder, "mpiexec.out"), "wb") as out, open(Path(folder, "mpiexec.err"), "wb") as err:
        started.append(_Process(None, _popen(argv, {**base, **plan.ranks[0].env}, out, err, None)))


def _popen(
    argv: Sequence[str], env: Mapping[str, str], out: IO[bytes], err: IO[bytes], rank: int | None
) -> subprocess.Popen[bytes]:
    try:
        return subprocess.Popen(
            list(argv), env=dict(env), stdin=subprocess.DEVNULL, stdout=out, stderr=err, start_new_session=True
        )
    except OSError as e:
        who = "mpiexec" if rank is None else f"rank {rank}"
        raise LocalRunError(f"{who} cannot start {argv[0]}: {e.strerror or e}", rank=rank) from None


def _wait(started: Sequence[_Process], deadline: float | None) -> _Process | str | None:
    """The first process to fail, ``"timeout"``, or None when every one exited with status 0."""
    while True:
        running = False
        for process in started:
            code = process.popen.poll()
            if code is None:
                running = True
            elif code != 0:
                return process
        if not running:
            return None
        if deadline is not None and time.monotonic() > deadline:
            return "timeout"
        time.sleep(TICK)


def _stop(started: Sequence[_Process], mpi_folder: str | None) -> None:
    """End every process and what it started: SIGTERM to each group, SIGKILL after :data:`GRACE` seconds (MPI ranks
    are process groups of their own, found by the process ids they wrote)."""
    for process in started:
        if process.popen.poll() is None:
            _signal(process.popen.pid, signal.SIGTERM)
    end = time.monotonic() + GRACE
    for process in started:
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.popen.wait(max(0.0, end - time.monotonic()))
    groups = [p.popen.pid for p in started]
    if mpi_folder is not None:
        groups += [int(t) for p in Path(mpi_folder).glob("*.pid") if (t := p.read_text().strip()).isdigit()]
    for group in groups:
        _signal(group, signal.SIGKILL)
    for process in started:
        process.popen.wait()


def _signal(group: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(group, signum)


def _failure(failed: _Process, tail: _Tail, mpi: bool) -> LocalRunError:
    """The error of a failed run: the rank that failed first, its status and its last error lines."""
    rank, code = failed.rank, failed.popen.returncode
    if mpi:
        said = _MPI_FAILED.search(" ".join(tail.last("mpiexec")))
        rank, code = (int(said.group(1)), int(said.group(2))) if said else (None, code)
    lines = tuple(tail.last(f"rank {rank}" if rank is not None else "mpiexec"))
    how = f"was killed by signal {-code}" if code < 0 else f"exited with status {code}"
    who = f"rank {rank}" if rank is not None else "mpiexec"
    quoted = " | ".join(line.strip() for line in lines[-2:] if line.strip())
    hint = ""
    if any("ModuleNotFoundError" in line for line in lines):
        hint = " (give python= / --python an interpreter that has the module)"
    return LocalRunError(
        f"{who} {how}" + (f": {quoted}" if quoted else "") + hint, rank=rank, exit_code=code, lines=lines
    )


def _write(output: IO[str], text: str) -> None:
    with contextlib.suppress(OSError, ValueError):
        output.write(text)
        output.flush()


@dataclass
class _Stream:
    """One output file of a process, read as it grows: its complete lines go out prefixed by ``label``."""

    label: str
    path: Path
    handle: IO[bytes] | None = None
    partial: bytes = b""
    last: collections.deque[str] = field(default_factory=lambda: collections.deque(maxlen=LAST_LINES))

    def read(self, output: IO[str], final: bool) -> None:
        if self.handle is None:
            try:
                self.handle = open(self.path, "rb")  # noqa: SIM115 - kept open while the process writes
            except FileNotFoundError:
                return
        data = self.partial + self.handle.read()
        lines = data.split(b"\n")
        self.partial = lines.pop()  # what follows the last line break: the start of a line still being written
        if final and self.partial:
            lines.append(self.partial)
        for raw in lines:
            line = raw.decode("utf-8", errors="replace").removesuffix("\r")
            if self.path.suffix == ".err":
                self.last.append(line)
            _write(output, f"[{self.label}] {line}\n")
        if final:
            self.handle.close()


class _Tail(threading.Thread):
    """Every process's output, relayed line by line as it comes."""

    def __init__(self, streams: Sequence[_Stream], output: IO[str]) -> None:
        super().__init__(name="hera-volcano-local-output", daemon=True)
        self._streams = list(streams)
        self._output = output
        self._done = threading.Event()

    def run(self) -> None:
        while not self._done.wait(TICK):
            for stream in self._streams:
                stream.read(self._output, final=False)

    def close(self) -> None:
        """Stop following, after the last of every file."""
        self._done.set()
        self.join()
        for stream in self._streams:
            stream.read(self._output, final=True)

    def last(self, label: str) -> list[str]:
        """The last error lines of the process ``label`` (``rank N``, ``mpiexec``)."""
        return [line for s in self._streams if s.label == label and s.path.suffix == ".err" for line in s.last]
