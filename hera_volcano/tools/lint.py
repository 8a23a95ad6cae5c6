"""Lint Argo workflows and the Volcano Jobs their resource steps create, as plain YAML data.

Argo checks a workflow only when it is submitted, and nothing checks the Volcano Job inside a resource step until
the step runs on the cluster. This module finds both kinds of problem in files, without a cluster and without Hera
(pure dict work), fast enough for a pre-commit hook over thousands of rendered files: each file is parsed once with
the C loader, each manifest once after sample substitution.

Paths name the field: ``[0].spec.templates[2].name`` is the third template of the file's first document, and
``[0].spec.templates[1].resource.manifest::spec.tasks[0].name`` a field inside the Volcano Job of that manifest.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import yaml

from hera_volcano.argo import samples, selectors
from hera_volcano.argo.conditions import FAILURE_PHASES, PHASE_PATH, SUCCESS_PHASES, conditions, watched_ttl_problem
from hera_volcano.argo.limits import MAX_DAG_TASKS, MAX_TEMPLATES, WORKFLOW_KINDS
from hera_volcano.argo.parameters import Values, check_parameters
from hera_volcano.kube import names
from hera_volcano.kube.loading import describe_error, load_all
from hera_volcano.kube.quantities import is_go_duration
from hera_volcano.shared.checks import INT32_MAX, INT32_MIN
from hera_volcano.shared.findings import Finding, Severity, as_list, as_map, entry, error, join, warning
from hera_volcano.shared.graphs import cycles
from hera_volcano.shared.placeholders import DEFAULT_SAMPLE, substitute_text
from hera_volcano.volcano.queue_rules import check_queue
from hera_volcano.volcano.rules import check_job
from hera_volcano.volcano.schema import KIND, QUEUE_KIND

#: Separates the path of a resource manifest from the path of a field inside the object it holds.
MANIFEST_SEPARATOR: Final = "::"

_RUNNABLE_KINDS: Final = frozenset({"Workflow", "CronWorkflow"})

_TEMPLATE_TYPES: Final = (
    "container",
    "containerSet",
    "script",
    "resource",
    "steps",
    "dag",
    "suspend",
    "data",
    "http",
    "plugin",
)
_NON_LEAF: Final = frozenset({"steps", "dag"})
#: ``timeout`` is refused wherever Argo's ``IsLeaf`` is false: also on suspend templates.
_NO_TIMEOUT: Final = frozenset({"steps", "dag", "suspend"})
RESOURCE_ACTIONS: Final = ("get", "create", "apply", "delete", "replace", "patch")
#: Actions whose manifest need not be a whole object: a patch, or just the name of what to read or delete.
_PARTIAL_ACTIONS: Final = frozenset({"get", "delete", "patch"})
TASK_RESULTS: Final = ("Succeeded", "Failed", "Errored", "Skipped", "Omitted", "Daemoned", "AnySucceeded", "AllFailed")
_ITEM_RESULTS: Final = frozenset({"AnySucceeded", "AllFailed"})
_LOOPS: Final = ("withItems", "withParam", "withSequence")
#: Volcano phases a step's failure condition must catch, or the step polls until its deadline.
UNFINISHED_FAILURES: Final = tuple(p for p in FAILURE_PHASES if p != "Failed")
SUGGESTED_SUCCESS, SUGGESTED_FAILURE = conditions(SUCCESS_PHASES, FAILURE_PHASES)

#: A job or task name built from a placeholder, such as ``name: {{workflow.name}}-train``: its length is a guess.
_PLACEHOLDER_NAME: Final = re.compile(r"^[ \t-]*(?:name|generateName):[^\n]*\{\{", re.MULTILINE)
_WHOLE_PLACEHOLDER: Final = re.compile(r"\{\{[^{}]*\}\}")
_WORKFLOW_PARAMETER: Final = re.compile(r"\{\{\s*workflow\.parameters\.([^{}\s]+?)\s*\}\}")
_INPUT_PARAMETER: Final = re.compile(r"\{\{\s*inputs\.parameters\.([^{}\s]+?)\s*\}\}")
_DEPENDS_TOKEN: Final = re.compile(r"\s*(?:(&&|\|\||[!()])|([a-zA-Z0-9][-a-zA-Z0-9]*)(?:\.([A-Za-z]\w*))?|(\S))")
_INTEGER: Final = re.compile(r"[+-]?[0-9]+")


@dataclass(frozen=True)
class LintFinding:
    """A finding in a file: the line ``FILE: PATH: SEVERITY: MESSAGE`` of ``hera-volcano lint``."""

    file: str
    path: str
    severity: Severity
    message: str

    def __str__(self) -> str:
        return f"{self.file}: {self.path}: {self.severity}: {self.message}"

    def to_dict(self) -> dict[str, str]:
        """The JSON form: ``{file, path, severity, message}``."""
        return {"file": self.file, "path": self.path, "severity": self.severity, "message": self.message}


def has_errors(findings: Iterable[LintFinding | Finding]) -> bool:
    """Whether any finding is an error (warnings never fail a lint)."""
    return any(f.severity == "error" for f in findings)


# ---- entry points ----------------------------------------------------------------------------------------------------


def lint_file(path: Path | str, display: str | None = None) -> list[LintFinding]:
    """Lint one file; ``display`` is the name findings carry (the path by default). A file that cannot be read is
    an error finding."""
    name = str(path) if display is None else display
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        return [LintFinding(name, "[0]", "error", f"cannot read: {e.strerror or e}")]
    return lint_bytes(data, name)


def lint_bytes(data: bytes, file: str) -> list[LintFinding]:
    """Lint raw file contents: text that is not UTF-8 is an error finding, as kubectl and Argo refuse it."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        return [LintFinding(file, "[0]", "error", f"not UTF-8 text (byte {e.start}): YAML files must be UTF-8")]
    return lint_text(text, file)


def lint_text(text: str, file: str) -> list[LintFinding]:
    """Lint every document of a YAML stream; YAML that does not parse is an error finding, never an exception."""
    docs: list[object] = []
    problem: Finding | None = None
    try:
        for doc in load_all(text):
            docs.append(doc)
    except Exception as e:  # PyYAML raises more than YAMLError on odd input (e.g. IndexError for `a: !!int`)
        problem = Finding(f"[{len(docs)}]", "error", f"not valid YAML: {describe_error(e)}")
    findings = lint_documents(docs, file)
    if problem is not None:
        findings.append(LintFinding(file, problem.path, problem.severity, problem.message))
    return findings


def lint_documents(docs: Iterable[object], file: str) -> list[LintFinding]:
    """Lint parsed documents (document ``i`` is ``[i]`` in paths); kinds other than Argo's and Volcano's are skipped.

    A document so malformed that a check trips over it (a map where a list belongs, nesting deep enough to exhaust
    the stack) is one error finding, so one bad file never stops a run over many."""
    found: list[LintFinding] = []
    for i, doc in enumerate(docs):
        try:
            findings = lint_document(doc)
        except Exception as e:  # the rules read untrusted data; report what they could not, never crash
            findings = [Finding("", "error", f"malformed document, cannot check it: {type(e).__name__}: {e}")]
        found.extend(LintFinding(file, join(f"[{i}]", f.path), f.severity, f.message) for f in findings)
    return found


def lint_document(doc: object) -> list[Finding]:
    """Findings for one parsed document, with paths relative to it.

    Workflows, WorkflowTemplates, ClusterWorkflowTemplates and CronWorkflows get Argo's rules and their Volcano Jobs
    Volcano's; a bare Volcano Job gets Volcano's. Anything else (RBAC, kustomizations, empty documents) is ignored.
    """
    if not isinstance(doc, Mapping):
        return []
    api_version, kind = doc.get("apiVersion"), doc.get("kind")
    if not isinstance(api_version, str) or not isinstance(kind, str):
        return []
    group = api_version.partition("/")[0]
    if group == "argoproj.io" and kind in WORKFLOW_KINDS:
        return list(_lint_workflow(doc, kind))
    if group == "batch.volcano.sh" and kind == KIND:
        return check_job(doc)
    if group == "scheduling.volcano.sh" and kind == QUEUE_KIND:
        return check_queue(doc)
    return []


# ---- small helpers ---------------------------------------------------------------------------------------------------


def _name_finding(path: str, value: object, rule: names.Rule) -> Iterator[Finding]:
    message = rule(value)
    if message is not None:
        yield error(path, message)


# ---- workflows -------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Workflow:
    """What every check of one workflow document needs to know about it."""

    kind: str
    metadata: Mapping[str, Any]
    spec: Mapping[str, Any]
    spec_path: str
    template_names: frozenset[str]
    defaults: Mapping[str, Any]

    @property
    def runnable(self) -> bool:
        """A Workflow (or a CronWorkflow's), as opposed to a template: its parameters and job names are final."""
        return self.kind in _RUNNABLE_KINDS

    @property
    def namespace(self) -> str | None:
        namespace = self.metadata.get("namespace")
        return namespace if isinstance(namespace, str) and namespace else None


def _lint_workflow(doc: Mapping[str, Any], kind: str) -> Iterator[Finding]:
    metadata = doc.get("metadata")
    if not isinstance(metadata, Mapping):
        yield error("metadata", "is required: a mapping with name or generateName")
        metadata = {}
    else:
        yield from _check_metadata(metadata, WORKFLOW_KINDS[kind], kind)
    spec, spec_path = doc.get("spec"), "spec"
    if kind == "CronWorkflow" and isinstance(spec, Mapping):
        spec, spec_path = spec.get("workflowSpec"), "spec.workflowSpec"
    if not isinstance(spec, Mapping):
        yield error(spec_path, "is required: a mapping")
        return
    templates = as_list(spec.get("templates"))
    template_names = frozenset(
        t["name"] for t in templates if isinstance(t, Mapping) and isinstance(t.get("name"), str)
    )
    wf = _Workflow(kind, metadata, spec, spec_path, template_names, as_map(spec.get("templateDefaults")))
    yield from _check_entrypoint(wf)
    yield from _check_templates(wf)
    if spec.get("workflowTemplateRef") is None:
        # With a workflowTemplateRef, Argo merges these arguments with the template's, which lint cannot see.
        arguments = spec.get("arguments")
        values: Values = "submitted" if wf.runnable else "optional"
        yield from check_parameters(arguments, f"{spec_path}.arguments", values=values)
        if wf.runnable:
            yield from _check_workflow_parameters(wf)


def _check_metadata(metadata: Mapping[str, Any], max_length: int, kind: str) -> Iterator[Finding]:
    """Argo limits ``metadata.name`` (it becomes a label value); Kubernetes wants a DNS subdomain or a generateName."""
    name, generate = metadata.get("name"), metadata.get("generateName")
    if name not in (None, ""):
        message = names.dns1123_subdomain(name)
        if message is not None:
            yield error("metadata.name", message)
        elif isinstance(name, str) and len(name) > max_length:
            yield error(
                "metadata.name", f"must be at most {max_length} characters for a {kind} (Argo), not {len(name)}"
            )
    elif generate not in (None, ""):
        # Kubernetes validates the prefix with one trailing '-' masked; it cuts it to fit the random suffix.
        masked = generate[:-1] + "a" if isinstance(generate, str) and generate.endswith("-") else generate
        message = names.dns1123_subdomain(masked)
        if message is not None:
            yield error("metadata.generateName", f"{message} (a trailing '-' is allowed)")
    else:
        yield error("metadata.name", "is required (or metadata.generateName)")


def _check_entrypoint(wf: _Workflow) -> Iterator[Finding]:
    for key in ("entrypoint", "onExit"):
        value = wf.spec.get(key)
        path = f"{wf.spec_path}.{key}"
        if value in (None, ""):
            if key == "entrypoint" and wf.runnable and wf.spec.get("workflowTemplateRef") is None:
                yield error(path, f"is required in a {wf.kind}: the name of the template to run first")
        elif not isinstance(value, str):
            yield error(path, "must be a string: the name of a template")
        elif "{{" not in value and value not in wf.template_names and wf.spec.get("workflowTemplateRef") is None:
            # With a workflowTemplateRef, Argo looks the name up in the referenced template, which lint cannot see.
            yield error(path, f"must name a template of {wf.spec_path}.templates; there is no template {value!r}")


def _check_templates(wf: _Workflow) -> Iterator[Finding]:
    raw = wf.spec.get("templates")
    path = f"{wf.spec_path}.templates"
    if raw is not None and not isinstance(raw, list):
        yield error(path, "must be a list of templates")
        return
    templates = as_list(raw)
    if templates and wf.spec.get("workflowTemplateRef") is not None:
        yield error(path, "must be left out with workflowTemplateRef: the referenced template supplies them")
    if len(templates) > MAX_TEMPLATES:
        yield error(path, f"has {len(templates)} templates: Argo 4's CRD allows at most {MAX_TEMPLATES}")
    manifests = {
        index: text for index, _, text in samples.resolved_manifests({"metadata": wf.metadata, "spec": wf.spec})
    }
    seen: dict[str, int] = {}
    for i, template in enumerate(templates):
        at = f"{path}[{i}]"
        if not isinstance(template, Mapping):
            yield error(at, "must be a mapping")
            continue
        name = template.get("name")
        yield from _name_finding(f"{at}.name", name, names.argo_name)
        if isinstance(name, str):
            if name in seen:
                yield error(f"{at}.name", f"duplicate template name {name!r}: also {path}[{seen[name]}]")
            else:
                seen[name] = i
        yield from _check_template(template, at, wf, manifests.get(i))
        yield from check_parameters(template.get("inputs"), f"{at}.inputs", values=None)
        yield from _check_input_references(template, at)


def _check_template(template: Mapping[str, Any], path: str, wf: _Workflow, manifest: str | None) -> Iterator[Finding]:
    types = [t for t in _TEMPLATE_TYPES if template.get(t) is not None]
    if not types:
        yield error(path, f"must set one template type: {', '.join(_TEMPLATE_TYPES)}")
        return
    if len(types) > 1:
        yield error(path, f"sets {', '.join(types)}: a template has exactly one type")
        return
    kind = types[0]
    yield from _check_limits(template, path, kind)
    limit = as_map(template.get("retryStrategy")).get("limit")
    if isinstance(limit, int) and not isinstance(limit, bool) and not INT32_MIN <= limit <= INT32_MAX:
        yield error(f"{path}.retryStrategy.limit", f"must be a 32-bit integer (at most {INT32_MAX}), got {limit}")
    if kind in ("container", "script"):
        yield from _check_image(template, path, kind, wf)
    elif kind == "steps":
        yield from _check_steps(template["steps"], f"{path}.steps", wf)
    elif kind == "dag":
        yield from _check_dag(template["dag"], f"{path}.dag", wf)
    elif kind == "resource":
        yield from _check_resource(template, path, wf, manifest)


def _check_limits(template: Mapping[str, Any], path: str, kind: str) -> Iterator[Finding]:
    """``activeDeadlineSeconds``: an int ≥ 0 or an Argo variable; ``timeout``: a duration. Leaf templates only."""
    for field, refused, check in (
        ("activeDeadlineSeconds", _NON_LEAF, _deadline_problem),
        ("timeout", _NO_TIMEOUT, _timeout_problem),
    ):
        value = template.get(field)
        if value is None:
            continue
        at = f"{path}.{field}"
        problem = (
            f"is only valid on leaf templates (container, script, resource, ...), not on {kind}"
            if kind in refused
            else check(value)
        )
        if problem is not None:
            yield error(at, problem)


def _deadline_problem(value: object) -> str | None:
    rule = "must be a non-negative integer (seconds) or an Argo variable such as {{inputs.parameters.deadline}}"
    if isinstance(value, bool):
        return rule
    if isinstance(value, int):
        if value > INT32_MAX:
            return f"must be at most {INT32_MAX} (a 32-bit integer), got {value}"
        return None if value >= 0 else f"must not be negative, got {value}"
    if isinstance(value, str):
        if _INTEGER.fullmatch(value):
            return None if int(value) >= 0 else f"must not be negative, got {value}"
        if value.startswith("{{") and value.endswith("}}"):
            return None
    return f"{rule}, got {value!r}"


def _timeout_problem(value: object) -> str | None:
    rule = "must be a duration string such as 300s or 1h"
    if isinstance(value, bool) or not isinstance(value, str):
        return f"{rule}, got {value!r}" + (" (a bare integer is refused)" if isinstance(value, int) else "")
    if "{{" in value:
        return None
    if _INTEGER.fullmatch(value.strip()):
        return f"{rule}, got the bare integer {value!r}: Argo refuses a timeout without a unit"
    if not is_go_duration(value):
        return f"{rule}, got {value!r}: Argo parses it when the step runs, and fails the step"
    return None


def _check_image(template: Mapping[str, Any], path: str, kind: str, wf: _Workflow) -> Iterator[Finding]:
    body = template[kind]
    if not isinstance(body, Mapping):
        yield error(f"{path}.{kind}", "must be a mapping")
        return
    if body.get("image") in (None, "") and as_map(wf.defaults.get(kind)).get("image") in (None, ""):
        yield error(
            f"{path}.{kind}.image",
            f"is required (or set {wf.spec_path}.templateDefaults.{kind}.image): Argo refuses a {kind} without one",
        )


def _check_call(call: Mapping[str, Any], path: str, wf: _Workflow) -> Iterator[Finding]:
    """A step or task runs a template of this workflow (templateRef and inline templates are not followed)."""
    yield from check_parameters(call.get("arguments"), f"{path}.arguments", values="required")
    if call.get("templateRef") is not None or call.get("inline") is not None:
        return
    target = call.get("template")
    if target in (None, ""):
        yield error(f"{path}.template", "is required: the name of the template to run (or templateRef)")
    elif not isinstance(target, str):
        yield error(f"{path}.template", "must be a string: the name of a template")
    elif "{{" not in target and target not in wf.template_names:
        yield error(f"{path}.template", f"must name a template of {wf.spec_path}.templates; there is no {target!r}")


def _check_call_name(call: Mapping[str, Any], path: str, seen: dict[str, str], what: str) -> Iterator[Finding]:
    name = call.get("name")
    if name in (None, ""):
        yield error(f"{path}.name", "is required")
        return
    message = names.argo_name(name)
    if message is not None:
        yield error(f"{path}.name", message)
    if isinstance(name, str):
        if name in seen:
            yield error(f"{path}.name", f"duplicate {what} name {name!r}: also {seen[name]}")
        else:
            seen[name] = path


def _check_steps(groups: object, path: str, wf: _Workflow) -> Iterator[Finding]:
    if not isinstance(groups, list):
        yield error(path, "must be a list of step groups (each a list of steps run in parallel)")
        return
    seen: dict[str, str] = {}
    for g, group in enumerate(groups):
        at = f"{path}[{g}]"
        steps = [(f"{at}[{s}]", step) for s, step in enumerate(group)] if isinstance(group, list) else [(at, group)]
        for step_path, step in steps:
            if not isinstance(step, Mapping):
                yield error(step_path, "must be a mapping: a step")
                continue
            yield from _check_call_name(step, step_path, seen, "step")
            yield from _check_call(step, step_path, wf)


# ---- DAGs ------------------------------------------------------------------------------------------------------------


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


def _check_dag(dag: object, path: str, wf: _Workflow) -> Iterator[Finding]:
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
        yield from _check_call_name(task, f"{at}[{k}]", seen, "task")
        if isinstance(task.get("name"), str):
            index.setdefault(task["name"], k)
    using_depends = any(isinstance(t, Mapping) and t.get("depends") not in (None, "") for t in tasks)
    graph: dict[str, list[str]] = {}
    for k, task in enumerate(tasks):
        if isinstance(task, Mapping):
            yield from _check_task(task, f"{at}[{k}]", wf, using_depends, tasks, index, graph)
    for cycle in cycles(graph):
        yield error(f"{at}[{index[cycle[0]]}]", f"task dependencies form a cycle: {' -> '.join(cycle)}")


def _check_task(
    task: Mapping[str, Any],
    path: str,
    wf: _Workflow,
    using_depends: bool,
    tasks: list[Any],
    index: Mapping[str, int],
    graph: dict[str, list[str]],
) -> Iterator[Finding]:
    yield from _check_call(task, path, wf)
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
        if result in _ITEM_RESULTS and not any(tasks[index[dependency]].get(k) is not None for k in _LOOPS):
            yield error(
                at,
                f"{dependency}.{result} needs {dependency!r} to loop (withItems, withParam or withSequence):"
                " Argo refuses an items-based result on a task without items",
            )
        if isinstance(name, str):
            graph.setdefault(name, []).append(dependency)


# ---- resource steps --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Conditions:
    """A resource step's parsed conditions (None when absent or unparsable), with sample values substituted."""

    success: list[selectors.Requirement] | None
    failure: list[selectors.Requirement] | None


def _check_resource(template: Mapping[str, Any], path: str, wf: _Workflow, manifest: str | None) -> Iterator[Finding]:
    resource = template["resource"]
    at = f"{path}.resource"
    if not isinstance(resource, Mapping):
        yield error(at, "must be a mapping")
        return
    action = resource.get("action")
    if action in (None, ""):
        yield error(f"{at}.action", f"is required: one of {', '.join(RESOURCE_ACTIONS)}")
    elif action not in RESOURCE_ACTIONS:
        hint = ": Argo 4's CRD enforces the list, so it cannot be a parameter" if "{{" in str(action) else ""
        yield error(f"{at}.action", f"must be one of {', '.join(RESOURCE_ACTIONS)}, not {action!r}{hint}")
    has_manifest, has_from = resource.get("manifest") is not None, resource.get("manifestFrom") is not None
    if has_manifest == has_from and action not in ("delete", "get"):  # these may name their object in flags
        yield error(at, "must set exactly one of manifest and manifestFrom")
    if has_manifest and not isinstance(resource["manifest"], str):
        yield error(f"{at}.manifest", "must be a string: the object as YAML text")
    if resource.get("setOwnerReference") is True and has_from and not has_manifest:
        yield warning(f"{at}.setOwnerReference", "has no effect with manifestFrom: Argo only adds it to manifest")
    conditions, findings = _conditions(resource, at, template, wf)
    yield from findings
    obj: Mapping[str, Any] | None = None
    raw = resource.get("manifest")
    json_patch = action == "patch" and resource.get("mergeStrategy") == "json"
    whole_placeholder = isinstance(raw, str) and _WHOLE_PLACEHOLDER.fullmatch(raw.strip()) is not None
    if manifest is not None and not json_patch and not whole_placeholder:
        # A JSON patch is a list of operations; a manifest that is one placeholder is only known at run time.
        obj, findings = _manifest_object(manifest, f"{at}.manifest")
        yield from findings
    if obj is not None and _is_volcano_job(obj):
        yield from _check_volcano_step(obj, resource, at, wf, conditions)
    if (resource.get("successCondition") or resource.get("failureCondition")) and not _has_deadline(template, wf):
        yield warning(
            path,
            "a resource step polls its conditions until they hold, with no time limit:"
            " set activeDeadlineSeconds or timeout on this template",
        )


def _has_deadline(template: Mapping[str, Any], wf: _Workflow) -> bool:
    return any(
        source.get(key) is not None
        for source in (template, wf.defaults)
        for key in ("activeDeadlineSeconds", "timeout")
    )


def _conditions(
    resource: Mapping[str, Any], path: str, template: Mapping[str, Any], wf: _Workflow
) -> tuple[_Conditions, list[Finding]]:
    """Parse both conditions as argoexec will (a parse error fails the step at run time)."""
    parsed: dict[str, list[selectors.Requirement] | None] = {}
    findings: list[Finding] = []
    for key in ("successCondition", "failureCondition"):
        text = resource.get(key)
        parsed[key] = None
        if text is None:
            continue
        if not isinstance(text, str):
            findings.append(error(f"{path}.{key}", "must be a string: a label selector"))
            continue
        if "{{" in text:
            values = samples.template_values({"metadata": wf.metadata, "spec": wf.spec})
            known = values.get(str(template.get("name", "")), {})
            # A value only known at run time stands in as 0: a valid label value and a valid integer for > and <.
            known = {k: "0" if v == DEFAULT_SAMPLE else v for k, v in known.items()}
            text = substitute_text(text, known, default="0")
        try:
            parsed[key] = list(_parse_condition(text))
        except ValueError as e:
            findings.append(error(f"{path}.{key}", f"{e} (the step fails when it runs)"))
    return _Conditions(parsed["successCondition"], parsed["failureCondition"]), findings


@functools.lru_cache(maxsize=256)
def _parse_condition(text: str) -> tuple[selectors.Requirement, ...]:
    """Conditions repeat across steps and files; their requirements are immutable, so a parse is reused."""
    return tuple(selectors.parse_selector(text))


def _manifest_object(text: str, path: str) -> tuple[Mapping[str, Any] | None, list[Finding]]:
    """The one object a manifest holds (parsed after sample substitution, as Argo parses it after its own)."""
    try:
        docs = [d for d in load_all(text) if d is not None]
    except (yaml.YAMLError, ValueError, OverflowError, RecursionError) as e:
        return None, [error(path, f"is not valid YAML once placeholders are substituted: {describe_error(e)}")]
    if len(docs) != 1:
        return None, [error(path, f"must hold exactly one object, not {len(docs)}: Argo creates one per step")]
    if not isinstance(docs[0], Mapping):
        return None, [error(path, "must hold a Kubernetes object (a mapping)")]
    return docs[0], []


def _is_volcano_job(obj: Mapping[str, Any]) -> bool:
    api_version = obj.get("apiVersion")
    return isinstance(api_version, str) and api_version.startswith("batch.volcano.sh/") and obj.get("kind") == "Job"


def _check_volcano_step(
    job: Mapping[str, Any], resource: Mapping[str, Any], path: str, wf: _Workflow, conditions: _Conditions
) -> Iterator[Finding]:
    at = f"{path}.manifest{MANIFEST_SEPARATOR}"
    action = resource.get("action")
    if not isinstance(action, str) or action not in _PARTIAL_ACTIONS:  # a bad action is reported already
        raw_manifest = resource.get("manifest")
        names_known = not (isinstance(raw_manifest, str) and _PLACEHOLDER_NAME.search(raw_manifest))
        for f in check_job(job, names_known=names_known):
            yield Finding(at + f.path, f.severity, f.message)
    metadata = as_map(job.get("metadata"))
    raw = resource.get("manifest")
    raw_text = raw if isinstance(raw, str) else ""
    if resource.get("setOwnerReference") is True:
        yield from _check_owner(metadata, at, wf, raw_text)
    name = metadata.get("name")
    if wf.runnable and action == "create" and isinstance(name, str) and name and _literal_name(raw_text, name):
        yield warning(
            f"{at}metadata.name",
            f"is the fixed name {name!r}: a second run of this Workflow (or a retry) fails with AlreadyExists;"
            " use generateName, or a name built from {{workflow.name}}",
        )
    if action != "delete":
        yield from _check_job_conditions(job, resource, path, conditions)


def _check_owner(metadata: Mapping[str, Any], at: str, wf: _Workflow, raw: str) -> Iterator[Finding]:
    """Argo's owner reference points at the Workflow: same namespace, and the only controller."""
    namespace = metadata.get("namespace")
    if isinstance(namespace, str) and namespace:
        expected = wf.namespace
        if expected is not None and namespace != expected:
            yield error(
                f"{at}metadata.namespace",
                f"must be the Workflow's namespace {expected!r} with setOwnerReference: true, not {namespace!r}:"
                " Kubernetes garbage-collects an object whose owner is in another namespace",
            )
        elif expected is None and "workflow.namespace" not in raw:
            yield warning(
                f"{at}metadata.namespace",
                f"with setOwnerReference: true the job must live in the Workflow's namespace; this only holds when"
                f" the workflow runs in {namespace!r}: use {{{{workflow.namespace}}}} or leave the namespace out",
            )
    for j, ref in enumerate(as_list(metadata.get("ownerReferences"))):
        if isinstance(ref, Mapping) and ref.get("controller") is True:
            yield error(
                f"{at}metadata.ownerReferences[{j}].controller",
                "must not be true with setOwnerReference: true: Argo adds the Workflow as controller, and an object"
                " has at most one",
            )


def _literal_name(raw: str, name: str) -> bool:
    """Whether the unsubstituted manifest spells the job's name out (rather than building it from a placeholder)."""
    pattern = rf"^[ \t]*name:[ \t]*(['\"]?){re.escape(name)}\1[ \t]*(?:#.*)?$"
    return re.search(pattern, raw, re.MULTILINE) is not None


def _phase(phase: str) -> Mapping[str, Any]:
    return {"status": {"state": {"phase": phase}}}


def _check_job_conditions(
    job: Mapping[str, Any], resource: Mapping[str, Any], path: str, conditions: _Conditions
) -> Iterator[Finding]:
    """Warnings for a step on a Volcano Job whose conditions let it hang or finish at the wrong time."""
    created = {k: v for k, v in job.items() if k != "status"}
    if resource.get("successCondition") is not None or resource.get("failureCondition") is not None:
        ttl_problem = watched_ttl_problem(as_map(job.get("spec")).get("ttlSecondsAfterFinished"))
        if ttl_problem is not None:
            yield warning(f"{path}.manifest{MANIFEST_SEPARATOR}spec.ttlSecondsAfterFinished", ttl_problem)
    if resource.get("successCondition") is None:
        yield warning(
            path,
            "has no successCondition: the step finishes before the job has run;"
            f" set successCondition: {SUGGESTED_SUCCESS}",
        )
    elif conditions.success is not None:
        success = conditions.success
        if all(r.matches(created) for r in success):
            yield warning(f"{path}.successCondition", "holds as soon as the job is created, before it has run")
        elif any(r.key == PHASE_PATH for r in success) and not all(r.matches(_phase("Completed")) for r in success):
            yield warning(f"{path}.successCondition", "does not hold for a Completed job: the step never succeeds")
    if resource.get("failureCondition") is None:
        yield warning(
            path,
            "has no failureCondition: when the job fails the step polls until its deadline;"
            f" set failureCondition: {SUGGESTED_FAILURE}",
        )
    elif conditions.failure is not None:
        failure = conditions.failure
        if any(r.matches(created) for r in failure):
            yield warning(
                f"{path}.failureCondition",
                "holds before Volcano writes the job's status (a missing field makes !=, notin and !key true):"
                " the step fails at once",
            )
        missed = [p for p in UNFINISHED_FAILURES if not any(r.matches(_phase(p)) for r in failure)]
        if missed:
            yield warning(
                f"{path}.failureCondition",
                f"does not hold for a job that ends {' or '.join(missed)}: the step then polls until its deadline;"
                f" use {SUGGESTED_FAILURE}",
            )


# ---- parameter references ------------------------------------------------------------------------------------------


def _declared(holder: object) -> set[str]:
    return {str(p["name"]) for p in as_list(as_map(holder).get("parameters")) if isinstance(p, Mapping) and "name" in p}


def _check_workflow_parameters(wf: _Workflow) -> Iterator[Finding]:
    """``{{workflow.parameters.X}}`` anywhere in a Workflow must name a declared argument (templates are exempt)."""
    # One C-speed serialisation tells whether the walk is needed at all.
    if "workflow.parameters." not in json.dumps(wf.spec, default=str):
        return
    declared = _declared(wf.spec.get("arguments"))
    if declared:
        declared.add("json")  # Argo's {{workflow.parameters.json}}: all of them as one JSON object
    for at, name in _references(wf.spec, wf.spec_path, "workflow.parameters.", _WORKFLOW_PARAMETER):
        if name not in declared:
            yield error(
                at,
                f"{{{{workflow.parameters.{name}}}}} is not declared in {wf.spec_path}.arguments.parameters:"
                f" Argo fails to resolve it in a {wf.kind}",
            )


def _check_input_references(template: Mapping[str, Any], path: str) -> Iterator[Finding]:
    """``{{inputs.parameters.X}}`` in a template must name one of its inputs (Argo: "failed to resolve")."""
    if "inputs.parameters." not in json.dumps(template, default=str):
        return
    declared = _declared(template.get("inputs"))
    for at, name in _references(template, path, "inputs.parameters.", _INPUT_PARAMETER):
        if name not in declared:
            yield error(
                at,
                f"{{{{inputs.parameters.{name}}}}} is not an input of this template: declare it in"
                f" {path}.inputs.parameters, or Argo fails to resolve it",
            )


def _references(node: object, path: str, needle: str, pattern: re.Pattern[str]) -> Iterator[tuple[str, str]]:
    """``(path, name)`` of each distinct reference ``pattern`` finds in a string of ``node``.

    Inline templates are skipped: they have inputs of their own.
    """
    if isinstance(node, str):
        if needle in node:
            yield from ((path, name) for name in dict.fromkeys(pattern.findall(node)))
    elif isinstance(node, Mapping):
        for key, value in node.items():
            if key != "inline":
                yield from _references(value, entry(path, key), needle, pattern)
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _references(value, f"{path}[{i}]", needle, pattern)
