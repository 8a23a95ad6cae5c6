"""The rule for a call's arguments (hera_volcano/argo/parameters.py ``CallArguments``), as Argo applies it
(``common.ProcessArgs``), and as the builders (hera_volcano/argo/calls.py) and lint apply it: one rule, so they
agree, on an input that reads a ConfigMap above all (they used to disagree there)."""

from __future__ import annotations

import pytest
from hera.workflows import DAG, Parameter, Workflow
from hera.workflows.models import ConfigMapKeySelector, ValueFrom

import hera_volcano as hv
from hera_volcano.argo.calls import check_call
from hera_volcano.argo.parameters import CallArguments, has_own_value
from hera_volcano.tools.lint import lint_text

FROM_CONFIG_MAP = {"configMapKeyRef": {"name": "settings", "key": "lr"}}


@pytest.mark.parametrize(
    ("parameter", "own"),
    [
        ({"name": "x"}, False),
        ({"name": "x", "value": "1"}, True),
        ({"name": "x", "default": ""}, True),
        ({"name": "x", "valueFrom": FROM_CONFIG_MAP}, True),  # Argo reads the key (or valueFrom.default)
        ({"name": "x", "valueFrom": {"supplied": {}}}, False),  # only a ConfigMap gives an input a value
        ({"name": "x", "valueFrom": {"path": "/tmp/x", "default": "d"}}, False),
    ],
)
def test_an_input_has_a_value_of_its_own_as_argo_gives_one(parameter: dict[str, object], own: bool) -> None:
    assert has_own_value(parameter) is own


def test_a_call_is_judged_by_what_it_passes_against_the_inputs() -> None:
    inputs = [{"name": "a"}, {"name": "b", "default": "1"}, {"name": "c", "valueFrom": FROM_CONFIG_MAP}, {"name": "d"}]
    assert CallArguments.judge(inputs, ["a", "typo"]) == CallArguments(unknown=("typo",), missing=("d",))
    assert CallArguments.judge(inputs, ["a", "d"]) == CallArguments(unknown=(), missing=())


def test_the_builders_accept_leaving_out_an_input_that_reads_a_config_map() -> None:
    reads = Parameter(name="lr", value_from=ValueFrom(config_map_key_ref=ConfigMapKeySelector(name="s", key="lr")))
    check_call("train", [reads], {})
    supplied = Parameter(name="lr", value_from=ValueFrom(supplied={}))
    with pytest.raises(hv.ValidationError) as e:
        check_call("train", [supplied], {})
    assert e.value.field == "arguments" and "must give the input lr of template 'train'" in e.value.rule


def test_the_builders_refuse_an_argument_that_names_no_input() -> None:
    with pytest.raises(hv.ValidationError) as e:
        check_call("train", [Parameter(name="data-dir")], {"data_dir": "/d", "data-dir": "/d"})
    assert e.value.field == "arguments.data_dir" and "did you mean 'data-dir'" in e.value.rule


def test_lint_and_the_builders_agree_on_a_rendered_call_that_leaves_out_an_input_read_from_a_config_map() -> None:
    """A job step whose input reads a ConfigMap, called without it: the builders let it be made, lint finds
    nothing wrong with the rendered workflow, and the same call with an input that has no value fails both."""
    step = hv.job_template(hv.batch_job(image="busybox:1", program=hv.Program.command(["true"])), name="run")
    assert isinstance(step.inputs, list | type(None))
    reads = Parameter(name="lr", value_from=ValueFrom(config_map_key_ref=ConfigMapKeySelector(name="s", key="lr")))
    step.inputs = [*(step.inputs or []), reads]
    with Workflow(name="w", entrypoint="main") as w, DAG(name="main"):
        step(name="run")
    assert [f for f in lint_text(w.to_yaml(), "w.yaml") if f.severity == "error"] == []
    step.inputs = [*step.inputs[:-1], Parameter(name="lr")]
    with pytest.raises(hv.ValidationError), Workflow(name="w2", entrypoint="main"), DAG(name="main"):
        step(name="run")
