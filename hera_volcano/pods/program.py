"""The log follower as one Python program: the modules of this package it needs, joined in order, their imports of
each other taken out (they share one namespace), so that the pod needs no package but Python's own.

The program is installed once per namespace, in a document of its own beside the RBAC, as a ConfigMap whose name
carries a digest of it (:func:`config_map`: two versions coexist); a follower's pod mounts it and runs a few lines
(:func:`bootstrap`) that start it, or say what to apply when it is missing. A workflow holds those few lines, not the
program. A pod that runs it says which part by an annotation (:func:`pod_annotations`), which is how RBAC knows it.

Neither the program nor the lines may hold what Argo or Kubernetes would substitute on their way into a
container: Argo replaces ``{{...}}`` tags in every template field, Kubernetes expands ``$(NAME)`` (and ``$$``) in a
container's command and arguments (:func:`source` checks).
"""

from __future__ import annotations

import ast
import hashlib
import re
from functools import cache
from importlib import resources
from typing import Final, Literal

from hera_volcano.pods.launcher import RUNTIME_FILE

#: The modules of the program, each after those it imports.
MODULES = (
    "labels",
    "ranks",
    "reports",
    "progress",
    "kubeapi",
    "follow",
    "published",
    "run",
    "workers",
    "sweep",
    "entry",
)
#: The modules of the launcher of function jobs, joined the same way (it runs in the job's own image).
LAUNCHER_MODULES = ("ranks", "reports", "progress", "launcher")
#: The modules of a function's runtime (``hera_volcano.runtime`` re-exports them), joined into the file the launcher
#: makes that module from (:data:`hera_volcano.pods.launcher.RUNTIME_FILE`).
RUNTIME_MODULES = ("ranks", "reports", "progress", "checkpoints")
#: The program's first line, and its bootstrap's: for people reading a pod; nothing recognises a pod by it.
TITLE: Final = "# hera-volcano log follower: hera_volcano/pods"
#: The annotation on the pod template of each of our pods that runs the program, its value the part it runs: the log
#: follower (``follower``), the MPI master's wait for its workers (``wait``) or a sweep's pick (``pick``). ``rbac_for``
#: grants such a pod the calls that part declares (``pods.run.CALLS``, ``pods.workers.WAIT_CALLS``,
#: ``pods.sweep.PICK_CALLS``), and nothing else does: a comment or a file name in a user's script grants nothing.
PROGRAM_ANNOTATION: Final = "hera-volcano/program"
Part = Literal["follower", "wait", "pick"]
FOLLOWER: Final[Part] = "follower"
WAIT: Final[Part] = "wait"
PICK: Final[Part] = "pick"
PARTS: Final[tuple[Part, ...]] = (FOLLOWER, WAIT, PICK)
_FUTURE = "from __future__ import annotations"


def module_source(name: str) -> str:
    return resources.files("hera_volcano.pods").joinpath(f"{name}.py").read_text(encoding="utf-8")


def _joinable(text: str) -> str:
    """``text`` without ``from __future__``, its imports of this package's modules and its docstrings (the modules
    say why; the program runs, and stays well under the 128 KiB an argument may have)."""
    lines = text.splitlines(keepends=True)
    drop: set[int] = set()
    tree = ast.parse(text)
    for node in tree.body:
        own = isinstance(node, ast.ImportFrom) and node.module is not None and node.module.startswith("hera_volcano")
        if own or (isinstance(node, ast.ImportFrom) and node.module == "__future__"):
            drop.update(range(node.lineno - 1, node.end_lineno or node.lineno))
    scopes = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    for scope in ast.walk(tree):
        # A body of a docstring alone keeps it: it is the body's statement.
        first = scope.body[0] if isinstance(scope, scopes) and len(scope.body) > 1 else None
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
            drop.update(range(first.lineno - 1, first.end_lineno or first.lineno))
    return "".join(line for i, line in enumerate(lines) if i not in drop)


def _joined(header: str, modules: tuple[str, ...]) -> str:
    """``header``, ``from __future__ import annotations``, then each module in turn, without what Argo or
    Kubernetes would substitute."""
    parts = [f"{header} (hera-volcano generated this from its modules {', '.join(modules)}; edit those, not this)\n"]
    parts.append(_FUTURE + "\n")
    for name in modules:
        parts.append(f"\n# ---- hera_volcano/pods/{name}.py\n")
        parts.append(_joinable(module_source(name)))
    text = "".join(parts)
    for forbidden, why in (("{{", "Argo substitutes it"), ("$", "Kubernetes expands $(NAME) and $$")):
        if forbidden in text:
            raise AssertionError(f"the program of {modules[-1]} holds {forbidden!r}, which {why}")
    return text


@cache
def source() -> str:
    """The follower's program: a header, ``from __future__ import annotations``, then each module in turn."""
    return _joined(TITLE, MODULES)


#: Where a pod mounts the program's ConfigMap, and the files it holds: the follower's and the MPI wait's program, the
#: launcher of function jobs (:mod:`hera_volcano.pods.launcher`, run as it is in the job's own image) and, beside it,
#: the runtime it gives the function (:func:`runtime_source`).
MOUNT_DIR: Final = "/etc/hera-volcano"
PROGRAM_FILE: Final = "follower.py"
LAUNCHER_FILE: Final = "launch_function.py"
_PREFIX: Final = "hera-volcano-follower-"
#: The variable that names another file for the launcher's bootstrap to run (a local run's copy: ``run_local``).
LAUNCHER_PATH: Final = "HERA_VOLCANO_LAUNCHER"
#: The name of the program's ConfigMap, of any version, in a text (a Volcano Job's manifest).
CONFIG_MAP_NAME: Final = re.compile(re.escape(_PREFIX) + "[0-9a-f]{12}")


@cache
def launcher_source() -> str:
    """The launcher of function jobs, joined with the report-line rules it writes by (:data:`LAUNCHER_MODULES`)."""
    return _joined("# hera-volcano launcher: hera_volcano/pods", LAUNCHER_MODULES)


@cache
def runtime_source() -> str:
    """The runtime a function imports as ``hera_volcano.runtime`` in a pod: :data:`RUNTIME_MODULES` joined."""
    return _joined("# hera-volcano runtime: hera_volcano/pods", RUNTIME_MODULES)


@cache
def config_map_name() -> str:
    """``hera-volcano-follower-DIGEST``: the digest is the version; another version, another name. It is taken over
    what the files are made from (the modules as they are, and this one, which joins them), not the joined files: every
    render names the ConfigMap, and joining parses each module (a quarter of the CLI's own time)."""
    digest = hashlib.sha256()
    for name in dict.fromkeys((*MODULES, *LAUNCHER_MODULES, *RUNTIME_MODULES, "program")):
        digest.update(module_source(name).encode() + b"\0")
    return _PREFIX + digest.hexdigest()[:12]


def is_config_map_name(name: object) -> bool:
    """A follower program's ConfigMap, of this version or another."""
    return isinstance(name, str) and name.startswith(_PREFIX)


def pod_annotations(part: Part) -> dict[str, str]:
    """The annotations of a pod template whose pod runs ``part`` of the program (:data:`PROGRAM_ANNOTATION`)."""
    if part not in PARTS:
        raise ValueError(f"part must be one of {', '.join(PARTS)}, not {part!r}")
    return {PROGRAM_ANNOTATION: part}


def config_map(namespace: str) -> dict[str, object]:
    """The ConfigMap holding the program, for ``namespace`` (``rbac/program.yaml``, ``hera-volcano rbac`` after the
    RBAC, ``hera-volcano render`` beside the workflows)."""
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": config_map_name(),
            "namespace": namespace,
            "labels": {"app.kubernetes.io/name": "hera-volcano", "app.kubernetes.io/component": "log-follower"},
        },
        "data": {PROGRAM_FILE: source(), LAUNCHER_FILE: launcher_source(), RUNTIME_FILE: runtime_source()},
    }


def volume() -> dict[str, object]:
    """The ConfigMap as a pod's volume, optional: without it the program says what to apply, rather than the pod
    waiting for the volume."""
    return {"name": config_map_name(), "configMap": {"name": config_map_name(), "optional": True}}


def mount() -> dict[str, object]:
    """Where a container that runs the program (or the launcher) mounts :func:`volume`."""
    return {"name": config_map_name(), "mountPath": MOUNT_DIR, "readOnly": True}


def _bootstrap(first_line: str, file: str, override: str) -> str:
    """Lines for ``python3 -c``: run ``file`` of the mounted ConfigMap (or the one the variable ``override`` names) as
    ``__main__``, its arguments those of ``python3 -c``; where it is missing, say what to apply and exit 1."""
    path = f"{MOUNT_DIR}/{file}"
    # Double quotes only: a rank's command passes through the MPI master's script as arguments. SIGTERM ends it from
    # the first line on: as a container's PID 1, Python ignores a signal it has no handler for, and loading the
    # program takes a while on a busy node (the kubelet would wait out the pod's grace period).
    text = (
        f"{first_line}\n"
        "import signal, sys\n"
        "signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))\n"
        "import os, runpy\n"
        f'path = os.environ.get("{override}") or "{path}"\n'
        "if not os.path.isfile(path):\n"
        f'    sys.exit("hera-volcano: ConfigMap {config_map_name()} (the program of the hera-volcano pods) is not in"\n'
        '             " this namespace: apply what hera-volcano render (or rbac) writes for this workflow")\n'
        'runpy.run_path(path, run_name="__main__")\n'
    )
    for forbidden in ("{{", "$", "'"):
        if forbidden in text:
            raise AssertionError(f"the bootstrap holds {forbidden!r}")
    return text


def bootstrap() -> str:
    """What the follower's and the MPI wait's containers run with ``python3 -c`` (the wait with the argument
    ``wait-for-workers``): the program from its ConfigMap, mounted as an optional volume (a missing one leaves the
    directory empty rather than the pod waiting for it), or a message saying what to apply, and exit 1. RBAC knows
    the calls it makes by its pod's annotation (:func:`pod_annotations`), not by these lines."""
    return _bootstrap(f"{TITLE}: runs the program of ConfigMap {config_map_name()}", PROGRAM_FILE, "FOLLOWER_PROGRAM")


def launcher_bootstrap() -> str:
    """What every rank of a function job runs with ``python3 -u -c`` (then its kind): the launcher from the same
    ConfigMap, mounted into the job's pods. It makes no API call: its pods carry no :data:`PROGRAM_ANNOTATION`."""
    first = f"# hera-volcano launcher: runs {LAUNCHER_FILE} of ConfigMap {config_map_name()}"
    return _bootstrap(first, LAUNCHER_FILE, LAUNCHER_PATH)
