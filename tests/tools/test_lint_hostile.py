"""Lint over hostile input (a pull request's files in a pre-commit hook or CI job): alias and merge-key bombs,
thousands of repeated keys, keys and file names with control characters. Every run ends within a budget of calls
linear in its input (counted, never timed) and prints one well-formed line per finding."""

from __future__ import annotations

import json
import re
from typing import Final

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hera_volcano.tools.lint import LintFinding, lint_text
from tests.bombs import merge_bomb
from tests.steps import within
from tests.tools.test_lint import JOB, workflow

WORKFLOW: Final = yaml.safe_dump(workflow(), sort_keys=False)
#: ``FILE:LINE: PATH: SEVERITY: MESSAGE`` on one line, nothing that breaks a line or UTF-8 in it.
LINE: Final = re.compile(r"[^\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]+:\d+: \[\d+\]\S*.*: (error|warning): .+")


def budget(text: str) -> int:
    """Calls lint may make for ``text``: linear in its size (the bundled workflows take under 3 a character)."""
    return 50_000 + 100 * len(text)


def lint(text: str, file: str = "f.yaml") -> list[LintFinding]:
    found, _ = within(budget(text), lambda: lint_text(text, file))
    return found


def well_formed(found: list[LintFinding]) -> None:
    for f in found:
        line = str(f)
        assert LINE.fullmatch(line), line
        line.encode("utf-8")  # strict: no lone surrogate
        assert json.loads(json.dumps(f.to_dict())) == f.to_dict()


def test_a_merge_bomb_in_a_workflow_is_one_clear_error() -> None:
    text = WORKFLOW + merge_bomb().replace("i: &i", "bomb: &i")
    [finding] = lint(text)
    assert finding.severity == "error" and finding.path == "[0]"
    assert "not valid YAML: aliases and merge keys (<<) expand this YAML past" in finding.message


def test_two_thousand_repeated_keys_are_two_thousand_findings_at_their_lines() -> None:
    text = "".join(f"key{i}: {i}\n" for i in range(2000)) * 2
    found = [f for f in lint(text) if "duplicate key" in f.message]
    assert len(found) == 2000
    for i, f in enumerate(found):
        assert (f.path, f.line) == (f"[0].key{i}", 2001 + i)
        assert f"(also on line {i + 1} of the file)" in f.message


def test_repeated_keys_in_a_manifest_are_found_in_one_pass() -> None:
    data = workflow()
    data["spec"]["templates"][1]["resource"]["manifest"] = JOB + "".join(f"x{i}: 1\n" for i in range(500)) * 2
    found = [f for f in lint(yaml.safe_dump(data, sort_keys=False)) if "duplicate key" in f.message]
    assert len(found) == 500
    assert found[0].path == "[0].spec.templates[1].resource.manifest::x0"


def test_many_findings_in_one_wide_mapping_are_located_in_one_pass() -> None:
    text = WORKFLOW.replace("spec:\n", "spec:\n" + "".join(f"  unknown{i}: 1\n" for i in range(3000)), 1)
    found = [f for f in lint(text) if "unknown field" in f.message]
    assert len(found) == 3000
    spec = WORKFLOW.splitlines().index("spec:") + 1
    assert [f.line for f in found] == [spec + 1 + i for i in range(3000)]


def test_keys_values_and_file_names_with_control_characters_stay_on_one_line() -> None:
    text = WORKFLOW.replace("spec:\n", 'spec:\n  "forged\\nf.yaml:1: [0]: error: x": 1\n  "\\u2028\\x85\\e": 2\n', 1)
    found = lint(text, "name\nwith\x1b[31mcontrols\udcff.yaml")
    assert len(found) == 2
    well_formed(found)
    assert "[0].spec[forged\\nf.yaml:1: [0]: error: x]" in str(found[0])
    assert "name\\nwith\\x1b[31mcontrols\\udcff.yaml:" in str(found[0])


# ---- property: whatever the text, findings within the budget, one line each -----------------------------------------

_ANCHORS: Final = ("a", "b", "c")
_words = st.sampled_from(
    [
        "x",
        "name",
        "spec",
        "templates",
        "steps",
        "dag",
        "tasks",
        "resource",
        "manifest",
        "container",
        "entrypoint",
        "metadata",
        "kind",
        "<<",
        "'quoted: key'",
        '"new\\nline"',
        '"\\u2028sep"',
        '"\\ud800"',
        '"\\e[31m"',
        "1",
        "true",
        "~",
        "2024-01-01",
        "1:30",
        "{{inputs.parameters.x}}",
    ]
)
_scalars = st.one_of(
    _words,
    st.sampled_from([f"*{a}" for a in _ANCHORS] + ["!!binary aGk=", "!!int '3'", "!custom x", '"\\x00"']),
    st.text(alphabet=st.characters(codec="utf-8", exclude_characters=",:[]{}#&*!|>'\"%@`"), max_size=8).map(
        lambda s: json.dumps(s)
    ),
)


def _anchored(value: str, anchor: str | None) -> str:
    return value if anchor is None else f"&{anchor} {value}"


_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.tuples(st.lists(inner, max_size=5), st.sampled_from([None, *_ANCHORS])).map(
            lambda t: _anchored("[" + ", ".join(t[0]) + "]", t[1])
        ),
        st.tuples(st.lists(st.tuples(_words, inner), max_size=5), st.sampled_from([None, *_ANCHORS])).map(
            lambda t: _anchored("{" + ", ".join(f"{k}: {v}" for k, v in t[0]) + "}", t[1])
        ),
        inner.map(lambda v: f"!!omap [k: {v}]"),
    ),
    max_leaves=25,
)
_headers = st.sampled_from(
    [
        "",
        "apiVersion: argoproj.io/v1alpha1\nkind: Workflow\n",
        "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\n",
        "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\n",
    ]
)
_documents = st.tuples(_headers, st.lists(st.tuples(_words, _values), max_size=6)).map(
    lambda t: t[0] + "".join(f"{k}: {v}\n" for k, v in t[1])
)
_texts = st.one_of(
    st.lists(_documents, min_size=1, max_size=3).map("---\n".join),
    st.text(max_size=200),
    st.sampled_from([WORKFLOW, JOB]).flatmap(
        lambda base: st.tuples(st.integers(0, len(base)), _values).map(lambda t: base[: t[0]] + t[1] + base[t[0] :])
    ),
)


@settings(
    max_examples=300, deadline=None, derandomize=True, database=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(text=_texts, file=st.text(min_size=1, max_size=12))
def test_any_text_is_linted_within_the_budget_one_line_a_finding(text: str, file: str) -> None:
    well_formed(lint(text, file))


def test_a_control_character_in_the_text_is_reported_on_its_line() -> None:
    [finding] = lint("a: é\nb: é\nc: \x08\n")
    assert finding.line == 3 and "control characters are not allowed" in finding.message
