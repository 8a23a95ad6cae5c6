"""What Argo's strict decoding and the API server's object-metadata rules refuse, found by lint offline: a quantity
Kubernetes cannot parse (or true/false) in any quantity field, an integer beyond its Go type (int32 or int64) in any
integer field, annotations over 256 KiB (keys and values, in bytes), a namespace that is not a DNS-1123 label."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from hera_volcano.kube.metadata import ANNOTATIONS_MAX_BYTES, annotations_size
from hera_volcano.tools.lint import lint_document
from tests.lint_corpus import job, workflow

Doc = dict[str, Any]
CONTAINER = "spec.templates[0].container"


def errors(doc: Doc) -> dict[str, str]:
    out: dict[str, str] = {}
    for f in lint_document(doc):
        if f.severity == "error":
            out[f.path] = f"{out[f.path]} | {f.message}" if f.path in out else f.message
    return out


def with_container(**fields: object) -> Doc:
    def edit(doc: Doc) -> None:
        doc["spec"]["templates"][0]["container"].update(fields)

    return workflow(edit)


def with_spec(**fields: object) -> Doc:
    def edit(doc: Doc) -> None:
        doc["spec"].update(fields)

    return workflow(edit)


# ---- quantities ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("value", [True, False, "1Gb", "1K", "", "1 Gi", "Gi1", "1e", "1Gi2", "0x10"])
def test_a_quantity_kubernetes_cannot_parse_is_refused(value: object) -> None:
    found = errors(with_container(resources={"requests": {"memory": value}}))
    assert list(found) == [f"{CONTAINER}.resources.requests.memory"]
    assert "must be a quantity" in found[f"{CONTAINER}.resources.requests.memory"]
    assert "Argo's strict decoding refuses the workflow" in found[f"{CONTAINER}.resources.requests.memory"]


@pytest.mark.parametrize("value", ["1Gi", " 1Gi ", "500m", "1e3", "1E", "+1", "1.", ".5", 0.5, 2, 10**30])
def test_quantities_kubernetes_parses_are_accepted(value: object) -> None:
    assert errors(with_container(resources={"limits": {"cpu": value}})) == {}


def test_every_quantity_field_is_checked() -> None:
    volumes = [{"name": "scratch", "emptyDir": {"sizeLimit": "1GB"}}]
    doc = with_spec(volumes=volumes)
    assert list(errors(doc)) == ["spec.volumes[0].emptyDir.sizeLimit"]
    volumes[0]["emptyDir"]["sizeLimit"] = "1G"
    assert errors(with_spec(volumes=volumes)) == {}


# ---- integers and their Go types ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("edit", "at", "bad", "good"),
    [
        (lambda v: with_spec(priority=v), "spec.priority", 2**31, 2**31 - 1),
        (lambda v: with_spec(priority=v), "spec.priority", -(2**31) - 1, -(2**31)),
        (lambda v: with_spec(priority=v), "spec.priority", 2147483648.0, 2147483647.0),
        (lambda v: with_container(ports=[{"containerPort": v}]), f"{CONTAINER}.ports[0].containerPort", 2**31, 80),
        (
            lambda v: with_container(readinessProbe={"exec": {"command": ["true"]}, "periodSeconds": v}),
            f"{CONTAINER}.readinessProbe.periodSeconds",
            2**32,
            10,
        ),
        (
            lambda v: with_spec(ttlStrategy={"secondsAfterCompletion": v}),
            "spec.ttlStrategy.secondsAfterCompletion",
            2**31,
            2**31 - 1,
        ),
    ],
)
def test_an_int32_field_refuses_a_number_beyond_int32(
    edit: Callable[[object], Doc], at: str, bad: int, good: int
) -> None:
    found = errors(edit(bad))
    assert list(found) == [at]
    assert "between -2147483648 and 2147483647 (a Go int32)" in found[at]
    assert errors(edit(good)) == {}


def test_an_int_or_string_holds_an_int32() -> None:
    def probed(port: object) -> Doc:
        return with_container(readinessProbe={"httpGet": {"path": "/", "port": port}})

    at = f"{CONTAINER}.readinessProbe.httpGet.port"
    assert "a Go int32" in errors(probed(2**31))[at]
    assert errors(probed(2**31 - 1)) == errors(probed("http")) == {}


def test_other_integer_fields_are_int64() -> None:
    found = errors(with_spec(parallelism=2**63))
    assert "between -9223372036854775808 and 9223372036854775807 (a Go int64)" in found["spec.parallelism"]
    assert errors(with_spec(parallelism=2**31)) == {}


def test_a_cron_workflows_int32_fields() -> None:
    doc = workflow()
    cron: Doc = {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "CronWorkflow",
        "metadata": {"name": "nightly"},
        "spec": {"schedules": ["0 1 * * *"], "workflowSpec": doc["spec"], "successfulJobsHistoryLimit": 2**31},
    }
    assert "a Go int32" in errors(cron)["spec.successfulJobsHistoryLimit"]
    cron["spec"]["successfulJobsHistoryLimit"] = 3
    assert errors(cron) == {}


# ---- object metadata -----------------------------------------------------------------------------------------------


def annotated(doc: Doc, annotations: dict[str, str]) -> Doc:
    doc["metadata"]["annotations"] = annotations
    return doc


@pytest.mark.parametrize("make", [workflow, job])
def test_annotations_hold_at_most_256_kib_keys_and_values_in_bytes(make: Callable[[], Doc]) -> None:
    at_limit = {"a": "x" * 10, "note": "x" * (ANNOTATIONS_MAX_BYTES - 15)}
    assert annotations_size(at_limit) == ANNOTATIONS_MAX_BYTES
    assert errors(annotated(make(), at_limit)) == {}
    found = errors(annotated(make(), {**at_limit, "a": "x" * 11}))
    assert list(found) == ["metadata.annotations"]
    assert "must have at most 262144 bytes" in found["metadata.annotations"]
    # a character of two UTF-8 bytes counts twice, as Go's len counts it
    assert list(errors(annotated(make(), {**at_limit, "a": "é" * 6}))) == ["metadata.annotations"]


def test_a_pod_templates_annotations_are_limited_too() -> None:
    def edit(doc: Doc) -> None:
        doc["spec"]["tasks"][0]["template"]["metadata"] = {"annotations": {"note": "x" * ANNOTATIONS_MAX_BYTES}}

    assert list(errors(job(change=edit))) == ["spec.tasks[0].template.metadata.annotations"]


@pytest.mark.parametrize("make", [workflow, job])
@pytest.mark.parametrize("namespace", ["Argo", "my_ns", "a" * 64, "-argo"])
def test_the_namespace_is_a_dns_1123_label(make: Callable[[], Doc], namespace: str) -> None:
    doc = make()
    doc["metadata"]["namespace"] = namespace
    found = errors(doc)
    assert list(found) == ["metadata.namespace"] and "DNS-1123 label" in found["metadata.namespace"]
    doc["metadata"]["namespace"] = "a" * 63
    assert errors(doc) == {}
