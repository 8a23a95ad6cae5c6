"""The files that run in pods as they are (the MPI master's wait for its workers' names, its PID 1),
kept in the package so that they are linted (shellcheck for shell) and run by tests as they are, and read when a
workflow is rendered, so the YAML stays self-contained."""

from __future__ import annotations

from functools import cache
from importlib import resources


@cache
def read(package: str, name: str) -> str:
    """The script ``scripts/NAME`` of ``package``, without its header comment (the file explains; the pod runs)."""
    lines = (
        resources.files(package)
        .joinpath("scripts")
        .joinpath(name)
        .read_text(encoding="utf-8")
        .splitlines(keepends=True)
    )
    start = next((i for i, line in enumerate(lines) if not line.startswith("#")), len(lines))
    return "".join(lines[start:])
