"""What the process in a pod gets from a rendered job, simulated step by step as the real system does it:

1. Argo substitutes the template's ``{{...}}`` twice (simple tags: the raw value; ``{{=...}}``: the expression's
   result, evaluated here for the functions hera-volcano uses);
2. the template reaches argoexec in its pod's ``ARGO_TEMPLATE`` variable, which the kubelet expands (``$$`` is ``$``);
   then the manifest is parsed as YAML;
3. Volcano's plugins add their variables to the container;
4. the kubelet resolves env values in order, expanding ``$(VAR)`` (``$$`` is ``$``), then the command's;
5. the command runs for real, with fake ``torchrun`` and ``mpiexec`` on PATH that start the ranks as the real ones
   would (ranks under mpiexec get only the variables passed with ``-x``, as sshd starts them with a clean
   environment).

Only the substitution forms hera-volcano writes are simulated; anything else fails the test.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from hera_volcano.pods import launcher
from hera_volcano.pods import program as pods_program
from hera_volcano.shared.placeholders import WORKFLOW_SAMPLES

_SIMPLE = re.compile(r"(?:inputs|workflow)\.parameters\.[-a-zA-Z0-9_]+")
#: Some of what the executor's container has defined before ARGO_TEMPLATE (Argo's own and the service variables).
EXECUTOR_ENV = {"ARGO_POD_NAME": "wf-run-1", "ARGO_CONTAINER_NAME": "main", "KUBERNETES_SERVICE_HOST": "10.96.0.1"}
_OTHER = {**WORKFLOW_SAMPLES, "pod.name": "sample-workflow-step-1"}


def go_json(text: str) -> str:
    """A string as Go's encoding/json writes it (Argo's ``toJson``): HTML-safe escapes, other characters as they are."""
    out = ['"']
    for char in text:
        if char in '"\\':
            out.append("\\" + char)
        elif char in "\n\r\t":
            out.append({"\n": "\\n", "\r": "\\r", "\t": "\\t"}[char])
        elif ord(char) < 0x20 or char in "<>&\u2028\u2029":
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(char)
    return "".join([*out, '"'])


def go_quote(text: str) -> str:
    """Go's ``strconv.Quote`` (``fmt``'s ``%q``, sprig's ``quote``), from its documented rules."""
    short = {"\a": "a", "\b": "b", "\f": "f", "\n": "n", "\r": "r", "\t": "t", "\v": "v", '"': '"', "\\": "\\"}
    out = ['"']
    for char in text:
        code = ord(char)
        if char in short:
            out.append("\\" + short[char])
        elif char.isprintable():
            out.append(char)
        else:
            out.append(f"\\x{code:02x}" if code < 0x80 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}")
    return "".join([*out, '"'])


class _Missing(Exception):
    """An expression reads a variable the pass does not have: Argo leaves the tag for a later pass."""


_TOKEN = re.compile(r"\s*(?:'((?:[^'\\]|\\.)*)'|([A-Za-z_][A-Za-z0-9_]*|[0-9]+)|(.))")


def _unquote(literal: str) -> str:
    """An expr string literal's escapes, as expr reads them (Go's rules)."""
    simple = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", "\\": "\\", "'": "'"}

    def one(m: re.Match[str]) -> str:
        body = m.group(1)
        return simple[body] if body in simple else chr(int(body[1:], 16))

    return re.sub(r"\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|.)", one, literal)


def evaluate(expression: str, scope: Mapping[str, str]) -> Any:
    """The few expr forms (calls, string literals, ``a.b['c']``, ``+``) with the functions Argo offers that
    hera-volcano uses: ``replace``, ``toJson``, ``asInt``, ``sprig.quote``, ``sprig.mustFromJson``,
    ``sprig.sha256sum``."""
    tokens = [(m.group(1), m.group(2), m.group(3)) for m in _TOKEN.finditer(expression) if m.group(0).strip()]
    at = 0

    def peek() -> str | None:
        return tokens[at][2] if at < len(tokens) else None

    def term() -> Any:
        nonlocal at
        literal, name, punct = tokens[at]
        at += 1
        if literal is not None:
            return _unquote(literal)
        assert name is not None, f"unexpected {punct!r} in {expression!r}"
        if name.isdigit():
            return int(name)
        path = [name]
        while peek() in (".", "["):
            at += 1
            if tokens[at - 1][2] == ".":
                path.append(str(tokens[at][1]))
                at += 1
            else:
                path.append(_unquote(str(tokens[at][0])))
                at += 2  # the key and ']'
        if peek() == "(":
            at += 1
            args = []
            while peek() != ")":
                args.append(plus())
                if peek() == ",":
                    at += 1
            at += 1
            return _call(".".join(path), args)
        key = ".".join(path)
        if key not in scope:
            raise _Missing(key)
        return scope[key]

    def plus() -> Any:
        nonlocal at
        value = term()
        while peek() == "+":
            at += 1
            value = value + term()
        return value

    result = plus()
    assert at == len(tokens), f"unparsed rest of {expression!r}"
    return result


def _call(name: str, args: list[Any]) -> Any:
    if name == "replace":
        return str(args[0]).replace(args[1], args[2])
    if name == "toJson":
        if isinstance(args[0], str):
            return go_json(args[0])
        return json.dumps(args[0], ensure_ascii=False, separators=(",", ":"))
    if name == "asInt":  # Go's strconv.Atoi: an optional sign and digits, nothing else
        if not re.fullmatch(r"[-+]?[0-9]+", args[0]):
            raise ValueError(f"asInt: {args[0]!r} is not an integer")
        return int(args[0])
    if name == "sprig.quote":
        return go_quote(args[0])
    if name == "sprig.mustFromJson":
        return json.loads(args[0])
    if name == "sprig.sha256sum":  # sprig: the hex digest of the string's bytes
        return hashlib.sha256(str(args[0]).encode()).hexdigest()
    raise AssertionError(f"a function the simulation does not know: {name}")


def _one_pass(text: str, scope: Mapping[str, str]) -> str:
    """One of Argo's passes (fasttemplate): each ``{{...}}`` replaced once, from left to right, values pasted as
    they are (the JSON layer around the manifest gives them back raw); unknown tags stay for a later pass."""
    out, at = [], 0
    while True:
        start = text.find("{{", at)
        if start < 0:
            return "".join([*out, text[at:]])
        end = text.find("}}", start + 2)
        if end < 0:
            raise ValueError("cannot find end tag='}}'")  # fasttemplate's error: Argo fails the node
        out.append(text[at:start])
        tag = text[start + 2 : end].strip()
        if tag.startswith("="):
            try:
                result = evaluate(tag[1:], scope)
            except _Missing:
                out.append(text[start : end + 2])
            else:
                out.append(result if isinstance(result, str) else json.dumps(result))
        elif tag in scope:
            out.append(scope[tag])
        else:
            out.append(text[start : end + 2])
        at = end + 2


def argo_substitute(text: str, values: Mapping[str, str]) -> str:
    """``text`` substituted as Argo's ``SubstituteParams`` does: a first pass with the workflow's variables, then a
    second over its output with the template's inputs too (a tag a value brought in is found again there)."""
    workflow = {**_OTHER, **{k: v for k, v in values.items() if not k.startswith("inputs.")}}
    # The first pass runs over the inputs' values too (they are part of the template then).
    inputs = {k: _one_pass(v, workflow) for k, v in values.items() if k.startswith("inputs.")}
    second = _one_pass(_one_pass(text, workflow), {**workflow, **inputs})
    leftover = re.search(r"\{\{.*?\}\}", second)
    assert leftover is None, f"an Argo tag the simulation does not know: {leftover.group(0)!r}"
    return second


def kube_expand(text: str, env: Mapping[str, str]) -> str:
    """Kubernetes' ``$(VAR)`` expansion, from its rules: ``$$`` is ``$``; ``$(NAME)`` is NAME's value when defined,
    else stays as it is; an unclosed ``$(`` and any other ``$`` stay."""
    out: list[str] = []
    i = 0
    while i < len(text):
        if text[i] != "$" or i + 1 == len(text):
            out.append(text[i])
            i += 1
        elif text[i + 1] == "$":
            out.append("$")
            i += 2
        elif text[i + 1] == "(":
            end = text.find(")", i + 2)
            if end < 0:
                out.append("$(")
                i += 2
            else:
                name = text[i + 2 : end]
                out.append(env.get(name, f"$({name})"))
                i = end + 1
        else:
            out.append(text[i : i + 2])
            i += 2
    return "".join(out)


def parse(manifest: str, values: Mapping[str, str]) -> dict[str, Any]:
    """The job argoexec creates from a resource template's manifest: Argo's substitution, then the kubelet's
    expansion of the executor's ARGO_TEMPLATE variable, which carries the template."""
    data: dict[str, Any] = yaml.safe_load(kube_expand(argo_substitute(manifest, values), EXECUTOR_ENV))
    return data


def container(job: Mapping[str, Any], task: str, name: str | None = None) -> dict[str, Any]:
    spec = next(t for t in job["spec"]["tasks"] if t["name"] == task)["template"]["spec"]
    found: dict[str, Any] = next(c for c in spec["containers"] if name is None or c["name"] == name)
    return found


def process(spec: Mapping[str, Any], plugin_env: Mapping[str, str] = {}) -> tuple[list[str], dict[str, str]]:
    """The argv and the declared environment of the container's process (plugin variables come after the
    container's own, as Volcano appends them)."""
    env: dict[str, str] = {}
    for item in [*spec.get("env", []), *({"name": k, "value": v} for k, v in plugin_env.items())]:
        assert "value" in item, f"only plain values are simulated: {item}"
        env[item["name"]] = kube_expand(item["value"], env)
    argv = [kube_expand(arg, env) for arg in [*spec.get("command", []), *spec.get("args", [])]]
    return argv, env


FAKE_TORCHRUN = """\
import os, subprocess, sys
known = {"--nnodes", "--node_rank", "--nproc_per_node", "--master_addr", "--master_port", "--redirects", "--tee"}
opts, args = {}, sys.argv[1:]
while args and args[0].startswith("--"):
    flag = args.pop(0)
    if flag == "--no_python":
        opts[flag] = True
        continue
    key, _, value = flag.partition("=")
    assert key in known and value, "torchrun 1.13 does not take " + flag
    opts[key] = value
assert opts.pop("--no_python", False), "the command is not a Python script: --no_python"
nodes, node, procs = int(opts["--nnodes"]), int(opts["--node_rank"]), int(opts["--nproc_per_node"])
codes = []
for local in range(procs):
    env = dict(os.environ, RANK=str(node * procs + local), LOCAL_RANK=str(local), WORLD_SIZE=str(nodes * procs),
               LOCAL_WORLD_SIZE=str(procs), GROUP_RANK=str(node), MASTER_ADDR=opts["--master_addr"],
               MASTER_PORT=opts["--master_port"])
    codes.append(subprocess.run(args, env=env).returncode)
sys.exit(max(codes))
"""

FAKE_MPIEXEC = """\
import os, subprocess, sys
args, exported, ranks = sys.argv[1:], [], None
while args and args[0].startswith("-"):
    flag = args.pop(0)
    if flag == "-x":
        exported.append(args.pop(0))
    elif flag == "-np":
        ranks = int(args.pop(0))
    elif flag in ("--host", "--mca"):
        args.pop(0)
        if flag == "--mca":
            args.pop(0)
    else:
        assert flag == "--allow-run-as-root", flag
codes = []
for rank in range(ranks):
    # sshd starts a rank with a clean environment: only what -x passes, and a PATH; the worker's own files (the
    # launcher its ConfigMap mounts) are the simulation's
    env = {name: os.environ[name] for name in exported}
    env.update(PATH=os.environ["PATH"], OMPI_COMM_WORLD_RANK=str(rank), OMPI_COMM_WORLD_SIZE=str(ranks))
    env["HERA_VOLCANO_LAUNCHER"] = os.environ["HERA_VOLCANO_LAUNCHER"]
    codes.append(subprocess.run(args, env=env).returncode)
sys.exit(max(codes))
"""


def launcher_file() -> Path:
    """The launcher's file as the pods' ConfigMap holds it (:func:`hera_volcano.pods.program.launcher_source`: the
    launcher joined with the report rules), with the runtime it gives functions beside it, as the ConfigMap's files
    are: written once per version, in a folder of that version's own."""
    folder = Path(tempfile.gettempdir()) / f"hera-volcano-{pods_program.config_map_name()}-{os.getuid()}"
    folder.mkdir(exist_ok=True)
    files = {
        pods_program.LAUNCHER_FILE: pods_program.launcher_source(),
        launcher.RUNTIME_FILE: pods_program.runtime_source(),
    }
    for name, text in files.items():
        path = folder / name
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            partial = path.with_suffix(f".{os.getpid()}.tmp")
            partial.write_text(text, encoding="utf-8")
            partial.replace(path)
    return folder / pods_program.LAUNCHER_FILE


def fakes(directory: Path) -> Path:
    """``torchrun`` and ``mpiexec`` stand-ins in ``directory`` (put it first on PATH)."""
    for name, text in (("torchrun", FAKE_TORCHRUN), ("mpiexec", FAKE_MPIEXEC)):
        path = directory / name
        path.write_text(f"#!{sys.executable}\n" + textwrap.dedent(text))
        path.chmod(0o755)
    return directory


def run(argv: Sequence[str], env: Mapping[str, str], bin_dir: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``argv`` run for real with the pod's environment, the fakes and python3 on PATH; its output as the pod's log
    holds it (UTF-8, line breaks untranslated)."""
    path = os.pathsep.join([str(bin_dir), os.environ.get("PATH", "")])
    # The launcher as the pod has it, from the ConfigMap its containers mount (tests/builders/test_program.py checks
    # that every container running it mounts it): the very file the ConfigMap holds.
    full_env = {"PATH": path, "HERA_VOLCANO_LAUNCHER": str(launcher_file()), **env}
    python3 = bin_dir / "python3"
    if not python3.exists():  # the base interpreter: hera_volcano is not installed in the pod
        python3.symlink_to(getattr(sys, "_base_executable", sys.executable))
    done = subprocess.run(list(argv), env=full_env, cwd=cwd, capture_output=True, timeout=120)
    return subprocess.CompletedProcess(done.args, done.returncode, done.stdout.decode(), done.stderr.decode())
