"""Argo placeholders inside Volcano manifests.

Argo substitutes ``{{...}}`` as plain text in a resource manifest before parsing it, so an integer field may hold
an unquoted placeholder and still be an integer at run time. We keep such values as :class:`Placeholder` objects
(rendered unquoted) and validate the job against their sample values, since nothing can be checked earlier.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import overload

from hera_volcano.shared.errors import ValidationError

_EXPR = re.compile(r"\{\{\s*([^{}]*?)\s*\}\}")
# What may stand between the braces: a dotted variable, or an expression (``=...``) without braces or newlines.
_PARAMETER_NAME = re.compile(r"[-a-zA-Z0-9_]+")
_VALID = re.compile(r"[A-Za-z0-9_.-]+|=[^{}\n]+")

#: Sample values for Argo's global variables, shared with the Go conformance harness.
WORKFLOW_SAMPLES: Mapping[str, str] = {
    "workflow.name": "sample-workflow",
    "workflow.uid": "00000000-0000-0000-0000-000000000000",
    "workflow.namespace": "argo",
}
DEFAULT_SAMPLE = "sample"


@dataclass(frozen=True)
class Placeholder:
    """An Argo expression standing for a value known only at run time, with a sample used for validation.

    :param expression: the expression between the braces (``inputs.parameters.workers``, or ``=...``).
    :param sample: a value it may stand for, against which the job is validated (not part of equality: jobs of one
        shape differ only in their samples).
    :param quoted: whether the manifest writes it inside double quotes (None: when the sample is a string) or bare
        (integers, lists, JSON expressions).
    """

    expression: str
    #: Not part of equality: jobs of one shape differ only in their samples.
    sample: object = field(compare=False)
    #: Written inside double quotes (the default for string samples), or bare (integers, lists, JSON expressions).
    quoted: bool | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.expression, str) or not _VALID.fullmatch(self.expression):
            raise ValidationError("placeholder", f"not an Argo expression: {self.expression!r}")

    @property
    def in_quotes(self) -> bool:
        return isinstance(self.sample, str) if self.quoted is None else self.quoted

    @classmethod
    def input(cls, name: str, sample: object) -> Placeholder:
        """``{{inputs.parameters.NAME}}`` of the template that renders the manifest.

        :param name: the input parameter's name.
        :param sample: a value it may take, to validate the job with.
        """
        return cls(f"inputs.parameters.{_parameter_name(name)}", sample)

    @classmethod
    def workflow_parameter(cls, name: str, sample: object) -> Placeholder:
        """``{{workflow.parameters.NAME}}``, a Workflow argument.

        :param name: the Workflow argument's name.
        :param sample: a value it may take, to validate the job with.
        """
        return cls(f"workflow.parameters.{_parameter_name(name)}", sample)

    def __str__(self) -> str:
        return "{{" + self.expression + "}}"

    def __format__(self, spec: str) -> str:
        return str(self)


class Verbatim(str):
    """Text that Argo must leave alone, such as a program's source in an env value: a manifest writes it as it is
    unless it holds ``{{`` (which Argo would take for an expression), then as a double-quoted YAML string whose
    ``{`` are escapes. It reads back as the same text; elsewhere it is an ordinary string."""

    __slots__ = ()


def _parameter_name(name: object) -> str:
    """Argo's rule for parameter names; it also keeps a name from breaking out of the expression around it."""
    if not isinstance(name, str) or not _PARAMETER_NAME.fullmatch(name):
        raise ValidationError("placeholder", f"not an Argo parameter name (letters, digits, '_', '-'): {name!r}")
    return name


def refusal(text: str) -> str | None:
    """Why Argo cannot carry ``text`` as a parameter's value unchanged, or None. Argo substitutes the tags in a
    value again wherever it is used (the first pass of ``SubstituteParams`` covers a template's inputs, and a
    Workflow's arguments are substituted when it starts: an expression that does not parse leaves the Workflow
    without a phase for ever); it cannot pass on ASCII control characters other than tab and line breaks, nor
    unprintable characters beyond U+FFFF; and no environment variable, command line or Kubernetes string can hold
    NUL."""
    if "{{" in text:
        return "holds '{{', which Argo would substitute (expand, or fail on) wherever the value is used"
    if "\x00" in text:
        return "holds NUL, which no environment variable, argument or Kubernetes field can hold"
    unsayable = next((c for c in text if _UNQUOTABLE.fullmatch(c) or (ord(c) > 0xFFFF and not c.isprintable())), None)
    if unsayable is not None:
        # Argo passes a value on (a DAG argument, a task's output) with Go's quoting, whose \x and \U escapes are
        # not JSON: the node fails with "cannot finish template replacement because the result was invalid JSON".
        return f"holds U+{ord(unsayable):04X}, which Argo cannot pass from one template to another"
    if any(0xD800 <= ord(c) <= 0xDFFF for c in text):
        return "must be valid Unicode text (it holds a lone surrogate)"
    c1 = next((c for c in text if _C1_CONTROL.fullmatch(c)), None)
    if c1 is not None:
        # Measured on the test cluster (Argo v3.7): the step errors with "yaml: control characters are not allowed"
        # when such a value reaches a job's manifest; NEL arrives in a job's arguments and env dropped.
        return f"holds the control character U+{ord(c1):04X}, which Argo cannot carry into a job unchanged"
    return None


#: C1 control characters, NEL (U+0085) included.
_C1_CONTROL = re.compile("[\x80-\x9f]")


#: What Go's quoting writes as ``\xNN`` (ASCII controls but tab, line feed, carriage return, backspace, form feed).
_UNQUOTABLE = re.compile("[\x01-\x07\x0b\x0e-\x1f\x7f]")


def carried(field: str, text: str) -> str:
    """``text`` if Argo carries it unchanged as a parameter's value (:func:`refusal`), else a ValidationError."""
    problem = refusal(text)
    if problem is not None:
        raise ValidationError(field, problem)
    return text


def expressions(text: str) -> list[str]:
    """The expressions of every ``{{...}}`` in ``text``, in order."""
    return _EXPR.findall(text)


def has_expression(text: str) -> bool:
    """Whether ``text`` holds an Argo ``{{...}}`` expression (which Argo would substitute)."""
    return "{{" in text


def substitute_text(text: str, values: Mapping[str, str], default: str = DEFAULT_SAMPLE) -> str:
    """Replace every ``{{expr}}`` in ``text`` by ``values[expr]`` (``default`` when unknown), as Argo would."""
    return _EXPR.sub(lambda m: values.get(m.group(1), WORKFLOW_SAMPLES.get(m.group(1), default)), text)


@overload
def with_samples(data: Mapping[str, object], values: Mapping[str, object] | None = None) -> dict[str, object]: ...
@overload
def with_samples(data: object, values: Mapping[str, object] | None = None) -> object: ...
def with_samples(data: object, values: Mapping[str, object] | None = None) -> object:
    """A copy of ``data`` as Argo would substitute it: a placeholder becomes ``values[expression]`` (its sample if
    absent) and expressions inside strings become the text of their value."""
    known = dict(values or {})
    text = {k: v if isinstance(v, str) else _text(v) for k, v in known.items()}

    def walk(node: object) -> object:
        if isinstance(node, Placeholder):
            return known.get(node.expression, node.sample)
        if isinstance(node, str):
            return substitute_text(node, text) if "{{" in node else node
        if isinstance(node, Mapping):
            return {k: walk(v) for k, v in node.items()}
        if isinstance(node, list | tuple):
            return [walk(v) for v in node]
        return node

    return walk(data)


@overload
def bind(data: Mapping[str, object], values: Mapping[str, object]) -> dict[str, object]: ...
@overload
def bind(data: object, values: Mapping[str, object]) -> object: ...
def bind(data: object, values: Mapping[str, object]) -> object:
    """A copy of ``data`` with the placeholders named in ``values`` (by expression) replaced by their values, and
    their expressions inside strings by the values' text; every other placeholder stays."""
    text = {k: v if isinstance(v, str) else _text(v) for k, v in values.items()}

    def sub(match: re.Match[str]) -> str:
        return text.get(match.group(1), match.group(0))

    def walk(node: object) -> object:
        if isinstance(node, Placeholder):
            return values.get(node.expression, node)
        if isinstance(node, str) and not isinstance(node, Verbatim):
            return _EXPR.sub(sub, node) if "{{" in node else node
        if isinstance(node, Mapping):
            return {k: walk(v) for k, v in node.items()}
        if isinstance(node, list | tuple):
            return [walk(v) for v in node]
        return node

    return walk(data)


def _text(value: object) -> str:
    return json.dumps(value) if isinstance(value, list | dict | bool) else str(value)


def placeholders(data: object) -> dict[str, Placeholder]:
    """Every placeholder in ``data``, by expression (the first one met)."""
    found: dict[str, Placeholder] = {}

    def walk(node: object) -> None:
        if isinstance(node, Placeholder):
            found.setdefault(node.expression, node)
        elif isinstance(node, Mapping):
            for v in node.values():
                walk(v)
        elif isinstance(node, list | tuple):
            for v in node:
                walk(v)

    walk(data)
    return found


def collect(data: object) -> dict[str, object]:
    """Samples of every placeholder in ``data``, by expression."""
    return {expression: p.sample for expression, p in placeholders(data).items()}
