"""A job's program, one value for every builder: a command (:meth:`Program.command`), a Python function and its
keyword arguments (:meth:`Program.function`), a Python file (:meth:`Program.script`) or a module in the image
(:meth:`Program.module`).

A Python program runs under a launcher (:mod:`hera_volcano.pods.launcher`, which the job's pods mount from the
ConfigMap that ``hera-volcano rbac`` installs beside the RBAC, so a job carries a few lines of it, not all of it)
with ``python3``; what it runs and the arguments travel in environment variables
(:class:`hera_volcano.pods.launcher.LaunchSettings`), written so that neither Argo's substitution nor Kubernetes'
``$(VAR)`` expansion changes a byte. Everything that can be checked is checked when the program is made, naming the
argument: a function that cannot travel (a lambda, a nested function, a closure, one whose source cannot be read, one
using its module's names), arguments that do not survive JSON, too much code, a command holding an Argo expression.
"""

from __future__ import annotations
import __future__

import ast
import builtins
import inspect
import json
import keyword
import os
import re
import symtable
import textwrap
import types
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from hera_volcano.builders.pod import PodSettings
from hera_volcano.kube import values
from hera_volcano.kube.expansion import escape, runtime_text, safe_shell_form, shell_reads, shell_script
from hera_volcano.pods import program as pods_program
from hera_volcano.pods.launcher import LaunchSettings
from hera_volcano.shared.errors import ValidationError
from hera_volcano.shared.placeholders import Placeholder, Verbatim, expressions, has_expression

PYTHON: Final = "python3"
#: How the launcher finds global rank 0 (whose return value is the report), per builder.
KINDS: Final = ("torchrun", "mpi", "replica", "tensorflow")
#: Inlined source plus arguments, in bytes (UTF-8, as written): half of Linux's limit on one environment string
#: (MAX_ARG_STRLEN, 128 KiB), and small enough that the Workflow, the Volcano Job and every pod, each holding it
#: once per job, stay far below etcd's object limit (~1.5 MiB). Larger code belongs in the image (``Program.module``).
MAX_INLINE: Final = 64 * 1024
#: A run-time value's tag inside a command's string (``Placeholder.input`` or ``.workflow_parameter`` formatted).
_PARAMETER_TAG: Final = re.compile(r"(inputs|workflow)\.parameters\.[-a-zA-Z0-9_]+")
_MODULE: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")
#: What a function's module namespace holds in the pod besides what the source defines.
_MODULE_NAMES: Final = frozenset({"__name__", "__doc__", "__package__", "__loader__", "__spec__", "__builtins__"})


@dataclass(frozen=True)
class RuntimeArg:
    """An argument whose value Argo gives when the job's step runs: it arrives as text, or parsed from JSON when
    its placeholder's sample is not a string (so ``Placeholder.input("epochs", 3)`` gives the function an int)."""

    name: str
    value: Placeholder  # the rewritten placeholder (kube.expansion.runtime_text)
    kind: str  # "text" or "json"


@dataclass(frozen=True)
class Launch:
    """What every rank of a Python program runs, as the launcher's environment. ``args`` is the JSON of the arguments
    known when the workflow is rendered, escaped; the rest is what jobs running the same code share (a batch job's
    template)."""

    run: str
    source: Verbatim | None
    runtime: tuple[RuntimeArg, ...]
    args: str

    def command(self, kind: str) -> list[str]:
        """``python3`` running the launcher; ``kind`` says how it finds global rank 0."""
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}")
        return [PYTHON, "-u", "-c", escape(pods_program.launcher_bootstrap()), kind]

    def env(self, args: str | Placeholder | None = None) -> list[dict[str, str | Placeholder]]:
        """The launcher's variables (``args`` instead of the program's own arguments: a batch job's per-job input)."""
        runtime = tuple((arg.name, arg.kind, arg.value) for arg in self.runtime)
        settings = LaunchSettings[str | Placeholder](
            self.run, self.args if args is None else args, self.source, runtime
        )
        return settings.to_env()


def with_launcher(spec: dict[str, object], *containers: dict[str, object]) -> None:
    """Mount the ConfigMap that holds the launcher into ``containers`` of the pod ``spec`` (which run the launcher)."""
    spec["volumes"] = [*_items(spec.get("volumes")), pods_program.volume()]
    for container in containers:
        container["volumeMounts"] = [*_items(container.get("volumeMounts")), pods_program.mount()]


def _items(value: object) -> list[object]:
    return list(value) if isinstance(value, list) else []


@dataclass(frozen=True)
class Program:
    """What a job's pods run, given as ``program=`` to every builder. Make it with one of the constructors:

    - ``Program.command(["mpi_hello_world"])``: a command line, run as it is (MPI: by ``mpiexec`` on every rank);
    - ``Program.function(train, args={"lr": 0.1})``: a module-level function called with keyword arguments on every
      rank (``args`` values are JSON values, or ``Placeholder.input(...)`` for values given when the job's step
      runs); what global rank 0 returns (a dict) is the job's report;
    - ``Program.script("train.py", args=...)``: a Python file, read now; ``args`` reach it as JSON in an
      environment variable (``LaunchSettings.ARGS``);
    - ``Program.module("pkg.train", args=...)``: a module in the image, run as ``python -m``.

    A function, script or module runs under ``python3`` (PyTorch: under ``torchrun``; MPI: under ``mpiexec``).

    :param argv: a command line's elements (set by :meth:`command`).
    :param launch: what the pods' launcher runs: a function, script or module and its arguments (set by
        :meth:`function`, :meth:`script`, :meth:`module`).
    """

    argv: tuple[str | Placeholder, ...] | None = None
    launch: Launch | None = None

    def __post_init__(self) -> None:
        if (self.argv is None) == (self.launch is None):
            raise ValidationError(
                "program", "make it with Program.command, Program.function, Program.script or Program.module"
            )

    @classmethod
    def command(cls, argv: Sequence[str | Placeholder]) -> Program:
        """A command line: a non-empty list of strings and placeholders. A value known at run time
        (``Placeholder.input``, ``Placeholder.workflow_parameter``) is a whole element, or a tag inside one
        (``f"--lr={lr}"``), and reaches the process exactly, byte for byte (:func:`_argument`); no other Argo
        expression is taken (Argo would substitute it), and no shell script may read a run-time value
        (:func:`check_shell`).

        :param argv: the program and its arguments (``["python3", "train.py", "--epochs=3"]``).
        """
        if isinstance(argv, str | bytes) or not isinstance(argv, Sequence):
            raise ValidationError("command", "must be a list of strings and placeholders")
        if not argv:
            raise ValidationError("command", "must not be empty")
        items = tuple(_argument(f"command[{i}]", arg) for i, arg in enumerate(argv))
        check_shell(items, {})
        return cls(argv=items)

    @classmethod
    def function(cls, func: Callable[..., object], args: Mapping[str, object] | None = None) -> Program:
        """``func(**args)`` on every rank: a function defined with ``def`` at a module's top level, whose source
        travels alone (imports go inside it).

        :param func: the function to call.
        :param args: its keyword arguments: JSON values, or placeholders for values known when the step runs.
        """
        if not isinstance(func, types.FunctionType):
            raise ValidationError(
                "func", f"must be a function defined with def at a module's top level, not {type(func).__name__}"
            )
        known, runtime = _arguments(args)
        run, source = _function(func)
        _check_call(func, [*known, *(a.name for a in runtime)])
        return cls(launch=_launch("func", run, source, known, runtime))

    @classmethod
    def script(cls, path: str | os.PathLike[str], args: Mapping[str, object] | None = None) -> Program:
        """A Python file, read now and inlined into the pods.

        :param path: the file, on the machine that builds the workflow.
        :param args: values the script reads as JSON from ``LaunchSettings.ARGS`` (JSON values or placeholders).
        """
        known, runtime = _arguments(args)
        run, source = _script(path)
        return cls(launch=_launch("script", run, source, known, runtime))

    @classmethod
    def module(cls, name: str, args: Mapping[str, object] | None = None) -> Program:
        """A module in the image (``pkg.train``), run as ``__main__``.

        :param name: the module's dotted name, importable in the image.
        :param args: values the module reads as JSON from ``LaunchSettings.ARGS`` (JSON values or placeholders).
        """
        if not isinstance(name, str) or not _MODULE.fullmatch(name) or _has_keyword(name):
            raise ValidationError("module", "must be a module name such as pkg.train (identifiers joined by '.')")
        known, runtime = _arguments(args)
        return cls(launch=_launch("module", {"module": name}, None, known, runtime))


def _argument(field: str, arg: object) -> str | Placeholder:
    """One element of a command. A run-time value becomes the expression that carries it exactly
    (:func:`hera_volcano.kube.expansion.runtime_text`: any text, through Argo's two passes and the kubelet's
    ``$(VAR)``), and so does a string that joins a value's tag with text (``f"--lr={lr}"``: the text keeps its
    meaning, the value arrives as it is); any other ``{{`` is refused (Argo would substitute it)."""
    if isinstance(arg, Placeholder):
        return runtime_text(arg, field)
    if not isinstance(arg, str):
        raise ValidationError(field, "must be a string or a Placeholder")
    if not has_expression(arg):
        return arg
    tags = expressions(arg)
    if arg.count("{{") != len(tags) or not all(_PARAMETER_TAG.fullmatch(t) for t in tags):
        raise ValidationError(
            field,
            "must not contain '{{' (an Argo expression) other than a run-time value's: Placeholder.input(...) or "
            "Placeholder.workflow_parameter(...)",
        )
    # Every job's command stands in a container of a manifest argoexec creates: $ doubled for both expansions.
    return values.embedded(arg, field, dollars=2, executor=True)


def check_shell(argv: Sequence[str | Placeholder], fed: Mapping[str, str], prefix: str = "") -> None:
    """Refuse a shell script (``sh -c``, ``bash -ec``...) that would read a run-time value as code: a value in the
    script itself, or a variable given one (``fed``: its name -> where it is set) that the kubelet pastes into the
    script as ``$(NAME)``."""
    at = shell_script(argv)
    if at is not None and isinstance(argv[at], Placeholder):
        raise ValidationError(
            f"{prefix}command[{at}]",
            "is a shell script holding a run-time value, which the shell would run as code: " + safe_shell_form("NAME"),
        )
    found = shell_reads(argv, fed)
    if found is not None:
        index, name = found
        raise ValidationError(
            f"{prefix}command[{index}]",
            f"is a shell script that names $({name}), given a run-time value by {fed[name]}: the kubelet pastes the "
            f"value into the script and the shell runs it as code; {safe_shell_form(name)}",
        )


def check_command_env(program: Program, roles: Mapping[str, PodSettings | None]) -> None:
    """:func:`check_shell` for a builder's command with the pod settings of its roles (``pod``, ``master_pod``...)."""
    fed = {
        name: f"{role}.env[{name!r}]"
        for role, settings in roles.items()
        for name, value in (settings.env.items() if settings is not None else ())
        if isinstance(value, Placeholder)
    }
    if program.argv is not None and fed:
        check_shell(program.argv, fed, "program.")


def check(value: object) -> Program:
    """A builder's ``program=`` argument."""
    if not isinstance(value, Program):
        raise ValidationError(
            "program",
            f"must be a Program (Program.command([...]), .function(f, args=...), .script(path) or .module(name)), "
            f"not {type(value).__name__}",
        )
    return value


def _launch(
    field: str, run: dict[str, object], source: str | None, args: dict[str, object], runtime: list[RuntimeArg]
) -> Launch:
    """The launcher's environment, within Kubernetes' limits."""
    args_text = _env_json(args)
    escaped = None if source is None else escape(source)
    inlined = len(args_text.encode()) + len((escaped or "").encode())
    if inlined > MAX_INLINE:
        over = field if len((escaped or "").encode()) > MAX_INLINE else "args"
        raise ValidationError(
            over,
            f"inlines {inlined} bytes of source and arguments, over {MAX_INLINE} (Kubernetes' limits): put the code "
            "in the image and use Program.module, and large data on a volume",
        )
    return Launch(
        run=_env_json(run),
        source=None if escaped is None else Verbatim(escaped),
        runtime=tuple(runtime),
        args=args_text,
    )


def _has_keyword(module: str) -> bool:
    return any(map(keyword.iskeyword, module.split(".")))


def check_env(roles: Mapping[str, PodSettings | None]) -> None:
    """Refuse pod settings that set one of the launcher's variables."""
    for field_name, settings in roles.items():
        for variable in settings.env if settings is not None else ():
            if variable.startswith(LaunchSettings.PREFIX):
                raise ValidationError(
                    f"{field_name}.env[{variable!r}]",
                    f"is the launcher's ({LaunchSettings.PREFIX}*): choose another name",
                )


def _env_json(value: object) -> str:
    """Compact JSON for an env value: ``$`` doubled for Kubernetes, ``{{`` (only ever inside a JSON string) written
    ``{\\u007b`` for Argo; it parses back to ``value``."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return escape(text.replace("{{", "{\\u007b"))


def _arguments(value: object) -> tuple[dict[str, object], list[RuntimeArg]]:
    """``args`` split into JSON values known now and values Argo gives at run time."""
    if value is None:
        return {}, []
    if not isinstance(value, Mapping):
        raise ValidationError("args", "must be a mapping of argument names to JSON values")
    args: dict[str, object] = {}
    runtime: list[RuntimeArg] = []
    for name, item in value.items():
        field = f"args[{name!r}]"
        if not isinstance(name, str) or not name.isidentifier() or not name.isascii() or keyword.iskeyword(name):
            raise ValidationError(field, "must be a keyword argument's name (a Python identifier, ASCII)")
        if isinstance(item, Placeholder):
            placeholder = runtime_text(item, field)
            kind = "text" if isinstance(item.sample, str) else "json"
            if kind == "json":
                _json_value(field, item.sample)
            runtime.append(RuntimeArg(name, placeholder, kind))
        else:
            args[name] = _json_value(field, item)
    return args, runtime


def _json_value(field: str, value: object) -> object:
    """``value`` if JSON gives it back exactly (same types: no tuples, no non-string keys, no NaN)."""
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as e:
        raise ValidationError(field, f"must be a JSON value ({e})") from None
    if not _same(json.loads(text), value):
        raise ValidationError(
            field, "does not survive a JSON round trip (a tuple comes back a list, a non-string key a string...)"
        )
    if any(0xD800 <= ord(c) <= 0xDFFF for c in text):
        raise ValidationError(field, "must be valid Unicode text (it holds a lone surrogate)")
    return value


def _same(a: object, b: object) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(map(_same, a, b))
    return a == b


def _function(func: types.FunctionType) -> tuple[dict[str, object], str]:
    """The launcher's run spec and the source of a function that can travel alone."""
    name = func.__name__
    if hasattr(func, "__wrapped__"):
        raise ValidationError("func", f"{name} is decorated: the decorator would not travel with it")
    if name == "<lambda>":
        raise ValidationError("func", "is a lambda, which has no name to call: define it with def at top level")
    if "<locals>" in func.__qualname__ or func.__closure__:
        raise ValidationError(
            "func", f"{name} is a nested function or a closure: define it at a module's top level (only it travels)"
        )
    if func.__qualname__ != name:
        raise ValidationError("func", f"{func.__qualname__} is defined in a class: define it at a module's top level")
    if inspect.iscoroutinefunction(func) or inspect.isgeneratorfunction(func) or inspect.isasyncgenfunction(func):
        raise ValidationError("func", f"{name} must be a plain function (not async, not a generator)")
    try:
        source = textwrap.dedent(inspect.getsource(func))
    except (OSError, TypeError):
        raise ValidationError(
            "func", f"the source of {name} cannot be read (typed in an interpreter, or made by exec?): put it in a file"
        ) from None
    try:
        tree = ast.parse(source)
    except SyntaxError:
        raise ValidationError("func", f"the source of {name} cannot be parsed on its own") from None
    node = tree.body[0] if len(tree.body) == 1 else None
    if not isinstance(node, ast.FunctionDef) or node.name != name:
        raise ValidationError("func", f"the source found for {name} is not its definition alone")
    if node.decorator_list:
        raise ValidationError("func", f"{name} is decorated: the decorator would not travel with it")
    future = [
        feature for feature in ("annotations",) if func.__code__.co_flags & getattr(__future__, feature).compiler_flag
    ]
    missing = _module_names(("from __future__ import annotations\n" if future else "") + source)
    if missing:
        raise ValidationError(
            "func",
            f"{name} uses {', '.join(missing)} from its module, which does not travel with it: import or define "
            "what it needs inside the function",
        )
    filename = inspect.getsourcefile(func) or func.__code__.co_filename
    run: dict[str, object] = {
        "function": name,
        "file": os.path.basename(filename),
        "line": func.__code__.co_firstlineno,
    }
    if future:
        run["future"] = future
    return run, source


def _module_names(source: str) -> list[str]:
    """Names the source reads from its module's namespace that it does not define itself (nor are builtins)."""
    top = symtable.symtable(source, "<func>", "exec")
    defined = set(_MODULE_NAMES) | set(dir(builtins))
    used: set[str] = set()

    def walk(table: symtable.SymbolTable) -> None:
        for symbol in table.get_symbols():
            name = symbol.get_name()
            if table is top:
                if symbol.is_assigned() or symbol.is_imported():
                    defined.add(name)
                elif symbol.is_referenced():
                    used.add(name)
            elif symbol.is_global():
                if symbol.is_declared_global() and symbol.is_assigned():
                    defined.add(name)
                if symbol.is_referenced():
                    used.add(name)
        for child in table.get_children():
            walk(child)

    walk(top)
    return sorted(used - defined)


def _check_call(func: types.FunctionType, names: list[str]) -> None:
    """The arguments fit the function's signature (a missing or unknown one fails here, not in the pod)."""
    try:
        inspect.signature(func).bind(**dict.fromkeys(names))
    except TypeError as e:
        raise ValidationError("args", f"do not fit {func.__name__}{inspect.signature(func)}: {e}") from None


def _script(path: object) -> tuple[dict[str, object], str]:
    """The run spec and source of a Python file, read now."""
    if not isinstance(path, str | os.PathLike):
        raise ValidationError("script", "must be the path of a Python file")
    file = Path(path)
    try:
        source = file.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ValidationError("script", f"{file} is not UTF-8 text") from None
    except OSError as e:
        raise ValidationError("script", f"{file} cannot be read: {e.strerror or e}") from None
    try:
        compile(source, file.name, "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as e:
        where = f" (line {e.lineno})" if isinstance(e, SyntaxError) and e.lineno else ""
        raise ValidationError("script", f"{file} is not valid Python{where}: {getattr(e, 'msg', e)}") from None
    return {"script": file.name}, source
