"""The launcher of hera-volcano: runs the Python function, script or module of a job on one rank, in the pod.

Every rank runs it (under torchrun, mpiexec, or once per replica) as ``python3 -u -c BOOTSTRAP KIND``, the few
lines of :func:`hera_volcano.pods.program.launcher_bootstrap` that run this file from the ConfigMap ``hera-volcano
rbac`` installs; it needs only the standard library (hera_volcano is not installed there). What to run comes in
environment variables (:class:`LaunchSettings`), never pasted into code or shell.

A function is called with the arguments as keyword arguments. Its return value, on global rank 0 (KIND says how to
find it: "torchrun", "mpi" or "replica"), is the report of the job: a dict of names to JSON values, each printed as a
line ``hera-volcano:output NAME=VALUE`` (a string as it is, anything else as compact JSON; None reports nothing).
A script or a module runs as __main__ and finds every argument, merged, as JSON in the variable that holds the
arguments. An exception prints its traceback on stderr and fails the rank (exit status 1), as does anything wrong
with the inputs or the report.

The report lines are written by the rules of :mod:`hera_volcano.pods.reports`, which the pods' ConfigMap holds joined
with this file (:func:`hera_volcano.pods.program.launcher_source`). Neither has a dollar sign or a double brace.

What a function imports inside itself from hera-volcano (``import hera_volcano.runtime``) the launcher makes from the
file beside it in the ConfigMap (:data:`RUNTIME_FILE`, the runtime's modules joined as they are), unless
hera_volcano itself is importable (a local run, an image that installs it): :func:`install_runtime`.
"""

from __future__ import annotations
import __future__

import ast
import json
import linecache
import os
import sys
import traceback
import types
from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar, Generic, NoReturn, TypeVar

from hera_volcano.pods.ranks import LAUNCH_VARIABLE, RankError, rank
from hera_volcano.pods.reports import ReportError, format_line, write_lines

#: The runtime's file beside the launcher's in the pods' ConfigMap, and the module it becomes for the function.
RUNTIME_FILE = "hera_volcano_runtime.py"
RUNTIME_MODULE = "hera_volcano.runtime"


class LaunchError(Exception):
    """Something wrong with what the launcher was given, or with the report: one line for the log."""


#: What stands for a text in :class:`LaunchSettings`: ``str`` in the pod; the builders' values may also be Argo
#: placeholders, which Argo replaces by text before the pod starts.
Text = TypeVar("Text")


@dataclass(frozen=True)
class LaunchSettings(Generic[Text]):
    """What a rank runs, as the environment variables that carry it: the one place that names them. The builders
    write them with :meth:`to_env`, the launcher reads them with :meth:`from_env`.

    - ``run`` (HERA_VOLCANO_RUN): JSON, one of {"function": NAME, "file": FILE, "line": N, "future": [...]},
      {"script": FILE}, {"module": NAME};
    - ``source`` (HERA_VOLCANO_SOURCE): the source of the function or of the script;
    - ``args`` (HERA_VOLCANO_ARGS): the JSON object of arguments known when the workflow was rendered; a script or a
      module finds every argument, merged, there;
    - ``runtime``: arguments known at run time, as (name, "text" or "json", value), their kinds in
      HERA_VOLCANO_RUNTIME_ARGS (JSON {NAME: kind}), each value in HERA_VOLCANO_ARG_NAME (a "json" one is parsed, a
      "text" one is passed as it is).
    """

    run: Text
    args: Text
    source: Text | None = None
    runtime: tuple[tuple[str, str, Text], ...] = ()

    RUN: ClassVar[str] = "HERA_VOLCANO_RUN"
    SOURCE: ClassVar[str] = "HERA_VOLCANO_SOURCE"
    ARGS: ClassVar[str] = "HERA_VOLCANO_ARGS"
    RUNTIME_ARGS: ClassVar[str] = "HERA_VOLCANO_RUNTIME_ARGS"
    ARG_PREFIX: ClassVar[str] = "HERA_VOLCANO_ARG_"
    #: What the launcher's variables start with: a pod's own variables may not.
    PREFIX: ClassVar[str] = "HERA_VOLCANO_"
    #: Every variable (``ARG_PREFIX``: a prefix of names), in the order :meth:`to_env` writes them.
    NAMES: ClassVar[tuple[str, ...]] = (RUN, SOURCE, ARGS, RUNTIME_ARGS, ARG_PREFIX)

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> LaunchSettings[str]:
        """The settings a rank was given (LaunchError names a missing or garbled variable)."""
        run = env.get(cls.RUN)
        if run is None:
            raise LaunchError(cls.RUN + " is not set")
        kinds = json_text(cls.RUNTIME_ARGS, env.get(cls.RUNTIME_ARGS, "{}"))
        if not isinstance(kinds, dict):
            raise LaunchError(cls.ARGS + " and " + cls.RUNTIME_ARGS + " must be JSON objects")
        runtime = []
        for name, kind in kinds.items():
            variable = cls.ARG_PREFIX + name
            text = env.get(variable)
            if text is None:
                raise LaunchError("argument " + repr(name) + ": " + variable + " is not set")
            runtime.append((name, "json" if kind == "json" else "text", text))
        return LaunchSettings(run, env.get(cls.ARGS, "{}"), env.get(cls.SOURCE), tuple(runtime))

    def to_env(self) -> list[dict[str, str | Text]]:
        """The containers' ``env`` entries that :meth:`from_env` reads back."""
        out: list[dict[str, str | Text]] = [{"name": self.RUN, "value": self.run}]
        if self.source is not None:
            out.append({"name": self.SOURCE, "value": self.source})
        out.append({"name": self.ARGS, "value": self.args})
        if self.runtime:
            kinds = {name: kind for name, kind, _ in self.runtime}
            out.append({"name": self.RUNTIME_ARGS, "value": json.dumps(kinds, separators=(",", ":"))})
            out.extend({"name": self.ARG_PREFIX + name, "value": value} for name, _, value in self.runtime)
        return out


def fail(message: str) -> NoReturn:
    sys.stderr.write("hera-volcano: " + message + "\n")
    sys.stderr.flush()
    sys.exit(1)


def json_text(name: str, text: str) -> object:
    """The JSON value of the variable ``name``."""
    try:
        return json.loads(text)
    except ValueError as e:
        raise LaunchError(name + " is not JSON: " + str(e)) from None


def arguments(settings: LaunchSettings[str]) -> dict[str, object]:
    """The keyword arguments: those of the rendered workflow, then those known at run time."""
    args = json_text(settings.ARGS, settings.args)
    if not isinstance(args, dict):
        raise LaunchError(settings.ARGS + " and " + settings.RUNTIME_ARGS + " must be JSON objects")
    for name, kind, text in settings.runtime:
        if kind == "json":
            try:
                args[name] = json.loads(text)
            except ValueError as e:
                message = "argument " + repr(name) + " is not JSON (" + str(e) + "): " + repr(text[:200])
                raise LaunchError(message) from None
        else:
            args[name] = text
    return args


def what_to_run(settings: LaunchSettings[str]) -> dict[str, object]:
    """The run spec: a function, a script or a module."""
    spec = json_text(settings.RUN, settings.run)
    if not isinstance(spec, dict) or not any(k in spec for k in ("function", "script", "module")):
        raise LaunchError(settings.RUN + " names no function, script or module")
    return spec


def report(result: object, kind: str) -> None:
    """Print the report of the function on global rank 0 (what other ranks return is ignored)."""
    if result is None:
        return
    try:
        if rank(kind) != 0:
            return
    except RankError as e:
        raise LaunchError(str(e)) from None
    if not isinstance(result, dict):
        raise LaunchError(
            "the function returned " + type(result).__name__ + ": return a dict of names to JSON values, or None"
        )
    try:
        lines = [format_line(name, value) for name, value in result.items()]
    except ReportError as e:
        raise LaunchError(str(e)) from None
    write_lines(lines)


def main_module(source: str, filename: str, first_line: int, flags: int) -> types.ModuleType:
    """Run ``source`` as the module __main__ (so pickle finds what it defines), its lines numbered from
    ``first_line`` of ``filename`` in tracebacks."""
    tree = ast.parse(source, filename)
    ast.increment_lineno(tree, first_line - 1)
    code = compile(tree, filename, "exec", flags=flags, dont_inherit=True)
    lines = ["\n"] * (first_line - 1) + source.splitlines(True)
    linecache.cache[filename] = (len(source), None, lines, filename)
    module = types.ModuleType("__main__")
    sys.modules["__main__"] = module
    exec(code, module.__dict__)
    return module


def run(spec: dict[str, object], args: dict[str, object], source: str | None) -> object:
    """Run what the spec says (``source``: the function's or the script's); return what a function returns."""
    if "module" in spec:
        import runpy

        os.environ[LaunchSettings.ARGS] = json.dumps(args)
        sys.argv = [str(spec["module"])]
        runpy.run_module(str(spec["module"]), run_name="__main__", alter_sys=True)
        return None
    if source is None:
        raise LaunchError(LaunchSettings.SOURCE + " is not set")
    if "script" in spec:
        os.environ[LaunchSettings.ARGS] = json.dumps(args)
        sys.argv = [str(spec["script"])]
        main_module(source, str(spec["script"]), 1, 0)
        return None
    flags = 0  # the __future__ features that the module of the function used
    future = spec.get("future")
    for feature in future if isinstance(future, list) else ():
        flags |= getattr(__future__, str(feature)).compiler_flag
    line = spec.get("line", 1)
    first = line if isinstance(line, int) else 1
    module = main_module(source, str(spec.get("file", "<function>")), first, flags)
    function = module.__dict__.get(str(spec["function"]))
    if not callable(function):
        raise LaunchError("the source defines no function " + repr(spec["function"]))
    return function(**args)


def install_runtime(launcher_file: str) -> None:
    """Make ``import hera_volcano.runtime`` (and ``from hera_volcano import runtime``) give the function the runtime
    of :data:`RUNTIME_FILE` beside ``launcher_file``: as the module ``hera_volcano.runtime`` of a package
    ``hera_volcano`` that holds nothing else. Nothing to do without that file (the launcher imported from the
    package) or where hera_volcano is importable (its own runtime is the same code)."""
    import importlib.util

    path = os.path.join(os.path.dirname(os.path.abspath(launcher_file)), RUNTIME_FILE)
    package_name = RUNTIME_MODULE.partition(".")[0]
    if not os.path.isfile(path) or package_name in sys.modules or importlib.util.find_spec(package_name) is not None:
        return
    with open(path, encoding="utf-8") as f:
        code = compile(f.read(), path, "exec", dont_inherit=True)
    package = types.ModuleType(package_name)
    package.__path__ = []  # a package, whose only module is the runtime
    module = types.ModuleType(RUNTIME_MODULE)
    module.__file__ = path
    setattr(package, RUNTIME_MODULE.partition(".")[2], module)
    sys.modules[package_name] = package
    sys.modules[RUNTIME_MODULE] = module
    exec(code, module.__dict__)


def user_frames(tb: types.TracebackType | None) -> types.TracebackType | None:
    """The traceback from the first frame of user code on (the frames of the launcher say nothing)."""
    own = user_frames.__code__.co_filename
    while tb is not None and tb.tb_frame.f_code.co_filename == own:
        tb = tb.tb_next
    return tb


def main(argv: list[str]) -> None:
    kind = argv[1] if len(argv) > 1 else ""
    try:
        settings = LaunchSettings.from_env(os.environ)
        spec = what_to_run(settings)
        args = arguments(settings)
    except LaunchError as e:
        fail(str(e))
    what = next(str(spec[k]) for k in ("function", "script", "module") if k in spec)
    os.environ[LAUNCH_VARIABLE] = kind  # what it runs finds its rank by the same rule (pods/ranks)
    try:
        install_runtime(__file__)
        result = run(spec, args, settings.source)
    except LaunchError as e:
        fail(str(e))
    except Exception as e:
        traceback.print_exception(type(e), e, user_frames(e.__traceback__))
        fail(what + " raised " + type(e).__name__)
    try:
        report(result, kind)
    except LaunchError as e:
        fail(str(e))


if __name__ == "__main__":
    main(sys.argv)
