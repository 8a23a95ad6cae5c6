"""Values cannot change a job's structure (issue 34, items 1 and 3): a job of the user's own whose name, label,
arguments, environment and replica count come from run-time values, substituted as Argo does (twice: podsim), then
expanded as the kubelet does. Every hostile value arrives byte for byte, or is refused where it enters."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from hera.workflows import DAG, Parameter, Workflow

import hera_volcano as hv
from hera_volcano.client import submission
from hera_volcano.kube import values
from hera_volcano.shared.placeholders import refusal
from tests.builders import podsim

#: Values that arrive exactly, wherever they go.
CARRIED = [
    'it\'s "quoted"',
    "$(HOME) $$ $HOME ${X} `id`",
    "back\\slash \\n \\x41 \\u0041",
    "two\nlines\r\nand\ttab",
    "ls\u2028 ps\u2029",
    "backspace\b formfeed\f",
    "bom\ufeff nbsp\xa0 private\ue000 unassigned\u0378",
    "ünïcödé 中文 😀 \U0001f9ff \U00020000",
    "}} { {x} {=1} } {",
    "key: value\n- item\n[a, b]",
    "#comment &anchor *alias !!binary",
    "'",
    '"',
    "",
    "  leading and trailing  ",
    "null",
    "true",
    "0x1f",
    "1e3",
    "---\nkind: Pod",
    '"\nkind: Pod\nmetadata: {name: evil}',
    "\\",
]
#: Values Argo cannot carry unchanged: refused before they reach it.
REFUSED = [
    "{{workflow.name}}",
    "{{=1}}",
    "{{=sprig.fail('x')}}",
    '{{workflow.parameters.v}}"\nkind: Pod',
    "{{inputs.parameters.v}}",
    "del\x7f",
    "c1\x9b",  # the step errors on the cluster: "yaml: control characters are not allowed"
    "nel\x85",  # arrives in a job's arguments and env dropped (measured on both Argo lines)
    "bell\x07 esc\x1b",
    "plane 16 private \U0010fffd",
    "a\x00b",
]


def a_job(value: hv.Placeholder, count: hv.Placeholder) -> hv.VolcanoJob:
    """The user's own job: its name, label, argument and variable from ``value``, its size from ``count``."""
    return hv.VolcanoJob(
        generate_name=f"run-{value}-",
        tasks=[
            hv.VolcanoTask(
                name="main",
                replicas=count,
                template={
                    "metadata": {"labels": {"mine": str(value)}},
                    "spec": {
                        "containers": [
                            {
                                "name": "main",
                                "image": "busybox:1.37.0",
                                "command": ["echo"],
                                "args": [value, f"[{value}]"],
                                "env": [{"name": "VALUE", "value": value}],
                            }
                        ],
                        "restartPolicy": "Never",
                    },
                },
            )
        ],
    )


def created(manifest: str, given: dict[str, str]) -> dict[str, Any]:
    return podsim.parse(manifest, given)


def pod_sees(job: dict[str, Any]) -> tuple[list[str], dict[str, str]]:
    return podsim.process(podsim.container(job, "main"))


@pytest.mark.parametrize("text", CARRIED)
@pytest.mark.parametrize("root", ["inputs", "workflow"])
def test_every_field_of_the_job_gets_the_value_byte_for_byte(text: str, root: str) -> None:
    make = hv.Placeholder.input if root == "inputs" else hv.Placeholder.workflow_parameter
    template = hv.job_template(a_job(make("v", "x"), make("n", 2)), name="run", job_label=make("v", "x"))
    job = created(str(template.manifest), {f"{root}.parameters.v": text, f"{root}.parameters.n": "3"})
    assert job["kind"] == "Job" and set(job) == {"apiVersion", "kind", "metadata", "spec"}, "no structure added"
    assert job["metadata"]["generateName"] == f"run-{text}-"
    assert job["metadata"]["labels"]["hera-volcano/job"] == text
    assert job["spec"]["tasks"][0]["replicas"] == 3
    assert job["spec"]["tasks"][0]["template"]["metadata"]["labels"]["mine"] == text
    argv, env = pod_sees(job)
    assert argv == ["echo", text, f"[{text}]"], "the kubelet's $(...) expansion leaves the value alone"
    assert env["VALUE"] == text


@pytest.mark.parametrize("text", ["3 ", "3\nkind: Pod", "[3]", "three", "0x3", ""])
def test_an_integer_field_creates_nothing_but_an_integer(text: str) -> None:
    template = hv.job_template(a_job(hv.Placeholder.input("v", "x"), hv.Placeholder.input("n", 2)), name="run")
    with pytest.raises(ValueError):  # asInt fails: Argo leaves the step in error, no job is created
        created(str(template.manifest), {"inputs.parameters.v": "x", "inputs.parameters.n": text})


@pytest.mark.parametrize("text", REFUSED)
def test_values_argo_would_substitute_again_are_refused_where_they_enter(text: str) -> None:
    assert refusal(text) is not None
    wf = {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Workflow",
        "metadata": {"generateName": "x-"},
        "spec": {"arguments": {"parameters": [{"name": "v", "value": "ok"}]}},
    }
    with pytest.raises(hv.ValidationError) as e:
        submission.with_parameters(wf, {"v": text})
    assert e.value.field == "parameters[v]"
    with pytest.raises(hv.ValidationError) as e:
        submission.from_template("t", {"v": text}, "argo")
    assert e.value.field == "parameters[v]"
    with pytest.raises(hv.ValidationError) as e:
        hv.Pipeline([hv.PipelineJob("a", a_job(hv.Placeholder.input("v", "x"), 1), arguments={"v": text})])
    assert e.value.field.startswith("jobs[0].arguments"), e.value.field


def test_a_self_referencing_job_name_through_argo_s_own_submit_stays_one_name() -> None:
    """`argo submit -p job-name=...` bypasses our refusal: the bundled template still creates its own job, named
    exactly the submitted text (which the API server then refuses as a name)."""
    from hera_volcano.examples import mpi_hello

    wf = yaml.safe_load(mpi_hello.render())
    [step] = [t for t in wf["spec"]["templates"] if t.get("resource", {}).get("action") == "create"]
    hostile = '{{workflow.parameters.job-name}}"\nkind: Pod\nmetadata: {name: evil}'
    job = created(step["resource"]["manifest"], {"workflow.parameters.job-name": hostile})
    assert job["kind"] == "Job" and job["metadata"]["name"] == hostile
    assert job["spec"]["tasks"][0]["name"] == "mpimaster"


def test_a_string_joining_a_parameter_with_another_argo_variable_is_refused() -> None:
    job = a_job(hv.Placeholder.input("v", "x"), hv.Placeholder.input("n", 2))
    mixed = hv.VolcanoJob(generate_name="run-{{workflow.name}}-{{inputs.parameters.v}}-", tasks=job.tasks)
    with pytest.raises(hv.ValidationError) as e:
        hv.job_template(mixed, name="run")
    assert e.value.field == "metadata.generateName" and "{{workflow.name}}" in e.value.rule


def test_argo_s_own_variables_in_a_string_stay_as_argo_writes_them() -> None:
    job = a_job(hv.Placeholder.input("v", "x"), hv.Placeholder.input("n", 2))
    own = hv.VolcanoJob(generate_name="run-{{workflow.name}}-", tasks=job.tasks)
    assert "generateName: run-{{workflow.name}}-" in str(hv.job_template(own, name="run").manifest)


def test_a_dag_argument_feeds_the_job_label_and_name_of_a_user_s_own_template() -> None:
    """The user's DAG passes an earlier task's output as the job's name and label: read through one expression."""
    job = a_job(hv.Placeholder.input("v", "x"), hv.Placeholder.input("n", 2))
    with Workflow(generate_name="w-", entrypoint="main", arguments=[Parameter(name="n", value="2")]) as w:
        run = hv.job_template(job, name="run", job_label=hv.Placeholder.input("v", "x"))
        with DAG(name="main"):
            run(name="run", arguments={"v": "{{tasks.prep.outputs.parameters.v}}", "n": "2"})
    manifest = next(t for t in w.to_dict()["spec"]["templates"] if t["name"] == "run")["resource"]["manifest"]
    assert "{{inputs.parameters" not in manifest, "no value is pasted raw"
    job_data = created(manifest, {"inputs.parameters.v": '"\nkind: Pod', "inputs.parameters.n": "2"})
    assert job_data["metadata"]["labels"]["hera-volcano/job"] == '"\nkind: Pod' and job_data["kind"] == "Job"


@pytest.mark.parametrize("kind", values.KINDS)
@pytest.mark.parametrize("dollars", range(values.MAX_DOLLARS + 1))
def test_every_expression_reads_back_as_its_value(kind: values.Kind, dollars: int) -> None:
    value = values.Value("inputs", "a-b_1", kind, dollars)
    written = values.expression(value)
    assert values.parse(written) == (value if kind != "integer" else values.Value("inputs", "a-b_1", kind, 0))
    assert "{" not in written and "}" not in written, "the tag around it ends at the first }}"


@pytest.mark.parametrize("text", ["x", 'it\'s "q"\n$(HOME)'])
def test_text_around_a_parameter_arrives_as_written(text: str) -> None:
    """A string of the user's joining literal text (quotes, $(VAR), non-ASCII, beyond U+FFFF) with a value."""
    value = hv.Placeholder.input("v", "x")
    job = a_job(value, hv.Placeholder.input("n", 2))
    task = job.tasks[0]
    spec = dict(task.template["spec"])
    spec["containers"] = [{**spec["containers"][0], "args": [f"é'😀 $(V) {{ {value} }}"]}]
    shaped = hv.VolcanoJob(
        generate_name="run-", tasks=[hv.VolcanoTask(name="main", replicas=1, template={**task.template, "spec": spec})]
    )
    data = created(str(hv.job_template(shaped, name="run").manifest), {"inputs.parameters.v": text})
    argv, _ = podsim.process(podsim.container(data, "main"), {"V": "from-the-pod"})
    assert argv == ["echo", f"é'😀 from-the-pod {{ {text} }}"], "the literal $(V) keeps Kubernetes' meaning"


def test_env_strings_with_argo_tags_are_refused() -> None:
    with pytest.raises(hv.ValidationError) as e:
        hv.PodSettings(env={"X": "a {{inputs.parameters.x}}"})
    assert e.value.field == "env['X']" and "Placeholder.input" in e.value.rule


#: What the Go checks (conformance/argo37 and argo4, values_test.go) run through Argo's own SubstituteParams.
GO_FIXTURE = Path(__file__).parents[2] / "conformance" / "common" / "testdata" / "values.json"


def go_fixture() -> str:
    manifests = {}
    for root, make in (("inputs", hv.Placeholder.input), ("workflow", hv.Placeholder.workflow_parameter)):
        template = hv.job_template(a_job(make("v", "x"), make("n", 2)), name="run", job_label=make("v", "x"))
        manifests[root] = str(template.manifest)
    return json.dumps({"manifests": manifests, "values": CARRIED}, indent=1, ensure_ascii=True) + "\n"


def test_the_go_checks_run_the_values_of_these_tests() -> None:
    """Argo's real substitution (both lines) is run on the same manifests and values by `conformance/run.sh --test`;
    regenerate with `python -m tests.argo.test_values` when they change."""
    assert GO_FIXTURE.read_text() == go_fixture(), "stale: python -m tests.argo.test_values"


if __name__ == "__main__":
    GO_FIXTURE.parent.mkdir(exist_ok=True)
    GO_FIXTURE.write_text(go_fixture())
