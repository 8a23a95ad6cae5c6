"""Running a pod script for real, under bash, against the fake kubectl (fake_kubectl.py) and a world the test changes.

``World`` holds the pods and faults the fake serves; ``Script`` runs one script in its own
process group (so nothing it starts outlives the test), records each line it prints with the time it came, and
offers bounded waits: a regression fails the test instead of hanging it.
"""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


class World:
    """The cluster as the fake kubectl sees it: change it with :meth:`change`, which every watch notices."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.path = folder / "world.json"
        self.calls_path = folder / "calls.jsonl"
        self.calls_path.write_text("")
        self.state: dict[str, Any] = {"version": 0, "pods": {}, "faults": {}}
        self._write()

    def _write(self) -> None:
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.state))
        tmp.rename(self.path)

    def change(self, edit: Callable[[dict[str, Any]], None]) -> None:
        # The fake may have counted a fault down: start from what is on disk.
        self.state = json.loads(self.path.read_text())
        edit(self.state)
        self.state["version"] += 1
        self._write()

    def pod(
        self,
        name: str,
        *,
        task: str = "mpimaster",
        phase: str = "Pending",
        ready: bool | None = None,
        labels: dict[str, str] | None = None,
    ) -> None:
        """A pod of ``task``, Ready or not."""
        pod: dict[str, Any] = {"task": task, "phase": phase, "labels": labels or {}}
        if ready is not None:
            pod["ready"] = ready

        def edit(s: dict[str, Any]) -> None:
            s["pods"][name] = pod

        self.change(edit)

    def fault(self, key: str, **spec: Any) -> None:
        """Calls of ``key`` (watch-jobs, watch-pods, get-pods, logs, wait) fail (``fail``: a count or True, with
        ``error``), answer after ``delay`` seconds, or (watches) end after ``expire_after`` events."""

        def edit(s: dict[str, Any]) -> None:
            if spec:
                s["faults"][key] = spec
            else:
                s["faults"].pop(key, None)

        self.change(edit)

    def calls(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.calls_path.read_text().splitlines() if line]


class Script:
    """One script run under bash against the fake kubectl of ``world``, in its own process group."""

    def __init__(self, script: str, world: World, env: dict[str, str]) -> None:
        bin_dir = world.folder / "bin"
        bin_dir.mkdir(exist_ok=True)
        kubectl = bin_dir / "kubectl"
        kubectl.write_text(f"#!{sys.executable}\n" + (HERE / "fake_kubectl.py").read_text())
        kubectl.chmod(kubectl.stat().st_mode | stat.S_IEXEC)
        base = {k: v for k, v in os.environ.items() if not k.startswith(("KUBERNETES_", "KUBECONFIG"))}
        self.env = {
            **base,
            "PATH": f"{bin_dir}:{os.environ['PATH']}",
            "FAKE_WORLD": str(world.path),
            "FAKE_CALLS": str(world.calls_path),
            "TMPDIR": str(world.folder),
            **env,
        }
        self.lines: list[tuple[float, str]] = []
        self.errors: list[str] = []
        self.started = time.monotonic()
        self.proc = subprocess.Popen(
            ["bash", "-c", script],
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        self._readers = [
            threading.Thread(target=self._read, args=(self.proc.stdout, self.lines), daemon=True),
            threading.Thread(target=self._read_err, daemon=True),
        ]
        for reader in self._readers:
            reader.start()

    def _read(self, stream: Any, into: list[tuple[float, str]]) -> None:
        for line in stream:
            into.append((time.monotonic(), line.rstrip("\n")))

    def _read_err(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.errors.append(line.rstrip("\n"))

    @property
    def output(self) -> list[str]:
        return [text for _, text in self.lines]

    def wait_for(self, what: Callable[[], bool], description: str, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while not what():
            if self.proc.poll() is not None and not what():
                raise AssertionError(
                    f"the script ended ({self.proc.returncode}) before {description}:\n{self.report()}"
                )
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out after {timeout} s waiting for {description}:\n{self.report()}")
            time.sleep(0.02)

    def wait_line(self, text: str, timeout: float = 30) -> float:
        """Until a line containing ``text`` was printed; returns when it came."""
        self.wait_for(lambda: any(text in t for _, t in self.lines), f"a line with {text!r}", timeout)
        return next(at for at, t in self.lines if text in t)

    def exit(self, timeout: float = 30) -> tuple[int, float]:
        """The script's exit code and when it ended, within ``timeout`` seconds."""
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"the script did not end within {timeout} s:\n{self.report()}") from None
        ended = time.monotonic()
        for reader in self._readers:
            reader.join(5)
        return self.proc.returncode, ended

    def terminate(self) -> float:
        """Send SIGTERM to the script (bash itself, as the kubelet does to PID 1); returns when."""
        self.proc.send_signal(signal.SIGTERM)
        return time.monotonic()

    def report(self) -> str:
        return "stdout:\n  " + "\n  ".join(self.output) + "\nstderr:\n  " + "\n  ".join(self.errors)

    def kill(self) -> None:
        with suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(5)


def group_alive(pid: int) -> bool:
    """Whether any process of the process group ``pid`` is left running (zombies, which only wait for their new
    parent to reap them, do not count)."""
    for stat_file in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat_file.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z" and int(fields[2]) == pid:
            return True
    return False


@contextmanager
def running(script: str, world: World, env: dict[str, str]) -> Iterator[Script]:
    run = Script(script, world, env)
    try:
        yield run
    finally:
        run.kill()
