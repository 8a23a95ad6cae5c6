"""The MPI master's wait for its workers' names (hera_volcano/builders/scripts/resolve_workers.sh), under POSIX sh
with only ``tr``, a no-op ``sleep`` and a fake ``getent``."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from hera_volcano.kube import pod_scripts

RESOLVE = pod_scripts.read("hera_volcano.builders", "resolve_workers.sh")


def run_resolve(tmp_path: Path, getent: str | None) -> tuple[int, str, list[str]]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "tr").symlink_to(shutil.which("tr") or "/usr/bin/tr")
    tools = {"sleep": "exit 0"}
    if getent is not None:
        tools["getent"] = getent
    for name, body in tools.items():
        (bin_dir / name).write_text(f"#!/bin/sh\n{body}\n")
        (bin_dir / name).chmod(0o755)
    log = tmp_path / "asked"
    log.touch()
    p = subprocess.run(
        ["/bin/sh", "-c", RESOLVE],
        env={"PATH": str(bin_dir), "HOSTS": "w-0.j:2,w-1.j:2", "ASKED": str(log)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    return p.returncode, p.stderr, log.read_text().split()


def test_master_waits_until_every_worker_resolves(tmp_path: Path) -> None:
    # w-1.j resolves on the third lookup; the slot counts are not part of the names looked up.
    getent = """echo "$2" >> "$ASKED"; n=0; [ -f "$ASKED.$2" ] && read -r n < "$ASKED.$2"
n=$((n + 1)); echo "$n" > "$ASKED.$2"; [ "$2" = w-0.j ] || [ "$n" -ge 3 ]"""
    code, _, asked = run_resolve(tmp_path, getent)
    assert code == 0 and asked == ["w-0.j", "w-1.j", "w-1.j", "w-1.j"]


def test_master_gives_up_on_a_worker_that_never_resolves(tmp_path: Path) -> None:
    code, err, asked = run_resolve(tmp_path, 'echo "$2" >> "$ASKED"; exit 2')
    assert code == 1 and "Worker w-0.j does not resolve after 60 attempts" in err and len(asked) == 60


def test_master_skips_the_dns_wait_without_getent(tmp_path: Path) -> None:
    code, _, asked = run_resolve(tmp_path, None)
    assert code == 0 and asked == []
