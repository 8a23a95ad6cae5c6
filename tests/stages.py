"""`make test`'s stages, timed: what each one cost, printed at the end of every run (CI's log too), failed or not.

    python tests/stages.py TARGET...          run `make TARGET` for each in turn (stop at the first failure), then
                                              print the minutes each took
    python tests/stages.py time NAME CMD...   run CMD; inside a timed stage, record NAME as a part of it

A part (the cluster's build inside the end-to-end stage, its start, which tests/e2e/conftest.py records) is shown on
its own line and taken out of its stage's time, so each line is what that stage alone cost.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

#: The file a timed stage's parts are appended to (NAME, a tab, seconds), set for the stages' commands.
ENV = "HERA_VOLCANO_STAGES"
#: What each make target is called in the table.
NAMES = {
    "check": "check (ruff, mypy, docs, packaging)",
    "unit": "unit",
    "test-cluster": "control plane",
    "conformance": "conformance (Argo's validators)",
    "e2e-unless-skipped": "e2e scenarios",
    "test-e2e": "e2e scenarios",
}


def run_stages(targets: list[str]) -> int:
    rows: list[tuple[str, float]] = []
    code = 0
    with tempfile.TemporaryDirectory() as tmp:
        for target in targets:
            parts = Path(tmp) / f"{target}.tsv"
            parts.touch()
            began = time.monotonic()
            code = subprocess.call(["make", "--no-print-directory", target], env={**os.environ, ENV: str(parts)})
            took = time.monotonic() - began
            inner = [(name, float(seconds)) for name, seconds in _read(parts)]
            rows.extend(inner)
            rows.append(
                (NAMES.get(target, target) + ("" if code == 0 else " (failed)"), took - sum(s for _, s in inner))
            )
            if code != 0:
                break
    width = max(len(name) for name, _ in rows)
    print(f"\nmake test: minutes per stage ({'passed' if code == 0 else f'failed, exit {code}'})")
    for name, seconds in rows:
        print(f"  {name:<{width}}  {seconds / 60:5.1f}")
    print(f"  {'total':<{width}}  {sum(s for _, s in rows) / 60:5.1f}")
    return code


def _read(path: Path) -> list[tuple[str, str]]:
    return [tuple(line.split("\t", 1)) for line in path.read_text().splitlines() if "\t" in line]  # type: ignore[misc]


def record(name: str, seconds: float) -> None:
    """Append a part to the running stage's record, when a stage is being timed."""
    path = os.environ.get(ENV)
    if path:
        with open(path, "a") as f:
            f.write(f"{name}\t{seconds:.1f}\n")


def time_part(name: str, argv: list[str]) -> int:
    began = time.monotonic()
    code = subprocess.call(argv)
    record(name, time.monotonic() - began)
    return code


def main(argv: list[str]) -> int:
    if len(argv) >= 3 and argv[0] == "time":
        return time_part(argv[1], argv[2:])
    if not argv or argv[0] == "time":
        print(__doc__, file=sys.stderr)
        return 2
    return run_stages(argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
