"""A user's module for ``hera-volcano render --module``: import it, collect its workflows and queues, and turn
whatever their code raises into one line naming the module, the object and the field, never a traceback."""

from __future__ import annotations

import importlib
import importlib.util
import re
import sys
import traceback
from pathlib import Path
from types import ModuleType, TracebackType
from typing import TYPE_CHECKING, Final

from hera_volcano.cli import common as c
from hera_volcano.shared.errors import ValidationError
from hera_volcano.shared.suggestions import did_you_mean
from hera_volcano.volcano.queue import Queue

if TYPE_CHECKING:
    from hera.workflows import Workflow

    from hera_volcano.argo.sweep_spec import SweepSpec
    from hera_volcano.volcano.job import VolcanoJob

_MODULE: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")
#: The prefix of the name a user's file is loaded under (never a module of theirs or ours).
_USER_MODULE_PREFIX: Final = "hera_volcano_user_file_"
#: How much of the user's call a message quotes.
_QUOTE: Final = 100
#: Where a traceback leaves the user's code: the library, Hera and everything installed.
_NOT_THEIRS: Final = tuple(
    str(Path(p).resolve()) for p in {Path(__file__).parents[1], Path(sys.prefix), Path(sys.base_prefix)}
)


def module_workflows(spec: str) -> list[Workflow | Queue]:
    """Workflows a user's module exposes: ``PKG.MODULE`` (its module-level workflow objects, in name order) or
    ``PKG.MODULE:FUNCTION`` (what the function returns: one workflow or a list).

    The user's code runs here: whatever it raises is one line (:func:`failure`)."""
    from hera.workflows import Workflow

    module_name, _, function = spec.partition(":")
    if not _MODULE.fullmatch(module_name) or (function and not function.isidentifier()):
        raise c.UsageError(f"--module must be PKG.MODULE or PKG.MODULE:FUNCTION, got {spec!r}")
    here = str(Path.cwd())
    sys.path.insert(0, here)
    try:
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
        except c.UsageError:
            raise
        except (Exception, SystemExit) as e:  # the user's code: any failure is reported as one line
            raise failure(spec, e) from None
        workflows = [w for w in found if isinstance(w, Workflow | Queue)]
        bad = [type(w).__name__ for w in found if not isinstance(w, Workflow | Queue)]
        if bad:
            raise c.UsageError(f"{spec} gave {', '.join(bad)}, not Hera workflows or Volcano Queues")
        if not found:
            raise c.UsageError(f"{spec} exposes no Hera Workflow, WorkflowTemplate or Volcano Queue")
        for w in workflows:
            try:
                w.to_dict()  # fail here, naming the module and the object, if the user's workflow cannot be built
            except (Exception, SystemExit) as e:
                raise failure(spec, e, label(w)) from None
        return workflows
    finally:
        if here in sys.path:
            sys.path.remove(here)


def module_job(spec: str) -> VolcanoJob | SweepSpec:
    """The VolcanoJob ``NAME`` of a user's module, ``MODULE:NAME``: a file (``train.py``) or a module importable
    from the current directory (``pkg.train``), or the settings of the sweep it names (``hv.sweep``'s). The user's
    code runs here: whatever it raises is one line."""
    from hera_volcano.argo.sweep_spec import spec_of
    from hera_volcano.volcano.job import VolcanoJob

    module_name, colon, name = spec.rpartition(":")
    is_file = module_name.endswith(".py") or "/" in module_name
    if not colon or not name.isidentifier() or not (is_file or _MODULE.fullmatch(module_name)):
        raise c.UsageError(f"the job must be MODULE:NAME (train.py:job or pkg.train:job), got {spec!r}")
    folder = str(Path(module_name).resolve().parent) if is_file else str(Path.cwd())
    sys.path.insert(0, folder)
    try:
        try:
            module = _file_module(Path(module_name)) if is_file else importlib.import_module(module_name)
        except c.UsageError:
            raise
        except (Exception, SystemExit) as e:  # the user's code: any failure is reported as one line
            raise failure(spec, e, option="") from None
    finally:
        if folder in sys.path:
            sys.path.remove(folder)
    found = getattr(module, name, None)
    if isinstance(found, VolcanoJob):
        return found
    sweep = spec_of(found)
    if sweep is not None:
        return sweep
    jobs = [n for n, v in sorted(vars(module).items()) if isinstance(v, VolcanoJob) or spec_of(v) is not None]
    if found is None:
        offered = f"; its jobs and sweeps are {', '.join(jobs)}" if jobs else "; it has no VolcanoJob or sweep"
        raise c.UsageError(f"{module_name} has no {name}{did_you_mean(name, jobs)}{offered}")
    raise c.UsageError(
        f"{spec} is a {type(found).__name__}, not a VolcanoJob (what mpi_job, pytorch_job, tensorflow_job and"
        " batch_job return) or a sweep (what hv.sweep returns)"
    )


def _file_module(path: Path) -> ModuleType:
    """A Python file run as a module (so ``if __name__ == "__main__":`` does not run), registered under a name of
    its own: a file named ``json.py`` or ``random.py`` must not replace that module for the rest of the command."""
    if not path.is_file():
        raise c.UsageError(f"cannot read {path}: no such file")
    name = f"{_USER_MODULE_PREFIX}{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise c.UsageError(f"cannot load {path} as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and typing look their module up by name while it runs
    spec.loader.exec_module(module)
    return module


def label(obj: object) -> str:
    """An object as a message names it: its kind and name (``Workflow train-`` for a generateName)."""
    kind = getattr(obj, "kind", None) or type(obj).__name__
    name = getattr(obj, "name", None) or getattr(obj, "generate_name", None)
    if name is None and isinstance(obj, dict):
        meta = obj.get("metadata") or {}
        name = meta.get("name") or meta.get("generateName")
    return f"{kind} {name}" if name else str(kind)


def failure(spec: str, e: BaseException, obj: str | None = None, *, option: str = "--module") -> c.UsageError:
    """What the user's code raised, as one line: the module (as ``option`` named it), where in it (file, line and
    the call being made, which names the job), the object being built, and the field and rule (or the exception)."""
    parts = [f"{option} {spec}".strip()]
    where = _where(e)
    if where:
        parts.append(where)
    if obj:
        parts.append(obj)
    if isinstance(e, ValidationError):
        parts.append(str(e))
    elif isinstance(e, SystemExit):
        parts.append(f"exited ({e.code})")
    else:
        detail = str(e).splitlines()[0] if str(e) else ""
        parts.append(type(e).__name__ + (f": {detail}" if detail else ""))
    return c.UsageError(": ".join(parts))


def _where(e: BaseException) -> str | None:
    """The innermost line of the user's own code in ``e``'s traceback: ``FILE line N (the call there)``."""
    if isinstance(e, SyntaxError) and e.filename and e.lineno:
        return f"{_shown(e.filename)} line {e.lineno}"
    frames = [f for f in _frames(e.__traceback__) if _theirs(f.filename)]
    if not frames:
        return None
    frame = frames[-1]
    return f"{_shown(frame.filename)} line {frame.lineno}" + (f" ({_call(frame)})" if _call(frame) else "")


def _frames(tb: TracebackType | None) -> list[traceback.FrameSummary]:
    return list(traceback.extract_tb(tb)) if tb is not None else []


def _theirs(filename: str) -> bool:
    if filename.startswith("<"):
        return False
    resolved = str(Path(filename).resolve())
    return not resolved.startswith(_NOT_THEIRS)


def _shown(filename: str) -> str:
    """A file as the user knows it: relative to the current directory when under it."""
    path = Path(filename).resolve()
    try:
        return path.relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return str(path)


def _call(frame: traceback.FrameSummary) -> str:
    """The expression the user's line was running (the whole call over its lines, on Python 3.11+), on one line."""
    text = frame.line or ""
    end = getattr(frame, "end_lineno", None)
    start_col, end_col = getattr(frame, "colno", None), getattr(frame, "end_colno", None)
    if end is not None and start_col is not None and end_col is not None and frame.lineno is not None:
        import linecache

        lines = [linecache.getline(frame.filename, n) for n in range(frame.lineno, end + 1)]
        if lines and all(lines):
            lines[-1] = lines[-1][:end_col]
            lines[0] = lines[0][start_col:]
            text = "".join(lines)
    text = re.sub(r",?\s*\)", ")", re.sub(r"\(\s*", "(", " ".join(text.split())))  # as if written on one line
    return text if len(text) <= _QUOTE else text[: _QUOTE - 3] + "..."
