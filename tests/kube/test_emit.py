"""YAML emission: deterministic, block scalars, no wrapping, and strings that stay strings in go-yaml."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import yaml

from hera_volcano import ValidationError, to_yaml
from hera_volcano.kube.emit import dump_manifest, to_json
from hera_volcano.shared.placeholders import Placeholder, Verbatim

# What YAML 1.1 (go-yaml v2, behind kubectl and Argo) would read as something other than a string.
RETYPED = ["1e-5", "08", "0x1F", "0o17", "1_000", "y", "N", "yes", "Off", "true", "null", "~", "", ".inf", "1:30", "3"]


@pytest.mark.parametrize("text", RETYPED)
def test_strings_that_yaml_1_1_would_retype_are_quoted(text: str) -> None:
    out = to_yaml({"v": text})
    assert out != f"v: {text}\n"
    assert yaml.safe_load(out) == {"v": text}


def test_ordinary_strings_stay_plain_and_round_trip() -> None:
    data = {"name": "x", "image": "volcanosh/example-mpi:0.0.3", "n": 3, "f": 1.5, "b": True, "none": None}
    out = to_yaml(data)
    assert "image: volcanosh/example-mpi:0.0.3\n" in out
    assert yaml.safe_load(out) == data


def test_multiline_strings_are_block_scalars_and_long_lines_are_not_wrapped() -> None:
    script = "echo one\n" + "echo " + "x" * 300 + "\n"
    out = to_yaml({"args": [script]})
    assert "- |\n" in out
    assert ("  echo " + "x" * 300) in out
    assert yaml.safe_load(out) == {"args": [script]}


def test_no_anchors_for_shared_objects() -> None:
    shared = [{"containerPort": 22}]
    out = to_yaml({"a": shared, "b": shared})
    assert "&" not in out and "*" not in out


def test_name_comes_first_and_other_keys_keep_their_order() -> None:
    out = to_yaml({"z": 1, "name": "job", "a": 2})
    assert out.splitlines() == ["name: job", "z: 1", "a: 2"]


def test_several_documents_are_separated() -> None:
    out = to_yaml({"a": 1}, {"b": 2})
    assert list(yaml.safe_load_all(out)) == [{"a": 1}, {"b": 2}]


def test_hera_objects_render_via_to_dict() -> None:
    from hera.workflows import Container, Workflow

    with Workflow(name="w", entrypoint="c") as w:
        Container(name="c", image="alpine:3", command=["sh", "-c", "echo a\necho b\n"])
    out = to_yaml(w)
    assert yaml.safe_load(out) == w.to_dict()
    assert "- |\n" in out


def test_global_representers_do_not_change_our_output() -> None:
    before = to_yaml({"s": "a\nb\n", "t": "y"})

    def shout(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
        return dumper.represent_scalar("tag:yaml.org,2002:str", data.upper(), style='"')

    yaml.add_representer(str, shout, Dumper=yaml.SafeDumper)
    try:
        assert to_yaml({"s": "a\nb\n", "t": "y"}) == before
    finally:
        yaml.add_representer(str, yaml.representer.SafeRepresenter.represent_str, Dumper=yaml.SafeDumper)


def test_placeholders_keep_their_type_after_argo_substitution() -> None:
    manifest = dump_manifest(
        {
            "replicas": Placeholder.input("replicas", 2),
            "command": Placeholder.input("command", ["a"]),
            "name": Placeholder.input("name", "x"),
            "prefix": "job-{{inputs.parameters.task}}-",
        }
    )
    assert "replicas: {{inputs.parameters.replicas}}\n" in manifest
    assert 'name: "{{inputs.parameters.name}}"\n' in manifest
    substituted = (
        manifest.replace("{{inputs.parameters.replicas}}", "3")
        .replace("{{inputs.parameters.command}}", '["sh", "-c"]')
        .replace("{{inputs.parameters.name}}", "08")
        .replace("{{inputs.parameters.task}}", "t")
    )
    assert yaml.safe_load(substituted) == {"replicas": 3, "command": ["sh", "-c"], "name": "08", "prefix": "job-t-"}


@pytest.mark.parametrize(
    "text",
    [
        'print(f"{{x}}")\n',
        "{{inputs.parameters.x}} {{=1}} {{{ }}}",
        'quote " backslash \\ tab \t nel \x85 ls \u2028 emoji 😀 del \x7f',
        "{{\n  two lines\n",
    ],
)
def test_verbatim_text_holds_no_argo_expression_and_reads_back_the_same(text: str) -> None:
    manifest = dump_manifest({"env": [{"name": "SOURCE", "value": Verbatim(text)}], "args": [Verbatim(text)]})
    assert "{{" not in manifest
    assert yaml.safe_load(manifest) == {"env": [{"name": "SOURCE", "value": text}], "args": [text]}
    assert yaml.safe_load(to_yaml({"value": Verbatim(text)})) == {"value": text}, "elsewhere an ordinary string"


def test_verbatim_text_without_braces_is_written_as_any_string() -> None:
    text = "def f():\n    return 1\n"
    assert dump_manifest({"v": Verbatim(text)}) == dump_manifest({"v": text}) == "v: |\n  def f():\n      return 1\n"


@pytest.mark.parametrize("emit", [to_yaml, to_json])
def test_text_no_utf8_can_hold_is_bad_input_naming_its_field(emit: Callable[..., str]) -> None:
    # What Python makes of a command-line argument that is not UTF-8 (b"caf\xe9" in Latin-1).
    with pytest.raises(
        ValidationError, match=r"^spec\.args\[1\]: is not valid Unicode \(a lone surrogate in 'caf\\udce9'\)"
    ):
        emit({"spec": {"args": ["ok", "caf\udce9"]}})
