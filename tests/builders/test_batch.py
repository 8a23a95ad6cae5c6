"""batch_job with pod settings: cpu, memory and gpus are pod settings too, and render exactly as before."""

from __future__ import annotations

from typing import Any

import pytest

from hera_volcano import (
    Pipeline,
    PodSettings,
    PodVolume,
    ValidationError,
    VolcanoRetry,
    batch_job,
)
from tests.conftest import manifests


def test_the_same_settings_share_a_shape_however_they_are_given() -> None:
    by_arguments = batch_job("a", image="x:1", command=["a"], cpu="1", memory="1Gi", gpus=1)
    by_settings = batch_job(
        "b",
        image="x:1",
        command=["b"],
        pod=PodSettings(cpu="1", memory="1Gi", extended_resources={"nvidia.com/gpu": "1"}),
    )
    assert by_arguments.shape is by_settings.shape
    assert batch_job("c", image="x:1", command=["c"], pod=PodSettings()).shape.name == "volcano-job"


def test_other_settings_make_a_shape_of_their_own() -> None:
    plain = batch_job("a", image="x:1", command=["a"], cpu="1")
    with_env = batch_job("b", image="x:1", command=["b"], cpu="1", pod=PodSettings(env={"A": "1"}))
    assert plain.shape.name != with_env.shape.name
    assert with_env.shape is batch_job("c", image="y:2", command=["c"], pod=PodSettings(cpu="1", env={"A": "1"})).shape


def test_pod_settings_reach_the_pipeline_pods() -> None:
    settings = PodSettings(
        env={"A": "1"}, volumes=[PodVolume.empty_dir("scratch", "/scratch")], node_selector={"pool": "batch"}
    )
    wf = Pipeline([batch_job("a", image="x:1", command=["a"], cpu="1", gpus=1, pod=settings)]).workflow("p")
    [job] = manifests(wf)
    pod = job["spec"]["tasks"][0]["template"]["spec"]
    [container] = pod["containers"]
    assert container["resources"] == {
        "requests": {"cpu": "1", "nvidia.com/gpu": "1"},
        "limits": {"nvidia.com/gpu": "1"},
    }
    assert container["env"] == [{"name": "A", "value": "1"}]
    assert container["volumeMounts"] == [{"name": "scratch", "mountPath": "/scratch"}]
    assert pod["nodeSelector"] == {"pool": "batch"} and pod["restartPolicy"] == "Never"


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"cpu": "1", "pod": PodSettings(cpu="2")}, "cpu"),
        ({"memory": "1Gi", "pod": PodSettings(memory="1Gi")}, "memory"),
        ({"gpus": 1, "pod": PodSettings(gpus=1)}, "gpus"),
        ({"gpus": 1, "pod": PodSettings(extended_resources={"nvidia.com/gpu": 1})}, "gpus"),
        ({"cpu": "lots"}, "cpu"),
        ({"cpu": 2}, "cpu"),
        ({"pod": {"cpu": "1"}}, "pod"),
        ({"retry": VolcanoRetry(1), "pod": "x"}, "pod"),
    ],
)
def test_settings_are_given_once_and_checked(kwargs: dict[str, Any], field: str) -> None:
    with pytest.raises(ValidationError) as e:
        batch_job("a", image="x:1", command=["a"], **kwargs)
    assert e.value.field == field
