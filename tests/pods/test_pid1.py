"""The MPI master's wait runs under ``scripts/pid1.sh`` as its container's PID 1: it exits as its command does, and
SIGTERM ends it at once even while the command does not yet listen for it (Python as PID 1 ignores SIGTERM until it
has set a handler)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from hera_volcano.kube import pod_scripts

SCRIPT = pod_scripts.read("hera_volcano.builders", "pid1.sh")


def test_it_exits_as_its_command_does() -> None:
    done = subprocess.run(["/bin/sh", "-c", SCRIPT, "sh", sys.executable, "-c", "import sys; sys.exit(7)"])
    assert done.returncode == 7
    ok = subprocess.run(["/bin/sh", "-c", SCRIPT, "sh", sys.executable, "-c", "print('hi')"], capture_output=True)
    assert (ok.returncode, ok.stdout) == (0, b"hi\n")


def test_sigterm_ends_it_at_once_while_its_command_ignores_the_signal() -> None:
    deaf = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(30)"
    proc = subprocess.Popen(["/bin/sh", "-c", SCRIPT, "sh", sys.executable, "-c", deaf], start_new_session=True)
    try:
        time.sleep(1)
        sent = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(5) == 143 and time.monotonic() - sent < 2
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
