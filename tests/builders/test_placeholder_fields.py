"""What docs/python-api.md says of ``Placeholder.input``, held: every place it names takes a placeholder, and the
value given at run time arrives there exactly (Argo's passes and the kubelet's expansion simulated: ``podsim``);
the builders' arguments it says take only values known when rendering refuse one, naming the field."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import hera_volcano as hv
from hera_volcano.pods.launcher import LaunchSettings
from tests.builders import podsim, userfuncs

TEXT = 'it\'s "q" $(HOME) $$ ; {x}'


def P(name: str, sample: object = "x") -> hv.Placeholder:
    return hv.Placeholder.input(name, sample)


def created(job: hv.VolcanoJob, values: dict[str, str]) -> dict[str, Any]:
    manifest = str(hv.job_template(job, name="run").manifest)
    return podsim.parse(manifest, {f"inputs.parameters.{k}": v for k, v in values.items()})


def pytorch(**kwargs: Any) -> hv.VolcanoJob:
    kwargs.setdefault("program", hv.Program.command(["prog"]))
    kwargs.setdefault("workers", 1)
    return hv.pytorch_job(image="img", **kwargs)


def test_a_builder_s_name() -> None:
    assert created(pytorch(name=P("n", "n-1")), {"n": "run-7"})["metadata"]["name"] == "run-7"


def test_an_env_value_and_a_command_element_whole_or_in_a_string() -> None:
    job = pytorch(pod=hv.PodSettings(env={"V": P("v")}), program=hv.Program.command(["prog", P("v"), f"-v={P('v')}"]))
    argv, env = podsim.process(podsim.container(created(job, {"v": TEXT}), "master"))
    assert env["V"] == TEXT and argv == ["prog", TEXT, f"-v={TEXT}"]


@pytest.mark.parametrize("make", [hv.Program.function, hv.Program.script, hv.Program.module])
def test_a_program_s_arguments(make: Callable[..., hv.Program]) -> None:
    what = {hv.Program.function: userfuncs.echo, hv.Program.script: userfuncs.__file__}.get(make, "pkg.train")
    job = pytorch(program=make(what, args={"a": P("a")}))
    _, env = podsim.process(podsim.container(created(job, {"a": TEXT}), "master"))
    assert LaunchSettings.from_env(env).runtime == (("a", "text", TEXT),)


def test_any_field_of_a_volcano_job_of_your_own() -> None:
    container = {"name": "m", "image": P("image", "img"), "command": ["prog"], "workingDir": P("dir", "/w")}
    job = hv.VolcanoJob(
        name=P("name"),
        min_available=P("min", 1),
        tasks=[
            hv.VolcanoTask(
                name="m",
                replicas=P("replicas", 1),
                template={"spec": {"containers": [container], "restartPolicy": "Never"}},
            )
        ],
    )
    values = {"name": "j", "min": "2", "replicas": "3", "image": "busybox:1", "dir": "/data"}
    data = created(job, values)
    assert data["metadata"]["name"] == "j" and data["spec"]["minAvailable"] == 2
    assert data["spec"]["tasks"][0]["replicas"] == 3
    assert podsim.container(data, "m")["image"] == "busybox:1" and podsim.container(data, "m")["workingDir"] == "/data"


@pytest.mark.parametrize(
    ("build", "field"),
    [
        (lambda: hv.pytorch_job(image=P("i", "img"), program=hv.Program.command(["x"]), workers=1), "image"),
        (lambda: pytorch(workers=P("w", 1)), "workers"),
        (lambda: pytorch(queue=P("q")), "queue"),
        (lambda: pytorch(pod=hv.PodSettings(cpu=P("c", "1"))), "cpu"),
        (lambda: pytorch(pod=hv.PodSettings(labels={"a": P("l")})), "labels['a']"),
    ],
)
def test_the_builders_other_arguments_take_values_known_when_rendering(build: Callable[[], Any], field: str) -> None:
    with pytest.raises(hv.ValidationError) as e:
        build()
    assert e.value.field == field
