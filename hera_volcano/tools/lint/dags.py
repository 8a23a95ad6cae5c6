"""DAG templates: task names, the ``depends`` expression grammar, dependencies that exist, and no cycles."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Final

from hera_volcano.argo.limits import MAX_DAG_TASKS
from hera_volcano.shared.findings import Finding, as_list, as_map, error
from hera_volcano.shared.graphs import cycles
from hera_volcano.tools.lint.calls import check_call, check_call_name
from hera_volcano.tools.lint.context import Workflow

TASK_RESULTS: Final = ("Succeeded", "Failed", "Errored", "Skipped", "Omitted", "Daemoned", "AnySucceeded", "AllFailed")
_ITEM_RESULTS: Final = frozenset({"AnySucceeded", "AllFailed"})
_LOOPS: Final = ("withItems", "withParam", "withSequence")
_DEPENDS_TOKEN: Final = re.compile(r"\s*(?:(&&|\|\||[!()])|([a-zA-Z0-9][-a-zA-Z0-9]*)(?:\.([A-Za-z]\w*))?|(\S))")


def parse_depends(expression: str) -> list[tuple[str, str | None]]:
    """The ``(task, result)`` operands of a DAG task's ``depends`` (result None for a bare task name).

    The grammar Argo evaluates: operands ``task`` or ``task.Result`` joined by ``&&`` and ``||``, negated with ``!``,
    grouped with parentheses. Raises ``ValueError`` saying what is wrong.
    """
    tokens: list[tuple[str, str, str | None]] = []  # (kind, text, result); kind is "op" or "task"
    position = 0
    text = expression.rstrip()
    while position < len(text):
        match = _DEPENDS_TOKEN.match(text, position)
        if match is None or match.group(4) is not None:
            shown = match.group(4) if match is not None else text[position:]
            raise ValueError(
                f"unexpected {shown!r} in depends {expression!r}: use task names, task.Result, &&, ||, ! and"
                " parentheses (Argo accepts it at submission, but the DAG fails when it evaluates it)"
            )
        position = match.end()
        if match.group(1) is not None:
            tokens.append(("op", match.group(1), None))
        else:
            tokens.append(("task", match.group(2), match.group(3)))
    operands = _DependsParser(tokens, expression).parse()
    for task, result in operands:
        if result is not None and result not in TASK_RESULTS:
            raise ValueError(
                f"task result {result!r} for task {task!r} is invalid: use one of {', '.join(TASK_RESULTS)}"
            )
    return operands


class _DependsParser:
    """``expr := term (('&&' | '||') term)*``; ``term := '!' term | '(' expr ')' | operand``."""

    def __init__(self, tokens: list[tuple[str, str, str | None]], expression: str) -> None:
        self.tokens = tokens
        self.expression = expression
        self.position = 0
        self.operands: list[tuple[str, str | None]] = []

    def _fail(self, expected: str) -> ValueError:
        found = repr(self.tokens[self.position][1]) if self.position < len(self.tokens) else "the end"
        return ValueError(
            f"invalid depends {self.expression!r}: expected {expected}, found {found}"
            " (Argo accepts it at submission, but the DAG fails when it evaluates it)"
        )

    def _peek(self) -> str | None:
        return self.tokens[self.position][1] if self.position < len(self.tokens) else None

    def parse(self) -> list[tuple[str, str | None]]:
        if not self.tokens:
            raise ValueError("depends is empty: name at least one task")
        self._expression()
        if self.position != len(self.tokens):
            raise self._fail("'&&', '||' or the end")
        return self.operands

    def _expression(self) -> None:
        self._term()
        while self._peek() in ("&&", "||"):
            self.position += 1
            self._term()

    def _term(self) -> None:
        if self.position >= len(self.tokens):
            raise self._fail("a task, '!' or '('")
        kind, text, result = self.tokens[self.position]
        self.position += 1
        if kind == "task":
            self.operands.append((text, result))
        elif text == "!":
            self._term()
        elif text == "(":
            self._expression()
            if self._peek() != ")":
                raise self._fail("')'")
            self.position += 1
        else:
            self.position -= 1
            raise self._fail("a task, '!' or '('")


def check_dag(dag: object, path: str, wf: Workflow) -> Iterator[Finding]:
    if not isinstance(dag, Mapping):
        yield error(path, "must be a mapping with tasks")
        return
    tasks = dag.get("tasks")
    at = f"{path}.tasks"
    if not isinstance(tasks, list) or not tasks:
        yield error(at, "must list at least one task")
        return
    if len(tasks) > MAX_DAG_TASKS:
        yield error(at, f"has {len(tasks)} tasks: Argo 4's CRD allows at most {MAX_DAG_TASKS} in one DAG")
    seen: dict[str, str] = {}
    index: dict[str, int] = {}
    for k, task in enumerate(tasks):
        if not isinstance(task, Mapping):
            yield error(f"{at}[{k}]", "must be a mapping: a task")
            continue
        yield from check_call_name(task, f"{at}[{k}]", seen, "task")
        if isinstance(task.get("name"), str):
            index.setdefault(task["name"], k)
    using_depends = any(isinstance(t, Mapping) and t.get("depends") not in (None, "") for t in tasks)
    graph: dict[str, list[str]] = {}
    for k, task in enumerate(tasks):
        if isinstance(task, Mapping):
            yield from _check_task(task, f"{at}[{k}]", wf, using_depends, tasks, index, graph)
    found = list(cycles(graph))
    for cycle in found:
        yield error(f"{at}[{index[cycle[0]]}]", f"task dependencies form a cycle: {' -> '.join(cycle)}")
    if not found:
        for k, task in enumerate(tasks):
            yield from _check_argument_dependencies(as_map(task), f"{at}[{k}]", index, graph)


def _ancestors(name: str, graph: Mapping[str, list[str]]) -> set[str]:
    """The tasks ``name`` runs after, directly or through others (the graph has no cycle)."""
    seen: set[str] = set()
    stack = list(graph.get(name, []))
    while stack:
        task = stack.pop()
        if task not in seen:
            seen.add(task)
            stack.extend(graph.get(task, []))
    return seen


def _check_argument_dependencies(
    task: Mapping[str, object], path: str, index: Mapping[str, int], graph: Mapping[str, list[str]]
) -> Iterator[Finding]:
    """An argument whose value starts with ``{{tasks.NAME.`` (a parameter's ``value``, an artifact's ``from``) needs
    NAME among the task's dependencies, direct or not: Argo refuses the Workflow ("missing dependency")."""
    name = task.get("name")
    if not isinstance(name, str):
        return
    ancestors = _ancestors(name, graph)
    arguments = as_map(task.get("arguments"))
    for group, key in (("parameters", "value"), ("artifacts", "from")):
        for j, item in enumerate(as_list(arguments.get(group))):
            value = as_map(item).get(key)
            if not isinstance(value, str) or not value.startswith("{{tasks."):
                continue
            read = value.split(".")[1]
            if read in index and read not in ancestors:
                yield error(
                    f"{path}.arguments.{group}[{j}].{key}",
                    f"reads task {read!r}, which {name!r} does not run after: Argo refuses the Workflow (missing"
                    f" dependency {read!r}); add it to depends (or dependencies)",
                )


def _check_task(
    task: Mapping[str, object],
    path: str,
    wf: Workflow,
    using_depends: bool,
    tasks: list[object],
    index: Mapping[str, int],
    graph: dict[str, list[str]],
) -> Iterator[Finding]:
    yield from check_call(task, path, wf)
    name = task.get("name")
    dependencies, depends = task.get("dependencies"), task.get("depends")
    if using_depends and dependencies:
        yield error(f"{path}.dependencies", "cannot be mixed with depends in one DAG: other tasks here use depends")
    if using_depends and task.get("continueOn") is not None:
        yield error(
            f"{path}.continueOn",
            "cannot be used in a DAG whose tasks use depends: write the outcome in depends instead, e.g. 'A.Failed'",
        )
    if isinstance(name, str) and name[:1].isdigit() and (using_depends or dependencies):
        yield error(f"{path}.name", "must not begin with a digit when the DAG uses depends or dependencies")
    references: list[tuple[str, str | None, str]] = []  # (task, result, path)
    if dependencies is not None:
        if not isinstance(dependencies, list) or not all(isinstance(d, str) for d in dependencies):
            yield error(f"{path}.dependencies", "must be a list of task names")
        else:
            references.extend((d, None, f"{path}.dependencies[{j}]") for j, d in enumerate(dependencies))
    if depends not in (None, ""):
        if not isinstance(depends, str):
            yield error(f"{path}.depends", "must be a string such as 'A && (B.Succeeded || C.Failed)'")
        else:
            try:
                references.extend((task, result, f"{path}.depends") for task, result in parse_depends(depends))
            except ValueError as e:
                yield error(f"{path}.depends", str(e))
    for dependency, result, at in references:
        if dependency not in index:
            yield error(at, f"unknown task {dependency!r}: dependencies must name tasks of this DAG")
            continue
        if result in _ITEM_RESULTS and not any(as_map(tasks[index[dependency]]).get(k) is not None for k in _LOOPS):
            yield error(
                at,
                f"{dependency}.{result} needs {dependency!r} to loop (withItems, withParam or withSequence):"
                " Argo refuses an items-based result on a task without items",
            )
        if isinstance(name, str):
            graph.setdefault(name, []).append(dependency)
