"""The documentation's examples as the tests read and run them: the fenced blocks of README.md and docs/**/*.md.

A block's info string says what it is and who runs it:

- ```` ```python ````: prints Workflows (YAML). The unit tests run it; the end-to-end suite submits what it prints.
- ```` ```python offline ````: prints Kubernetes objects (YAML) the unit tests run and lint, but the end-to-end suite
  does not submit (its images or volumes are not in the test cluster).
- ```` ```python cluster ````: talks to a cluster (``hv.Client``); compiled here, run by tests/e2e/test_client.py.
- ```` ```python local ````: runs a job on this machine (``hv.run_local``); the unit tests run it and compare what it
  prints with the ```` ```text output ```` block after it.
- ```` ```sh ````: shell commands; each ``hera-volcano ...`` or ``python -m hera_volcano...`` in them must parse, and
  those that need no cluster run (tests/test_docs.py).
- ```` ```yaml file=NAME ````: a file the ``sh`` blocks of the same page use (written where they run).
- ```` ```yaml ````: a fragment shown, not run (a scheduler's configuration).
- ```` ```text output ````: what the one command of the ``sh`` block just before it prints.
- ```` ```text explain=RUN ````: what ``hera-volcano explain`` prints for the recorded run tests/client/fixtures/RUN.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import runpy
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: Every page of documentation: the README first, then the site's pages (docs/, mkdocs.yml), subfolders included.
PAGES = (ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")))
_FENCE = re.compile(r"^( {0,3})(`{3,})([^`]*)$")  # a backtick fence's info string holds no backtick
_FILE_NAME = re.compile(r"#\s*([a-z_][a-z0-9_]*\.py)\b")


@dataclass(frozen=True)
class Block:
    """One fenced block: its page, the line its text starts on, the words of its info string, and its text."""

    page: Path
    line: int
    info: tuple[str, ...]
    text: str

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def fenced(page: Path) -> list[Block]:
    """Every fenced block of ``page`` (a fence indented at most 3 spaces, as in a list item, closed by the same
    fence; the block's text without that indent), in order."""
    found: list[Block] = []
    indent, fence, info, start, body = "", "", (), 0, []
    for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
        if not fence:
            m = _FENCE.match(line)
            if m:
                indent, fence, info, start, body = m.group(1), m.group(2), tuple(m.group(3).split()), number + 1, []
        elif line.strip() == fence:
            found.append(Block(page, start, info, "".join(f"{b.removeprefix(indent)}\n" for b in body)))
            fence = ""
        else:
            body.append(line)
    assert not fence, f"{page.relative_to(ROOT)}:{start - 1}: a fence that is never closed"
    return found


def blocks(*info: str, pages: tuple[Path, ...] = PAGES) -> list[Block]:
    """The blocks whose info string is exactly ``info`` (``blocks("python", "cluster")``), README first."""
    return [b for page in pages for b in fenced(page) if b.info == info]


def run_python(block: Block, folder: Path) -> str:
    """Run the block as a script saved in ``folder`` (its working directory while it runs) and return what it
    printed. Saved as a file, its functions have readable source, as ``func=`` needs; the file is named as the
    block's first comment says (``# train.py: ...``), else ``example.py``."""
    first = block.text.splitlines()[0] if block.text else ""
    named = _FILE_NAME.match(first)
    script = folder / (named.group(1) if named else "example.py")
    script.write_text(block.text, encoding="utf-8")
    out = io.StringIO()
    before = Path.cwd()
    os.chdir(folder)
    try:
        with contextlib.redirect_stdout(out):
            runpy.run_path(str(script), run_name="__main__")
    finally:
        os.chdir(before)
    return out.getvalue()
