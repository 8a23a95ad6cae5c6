"""Hostile values through every key and every submitter-set Argo variable a job may hold (issue 43), beside the
command fuzz of ``test_command_values``: substituted as Argo does (both passes, argoexec's and the pod's ``$(VAR)``
expansion: ``podsim``), the rendered job keeps its structure and only the value changes; a tag in a key is refused
when the job is built, wherever the key is."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hera_volcano as hv
from hera_volcano.shared.placeholders import refusal
from tests.argo.test_submitter_tags import ENCODED, KEYED, a_job
from tests.builders import podsim
from tests.tools import test_lint_raw_tags as lint_raw_tags

#: What breaks a YAML string, a JSON string, Argo's templating or the kubelet's expansion, mixed with any text.
PIECES = st.sampled_from(
    [
        "'",
        '"',
        "\n",
        "\r\n",
        "{{",
        "}}",
        "{",
        "}",
        ": ",
        "- ",
        "#",
        "&a",
        "*a",
        "!!str",
        "\\",
        "$(X)",
        "$$",
        "$",
        "[",
        "]",
        ",",
        "\t",
        "\u2028",
        "\x85",
        "---",
        "...",
    ]
)
HOSTILE = st.lists(st.one_of(PIECES, st.text(max_size=4)), max_size=12).map("".join)
SAMPLE = "SAMPLEVALUE"
LINTED = lint_raw_tags.ENCODED


def _carried(text: str, variable: str) -> bool:
    """Whether Argo carries ``text`` as the value: a parameter's value holding '{{' is refused where it enters
    (``submit``, ``Pipeline``: tests/argo/test_values.py), while an annotation or label is read in one expression
    whose result holds no '{', so only the characters no quoting carries count."""
    if variable.startswith(("workflow.annotations.", "workflow.labels.")):
        return refusal(text.replace("{", "")) is None
    return refusal(text) is None


def _without_env(job: dict[str, Any]) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(json.dumps(job))
    for container in data["spec"]["tasks"][0]["template"]["spec"]["containers"]:
        container.pop("env", None)
    return data


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(ENCODED), HOSTILE)
def test_a_submitter_set_variable_changes_only_its_value(variable: str, text: str) -> None:
    if not _carried(text, variable):
        return
    manifest = str(hv.job_template(a_job(f"{{{{{variable}}}}}"), name="run").manifest)
    created = podsim.parse(manifest, {variable: text})
    benign = podsim.parse(manifest, {variable: SAMPLE})
    expected = json.loads(json.dumps(_without_env(benign)).replace(SAMPLE, json.dumps(text)[1:-1]))
    assert _without_env(created) == expected, "the structure is the benign one, the value the submitted one"
    _, env = podsim.process(podsim.container(created, "main"))
    assert env == {"VALUE": text}


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from(sorted(KEYED)),
    st.sampled_from([*ENCODED, "inputs.parameters.zone", "workflow.name"]),
    HOSTILE,
    HOSTILE,
)
def test_a_tag_in_any_key_is_refused_before_anything_is_rendered(
    where: str, variable: str, before: str, after: str
) -> None:
    key = f"{before}{{{{{variable}}}}}{after}"
    with pytest.raises(hv.ValidationError) as e:
        hv.job_template(KEYED[where](key), name="run")
    assert "mapping key" in e.value.rule


@settings(max_examples=80, deadline=None)
@given(st.sampled_from(LINTED), HOSTILE)
def test_lint_s_safe_form_for_a_hand_written_manifest_changes_only_the_value(variable: str, text: str) -> None:
    """The form lint's message gives for a raw tag, written where the tag was: the value arrives exactly."""
    if not _carried(text, variable):
        return
    raw = lint_raw_tags.in_workflow(lint_raw_tags.job_with(f"{{{{{variable}}}}}"))
    fixed = lint_raw_tags.fixed_with(lint_raw_tags.raw_tag_errors(raw))
    manifest = fixed["spec"]["templates"][1]["resource"]["manifest"]
    template = podsim.parse(manifest, {variable: text})["spec"]["tasks"][0]["template"]
    assert set(template["spec"]) == {"containers", "restartPolicy"} and template["metadata"]["labels"]["zone"] == text
    assert podsim.process(template["spec"]["containers"][0])[1] == {"ZONE": text}
