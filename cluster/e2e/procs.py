"""The cluster's daemons as host processes: started detached, recorded by PID, waited for, stopped.

The record (``pids.json`` in the state directory) is what lets ``make cluster-down``, run from another process,
stop exactly what ``make cluster-up`` started, and nothing else.
"""

from __future__ import annotations

import contextlib
import json
import os
import ssl
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from host import alive, stop_pids
from layout import Paths


class StartError(RuntimeError):
    """A component did not start; the message has the end of its log."""


class Processes:
    """The record of started daemons: name → PID (and the command, for a restart)."""

    def __init__(self, paths: Paths) -> None:
        self.paths = paths

    def _load(self) -> dict[str, dict[str, object]]:
        try:
            data: dict[str, dict[str, object]] = json.loads(self.paths.pids.read_text())
            return data
        except (OSError, ValueError):
            return {}

    def _save(self, data: Mapping[str, object]) -> None:
        tmp = self.paths.pids.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, indent=1, sort_keys=True))
        tmp.rename(self.paths.pids)

    def names(self) -> list[str]:
        return list(self._load())

    def pid(self, name: str) -> int | None:
        entry = self._load().get(name)
        return int(entry["pid"]) if entry else None  # type: ignore[call-overload]

    def running(self) -> dict[str, int]:
        return {n: int(e["pid"]) for n, e in self._load().items() if alive(int(e["pid"]))}  # type: ignore[call-overload]

    def spawn(self, name: str, argv: Sequence[str | Path], env: Mapping[str, str] | None = None) -> int:
        """Start ``argv`` in a session of its own, output to logs/NAME.log, and record it."""
        self.paths.logs.mkdir(parents=True, exist_ok=True)
        args = [str(a) for a in argv]
        with open(self.paths.log(name), "ab") as log:
            log.write(f"\n=== {time.strftime('%H:%M:%S')} {' '.join(args)}\n".encode())
            log.flush()
            proc = subprocess.Popen(
                args,
                cwd=self.paths.state,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                env={**os.environ, **(env or {})},
            )
        data = self._load()
        data[name] = {"pid": proc.pid, "argv": args, "env": dict(env or {})}
        self._save(data)
        return proc.pid

    def restart(self, name: str) -> int:
        """Stop ``name`` and start it again with the same command (controllers restarted mid-run)."""
        entry = self._load()[name]
        self.stop(name)
        return self.spawn(name, list(entry["argv"]), dict(entry["env"]))  # type: ignore[call-overload]

    def stop(self, name: str, timeout: float = 15) -> None:
        data = self._load()
        entry = data.pop(name, None)
        if entry:
            stop_pids([int(entry["pid"])], timeout=timeout)  # type: ignore[call-overload]
        self._save(data)

    def stop_all(self, order: Sequence[str]) -> None:
        """Stop in ``order`` (then whatever else is recorded)."""
        for name in [*order, *self.names()]:
            if name in self._load():
                self.stop(name)

    def tail(self, name: str, lines: int = 25) -> str:
        with contextlib.suppress(OSError):
            return "\n".join(self.paths.log(name).read_text(errors="replace").splitlines()[-lines:])
        return ""

    def wait(self, name: str, ready: Callable[[], bool], what: str, timeout: float = 120) -> None:
        """Until ``ready()``; fail early, with its log, if the process exits."""
        deadline = time.monotonic() + timeout
        while True:
            pid = self.pid(name)
            if pid is not None and not alive(pid):
                raise StartError(
                    f"{name} exited while starting ({what}); end of {self.paths.log(name)}:\n{self.tail(name)}"
                )
            try:
                if ready():
                    return
            except Exception:
                pass
            if time.monotonic() > deadline:
                raise StartError(
                    f"{name} not ready after {timeout:.0f} s ({what}); end of {self.paths.log(name)}:\n"
                    f"{self.tail(name)}"
                )
            time.sleep(0.2)


def http_ok(url: str, context: ssl.SSLContext | None = None) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=3, context=context) as response:
            return 200 <= response.status < 300
    except (urllib.error.URLError, OSError):
        return False
