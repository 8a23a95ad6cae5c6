"""Argo's parameter-list rules, on their own and as lint applies them (which lists need values, which are skipped)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from hera_volcano.argo.parameters import Values, check_parameters
from hera_volcano.shared.findings import Finding
from hera_volcano.tools.lint import lint_document


def findings(params: object, *, values: Values | None = "required") -> list[Finding]:
    return list(check_parameters({"parameters": params}, "args", values=values))


def test_well_formed_arguments_pass() -> None:
    params = [
        {"name": "msg", "value": "hi"},
        {"name": "MY_param-1", "value": 3},
        {"name": "color", "value": "red", "enum": ["red", "blue"]},
        {"name": "cm", "valueFrom": {"configMapKeyRef": {"name": "c", "key": "k"}}},
        {"name": "ok", "valueFrom": {"supplied": {}, "default": "no"}},
        {"name": "ev", "valueFrom": {"event": "payload.x"}},
    ]
    assert findings(params) == []


@pytest.mark.parametrize(
    ("holder", "path", "words"),
    [
        ("nope", "args", "must be a mapping"),
        ({"parameters": {"name": "x"}}, "args.parameters", "must be a list"),
        ({"parameters": ["x"]}, "args.parameters[0]", "must be a mapping"),
    ],
)
def test_shapes(holder: object, path: str, words: str) -> None:
    [f] = check_parameters(holder, "args", values="required")
    assert (f.path, f.severity) == (path, "error")
    assert words in f.message


def test_absent_lists_have_nothing_to_check() -> None:
    assert list(check_parameters(None, "args", values="required")) == []
    assert list(check_parameters({}, "args", values="required")) == []


@pytest.mark.parametrize(
    ("params", "path", "words"),
    [
        ([{"value": "x"}], "args.parameters[0].name", "is required"),
        ([{"name": "", "value": "x"}], "args.parameters[0].name", "is required"),
        ([{"name": "a.b", "value": "x"}], "args.parameters[0].name", "letters, digits, '_' or '-'"),
        ([{"name": "a b", "value": "x"}], "args.parameters[0].name", "letters, digits"),
        ([{"name": 7, "value": "x"}], "args.parameters[0].name", "letters, digits"),
        (
            [{"name": "a", "value": "x"}, {"name": "a", "value": "y"}],
            "args.parameters[1].name",
            "also args.parameters[0]",
        ),
    ],
)
def test_names(params: list[Any], path: str, words: str) -> None:
    [f] = findings(params)
    assert f.path == path
    assert words in f.message


def test_values_are_required_only_where_argo_requires_them() -> None:
    [f] = findings([{"name": "a"}])
    assert (f.path, f.severity) == ("args.parameters[0]", "error")
    assert "value or valueFrom" in f.message
    assert findings([{"name": "a"}], values="optional") == []
    # A Workflow's own argument may still come from `argo submit -p a=...`: a warning, not an error.
    [w] = findings([{"name": "a"}], values="submitted")
    assert (w.path, w.severity) == ("args.parameters[0]", "warning") and "-p NAME=VALUE" in w.message
    # Inputs declare parameters: no value needed, only the names are Argo's business.
    assert findings([{"name": "a"}, {"name": "a"}], values=None) != []
    assert findings([{"name": "a", "valueFrom": {"path": "/x"}}], values=None) == []


@pytest.mark.parametrize("source", [{"path": "/tmp/x"}, {"jsonPath": "{.a}"}, {"parameter": "x"}, {"expression": "1"}])
def test_value_from_output_sources_are_refused(source: dict[str, str]) -> None:
    [f] = findings([{"name": "a", "valueFrom": source}])
    assert f.path == "args.parameters[0].valueFrom"
    assert "configMapKeyRef, event or supplied" in f.message
    # An output source next to an allowed one is still refused.
    assert findings([{"name": "a", "valueFrom": {**source, "supplied": {}}}]) != []


def test_value_from_needs_a_source() -> None:
    [f] = findings([{"name": "a", "valueFrom": {"default": "x"}}])
    assert f.path == "args.parameters[0].valueFrom"


@pytest.mark.parametrize(
    ("param", "values", "path", "words"),
    [
        ({"name": "a", "value": "x", "enum": []}, "required", "args.parameters[0].enum", "at least one value"),
        ({"name": "a", "value": "x", "enum": "x"}, "required", "args.parameters[0].enum", "at least one value"),
        (
            {"name": "a", "value": "green", "enum": ["red", "blue"]},
            "required",
            "args.parameters[0].value",
            "(red, blue)",
        ),
        ({"name": "a", "enum": ["red"]}, "required", "args.parameters[0]", "value or valueFrom"),
        (
            {"name": "a", "valueFrom": {"supplied": {}}, "enum": ["red"]},
            "required",
            "args.parameters[0].value",
            "required with an enum",
        ),
    ],
)
def test_enums(param: dict[str, Any], values: Values, path: str, words: str) -> None:
    [f] = findings([param], values=values)
    assert f.path == path
    assert words in f.message


def test_open_enum_argument_is_fine_in_a_template() -> None:
    assert findings([{"name": "a", "enum": ["red"]}], values="optional") == []
    assert findings([{"name": "a", "valueFrom": {"supplied": {}}, "enum": ["red"]}], values="optional") == []


def test_non_string_enums_are_not_compared() -> None:
    assert findings([{"name": "a", "value": 3, "enum": [3, 4]}]) == []


@pytest.mark.parametrize(
    ("value", "enum"), [("1e3", ["1000"]), ("1e3", ["1E3"]), ("0x1f", ["31"]), ("1_000", ["1000"])]
)
def test_what_argo_may_read_as_a_number_is_not_compared(value: str, enum: list[str]) -> None:
    # PyYAML keeps these as text; Argo's YAML 1.2 decoder may turn them into numbers that match.
    assert findings([{"name": "a", "value": value, "enum": enum}]) == []


def test_after_an_open_enum_argo_stops_checking_values_in_a_template() -> None:
    params = [
        {"name": "e", "enum": ["a", "b"]},
        {"name": "p", "value": "c", "enum": ["a", "b"]},
        {"name": "q", "valueFrom": {"path": "/tmp/x"}},
        {"name": "e"},  # names are still checked
    ]
    [f] = findings(params, values="optional")
    assert f.path == "args.parameters[3].name"
    assert {"args.parameters[1].value", "args.parameters[2].valueFrom"} <= {
        f.path for f in findings(params, values="required")
    }


# ---- as lint applies them ------------------------------------------------------------------------------------------


def document(kind: str = "Workflow") -> dict[str, Any]:
    return {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": kind,
        "metadata": {"generateName": "p-"} if kind == "Workflow" else {"name": "p"},
        "spec": {
            "entrypoint": "main",
            "arguments": {"parameters": [{"name": "msg"}]},
            "templates": [
                {
                    "name": "main",
                    "steps": [[{"name": "s", "template": "say", "arguments": {"parameters": [{"name": "text"}]}}]],
                },
                {"name": "say", "inputs": {"parameters": [{"name": "text"}]}, "container": {"image": "alpine:3"}},
            ],
        },
    }


def paths(doc: dict[str, Any], severity: str = "error") -> list[str]:
    return [f.path for f in lint_document(doc) if f.severity == severity]


def test_lint_requires_step_argument_values_and_warns_about_open_workflow_arguments() -> None:
    assert paths(document()) == ["spec.templates[0].steps[0][0].arguments.parameters[0]"]
    assert "spec.arguments.parameters[0]" in paths(document(), "warning")


def test_lint_leaves_a_templates_own_arguments_open_but_not_its_steps() -> None:
    assert paths(document("WorkflowTemplate")) == ["spec.templates[0].steps[0][0].arguments.parameters[0]"]


def test_lint_checks_template_inputs() -> None:
    doc = document("WorkflowTemplate")
    doc["spec"]["templates"][0]["steps"][0][0]["arguments"]["parameters"][0]["value"] = "hi"
    doc["spec"]["templates"][1]["inputs"]["parameters"].append({"name": "text"})
    assert paths(doc) == ["spec.templates[1].inputs.parameters[1].name"]


def test_lint_skips_arguments_merged_from_a_referenced_template() -> None:
    doc = copy.deepcopy(document())
    doc["spec"] = {"workflowTemplateRef": {"name": "elsewhere"}, "arguments": {"parameters": [{"name": "msg"}]}}
    assert paths(doc) == []
