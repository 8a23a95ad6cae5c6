"""Run a command the way argoexec's emissary runs a container's: as the container's first process, which every
orphan of the command is handed to (a child subreaper here).

The emissary reaps any child, one a second (``wait4(-1)`` then a 1 s sleep: workflow/executor/osspecific), and ends
the container only once it reaped the command itself: every process the command leaves behind, dead or alive, can
cost the step a second. So this records, in the file named by the first argument, the orphans it reaped and whether
any was still running when the command ended, and exits as the command did.

Usage: reaper.py REPORT COMMAND...
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import subprocess
import sys
import time

PR_SET_CHILD_SUBREAPER = 36


def main() -> int:
    report, command = sys.argv[1], sys.argv[2:]
    if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")
    proc = subprocess.Popen(command)
    signal.signal(signal.SIGTERM, lambda signum, _frame: proc.send_signal(signum))
    orphans: list[int] = []
    status = 0
    while True:
        try:
            pid, wait_status = os.waitpid(-1, 0)
        except InterruptedError:
            continue
        if pid == proc.pid:
            status = os.waitstatus_to_exitcode(wait_status)
            break
        orphans.append(pid)
    time.sleep(0.2)  # what the command killed as it ended is gone by now, unless it outlives the command
    alive = False
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:
            alive = True
            break
        orphans.append(pid)
    with open(report, "w") as f:
        json.dump({"orphans": len(orphans), "alive": alive}, f)
    return status if status >= 0 else 128 - status


if __name__ == "__main__":
    sys.exit(main())
