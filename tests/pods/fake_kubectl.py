"""A stand-in for kubectl, run as ``kubectl`` by the pod scripts under test (see world.py, which drives it).

It answers the calls the MPI master's wait makes (``get pods``, ``wait pods``) from a world held in a JSON file that
the test changes as it goes: pods, and faults to inject (a call that fails or answers slowly). Objects are served in the
shape the API server gives them and printed through the script's own ``-o jsonpath=...`` template (a small
evaluator of the subset kubectl's JSONPath the scripts use), so the templates are exercised too. Every call is
appended to a calls file (its arguments, the time, the kubeconfig and discovery-cache variables it saw, and
whether it paid for API discovery: as kubectl, a call that finds no discovery cache in KUBECACHEDIR fetches one and
writes it there, so calls that start together on an empty cache each pay).
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from pathlib import Path
from typing import Any

WORLD = Path(os.environ["FAKE_WORLD"])
POLL = 0.02


def load() -> dict[str, Any]:
    while True:
        try:
            return dict(json.loads(WORLD.read_text()))
        except (OSError, ValueError):  # replaced while read: read again
            time.sleep(0.005)


# ------------------------------------------------------------------------------------------------ objects


def pod_object(name: str, pod: dict[str, Any]) -> dict[str, Any]:
    labels = {**pod.get("labels", {}), "volcano.sh/task-spec": pod["task"]}
    status: dict[str, Any] = {"phase": pod.get("phase", "Pending")}
    if "ready" in pod:
        status["conditions"] = [{"type": "Ready", "status": "True" if pod["ready"] else "False"}]
    meta = {"name": name, "creationTimestamp": "2026-01-01T00:00:00Z", "labels": labels}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "status": status}


def objects(world: dict[str, Any], kind: str, selector: str | None) -> dict[str, dict[str, Any]]:
    found = {n: pod_object(n, p) for n, p in world.get("pods", {}).items()}
    return {n: o for n, o in found.items() if selected(o, selector)}


def selected(obj: dict[str, Any], selector: str | None) -> bool:
    labels = obj["metadata"].get("labels", {})
    for term in (selector or "").split(","):
        if term:
            key, _, value = term.partition("=")
            if labels.get(key) != value:
                return False
    return True


# ------------------------------------------------------------------------------------------------ jsonpath


def render(template: str, data: Any) -> str:
    """kubectl's JSONPath for the subset the scripts use: text, ``{.a.b}`` (``\\.`` escapes a dot), ``[*]``,
    ``[?(@.a.b=="v")]`` and ``!=``, ``{range ...}...{end}`` and string literals such as ``{"\\n"}``."""
    out, _ = _render(_tokens(template), 0, data, None)
    return out


def _tokens(template: str) -> list[tuple[str, str]]:
    tokens: list[tuple[str, str]] = []
    i = 0
    while i < len(template):
        if template[i] == "{":
            j = template.index("}", i)
            # a filter may hold braces? not in our templates; strings may hold "}" only escaped: not used
            tokens.append(("expr", template[i + 1 : j]))
            i = j + 1
        else:
            j = template.find("{", i)
            j = len(template) if j < 0 else j
            tokens.append(("text", template[i:j]))
            i = j
    return tokens


def _render(tokens: list[tuple[str, str]], i: int, data: Any, end: str | None) -> tuple[str, int]:
    out = ""
    while i < len(tokens):
        kind, value = tokens[i]
        if kind == "text":
            out += value
            i += 1
        elif value == "end":
            return out, i + 1
        elif value.startswith("range "):
            items = _select(value[len("range ") :], data)
            body_end = _matching_end(tokens, i + 1)
            for item in items:
                text, _ = _render(tokens[i + 1 : body_end + 1], 0, item, "end")
                out += text
            i = body_end + 1
        elif value.startswith('"'):
            out += json.loads(value)
            i += 1
        else:
            out += " ".join(_text(v) for v in _select(value, data))
            i += 1
    return out, i


def _matching_end(tokens: list[tuple[str, str]], i: int) -> int:
    depth = 0
    while True:
        kind, value = tokens[i]
        if kind == "expr" and value.startswith("range "):
            depth += 1
        elif kind == "expr" and value == "end":
            if depth == 0:
                return i
            depth -= 1
        i += 1


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


_STEP = re.compile(r"\.((?:\\\.|[^.\[])+)|\[\*\]|\[\?\(@\.([a-zA-Z.]+)(==|!=)(\"[^\"]*\"|\d+)\)\]")


def _select(path: str, data: Any) -> list[Any]:
    current = [data]
    pos = 0
    while pos < len(path):
        m = _STEP.match(path, pos)
        assert m, f"unsupported JSONPath {path!r} at {pos}"
        pos = m.end()
        nxt: list[Any] = []
        for node in current:
            if m.group(1) is not None:
                key = m.group(1).replace("\\.", ".")
                if isinstance(node, dict) and key in node:
                    nxt.append(node[key])
            elif m.group(0) == "[*]":
                if isinstance(node, list):
                    nxt.extend(node)
            elif isinstance(node, list):
                wanted = json.loads(m.group(4))
                for x in node:
                    found = _select("." + m.group(2), x)
                    if len(found) == 1 and (found[0] == wanted) == (m.group(3) == "=="):
                        nxt.append(x)
        current = nxt
    return current


# ------------------------------------------------------------------------------------------------ commands


def option(args: list[str], name: str) -> str | None:
    for i, a in enumerate(args):
        if a == name and i + 1 < len(args):
            return args[i + 1]
        if a.startswith(name + "="):
            return a.split("=", 1)[1]
    return None


def positional(args: list[str]) -> list[str]:
    """The arguments that are not options or their values."""
    takes_value = {"-n", "-l", "-c", "-o", "--for", "--timeout", "--tail", "--since-time", "--request-timeout"}
    out, skip = [], False
    for a in args:
        if skip:
            skip = False
        elif a in takes_value:
            skip = True
        elif not a.startswith("-"):
            out.append(a)
    return out


def fault(world: dict[str, Any], key: str) -> None:
    """Apply the fault injected for calls of this kind (``key``), counting down how many calls it affects."""
    spec = world.get("faults", {}).get(key)
    if not spec:
        return
    if spec.get("delay"):
        time.sleep(spec["delay"])
    if spec.get("fail"):
        if spec["fail"] is not True:
            update(lambda w: w["faults"][key].__setitem__("fail", w["faults"][key]["fail"] - 1))
        print(spec.get("error", "error: dial tcp 10.96.0.1:443: connect: connection refused"), file=sys.stderr)
        sys.exit(1)


def update(change: Any) -> None:
    """Change the world from the fake's side (counting down a fault), atomically enough for the tests."""
    world = load()
    change(world)
    tmp = WORLD.with_suffix(f".{os.getpid()}")
    tmp.write_text(json.dumps(world))
    tmp.rename(WORLD)


def orphaned(parent: int) -> bool:
    return os.getppid() != parent


def wait(args: list[str]) -> None:
    """``kubectl wait pods -l SEL --for=condition=Ready --timeout=Ns``: until every selected pod is Ready."""
    parent = os.getppid()
    timeout = float((option(args, "--timeout") or "0s").rstrip("s"))
    deadline = time.monotonic() + timeout
    while True:
        world = load()
        if world.get("faults", {}).get("wait", {}).get("block"):
            pass
        else:
            pods = objects(world, "pods", option(args, "-l"))
            if pods and all(p["status"].get("conditions", [{}])[0].get("status") == "True" for p in pods.values()):
                return
        if time.monotonic() > deadline:
            print("error: timed out waiting for the condition on pods", file=sys.stderr)
            sys.exit(1)
        if orphaned(parent):
            return
        time.sleep(POLL)


def discover(words: list[str]) -> bool:
    """Whether this call paid for discovery, as kubectl's cache decides: a call that finds no cache fetches it
    (``api-versions`` caches the groups alone, enough for core kinds only), and a kind named RESOURCE.GROUP whose
    group's first part does not read as a version (``jobs.batch.volcano.sh``) is first looked up as version
    ``batch`` of group ``volcano.sh``, which no cache holds, so it discovers again every time."""
    cache = Path(os.environ.get("KUBECACHEDIR") or Path.home() / ".kube" / "cache") / "discovery"
    kind = words[1] if len(words) > 1 and words[0] in ("get", "wait", "delete") else ""
    parts = kind.split(".")
    misread = len(parts) >= 3 and not re.fullmatch(r"v\d+((alpha|beta)\d+)?", parts[1])
    if (cache / "servergroups.json").exists() and not misread and ("." not in kind or (cache / "resources").exists()):
        return False
    time.sleep(0.2)  # kubectl's requests for /api and /apis
    cache.mkdir(parents=True, exist_ok=True)
    (cache / "servergroups.json").write_text("{}")
    if words[:1] != ["api-versions"]:
        (cache / "resources").write_text("{}")
    return True


def main(args: list[str]) -> None:
    words = positional(args)
    verb = words[0] if words else ""
    discovered = discover(words)
    with open(os.environ["FAKE_CALLS"], "a") as calls:
        record = {
            "args": args,
            "at": time.time(),
            "pid": os.getpid(),
            "kubeconfig": os.environ.get("KUBECONFIG", ""),
            "cache": os.environ.get("KUBECACHEDIR", ""),
            "discovered": discovered,
        }
        calls.write(json.dumps(record) + "\n")
    world = load()
    if verb == "get":
        kind = words[1]
        fault(world, f"get-{kind.split('.')[0]}")
        found = objects(world, kind, option(args, "-l"))
        if len(words) > 2:  # one object by name
            if words[2] not in found:
                print(f'Error from server (NotFound): {kind} "{words[2]}" not found', file=sys.stderr)
                sys.exit(1)
            data: Any = found[words[2]]
        else:
            data = {"kind": "List", "items": list(found.values())}
        print(render((option(args, "-o") or "").removeprefix("jsonpath="), data), end="")
    elif verb == "wait":
        fault(world, "wait")
        wait(args)
    else:
        print(f"fake kubectl: unsupported call {args}", file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    try:
        main(sys.argv[1:])
    except BrokenPipeError:  # the reader went away, as kubectl on SIGPIPE: quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
