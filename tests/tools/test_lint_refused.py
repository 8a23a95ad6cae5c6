"""Issue 43: offline lint against the documents a real cluster refuses (``HERA_VOLCANO_REFUSED``, which `.ci/run`
passes in; skipped, saying so, without it). Each starts with ``# rule: ...``, the words of the judge that refused it.

Lint must refuse at least :data:`AT_LEAST` of them, and where it refuses one, a finding must name the rule the file
names. The match is loose, on a key phrase of the rule: the field it names (``hostname: ...``,
``spec.tasks[0].replicas: ...``, Go's ``field Container.command of type``, a `backticked` field), else its longer
words; each compared by its first seven letters (``quantities`` is ``quantity``) with the finding's path and message.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Final

from hera_volcano.tools.lint import LintFinding, lint_file

AT_LEAST: Final = 55
#: The rule's field: a path that opens it and ends in ``:`` or holds a dot (``projected.sources[1]...: ...``).
_LEADING_PATH: Final = re.compile(r"^([A-Za-z][\w\[\].]*?)(?:\.\.\.)?(?::|\s)")
#: Go's decoding error: ``field WorkflowSpec.spec.suspend of type bool``, ``into ... containerPort of type int32``.
_GO_FIELD: Final = re.compile(r"(?:field|\.\.\.) ([\w.]+) of type")
_BACKTICKED: Final = re.compile(r"`(\w+)`")
_WORD: Final = re.compile(r"[A-Za-z]{6,}")
#: Words of the judges' messages that name no rule.
_STOP: Final = frozenset(
    {"cannot", "unmarshal", "struct", "required", "invalid", "unsupported", "forbidden", "specified", "regular",
     "expression", "available", "enabled", "should", "between", "pattern"}
)  # fmt: skip


def rule_of(path: Path) -> str:
    """The ``# rule:`` comment of a refused document."""
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("# rule:"):
            return line.removeprefix("# rule:").strip()
    raise AssertionError(f"{path.name} has no '# rule:' comment")


def _last_field(path: str) -> str:
    return re.sub(r"\[[^\]]*\]", "", path).rstrip(".").rpartition(".")[2]


def key_phrases(rule: str) -> set[str]:
    """The stems a finding must hold one of to name ``rule``: its fields, else its longer words."""
    fields = set(_BACKTICKED.findall(rule))
    leading = _LEADING_PATH.match(rule)
    if leading and (rule[leading.end() - 1] == ":" or "." in leading[1] or "[" in leading[1]):
        fields.add(_last_field(leading[1]))
    fields.update(_last_field(f) for f in _GO_FIELD.findall(rule) if _last_field(f))
    stems = {w.lower()[:7] for w in fields if w}
    return stems or {w.lower()[:7] for w in _WORD.findall(rule)} - {w[:7] for w in _STOP}


def names_rule(findings: list[LintFinding], rule: str) -> bool:
    said = " ".join(f"{f.path} {f.message}" for f in findings if f.severity == "error").lower()
    return any(stem in said for stem in key_phrases(rule))


def test_key_phrases_are_the_fields_a_rule_names() -> None:
    assert key_phrases("hostname: a lowercase RFC 1123 label") == {"hostnam"}
    assert key_phrases('spec.tasks[0].replicas: Invalid value: "string": must be of type integer') == {"replica"}
    assert key_phrases("cannot unmarshal string into Go struct field Container.command of type []string") == {"command"}
    assert key_phrases("cannot set `allowPrivilegeEscalation` to false and `privileged` to true") == {
        "allowpr",
        "privile",
    }
    assert key_phrases("projected.sources[1]...: conflicting duplicate paths") == {"sources"}
    assert key_phrases("The specified mpi master task was not found") == {"master"}
    assert key_phrases("metadata.annotations: Too long: must have at most 262144 bytes") == {"annotat"}
    assert key_phrases("ShareProcessNamespace and HostPID cannot both be enabled") == {"sharepr", "hostpid"}
    assert key_phrases("quantities must match the regular expression (resource.Quantity UnmarshalJSON)") == {
        "quantit",
        "resourc",
    }


def test_names_rule_is_loose_but_not_blind() -> None:
    finding = LintFinding("f", "[0].spec.tasks[0].replicas", "error", "must be an integer")
    assert names_rule([finding], "spec.tasks[0].replicas: must be of type integer")
    assert not names_rule([finding], "hostname: a lowercase RFC 1123 label")
    assert not names_rule([LintFinding("f", "[0].spec.hostname", "warning", "odd")], "hostname: must be a label")


def test_offline_lint_refuses_the_documents_a_cluster_refuses_for_their_rule(refused: Path) -> None:
    documents = sorted(refused.glob("*.yaml"))
    assert len(documents) >= 60, f"{refused} holds {len(documents)} documents, expected the 63 a cluster refuses"
    passed, other_rule = [], []
    for path in documents:
        findings = lint_file(path)
        if not any(f.severity == "error" for f in findings):
            passed.append(path.name)
        elif not names_rule(findings, rule_of(path)):
            said = "; ".join(f"{f.path}: {f.message}" for f in findings)[:300]
            other_rule.append(f"{path.name}: the cluster's rule is {rule_of(path)!r}, lint says {said}")
    caught = len(documents) - len(passed)
    problems = []
    if caught < AT_LEAST:
        problems.append(
            f"offline lint refuses {caught} of {len(documents)} documents a cluster refuses, at least {AT_LEAST}"
            f" expected; it passes {len(passed)}:\n" + "\n".join(passed)
        )
    if other_rule:
        problems.append(f"{len(other_rule)} refused for another rule than the cluster's:\n" + "\n".join(other_rule))
    assert not problems, "\n".join(problems)
