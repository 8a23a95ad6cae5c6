"""Lint finds a raw tag of a value a submitter sets in a hand-written resource manifest (issue 43), in a key or a
value, for each family of variables (parameters, inputs, global outputs, the Workflow's annotations and labels, the
JSON of them all), with the form the builders write in the message; that form, substituted as Argo does, changes
nothing but the value."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml

import hera_volcano as hv
from hera_volcano.tools.lint import lint_document
from tests.builders import podsim
from tests.tools.test_lint import JOB, M, workflow

#: Each family of variables a submitter sets that the builders read through one expression.
ENCODED = [
    "inputs.parameters.zone",
    "workflow.parameters.zone",
    "workflow.outputs.parameters.zone",
    "workflow.annotations.team",
    "workflow.annotations.example.com/team",
    "workflow.labels.team",
]
#: Those no expression reads (the JSON of them all, variables that are not Argo's own).
REFUSED = [
    "workflow.parameters",
    "inputs.parameters",
    "workflow.annotations",
    "workflow.labels.json",
    "workflow.serviceAccountName",
]
HOSTILE = 'x"\n        hostNetwork: true\n        serviceAccountName: other\n        y: "z $(X) $$'


def raw_tag_errors(doc: Any) -> dict[str, str]:
    return {f.path: f.message for f in lint_document(doc) if f.severity == "error" and "pastes raw" in f.message}


def in_workflow(job: dict[str, Any] | str, kind: str = "Workflow") -> dict[str, Any]:
    doc = workflow(kind)
    manifest = job if isinstance(job, str) else yaml.safe_dump(job, sort_keys=False, width=1000)
    doc["spec"]["templates"][1]["resource"]["manifest"] = manifest
    doc["spec"]["templates"][1]["inputs"] = {"parameters": [{"name": "zone"}]}
    return doc


def fixed_with(found: dict[str, str], kind: str = "Workflow") -> dict[str, Any]:
    """The workflow with the safe form of each of ``found`` (lint's messages for the label and the env value)
    written where its raw tag was, as text (Argo substitutes before YAML reads it)."""
    doc = in_workflow(job_with("SAFE-LABEL", env="SAFE-ENV"), kind)
    template = doc["spec"]["templates"][1]["resource"]
    for mark, path in (("SAFE-LABEL", LABEL), ("SAFE-ENV", ENV)):
        template["manifest"] = template["manifest"].replace(mark, safe_form(found[path]))
    return doc


def safe_form(message: str) -> str:
    return message.split("write the scalar as ")[1].split(" (unquoted")[0]


def job_with(value: str, *, key: str = "zone", env: str | None = None) -> dict[str, Any]:
    """The corpus's clean job with ``value`` as a pod label's value under ``key`` and in an env value (or
    ``env``)."""
    data: dict[str, Any] = yaml.safe_load(JOB)
    template = data["spec"]["tasks"][0]["template"]
    template["metadata"] = {"labels": {key: value}}
    template["spec"]["containers"][0]["env"] = [{"name": "ZONE", "value": value if env is None else env}]
    return data


LABEL = f"{M}spec.tasks[0].template.metadata.labels.zone"
ENV = f"{M}spec.tasks[0].template.spec.containers[0].env[0].value"


@pytest.mark.parametrize("kind", ["Workflow", "WorkflowTemplate"])
@pytest.mark.parametrize("variable", ENCODED)
def test_a_raw_tag_in_a_value_is_an_error_with_the_safe_form(variable: str, kind: str) -> None:
    """Before: lint said 'no problems'."""
    found = raw_tag_errors(in_workflow(job_with(f"{{{{{variable}}}}}"), kind))
    assert set(found) == {LABEL, ENV}
    for message in found.values():
        assert f"{{{{{variable}}}}}" in message and "write the scalar as {{=" in message
    # The safe forms, put where the raw tags were and substituted as Argo does, carry a hostile value exactly.
    fixed = fixed_with(found, kind)
    assert raw_tag_errors(fixed) == {}, "the builders' form is not flagged"
    template = podsim.parse(fixed["spec"]["templates"][1]["resource"]["manifest"], {variable: HOSTILE})["spec"][
        "tasks"
    ][0]["template"]
    assert template["metadata"]["labels"]["zone"] == HOSTILE
    assert set(template["spec"]) == {"containers", "restartPolicy"}, "no field added"
    assert podsim.process(template["spec"]["containers"][0])[1] == {"ZONE": HOSTILE}


@pytest.mark.parametrize("variable", [*ENCODED, *REFUSED])
def test_a_raw_tag_in_a_key_is_an_error(variable: str) -> None:
    found = raw_tag_errors(in_workflow(job_with("a", key=f"{{{{{variable}}}}}")))
    [(path, message)] = found.items()
    assert path == f"{M}spec.tasks[0].template.metadata.labels.{{{{{variable}}}}}"
    assert "mapping key" in message and "write the key itself" in message


@pytest.mark.parametrize("variable", REFUSED)
def test_a_variable_no_expression_reads_is_an_error_saying_what_to_read(variable: str) -> None:
    found = raw_tag_errors(in_workflow(job_with(f"{{{{{variable}}}}}")))
    assert set(found) == {LABEL, ENV}
    assert all("Placeholder.input" in m or "workflow.parameters.NAME" in m for m in found.values())


def test_a_joined_string_gets_one_expression_and_keeps_its_text() -> None:
    raw = in_workflow(job_with("zone-{{inputs.parameters.zone}}-$(X)$$"))
    found = raw_tag_errors(raw)

    def zone(doc: dict[str, Any], value: str) -> str:
        job = podsim.parse(doc["spec"]["templates"][1]["resource"]["manifest"], {"inputs.parameters.zone": value})
        return podsim.process(job["spec"]["tasks"][0]["template"]["spec"]["containers"][0])[1]["ZONE"]

    fixed = fixed_with(found)
    assert zone(fixed, "v") == zone(raw, "v") == "zone-v-$(X)$", "the literal text means what it meant"
    assert zone(fixed, "$(X)$$'\n") == "zone-$(X)$$'\n-$(X)$", "the value arrives exactly"


@pytest.mark.parametrize(
    "text", ["{{workflow.name}}", "{{pod.name}}", "{{=sprig.quote('a')}}", "a", "{{workflow.uid}}-x"]
)
def test_argo_s_own_variables_and_expressions_are_not_flagged(text: str) -> None:
    assert raw_tag_errors(in_workflow(job_with(text))) == {}


def test_what_the_builders_write_is_not_flagged() -> None:
    zone = hv.Placeholder.input("zone", "a")
    job = hv.batch_job(
        image="busybox:1.37.0", program=hv.Program.command(["echo", zone]), pod=hv.PodSettings(env={"Z": zone})
    )
    step = hv.job_template(job, name="submit")
    doc = in_workflow(str(step.manifest))
    assert raw_tag_errors(doc) == {}


def test_a_manifest_that_does_not_parse_is_still_flagged() -> None:
    manifest = "kind: Job\nmetadata: {name: '{{inputs.parameters.zone}}'\n"
    found = raw_tag_errors(in_workflow(manifest))
    assert list(found) == [M.removesuffix("::")]


def test_the_corpus_job_is_clean() -> None:
    assert raw_tag_errors(in_workflow(copy.deepcopy(yaml.safe_load(JOB)))) == {}


def test_a_bare_tag_is_a_number_s_and_gets_the_integer_form() -> None:
    data: dict[str, Any] = yaml.safe_load(JOB)
    data["spec"]["tasks"][0]["replicas"] = "N-TAG"
    manifest = yaml.safe_dump(data, sort_keys=False).replace("N-TAG", "{{inputs.parameters.zone}}")
    found = raw_tag_errors(in_workflow(manifest))
    message = found[f"{M}spec.tasks[0].replicas"]
    safe = message.split("write the scalar as ")[1].split(" (unquoted")[0]
    assert safe == "{{=asInt(inputs.parameters['zone'])}}" and "an integer" in message
    fixed = manifest.replace("{{inputs.parameters.zone}}", safe)
    assert podsim.parse(fixed, {"inputs.parameters.zone": "3"})["spec"]["tasks"][0]["replicas"] == 3
    with pytest.raises(ValueError):  # asInt fails the step: nothing is created
        podsim.parse(fixed, {"inputs.parameters.zone": "3\n    hostNetwork: true"})


def test_a_whole_manifest_given_at_run_time_is_not_a_raw_tag_in_a_field() -> None:
    """The submitter's whole object: what bounds it is the admission policy, not an encoding (security.md)."""
    assert raw_tag_errors(in_workflow("{{inputs.parameters.zone}}")) == {}
