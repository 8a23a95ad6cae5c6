"""A string is a string whatever its class: a ``str`` subclass or a ``StrEnum`` member given to a builder renders as
its text (it used to end in a YAML error, or a ``str()`` of the member's name); any other Enum member is refused
naming the field. NUL and an unclosed ``{{`` in a job are refused naming the field (Kubernetes and Argo would
fail at run time)."""

from __future__ import annotations

import enum
import re
from collections.abc import Callable

import pytest

import hera_volcano as hv


class Text(str):
    __slots__ = ()


class Image(enum.StrEnum):
    BUSYBOX = "busybox:1.37.0"


class Mixed(str, enum.Enum):  # str() of a member is "Mixed.NAME", not its value
    account = "runner"


class Plain(enum.Enum):
    VALUE = "x"


def manifest(**given: object) -> str:
    options: dict[str, object] = {
        "image": "busybox:1.37.0",
        "program": hv.Program.command(["echo", "hi"]),
        "name": "job-1",
        "queue": "default",
        "service_account": "runner",
        "pod": hv.PodSettings(env={"A": "a"}, labels={"l": "v"}, annotations={"n": "a"}),
        **given,
    }
    return str(hv.job_template(hv.batch_job(**options), name="run").manifest)  # type: ignore[arg-type]


CASES: dict[str, Callable[[type], dict[str, object]]] = {
    "image": lambda t: {"image": Image.BUSYBOX if t is Image else t("busybox:1.37.0")},
    "command": lambda t: {"program": hv.Program.command(["echo", t("hi")])},
    "name": lambda t: {"name": t("job-1")},
    "queue": lambda t: {"queue": t("default")},
    "env, labels, annotations": lambda t: {
        "pod": hv.PodSettings(env={"A": t("a")}, labels={"l": t("v")}, annotations={"n": t("a")})
    },
}


@pytest.mark.parametrize("field", list(CASES))
@pytest.mark.parametrize("kind", [Text, Image])
def test_a_str_subclass_renders_as_its_text(field: str, kind: type) -> None:
    def make(text: str) -> object:
        if kind is Image:
            return Image.BUSYBOX if text == "busybox:1.37.0" else Text(text)
        return kind(text)

    assert manifest(**CASES[field](make)) == manifest()


def test_a_mixed_in_str_enum_member_is_its_value_not_its_name() -> None:
    assert manifest(service_account=Mixed.account) == manifest()


def test_an_enum_member_that_is_no_string_is_refused_naming_the_field() -> None:
    with pytest.raises(hv.ValidationError, match=r"^image: "):
        hv.batch_job(image=Plain.VALUE, program=hv.Program.command(["echo"]))  # type: ignore[arg-type]
    task = hv.VolcanoTask(
        name="main", replicas=1, template={"spec": {"containers": [{"name": "main", "image": Plain.VALUE}]}}
    )
    with pytest.raises(hv.ValidationError, match=r"^spec\.tasks\[0\]\.template\.spec\.containers\[0\]\.image: "):
        hv.job_template(hv.VolcanoJob(name="j", tasks=[task]), name="run")


def test_yaml_writes_a_str_subclass_as_its_text_and_refuses_another_enum_member() -> None:
    assert hv.to_yaml({"a": Text("x"), "b": Mixed.account}) == "a: x\nb: runner\n"
    with pytest.raises(hv.ValidationError, match="Enum member"):
        hv.to_yaml({"a": Plain.VALUE})


@pytest.mark.parametrize(
    ("pod", "field"),
    [
        (hv.PodSettings(annotations={"note": "a\x00b"}), "spec.tasks.0.template.metadata.annotations.note"),
        (hv.PodSettings(env={"A": "a\x00b"}), "spec.tasks.0.template.spec.containers.0.env.0.value"),
    ],
)
def test_nul_in_a_job_is_refused_naming_the_field(pod: hv.PodSettings, field: str) -> None:
    with pytest.raises(hv.ValidationError, match="^" + re.escape(field) + ": holds NUL"):
        manifest(pod=pod)


def test_nul_in_a_command_is_refused_naming_the_field() -> None:
    with pytest.raises(hv.ValidationError, match=r"containers\.0\.command\.1: holds NUL"):
        manifest(program=hv.Program.command(["echo", "a\x00b"]))


@pytest.mark.parametrize("text", ["{{x", "a {{ b", "{{workflow.name}} {{"])
def test_an_unclosed_tag_is_refused_naming_the_field(text: str) -> None:
    with pytest.raises(hv.ValidationError, match=r"annotations\.note: holds '\{\{' that no '\}\}' closes"):
        manifest(pod=hv.PodSettings(annotations={"note": text}))
