"""Text through Kubernetes' ``$(VAR)`` expansion: ``escape`` makes any text arrive as it is, and ``runtime_text``
rewrites a run-time value so Argo gives Kubernetes the same escaped text as a JSON (YAML) string."""

from __future__ import annotations

import pytest

from hera_volcano import Placeholder, ValidationError
from hera_volcano.kube import values
from hera_volcano.kube.expansion import escape, escape_for_executor, runtime_text
from tests.builders.podsim import kube_expand

ENV = {"HOME": "/root", "X": "x"}


@pytest.mark.parametrize(
    ("text", "expanded"),
    [
        ("$(HOME)/data", "/root/data"),  # a defined variable
        ("$(MISSING)", "$(MISSING)"),  # an undefined one stays
        ("$$(HOME)", "$(HOME)"),  # $$ is a literal $
        ("$$$(X)", "$x"),
        ("$$$$", "$$"),
        ("$X ${X} $", "$X ${X} $"),  # only $( and $$ mean anything
        ("tail $(", "tail $("),  # an unclosed reference stays
        ("$()", "$()"),
        ("$(X$(X))", "$(X$(X))"),  # the name runs to the first ')', then is unknown
        ("é$é", "é$é"),
    ],
)
def test_the_simulated_expansion_follows_kubernetes_rules(text: str, expanded: str) -> None:
    assert kube_expand(text, ENV) == expanded


@pytest.mark.parametrize(
    "text", ["", "plain", "$(HOME)", "$$(HOME)", "$$$", "a $(X) b $$ c $ d $(", "$(X$(X))", "ünï $(HOME) 😀"]
)
def test_escaped_text_arrives_unchanged(text: str) -> None:
    assert kube_expand(escape(text), ENV) == text


@pytest.mark.parametrize(
    "placeholder",
    [
        Placeholder.input("lr", "0.1"),
        Placeholder.input("max-lr", 3),
        Placeholder.workflow_parameter("tag", "v1"),
    ],
)
def test_runtime_values_are_read_through_an_escaping_expression(placeholder: Placeholder) -> None:
    rewritten = runtime_text(placeholder, "f")
    root, _, name = placeholder.expression.partition(".parameters.")
    assert values.parse(rewritten.expression) == values.Value(root, name, "text", 1), "text, $ doubled for the pod"
    assert rewritten.in_quotes is False, "the expression writes the quotes"
    assert rewritten.sample == (placeholder.sample if isinstance(placeholder.sample, str) else "3")
    assert runtime_text(rewritten, "f") == rewritten, "rewriting is idempotent (settings are re-checked on replace)"


@pytest.mark.parametrize("expression", ["workflow.name", "inputs.artifacts.data", "=sprig.upper('x')", "steps.a.id"])
def test_other_expressions_are_refused(expression: str) -> None:
    with pytest.raises(ValidationError) as e:
        runtime_text(Placeholder(expression, "x"), "env['A']")
    assert e.value.field == "env['A']" and "Placeholder.input(...)" in e.value.rule


@pytest.mark.parametrize("text", ["plain", "$(HOME)", "$$(X)", "a $(X) b $$ c $ d $(", "ünï $(HOME) 😀"])
def test_a_manifest_reaches_the_pods_through_the_executor_and_the_kubelet(text: str) -> None:
    """Argo's executor gets the manifest in an expanded variable (ARGO_TEMPLATE); the pod expands its own again."""
    manifest = f"{escape(text)} {{{{inputs.parameters.n}}}} {escape(text)}"
    created = kube_expand(escape_for_executor(manifest), ENV)
    assert created == manifest, "argoexec creates the job as built; Argo's tags are left to Argo"
    assert kube_expand(created.replace("{{inputs.parameters.n}}", "7"), ENV) == f"{text} 7 {text}"


def test_the_executor_escape_leaves_every_tag_to_argo() -> None:
    value = runtime_text(Placeholder.input("t", "x"), "f")
    manifest = escape_for_executor(f"env: {{{{{value.expression}}}}} $(X)")
    assert manifest == f"env: {{{{{value.expression}}}}} $$(X)", "the expression doubles its value's $ itself"
