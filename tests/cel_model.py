"""A model of the CEL the admission policy is written in, enough to evaluate it on plain objects offline.

The subset the policy uses: string, number and list literals, fields, indexes, ``has()``, ``!``, ``&&``, ``||``
(with CEL's absorption of an error by the other side's verdict), ``==``, ``!=``, ``in``, ``+``, ``? :``, the
macros ``exists``, ``all``, ``filter``, ``map`` and the methods ``startsWith``, ``matches``, ``join``. A missing
field is an error, as on the API server (a rule that reads one without ``has()`` fails there too). The real
verdicts come from the API server: tests/e2e/test_policy.py.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

_TOKEN = re.compile(r"\s*(?:('[^']*')|(\d+)|([A-Za-z_][A-Za-z0-9_]*)|(&&|\|\||==|!=|[!()\[\],.?:+]))")
_MACROS = ("exists", "all", "filter", "map")


class CelError(Exception):
    """What the API server would report as an evaluation error (a missing field, a wrong type)."""


@dataclass(frozen=True)
class Node:
    op: str
    args: tuple[object, ...]


def _tokens(text: str) -> list[str]:
    out, pos = [], 0
    while pos < len(text.rstrip()):
        m = _TOKEN.match(text, pos)
        if not m:
            raise SyntaxError(f"at {pos}: {text[pos : pos + 20]!r}")
        out.append(m.group(m.lastindex or 0))
        pos = m.end()
    return out


class _Parser:
    def __init__(self, text: str) -> None:
        self.toks, self.i = _tokens(text), 0

    def peek(self) -> str | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self, want: str | None = None) -> str:
        tok = self.toks[self.i]
        if want is not None and tok != want:
            raise SyntaxError(f"expected {want}, got {tok} at token {self.i}")
        self.i += 1
        return tok

    def expr(self) -> Node:
        cond = self.binary(0)
        if self.peek() == "?":
            self.take()
            yes = self.expr()
            self.take(":")
            return Node("?", (cond, yes, self.expr()))
        return cond

    _LEVELS = (("||",), ("&&",), ("==", "!=", "in"), ("+",))

    def binary(self, level: int) -> Node:
        if level == len(self._LEVELS):
            return self.unary()
        left = self.binary(level + 1)
        while self.peek() in self._LEVELS[level]:
            op = self.take()
            left = Node(op, (left, self.binary(level + 1)))
        return left

    def unary(self) -> Node:
        if self.peek() == "!":
            self.take()
            return Node("!", (self.unary(),))
        return self.postfix(self.primary())

    def primary(self) -> Node:
        tok = self.take()
        if tok == "(":
            inner = self.expr()
            self.take(")")
            return inner
        if tok == "[":
            items = self.items("]")
            return Node("list", tuple(items))
        if tok.startswith("'"):
            return Node("lit", (tok[1:-1],))
        if tok.isdigit():
            return Node("lit", (int(tok),))
        if tok in ("true", "false"):
            return Node("lit", (tok == "true",))
        if tok == "has":
            self.take("(")
            inner = self.expr()
            self.take(")")
            if inner.op != ".":
                raise SyntaxError("has() wants a field")
            return Node("has", inner.args)
        return Node("id", (tok,))

    def items(self, end: str) -> list[Node]:
        items = []
        while self.peek() != end:
            items.append(self.expr())
            if self.peek() == ",":
                self.take()
        self.take(end)
        return items

    def postfix(self, node: Node) -> Node:
        while self.peek() in (".", "["):
            if self.take() == "[":
                node = Node("index", (node, self.expr()))
                self.take("]")
                continue
            name = self.take()
            if self.peek() == "(":
                self.take()
                if name in _MACROS:
                    var = self.take()
                    self.take(",")
                    body = self.expr()
                    self.take(")")
                    node = Node("macro", (name, node, var, body))
                else:
                    node = Node("call", (name, node, tuple(self.items(")"))))
            else:
                node = Node(".", (node, name))
        return node


def parse(text: str) -> Node:
    parser = _Parser(text)
    node = parser.expr()
    if parser.peek() is not None:
        raise SyntaxError(f"left over: {parser.toks[parser.i :]}")
    return node


def _truth(value: object) -> bool:
    if not isinstance(value, bool):
        raise CelError(f"not a bool: {value!r}")
    return value


def _logic(op: str, left: Callable[[], object], right: Callable[[], object]) -> bool:
    """``&&``/``||`` as CEL has them: a side that decides the result wins over an error on the other side."""
    decides = op == "||"
    results: list[bool | CelError] = []
    for side in (left, right):
        try:
            value = _truth(side())
        except CelError as e:
            results.append(e)
            continue
        if value is decides:
            return decides
        results.append(value)
    for r in results:
        if isinstance(r, CelError):
            raise r
    return not decides


def evaluate(node: Node, env: Mapping[str, object]) -> object:
    op, a = node.op, node.args
    if op == "lit":
        return a[0]
    if op == "list":
        return [evaluate(n, env) for n in a]  # type: ignore[arg-type]
    if op == "id":
        if a[0] not in env:
            raise CelError(f"undeclared {a[0]}")
        return env[str(a[0])]
    if op in (".", "has"):
        holder = evaluate(a[0], env)  # type: ignore[arg-type]
        if not isinstance(holder, Mapping):
            raise CelError(f"no field {a[1]} on {holder!r}")
        if op == "has":
            return a[1] in holder
        if a[1] not in holder:
            raise CelError(f"no such key: {a[1]}")
        return holder[a[1]]
    if op == "index":
        holder, key = evaluate(a[0], env), evaluate(a[1], env)  # type: ignore[arg-type]
        try:
            return holder[key]  # type: ignore[index]
        except (KeyError, IndexError, TypeError) as e:
            raise CelError(f"no such key: {key}") from e
    if op in ("&&", "||"):
        return _logic(op, lambda: evaluate(a[0], env), lambda: evaluate(a[1], env))  # type: ignore[arg-type]
    if op == "!":
        return not _truth(evaluate(a[0], env))  # type: ignore[arg-type]
    if op == "?":
        return evaluate(a[1] if _truth(evaluate(a[0], env)) else a[2], env)  # type: ignore[arg-type]
    if op in ("==", "!=", "in", "+"):
        left, right = evaluate(a[0], env), evaluate(a[1], env)  # type: ignore[arg-type]
        if op == "in":
            if not isinstance(right, (list, Mapping)):
                raise CelError(f"in wants a list or map: {right!r}")
            return left in right
        if op == "+":
            return left + right  # type: ignore[operator]
        return (left == right) == (op == "==")
    if op == "macro":
        return _macro(str(a[0]), evaluate(a[1], env), str(a[2]), a[3], env)  # type: ignore[arg-type]
    if op == "call":
        target = evaluate(a[1], env)  # type: ignore[arg-type]
        args = [evaluate(n, env) for n in a[2]]  # type: ignore[union-attr]
        if a[0] == "startsWith":
            return str(target).startswith(str(args[0]))
        if a[0] == "matches":
            return re.search(str(args[0]), str(target)) is not None
        if a[0] == "join":
            return str(args[0]).join(target)  # type: ignore[arg-type]
    raise CelError(f"unknown {op} {a}")


def _macro(name: str, target: object, var: str, body: Node, env: Mapping[str, object]) -> object:
    if not isinstance(target, (list, Mapping)):
        raise CelError(f"{name} wants a list or map: {target!r}")
    items = list(target)

    def each(item: object) -> object:
        return evaluate(body, {**env, var: item})

    if name == "map":
        return [each(item) for item in items]
    if name == "filter":
        return [item for item in items if _truth(each(item))]
    verdicts = [_truth(each(item)) for item in items]
    return any(verdicts) if name == "exists" else all(verdicts)


def admits(policy: Mapping[str, object], obj: Mapping[str, object]) -> list[str]:
    """The messages of the policy's validations that ``obj`` fails (an evaluation error fails one too, as
    ``failurePolicy: Fail`` has it); empty when it is admitted."""
    spec = policy["spec"]
    assert isinstance(spec, Mapping)
    variables: dict[str, object] = {}
    env: dict[str, object] = {"object": obj, "variables": variables}
    for v in spec.get("variables", []):
        variables[v["name"]] = evaluate(parse(v["expression"]), env)
    failed = []
    for v in spec["validations"]:
        try:
            ok = _truth(evaluate(parse(v["expression"]), env))
        except CelError as e:
            failed.append(f"{v['message']} (error: {e})")
            continue
        if not ok:
            failed.append(str(v["message"]))
    return failed
