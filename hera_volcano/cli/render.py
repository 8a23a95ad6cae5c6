"""``hera-volcano render``: the GitOps files (``workflows/``, ``rbac/``) written from code, or checked for drift.

Everything is computed in memory first (``tools.render``) and written all or none, so a failure (even halfway)
changes no file. Only files that carry render's header are ever replaced or removed.
"""

from __future__ import annotations

import difflib
import importlib
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from hera_volcano.cli import common as c
from hera_volcano.cli.files import write_files
from hera_volcano.shared.errors import ValidationError
from hera_volcano.tools.render import HEADER, bundled_files, module_files
from hera_volcano.volcano.queue import Queue


def module_workflows(spec: str) -> list[Any]:
    """Workflows a user's module exposes: ``PKG.MODULE`` (its module-level workflow objects, in name order) or
    ``PKG.MODULE:FUNCTION`` (what the function returns: one workflow or a list).

    The user's code runs here; whatever it raises becomes one line naming the module, never a traceback."""
    from hera.workflows import Workflow

    module_name, _, function = spec.partition(":")
    if not _MODULE.fullmatch(module_name) or (function and not function.isidentifier()):
        raise c.UsageError(f"--module must be PKG.MODULE or PKG.MODULE:FUNCTION, got {spec!r}")
    here = str(Path.cwd())
    sys.path.insert(0, here)
    try:
        module = importlib.import_module(module_name)
        if function:
            fn = getattr(module, function, None)
            if not callable(fn):
                raise c.UsageError(f"{module_name} has no function {function}")
            result = fn()
            found = list(result) if isinstance(result, list | tuple) else [result]
        else:
            found = [v for _, v in sorted(vars(module).items()) if isinstance(v, Workflow | Queue)]
        bad = [type(w).__name__ for w in found if not isinstance(w, Workflow | Queue)]
        if bad:
            raise c.UsageError(f"{spec} gave {', '.join(bad)}, not Hera workflows or Volcano Queues")
        if not found:
            raise c.UsageError(f"{spec} exposes no Hera Workflow, WorkflowTemplate or Volcano Queue")
        for w in found:
            w.to_dict()  # fail here, naming the module, if the user's workflow cannot be built
        return found
    except (c.UsageError, ValidationError):
        raise
    except (Exception, SystemExit) as e:  # the user's code: any failure is reported as one line
        detail = str(e).splitlines()[0] if str(e) else ""
        raise c.UsageError(f"{spec} failed: {type(e).__name__}{': ' + detail if detail else ''}") from None
    finally:
        if here in sys.path:
            sys.path.remove(here)


_MODULE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")


def _folders(files: Iterable[str]) -> set[str]:
    return {str(Path(p).parent) if Path(p).parent != Path(".") else "" for p in files}


def _read(path: Path) -> str | None:
    """A file's text, or None when it is not a readable UTF-8 file."""
    try:
        return path.read_text(encoding="utf-8") if path.is_file() else None
    except (OSError, UnicodeDecodeError):
        return None


def _generated(root: Path, folders: Iterable[str]) -> dict[str, str]:
    """The YAML files in ``folders`` that ``render`` wrote (they start with its header); nothing else is ours."""
    found: dict[str, str] = {}
    for folder in folders:
        base = root / folder if folder else root
        if not base.is_dir():
            continue
        for path in sorted(p for pattern in ("*.yaml", "*.yml") for p in base.glob(pattern)):
            text = None if path.name.startswith(".") else _read(path)
            if text is not None and text.startswith(HEADER):
                found[path.relative_to(root).as_posix()] = text
    return found


def drift(root: Path, expected: Mapping[str, str]) -> list[str]:
    """Unified diffs (or one-line notes) for every drifted, missing or extra file under ``root``."""
    generated = _generated(root, _folders(expected))
    out = []
    for path in sorted(set(expected) | set(generated)):
        want = expected.get(path)
        have = generated.get(path) if want is None else _read(root / path)
        if want == have:
            continue
        if have is None:
            out.append(f"missing: {path}\n")
        elif want is None:
            out.append(f"extra: {path} (rendered earlier, no longer by the code)\n")
        elif not have.startswith(HEADER):
            out.append(f"conflict: {path} exists but was not written by hera-volcano render\n")
        else:
            diff = difflib.unified_diff(
                have.splitlines(keepends=True), want.splitlines(keepends=True), f"{path} (committed)", f"{path} (code)"
            )
            out.append(f"drifted: {path}\n" + "".join(diff))
    return out


def _preflight(root: Path, files: Iterable[str]) -> None:
    """Refuse before writing anything: a path blocked by a file, or a file render did not write."""
    for path in files:
        target = root / path
        for parent in reversed(target.parents):
            if parent.exists() and not parent.is_dir():
                raise c.UsageError(f"cannot write {target}: {parent} is not a directory")
        if target.exists() or target.is_symlink():
            text = _read(target)
            if text is None or not text.startswith(HEADER):
                raise c.UsageError(f"refusing to overwrite {target}: it was not written by hera-volcano render")


def write(root: Path, files: Mapping[str, str]) -> list[str]:
    """Write changed files and remove files render wrote earlier that the code no longer renders, all or none.

    Only files that carry render's header are ever replaced or removed; anything else makes it stop first."""
    _preflight(root, files)
    stale = [p for p in _generated(root, _folders(files)) if p not in files]
    changed = {path: text for path, text in sorted(files.items()) if _read(root / path) != text}
    write_files({root / path: text for path, text in changed.items()} | {root / path: None for path in stale})
    return [f"wrote {path}" for path in changed] + [f"removed {path}" for path in stale]


def main(argv: Sequence[str]) -> int:
    p = c.parser(
        "hera-volcano render",
        "Write (or --check) the GitOps files of your module's workflows and Volcano Queues: one YAML file per workflow"
        " and a kustomization.yaml, each queue in queues/ with its own. --bundled renders hera-volcano's own examples"
        " instead (workflows/ and rbac/).",
    )
    p.add_argument("--out", metavar="DIR", default=".", help="root to render into (default: the current directory)")
    p.add_argument("--check", action="store_true", help="write nothing; exit 1 with a diff if anything drifted")
    what = p.add_mutually_exclusive_group()
    what.add_argument(
        "--module",
        metavar="PKG.MODULE[:FUNCTION]",
        help="your module's workflows and queues (its module-level ones, or what FUNCTION returns)",
    )
    what.add_argument(
        "--bundled", action="store_true", help="hera-volcano's own example workflows and their RBAC, nothing of yours"
    )
    args = p.parse_args(argv)
    if args.module is None and not args.bundled:
        raise c.UsageError(
            "name what to render: --module PKG.MODULE[:FUNCTION] (your workflows), or --bundled (hera-volcano's own"
            " examples)"
        )
    files = module_files(module_workflows(args.module)) if args.module is not None else bundled_files()
    root = Path(args.out)
    if args.check:
        problems = drift(root, files)
        c.emit("".join(problems), None)
        if problems:
            again = "hera-volcano render " + ("--bundled" if args.bundled else f"--module {args.module}")
            c.say(f"hera-volcano render: {len(problems)} file(s) out of sync; run {again}")
            return 1
        return 0
    try:
        changed = write(root, files)
    except OSError as e:
        raise c.UsageError(f"cannot write under {root}: {e.strerror or e}") from None
    c.emit("".join(line + "\n" for line in changed), None)
    return 0
