"""Running the CLI in a subprocess, as users do."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


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


def rendered_document(module: str, *args: str) -> dict[str, Any]:
    """The one YAML document ``python -m MODULE ARGS`` prints, which must succeed silently."""
    import yaml

    r = run(module, *args)
    assert r.code == 0, r.err
    assert r.err == ""
    docs = list(yaml.safe_load_all(r.out))
    assert len(docs) == 1
    doc: dict[str, Any] = docs[0]
    return doc
