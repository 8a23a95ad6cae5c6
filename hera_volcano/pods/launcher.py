"""The launcher of hera-volcano: runs the Python function, script or module of a job on one rank, in the pod.

Every rank runs it (under torchrun, mpiexec, or once per replica) as ``python3 -u -c BOOTSTRAP KIND``, the few
lines of :func:`hera_volcano.pods.program.launcher_bootstrap` that run this file from the ConfigMap ``hera-volcano
rbac`` installs; it needs only the standard library (hera_volcano is not installed there). What to run comes in
environment variables, never pasted into code or shell:

- HERA_VOLCANO_RUN: JSON, one of {"function": NAME, "file": FILE, "line": N, "future": [...]},
  {"script": FILE}, {"module": NAME};
- HERA_VOLCANO_SOURCE: the source of the function or of the script;
- HERA_VOLCANO_ARGS: the JSON object of arguments known when the workflow was rendered;
- HERA_VOLCANO_RUNTIME_ARGS: JSON {NAME: "text" or "json"}, arguments known at run time, each in its variable
  HERA_VOLCANO_ARG_NAME (a "json" one is parsed, a "text" one is passed as it is).

A function is called with the arguments as keyword arguments. Its return value, on global rank 0 (KIND says how to
find it: "torchrun", "mpi" or "replica"), is the report of the job: a dict of names to JSON values, each printed as a
line ``hera-volcano:output NAME=VALUE`` (a string as it is, anything else as compact JSON; None reports nothing).
A script or a module runs as __main__ and finds every argument, merged, in HERA_VOLCANO_ARGS. An exception prints
its traceback on stderr and fails the rank (exit status 1), as does anything wrong with the inputs or the report.

The report rules are those of hera_volcano.shared.outputs (its tests hold this copy to them). This text has no
apostrophe, dollar sign or double brace, so it reads the same in a pod command and in a shell script.
"""

from __future__ import annotations
import __future__

import ast
import json
import linecache
import os
import re
import sys
import traceback
import types
from typing import Any, NoReturn

PREFIX = "hera-volcano:output "
#: What starts an Argo tag (written so that this text holds none).
TAG_START = "{" * 2
NAME = re.compile(r"[a-zA-Z0-9_-]{1,63}")
MAX_LINE = 4096
RESERVED = frozenset({"job-name", "job-phase"})
#: Characters that some readers take for line breaks, which JSON would leave as they are.
SEPARATORS = ("\x85", "\u2028", "\u2029")

#: Where each kind of launch says which rank a process is, first found wins.
RANK_VARIABLES = {
    "torchrun": ("RANK",),
    "mpi": ("OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"),
    "replica": ("VC_TASK_INDEX",),
}
#: The roles of a TensorFlow job in the order of their global ranks (the chief is rank 0; without one, worker 0 is).
TF_ROLES = ("chief", "worker", "ps", "evaluator")


class LaunchError(Exception):
    """Something wrong with what the launcher was given, or with the report: one line for the log."""


def fail(message: str) -> NoReturn:
    sys.stderr.write("hera-volcano: " + message + "\n")
    sys.stderr.flush()
    sys.exit(1)


def json_variable(name: str, default: str | None = None) -> Any:
    text = os.environ.get(name, default)
    if text is None:
        raise LaunchError(name + " is not set")
    try:
        return json.loads(text)
    except ValueError as e:
        raise LaunchError(name + " is not JSON: " + str(e)) from None


def arguments() -> dict[str, Any]:
    """The keyword arguments: those of the rendered workflow, then those known at run time."""
    args = json_variable("HERA_VOLCANO_ARGS", "{}")
    runtime = json_variable("HERA_VOLCANO_RUNTIME_ARGS", "{}")
    if not isinstance(args, dict) or not isinstance(runtime, dict):
        raise LaunchError("HERA_VOLCANO_ARGS and HERA_VOLCANO_RUNTIME_ARGS must be JSON objects")
    for name, kind in runtime.items():
        variable = "HERA_VOLCANO_ARG_" + name
        text = os.environ.get(variable)
        if text is None:
            raise LaunchError("argument " + repr(name) + ": " + variable + " is not set")
        if kind == "json":
            try:
                args[name] = json.loads(text)
            except ValueError as e:
                message = "argument " + repr(name) + " is not JSON (" + str(e) + "): " + repr(text[:200])
                raise LaunchError(message) from None
        else:
            args[name] = text
    return args


def tensorflow_rank() -> int:
    """The place of this pod in TF_CONFIG (set by the tensorflow plugin of Volcano): the roles in the order of TF_ROLES,
    each by its index."""
    config = json_variable("TF_CONFIG")
    cluster = config.get("cluster") if isinstance(config, dict) else None
    task = config.get("task") if isinstance(config, dict) else None
    if not isinstance(cluster, dict) or not isinstance(task, dict) or task.get("type") not in TF_ROLES:
        raise LaunchError("TF_CONFIG names no task of " + ", ".join(TF_ROLES))
    before = TF_ROLES[: TF_ROLES.index(task["type"])]
    index = task.get("index")
    if not isinstance(index, int):
        raise LaunchError("the task in TF_CONFIG has no index")
    return sum(len(cluster.get(role) or []) for role in before) + index


def rank(kind: str) -> int:
    """The global rank of this process."""
    if kind == "tensorflow":
        return tensorflow_rank()
    if kind not in RANK_VARIABLES:
        kinds = sorted([*RANK_VARIABLES, "tensorflow"])
        raise LaunchError("unknown launch " + repr(kind) + ": one of " + ", ".join(kinds))
    for variable in RANK_VARIABLES[kind]:
        text = os.environ.get(variable)
        if text is not None:
            try:
                return int(text)
            except ValueError:
                raise LaunchError(variable + " is not a rank: " + repr(text)) from None
    if kind == "mpi":
        try:
            from mpi4py import MPI  # type: ignore[import-not-found,unused-ignore]
        except ImportError:
            pass
        else:
            return int(MPI.COMM_WORLD.Get_rank())
    raise LaunchError("cannot tell the rank of this process: none of " + ", ".join(RANK_VARIABLES[kind]) + " is set")


def unsayable(char: str) -> bool:
    """What the quoting of Argo, when it passes a value on, writes as an escape JSON lacks (the node fails)."""
    code = ord(char)
    return (
        (code < 0x20 and char not in "\t\n\r\b\f" and code != 0)
        or code == 0x7F
        or (code > 0xFFFF and not char.isprintable())
    )


def report_line(name: object, value: object) -> bytes:
    """One report line with its line break, as UTF-8, or LaunchError saying why the value cannot be reported."""
    if not isinstance(name, str) or not NAME.fullmatch(name):
        raise LaunchError("output name " + repr(name) + ": letters, digits, _ and - only, 1 to 63 of them")
    if name in RESERVED:
        raise LaunchError("output name " + repr(name) + " is reserved (the name and phase of the job)")
    if isinstance(value, str):
        text = value
    else:
        try:
            text = json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError) as e:
            raise LaunchError("output " + repr(name) + " is not a JSON value: " + str(e)) from None
        for char in SEPARATORS:  # inside JSON strings only: escaped, no reader splits the line there
            text = text.replace(char, "\\u" + format(ord(char), "04x"))
        # Only ever inside a JSON string: the same value, written so that Argo passes it on unchanged.
        text = text.replace(TAG_START, "{\\u007b")
        text = "".join(json.dumps(char)[1:-1] if unsayable(char) else char for char in text)
    if TAG_START in text or "\x00" in text or any(unsayable(char) for char in text):
        raise LaunchError(
            "output " + repr(name) + ": the value holds two opening braces, NUL or a control character, which Argo"
            " cannot pass on unchanged (the next template would substitute the tag or fail)"
        )
    if "\n" in text or "\r" in text:
        raise LaunchError("output " + repr(name) + ": the value must be one line (report a path for larger data)")
    try:
        line = (PREFIX + name + "=" + text).encode("utf-8")
    except UnicodeEncodeError:
        raise LaunchError("output " + repr(name) + ": the value is not valid Unicode text") from None
    if len(line) > MAX_LINE:
        raise LaunchError("output " + repr(name) + ": the report line is over " + str(MAX_LINE) + " bytes")
    return line + b"\n"


def report(result: object, kind: str) -> None:
    """Print the report of the function on global rank 0 (what other ranks return is ignored)."""
    if result is None or rank(kind) != 0:
        return
    if not isinstance(result, dict):
        raise LaunchError(
            "the function returned " + type(result).__name__ + ": return a dict of names to JSON values, or None"
        )
    lines = [report_line(name, value) for name, value in result.items()]
    sys.stdout.flush()
    for line in lines:  # one write each: a line is never split among other output
        while line:
            line = line[os.write(sys.stdout.fileno(), line) :]


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


def run(spec: dict[str, Any], args: dict[str, Any], kind: str) -> object:
    """Run what the spec says; return what a function returns."""
    if "module" in spec:
        import runpy

        os.environ["HERA_VOLCANO_ARGS"] = json.dumps(args)
        sys.argv = [str(spec["module"])]
        runpy.run_module(str(spec["module"]), run_name="__main__", alter_sys=True)
        return None
    source = os.environ.get("HERA_VOLCANO_SOURCE")
    if source is None:
        raise LaunchError("HERA_VOLCANO_SOURCE is not set")
    if "script" in spec:
        os.environ["HERA_VOLCANO_ARGS"] = json.dumps(args)
        sys.argv = [str(spec["script"])]
        main_module(source, str(spec["script"]), 1, 0)
        return None
    flags = 0  # the __future__ features that the module of the function used
    for feature in spec.get("future", ()):
        flags |= getattr(__future__, str(feature)).compiler_flag
    module = main_module(source, str(spec.get("file", "<function>")), int(spec.get("line", 1)), flags)
    function = module.__dict__.get(str(spec["function"]))
    if not callable(function):
        raise LaunchError("the source defines no function " + repr(spec["function"]))
    return function(**args)


def user_frames(tb: types.TracebackType | None) -> types.TracebackType | None:
    """The traceback from the first frame of user code on (the frames of the launcher say nothing)."""
    own = user_frames.__code__.co_filename
    while tb is not None and tb.tb_frame.f_code.co_filename == own:
        tb = tb.tb_next
    return tb


def main(argv: list[str]) -> None:
    kind = argv[1] if len(argv) > 1 else ""
    try:
        spec = json_variable("HERA_VOLCANO_RUN")
        if not isinstance(spec, dict) or not any(k in spec for k in ("function", "script", "module")):
            raise LaunchError("HERA_VOLCANO_RUN names no function, script or module")
        args = arguments()
    except LaunchError as e:
        fail(str(e))
    what = next(str(spec[k]) for k in ("function", "script", "module") if k in spec)
    try:
        result = run(spec, args, kind)
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
