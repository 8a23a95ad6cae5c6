"""Inputs that crashed lint or ``submit --dry-run`` (a traceback, a whole run lost, MemoryError, or minutes of work):
each now ends in findings of one line each (lint exits 1, as for any error) or, for ``submit``, one line on stderr
and exit code 2. Found by hand and by the fuzz of ``test_lint_fuzz``; the alias bombs are ``tests/bombs.py``."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path
from typing import Final

import pytest

from hera_volcano.tools.lint import lint_text
from tests.bombs import aliased_manifest, manifest_with_tags, string_alias, tagged
from tests.commands import run
from tests.steps import within
from tests.tools.test_lint import JOB

_WF: Final = "apiVersion: argoproj.io/v1alpha1\nkind: Workflow\nmetadata: {name: crash}\n"
_JOB_TEXT: Final = JOB.replace("\n", "\\n")


def _resource(name: str, **fields: str) -> str:
    extra = "".join(f", {k}: '{v}'" for k, v in fields.items())
    return f'{{name: {name}, resource: {{action: create, manifest: "{_JOB_TEXT}"{extra}}}}}'


#: Each input, by what broke: the whole run (stored templates), one document's check, or the reader.
CRASHES: Final[dict[str, str]] = {
    # The issue's: a kind that is a list ended the whole run (TypeError: unhashable type: 'list').
    "kind-list": "apiVersion: argoproj.io/v1alpha1\nkind: [Workflow]\nmetadata: {name: a}\n",
    "kind-map": "apiVersion: argoproj.io/v1alpha1\nkind: {WorkflowTemplate: 1}\nmetadata: {name: a}\n",
    # A container variable named by a list, in the templates the follower wiring reads.
    "env-name-list": _WF
    + "spec:\n  entrypoint: f\n  templates: [{name: f, container: {image: busybox, env: [{name: [A], value: b}]}}]\n",
    # A resource template named by a list, holding a Volcano Job (the job-step rules look the name up).
    "template-name-list": _WF + f"spec:\n  entrypoint: main\n  templates: [{_resource('[main]')}]\n",
    # A lone surrogate (a "\ud800" escape): the stored size could not encode it.
    "lone-surrogate": _WF + 'spec: {entrypoint: main, templates: [{name: main, container: {image: "\\ud800"}}]}\n',
    # A key that is bytes (!!binary): JSON has no form for it (lint and submit).
    "binary-key": _WF
    + "spec: {entrypoint: main, templates: [{name: main, container: {image: b}}], ? !!binary aGk= : 1}\n",
    # Recursive data: lint's size check and submit's copy raised ValueError (Circular reference detected).
    "recursive-alias": _WF + "spec: &s {entrypoint: main, templates: [{name: main, container: {image: b}}], x: *s}\n",
    # A date (!!timestamp) where a condition's field is read: gjson's string of it raised TypeError.
    "condition-on-a-date": _WF
    + "spec:\n  entrypoint: main\n  templates: ["
    + _resource(
        "main",
        successCondition="status.state.phase == Completed, spec.x == a",
        failureCondition="status.state.phase in (Failed)",
    ).replace("kind: Job\\n", "kind: Job\\nx: !!timestamp 2024-01-01\\n")
    + "]\n",
    # The issue's bomb: one 100 KiB string aliased 40,000 times (222 KB): 18 s, 4 GB, MemoryError.
    "string-alias": string_alias(),
    # The billion laughs inside !!omap, counted again at each alias: hours.
    "tagged-bomb": tagged(),
    # A manifest with an Argo tag, read again with PyYAML's safe_load (no budget): a billion arguments walked.
    "manifest-with-tags": manifest_with_tags(),
    # A manifest aliased into 400 templates, each parse with a budget of its own: 25 KB took 16 s.
    "aliased-manifest": aliased_manifest(),
}
#: What ``submit --dry-run`` also crashed on: the file, the arguments after it, and the exit code now (2: one line
#: on stderr; 0: the Workflow printed).
SUBMIT_CRASHES: Final[dict[str, tuple[str, list[str], int]]] = {
    "binary-key": (CRASHES["binary-key"], [], 2),
    "recursive-alias": (CRASHES["recursive-alias"], [], 2),
    "string-alias": (CRASHES["string-alias"], [], 2),
    # Parameters that are not a list, with -p: TypeError: 'int' object is not iterable.
    "parameters-not-a-list": (_WF + "spec: {entrypoint: main, arguments: {parameters: 1}}\n", ["-p", "x=1"], 2),
    # A parameter named by a list beside the one -p sets: TypeError: unhashable type: 'list'.
    "parameter-name-a-list": (
        _WF + "spec: {entrypoint: main, arguments: {parameters: [{name: [x]}, {name: x}]}}\n",
        ["-p", "x=1"],
        0,
    ),
}
#: ``FILE:LINE: PATH: SEVERITY: MESSAGE``.
LINE: Final = re.compile(r"\S+:\d+: \[\d+\]\S*.*: (error|warning): .+")


@pytest.mark.parametrize("name", sorted(CRASHES))
def test_each_crashing_input_ends_in_findings_within_a_budget_of_calls(name: str) -> None:
    text = CRASHES[name]
    found, _ = within(50_000 + 100 * len(text), lambda: lint_text(text, f"{name}.yaml"))
    assert found
    assert not [f for f in found if "cannot check it" in f.message or "lint failed" in f.message]


@pytest.mark.parametrize("name", ["string-alias", "tagged-bomb"])
def test_a_bomb_is_one_finding(name: str) -> None:
    [finding] = lint_text(CRASHES[name], "bomb.yaml")
    assert finding.severity == "error"
    assert "not valid YAML: aliases and merge keys (<<) expand this YAML past" in finding.message


def test_a_bomb_in_a_manifest_is_refused_at_the_manifest() -> None:
    found = lint_text(CRASHES["manifest-with-tags"], "bomb.yaml")
    refused = [f for f in found if "expand this YAML past" in f.message]
    assert [f.path for f in refused] == ["[0].spec.templates[0].resource.manifest"]


def test_lint_of_every_crashing_input_is_one_run_of_one_line_findings(tmp_path: Path) -> None:
    paths = []
    for name, text in CRASHES.items():
        paths.append(tmp_path / f"{name}.yaml")
        paths[-1].write_text(text, encoding="utf-8", errors="surrogatepass")
    r = run("hera_volcano", "lint", *map(str, paths))
    assert r.code == 1 and "Traceback" not in r.err, r.err
    assert len(r.err.splitlines()) == 1 and f"in {len(paths)} of {len(paths)} files" in r.err
    lines = r.out.splitlines()
    assert all(LINE.fullmatch(line) for line in lines), [line for line in lines if not LINE.fullmatch(line)][:3]
    assert {line.partition(":")[0] for line in lines} == set(map(str, paths))  # every file, none lost


@pytest.mark.parametrize("name", sorted(SUBMIT_CRASHES))
def test_submit_dry_run_of_each_crashing_input_is_one_line(name: str, tmp_path: Path) -> None:
    text, arguments, code = SUBMIT_CRASHES[name]
    path = tmp_path / "wf.yaml"
    path.write_text(text, encoding="utf-8")
    r = run("hera_volcano", "submit", "--dry-run", str(path), *arguments)
    assert r.code == code and "Traceback" not in r.err, r.err
    if code == 2:
        assert r.out == "" and len(r.err.splitlines()) == 1 and "hera-volcano submit: error: " in r.err, r.err
    else:
        assert "value: '1'" in r.out


def test_a_document_a_check_trips_over_is_one_finding_and_the_others_are_still_linted() -> None:
    # Whatever a rule raises on one document (here a key no rule expects: a tuple, which YAML cannot give) becomes
    # one error finding for that document; the next documents are checked as usual.
    from hera_volcano.tools.lint import lint_documents
    from hera_volcano.tools.lint.context import Source

    broken = {"apiVersion": "argoproj.io/v1alpha1", "kind": "Workflow", "metadata": {"name": "a"}, "spec": BrokenSpec()}
    found = lint_documents([broken, {"apiVersion": "v1", "kind": "Pod"}], Source("f.yaml"))
    assert [f.path for f in found][:1] == ["[0]"]
    assert found[0].message.startswith("malformed document, cannot check it: RuntimeError: ")
    assert any(f.path.startswith("[1]") for f in found)


class BrokenSpec(dict[str, object]):
    """A spec every read of which fails, as a rule bug would."""

    def get(self, *args: object) -> object:
        raise RuntimeError("a rule tripped")


def test_the_inputs_are_what_the_issue_names() -> None:
    assert textwrap.dedent(CRASHES["kind-list"]).startswith("apiVersion: argoproj.io/v1alpha1\nkind: [")
    assert 222_000 <= len(CRASHES["string-alias"]) <= 223_000
    assert len(CRASHES) + len(set(SUBMIT_CRASHES) - set(CRASHES)) >= 13
