"""Keys and the Argo variables a submitter sets (issue 43): a tag in a mapping key is refused when the job is built
(no quoting keeps it from naming another entry); ``{{workflow.annotations.K}}``, ``{{workflow.labels.K}}`` and
``{{workflow.outputs.parameters.X}}`` are read through one expression as parameters are; the JSON of them all and
variables that are not Argo's own are refused. Substituted as Argo does (podsim), a hostile value changes nothing but
the value."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import hera_volcano as hv
from hera_volcano.kube import values
from tests.argo.test_values import CARRIED
from tests.builders import podsim

ZONE = hv.Placeholder.input("zone", "zone-a")
TAG = str(ZONE)
#: A value that would end a single-quoted key and add fields to the pod spec, were it pasted raw.
BREAKOUT = "x': '1'\n        hostNetwork: true\n        serviceAccountName: other\n        'y"


def run(command: list[str | hv.Placeholder] | None = None, **pod: Any) -> hv.VolcanoJob:
    return hv.batch_job(image="img", program=hv.Program.command(command or ["true"]), pod=hv.PodSettings(**pod))


def task(template: dict[str, Any]) -> hv.VolcanoJob:
    """A job of the user's own whose one task has ``template`` (a pod template)."""
    base: dict[str, Any] = {"containers": [{"name": "main", "image": "img"}], "restartPolicy": "Never"}
    spec, metadata = {**base, **template.get("spec", {})}, template.get("metadata", {})
    return hv.VolcanoJob(
        generate_name="j-",
        tasks=[hv.VolcanoTask(name="main", replicas=1, template={"metadata": metadata, "spec": spec})],
    )


def _affinity(key: object) -> dict[str, Any]:
    term = {"labelSelector": {"matchLabels": {key: "a"}}, "topologyKey": "kubernetes.io/hostname"}
    return {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}


def _volume(source: dict[str, Any]) -> hv.PodVolume:
    return hv.PodVolume("data", "/data", source)


#: Every place a user writes a mapping of their own into a job, each with a tag in a key.
KEYED: dict[str, Callable[[object], hv.VolcanoJob]] = {
    "affinity matchLabels": lambda key: run(affinity=_affinity(key)),
    "topology spread matchLabels": lambda key: run(
        patch={
            "spec": {
                "topologySpreadConstraints": [
                    {
                        "maxSkew": 1,
                        "topologyKey": "zone",
                        "whenUnsatisfiable": "DoNotSchedule",
                        "labelSelector": {"matchLabels": {key: "a"}},
                    }
                ]
            }
        }
    ),
    "CSI volumeAttributes": lambda key: run(
        volumes=[_volume({"csi": {"driver": "d", "volumeAttributes": {key: "v"}}})]
    ),
    "flexVolume options": lambda key: run(volumes=[_volume({"flexVolume": {"driver": "d", "options": {key: "v"}}})]),
    "ephemeral claim annotations": lambda key: run(
        volumes=[
            _volume(
                {
                    "ephemeral": {
                        "volumeClaimTemplate": {
                            "metadata": {"annotations": {key: "v"}},
                            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
                        }
                    }
                }
            )
        ]
    ),
    "overhead": lambda key: run(patch={"spec": {"overhead": {key: "1"}}}),
    "pod template labels": lambda key: task({"metadata": {"labels": {key: "v"}}}),
    "pod template annotations": lambda key: task({"metadata": {"annotations": {key: "v"}}}),
    "node selector of the user's own template": lambda key: task({"spec": {"nodeSelector": {key: "v"}}}),
    "job labels": lambda key: hv.VolcanoJob(generate_name="j-", labels={key: "v"}, tasks=task({}).tasks),  # type: ignore[dict-item]
    "job annotations": lambda key: hv.VolcanoJob(generate_name="j-", annotations={key: "v"}, tasks=task({}).tasks),  # type: ignore[dict-item]
}


@pytest.mark.parametrize("where", sorted(KEYED))
@pytest.mark.parametrize("key", [TAG, ZONE, f"example.com/{TAG}", "{{workflow.annotations.k}}"], ids=str)
def test_a_tag_in_a_mapping_key_is_refused_when_the_job_is_built(where: str, key: object) -> None:
    """Before: the builder declared the input and wrote the key raw, so a submitted value added fields to the pod
    spec (test_a_raw_key_would_add_fields_to_the_pod_spec shows what Argo makes of it)."""
    with pytest.raises(hv.ValidationError) as e:
        hv.job_template(KEYED[where](key), name="run")  # the refusal comes before anything can be submitted
    assert "mapping key" in e.value.rule and "run-time value" in e.value.rule
    assert e.value.field.endswith(f"[{str(key)!r}]"), e.value.field


def test_a_raw_key_would_add_fields_to_the_pod_spec() -> None:
    """What the refusal prevents: the manifest the builder wrote before, substituted as Argo does."""
    manifest = (
        "spec:\n  tasks:\n  - template:\n      spec:\n        overhead:\n          '{{inputs.parameters.zone}}': '1'\n"
    )
    spec = podsim.parse(manifest, {"inputs.parameters.zone": BREAKOUT})["spec"]["tasks"][0]["template"]["spec"]
    assert spec["hostNetwork"] is True and spec["serviceAccountName"] == "other"


def test_check_keys_names_the_path_of_the_key() -> None:
    with pytest.raises(hv.ValidationError) as e:
        values.check_keys({"spec": {"tasks": [{"x": {TAG: 1}}]}})
    assert e.value.field == f"spec.tasks[0].x[{TAG!r}]"
    values.check_keys({"spec": {"a": [TAG, {"b": TAG}]}})  # values are the encoder's, keys without tags pass


def a_job(value: str) -> hv.VolcanoJob:
    """The user's own job carrying a submitter-set variable's tag (``value``) in its queue, labels, annotations,
    name and a pod's label, annotation and environment."""
    return hv.VolcanoJob(
        generate_name=f"run-{value}-",
        queue=value,
        labels={"team": value},
        annotations={"owner": f"by {value}"},
        tasks=[
            hv.VolcanoTask(
                name="main",
                replicas=1,
                template={
                    "metadata": {"labels": {"team": value}, "annotations": {"note": value}},
                    "spec": {
                        "containers": [
                            {"name": "main", "image": "busybox:1.37.0", "env": [{"name": "VALUE", "value": value}]}
                        ],
                        "restartPolicy": "Never",
                    },
                },
            )
        ],
    )


#: Variables a submitter sets that the builders read through one expression: each tag, and the key podsim's scope
#: (Argo's flat map of global variables) holds its value under.
ENCODED = [
    "workflow.annotations.team",
    "workflow.annotations.example.com/team",
    "workflow.annotations.a..b",
    "workflow.labels.team",
    "workflow.labels.example.com/team",
    "workflow.outputs.parameters.team",
]


@pytest.mark.parametrize("text", [*CARRIED, BREAKOUT, '"\nkind: Pod\nmetadata: {name: evil}'])
@pytest.mark.parametrize("variable", ENCODED)
def test_a_submitter_set_variable_changes_nothing_but_the_value(variable: str, text: str) -> None:
    """Before: ``{{workflow.annotations.X}}`` and the others were written raw, as Argo's own variables are."""
    manifest = str(hv.job_template(a_job(f"{{{{{variable}}}}}"), name="run").manifest)
    assert f"{{{{{variable}}}}}" not in manifest, "no submitter-set value is pasted raw"
    job = podsim.parse(manifest, {variable: text})
    assert set(job) == {"apiVersion", "kind", "metadata", "spec"} and job["kind"] == "Job"
    assert job["metadata"]["generateName"] == f"run-{text}-"
    assert job["spec"]["queue"] == text and job["metadata"]["labels"]["team"] == text
    assert job["metadata"]["annotations"]["owner"] == f"by {text}"
    template = job["spec"]["tasks"][0]["template"]
    assert set(template["spec"]) == {"containers", "restartPolicy"}, "no field added to the pod spec"
    assert template["metadata"]["labels"]["team"] == text and template["metadata"]["annotations"]["note"] == text
    _, env = podsim.process(podsim.container(job, "main"))
    assert env["VALUE"] == text


@pytest.mark.parametrize("variable", ["workflow.annotations.team", "workflow.labels.example.com/team"])
def test_a_placeholder_of_a_submitter_set_variable_in_env_is_encoded(variable: str) -> None:
    if "/" in variable:
        pytest.skip("a placeholder's expression holds no '/': such a key is read from a string")
    job = run(env={"TEAM": hv.Placeholder(variable, "x")})
    manifest = str(hv.job_template(job, name="run").manifest)
    _, env = podsim.process(podsim.container(podsim.parse(manifest, {variable: "$(HOME) '\n"}), "main"))
    assert env["TEAM"] == "$(HOME) '\n"


@pytest.mark.parametrize(
    "variable",
    [
        "workflow.parameters",
        "inputs.parameters",
        "workflow.annotations",
        "workflow.annotations.json",
        "workflow.labels",
        "workflow.labels.json",
        "workflow.outputs.parameters",
        "workflow.serviceAccountName",
        "workflow.scheduledTime",
        "cronworkflow.labels.team",
        "x",
    ],
)
def test_other_variables_a_submitter_sets_are_refused(variable: str) -> None:
    with pytest.raises(hv.ValidationError) as e:
        hv.job_template(a_job(f"{{{{{variable}}}}}"), name="run")
    assert f"{{{{{variable}}}}}" in e.value.rule and "raw" in e.value.rule
    with pytest.raises(hv.ValidationError):
        hv.job_template(task({"spec": {"nodeName": hv.Placeholder(variable, "n")}}), name="run")


@pytest.mark.parametrize("variable", ["workflow.name", "workflow.uid", "workflow.creationTimestamp.Y", "pod.name"])
def test_argo_s_own_variables_stay_as_argo_writes_them(variable: str) -> None:
    manifest = str(hv.job_template(a_job(f"{{{{{variable}}}}}"), name="run").manifest)
    assert f"queue: '{{{{{variable}}}}}'" in manifest


def test_lint_s_samples_read_the_new_expressions() -> None:
    for variable in ENCODED:
        value = values.parse(variable)
        assert value is not None and value.variable == variable
        written = values.expression(values.Value(value.root, value.name, "text", 1))
        assert values.sample(written, {variable: 'a"b'}) == '"a\\"b"'
        joined = values.embedded(f"x-{{{{{variable}}}}}", "f", dollars=1, executor=True)
        assert isinstance(joined, hv.Placeholder)
        assert values.sample(joined.expression, {variable: "v"}) == '"x-v"'
