"""Running the CLI in a subprocess, as users do."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Result:
    code: int
    out: str
    err: str


def run(*args: str, stdin: str | None = None, env: Mapping[str, str] | None = None, cwd: str | None = None) -> Result:
    """``python -m ARGS`` with the test interpreter."""
    p = subprocess.run(
        [sys.executable, "-m", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        cwd=cwd,
        timeout=120,
    )
    return Result(p.returncode, p.stdout, p.stderr)
