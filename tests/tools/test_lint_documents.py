"""`hera-volcano lint` understands every document it is given or reports it: kinds, near misses, empty files,
non-objects, YAML mistakes (tabs, duplicate keys), kustomizations; findings carry their line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from hera_volcano.tools.lint import KINDS, LintFinding, Summary, lint_file, lint_text
from tests.commands import run
from tests.tools.test_lint import JOB, changed, template, workflow

WORKFLOW = yaml.safe_dump(workflow(), sort_keys=False)


def errors(text: str, file: str = "f.yaml", **options: bool) -> list[LintFinding]:
    return [f for f in lint_text(text, file, **options) if f.severity == "error"]


def only(text: str, file: str = "f.yaml", **options: bool) -> LintFinding:
    [finding] = lint_text(text, file, **options)
    return finding


# ---- kinds -----------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "path", "words"),
    [
        (
            WORKFLOW.replace("apiVersion: argoproj.io/v1alpha1", "apiVersion: argoproj.io/v1"),
            "[0].apiVersion",
            "'argoproj.io/v1' is not an apiVersion of Workflow: expected argoproj.io/v1alpha1",
        ),
        (WORKFLOW.replace("kind: Workflow", "kind: WorkFlow"), "[0].kind", "did you mean 'Workflow'?"),
        (WORKFLOW.replace("kind: Workflow", "kind: workflowtemplate"), "[0].kind", "did you mean 'WorkflowTemplate'?"),
        (WORKFLOW.replace("kind: Workflow", "kind: Workflows"), "[0].kind", "did you mean 'Workflow'?"),
        (
            WORKFLOW.replace("apiVersion: argoproj.io/v1alpha1", "apiVersion: v1"),
            "[0].apiVersion",
            "'v1' is not an apiVersion of Workflow",
        ),
        (
            JOB.replace("batch.volcano.sh/v1alpha1", "batch.volcano.sh/v1beta1"),
            "[0].apiVersion",
            "expected batch.volcano.sh/v1alpha1",
        ),
        (
            JOB.replace("batch.volcano.sh/v1alpha1", "batch/v1"),
            "[0].apiVersion",
            "a Volcano Job's apiVersion is batch.volcano.sh/v1alpha1",
        ),
        (
            "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queues\nmetadata: {name: q}\n",
            "[0].kind",
            "did you mean 'Queue'?",
        ),
    ],
)
def test_near_misses_of_known_kinds_are_errors_even_with_allow_unknown(text: str, path: str, words: str) -> None:
    for allow in (False, True):
        found = only(text, allow_unknown=allow)
        assert (found.path, found.severity) == (path, "error")
        assert words in found.message


@pytest.mark.parametrize(
    "text",
    [
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n",
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec: {template: {}}\n",
        "apiVersion: argoproj.io/v1alpha1\nkind: WorkflowEventBinding\nmetadata: {name: e}\n",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n",
    ],
)
def test_other_kinds_are_errors_or_with_allow_unknown_warnings(text: str) -> None:
    found = only(text)
    assert (found.path, found.severity, found.line) == ("[0].kind", "error", 2)
    assert "lint does not know kind" in found.message and "--allow-unknown" in found.message
    assert "Workflow" in found.message and "batch.volcano.sh/v1alpha1" in found.message  # what it expected
    allowed = only(text, allow_unknown=True)
    assert allowed.severity == "warning" and "not checked (--allow-unknown)" in allowed.message


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("", "holds no YAML document"),
        ("# only a comment\n", "holds no YAML document"),
        ("---\n---\n", "holds no YAML document"),
        ("just a string\n", "is the str 'just a string'"),
        ("- a\n- b\n", "is a list"),
        ("3\n", "is the int '3'"),
        ("metadata: {name: x}\n", "has no apiVersion and kind"),
        ("apiVersion: v1\nmetadata: {name: x}\n", "has no kind"),
        ("kind: Workflow\nmetadata: {name: x}\n", "has no apiVersion"),
    ],
)
def test_empty_files_and_non_objects_are_errors_naming_what_was_expected(text: str, words: str) -> None:
    found = only(text)
    assert found.severity == "error" and words in found.message and "a kind lint knows" in found.message
    assert found.line == 1
    assert only(text, allow_unknown=True).severity == "warning"


def test_empty_documents_beside_others_are_fine() -> None:
    assert lint_text("---\n" + WORKFLOW + "---\n# trailing\n", "f.yaml") == []


def test_queues_are_checked() -> None:
    assert any(k.kind == "Queue" and k.check is not None for k in KINDS)
    queue = "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: q}\nspec: {bogus: 1}\n"
    [found] = lint_text(queue, "q.yaml")
    assert (found.path, found.severity, found.line) == ("[0].spec.bogus", "error", 4)


def test_every_known_kind_is_in_the_table_once() -> None:
    assert len({(k.api_version, k.kind) for k in KINDS}) == len(KINDS)
    assert {"Workflow", "WorkflowTemplate", "ClusterWorkflowTemplate", "CronWorkflow", "Job"} <= {k.kind for k in KINDS}


# ---- kustomizations ----------------------------------------------------------------------------------------------


def test_a_kustomization_file_may_leave_out_api_version_and_kind() -> None:
    assert lint_text("resources: [a.yaml]\n", "kustomization.yaml") == []
    assert "has no apiVersion and kind" in only("resources: [a.yaml]\n", "other.yaml").message


def test_files_a_kustomization_lists_must_exist_next_to_it(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(WORKFLOW)
    (tmp_path / "sub").mkdir()
    kustomization = tmp_path / "kustomization.yaml"
    kustomization.write_text(
        "resources:\n- a.yaml\n- sub\n- gone.yaml\n- https://example.com/x.yaml\n"
        "- github.com/org/repo//path?ref=v1\npatches:\n- path: patch.yaml\n"
    )
    found = lint_file(kustomization)
    assert [(f.path, f.line) for f in found] == [("[0].resources[2]", 4), ("[0].patches[0].path", 8)]
    assert "lists 'gone.yaml', which does not exist next to this kustomization" in found[0].message
    # From stdin there is no folder to look in: only the shape is checked.
    assert lint_text(kustomization.read_text(), "kustomization.yaml") == []


def test_the_committed_kustomizations_lint_clean() -> None:
    for folder in ("workflows", "rbac"):
        path = Path(__file__).parents[2] / folder / "kustomization.yaml"
        assert lint_file(path) == [], path


# ---- YAML mistakes -------------------------------------------------------------------------------------------------


def test_a_tab_is_an_error_that_says_yaml_indents_with_spaces() -> None:
    text = WORKFLOW.replace("\n  entrypoint:", "\n\tentrypoint:")
    found = only(text)
    assert found.severity == "error" and "never tabs" in found.message
    assert found.line == next(n for n, line in enumerate(text.splitlines(), 1) if line.startswith("\t"))


def test_a_key_written_twice_is_an_error_at_the_second_with_the_first_line() -> None:
    text = WORKFLOW.replace("  entrypoint: main\n", "  entrypoint: main\n  entrypoint: other\n")
    lines = text.splitlines()
    first = lines.index("  entrypoint: main") + 1
    found = [f for f in errors(text) if "duplicate key" in f.message]
    assert [(f.path, f.line) for f in found] == [("[0].spec.entrypoint", first + 1)]
    assert f"also on line {first} of the file" in found[0].message
    nested = "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: a\n  labels: {x: '1', x: '2'}\n"
    assert [(f.path, f.line) for f in errors(nested)] == [("[0].metadata.labels.x", 5)]


def test_duplicates_in_later_documents_name_their_document() -> None:
    text = "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: a}\n---\n" + WORKFLOW.replace(
        "kind: Workflow\n", "kind: Workflow\nkind: Workflow\n"
    )
    assert [(f.path, f.line) for f in errors(text)] == [("[1].kind", 7)]


# ---- lines -----------------------------------------------------------------------------------------------------------


def line_of(text: str, needle: str) -> int:
    return next(n for n, line in enumerate(text.splitlines(), 1) if needle in line)


def test_findings_carry_the_line_of_their_field_or_of_the_nearest_enclosing_one() -> None:
    doc = changed(lambda d: template(d, 2).__setitem__("name", "bad.name"))
    doc["metadata"] = {"namespace": "argo"}  # no name: "metadata.name is required" points at metadata
    text = yaml.safe_dump(doc, sort_keys=False)
    found = {f.path: f.line for f in errors(text)}
    assert found["[0].spec.templates[2].name"] == line_of(text, "bad.name")
    assert found["[0].metadata.name"] == line_of(text, "metadata:")


class _LiteralDumper(yaml.SafeDumper):
    """Writes multi-line strings as literal blocks (``|``), as Hera does."""


_LiteralDumper.add_representer(
    str, lambda d, s: d.represent_scalar("tag:yaml.org,2002:str", s, style="|" if "\n" in s else None)
)


class _QuotedDumper(yaml.SafeDumper):
    """Writes every string double-quoted, whatever representer another import registered on PyYAML's dumpers."""


_QuotedDumper.add_representer(str, lambda d, s: d.represent_scalar("tag:yaml.org,2002:str", s, style='"'))


def test_findings_inside_a_literal_manifest_carry_their_own_line() -> None:
    doc = workflow()
    doc["spec"]["templates"][1]["resource"]["manifest"] = JOB.replace(
        "          image: busybox:1.36\n", "          image: busybox:1.36\n          bogus: 1\n"
    )
    text = yaml.dump(doc, Dumper=_LiteralDumper, sort_keys=False, width=1000)
    assert "manifest: |" in text
    [found] = errors(text)
    assert found.path.endswith("manifest::spec.tasks[0].template.spec.containers[0].bogus")
    assert found.line == line_of(text, "bogus: 1")


def test_findings_inside_a_quoted_manifest_carry_the_line_of_the_manifest_key() -> None:
    doc = workflow()
    doc["spec"]["templates"][1]["resource"]["manifest"] = JOB.replace("image: busybox:1.36", "image: ''")
    text = yaml.dump(doc, Dumper=_QuotedDumper, sort_keys=False)
    [found] = errors(text)
    assert found.line == line_of(text, '"manifest":')


def test_documents_are_counted_in_lines_too() -> None:
    broken = WORKFLOW.replace("kind: Workflow", "kind: WorkFlow")
    text = "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: a}\n---\n" + broken
    [found] = errors(text)
    assert (found.path, found.line) == ("[1].kind", 6)


def test_the_text_form_is_file_line_path_severity_message() -> None:
    found = LintFinding("f.yaml", "[0].kind", "error", "bad", 3)
    assert str(found) == "f.yaml:3: [0].kind: error: bad"
    assert str(LintFinding("f.yaml", "[0]", "error", "cannot read: gone")) == "f.yaml: [0]: error: cannot read: gone"


def test_summary_counts_errors_warnings_and_files() -> None:
    findings = [
        LintFinding("a", "[0]", "error", "x", 1),
        LintFinding("a", "[0]", "warning", "y", 1),
        LintFinding("b", "[0]", "error", "z", 1),
    ]
    assert str(Summary.of(findings, 5)) == "2 errors, 1 warning in 2 of 5 files"
    assert str(Summary.of(findings[:1], 1)) == "1 error, 0 warnings in 1 of 1 file"
    assert str(Summary.of([], 3)) == "no problems in 3 files"


# ---- the CLI ---------------------------------------------------------------------------------------------------------


def test_cli_allow_unknown_lets_other_kinds_through_with_warnings(tmp_path: Path) -> None:
    (tmp_path / "wf.yaml").write_text(WORKFLOW)
    (tmp_path / "deploy.yaml").write_text("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n")
    strict = run("hera_volcano.lint", str(tmp_path))
    assert strict.code == 1 and f"{tmp_path / 'deploy.yaml'}:2: [0].kind: error: " in strict.out
    allowed = run("hera_volcano.lint", "--allow-unknown", "--format", "json", str(tmp_path))
    assert allowed.code == 0
    data = json.loads(allowed.out)
    assert [(f["file"], f["severity"]) for f in data["findings"]] == [(str(tmp_path / "deploy.yaml"), "warning")]
    assert data["summary"] == {"errors": 0, "warnings": 1, "files": 2, "files_with_findings": 1}


def test_cli_reports_the_issue_cases_it_used_to_pass(tmp_path: Path) -> None:
    """Issue 21: each of these exited 0 with no output."""
    cases = {
        "api-version.yaml": WORKFLOW.replace("argoproj.io/v1alpha1", "argoproj.io/v1"),
        "kind.yaml": WORKFLOW.replace("kind: Workflow", "kind: WorkFlow"),
        "empty.yaml": "",
        "deployment.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n",
        "phase.yaml": WORKFLOW.replace("status.state.phase == Completed", "status.phase == Completed"),
        "typo.yaml": WORKFLOW.replace("  entrypoint: main", "  entrypoint: main\n  serviceAcountName: argo"),
    }
    for name, text in cases.items():
        (tmp_path / name).write_text(text)
        r = run("hera_volcano.lint", str(tmp_path / name))
        assert r.code == 1 and ": error: " in r.out, (name, r.out)
        assert r.err.startswith("1 error, "), (name, r.err)


# ---- a second opinion: lint --server --------------------------------------------------------------------------------


def test_a_server_check_is_asked_of_each_document_after_the_offline_rules_its_findings_on_their_lines() -> None:
    from hera_volcano.shared.findings import Finding, error

    asked: list[object] = []

    def server(doc: object) -> list[Finding]:
        asked.append(doc)
        return [error("data.a", "the API server refuses it (dry run): no")]

    text = "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata:\n  a: b\n---\n---\n" + WORKFLOW
    found = lint_text(text, "f.yaml", server=server)
    assert [d["kind"] for d in asked] == ["ConfigMap", "Workflow"]  # type: ignore[index]
    refused = [f for f in found if "API server" in f.message]
    assert [(f.path, f.line) for f in refused] == [("[0].data.a", 6), ("[2].data.a", 9)]  # [2] has no data: its line


def test_what_a_server_check_raises_ends_the_run() -> None:
    from hera_volcano.shared.errors import ClusterError
    from hera_volcano.shared.findings import Finding

    def server(doc: object) -> list[Finding]:
        raise ClusterError("cannot reach the API server at https://x", reason="Unreachable")

    with pytest.raises(ClusterError):
        lint_text(WORKFLOW, "f.yaml", server=server)
