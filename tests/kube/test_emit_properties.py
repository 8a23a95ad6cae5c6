"""Properties of the emitted YAML that are not timings, on a real 1000-job workflow and on hostile strings.

``to_yaml`` sends plain data to libyaml as events (the fast path); these tests pin its output to what PyYAML's own
represent-then-serialize path gives with the same representers, byte for byte.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
import yaml
from yaml.representer import BaseRepresenter

import hera_volcano as hv
from benchmarks.run import same_types  # the benchmark reports these qualities with the same check
from hera_volcano.kube import emit
from hera_volcano.shared.placeholders import Placeholder

# Plain in PyYAML's output, but not strings to a YAML 1.1 reader such as go-yaml v2 (kubectl, Argo).
ABOUT = " ".join(["a long description that must stay on one line"] * 4)
RETYPED = ["1e-5", "08", "0x1f", "y", "no", "~", "1:30", "0o17", "1_000", "Off", ".inf", "-1E3", "+12", ""]


class _NodePath(emit._Dumper):
    """The reference: PyYAML's represent (a node graph) then serialize, with our representers."""

    represent = BaseRepresenter.represent


class _NodePathManifest(emit._ManifestDumper):
    represent = BaseRepresenter.represent


def reference(data: Any, dumper: type = _NodePath) -> str:
    return yaml.dump(
        data, Dumper=dumper, sort_keys=False, default_flow_style=False, width=emit._WIDTH, allow_unicode=True
    )


@pytest.fixture(scope="module")
def big() -> Any:
    """1000 jobs of one shape through the public API, each after the previous one or two, some with followers."""
    jobs = []
    for i in range(1000):
        after = [f"job-{j}" for j in (i - 1, i - 2) if j >= 0][: 1 + i % 2]
        jobs.append(
            hv.PipelineJob(
                f"job-{i}",
                hv.batch_job(
                    image="ghcr.io/example/trainer:1.4",
                    program=hv.Program.command(
                        ["python", "train.py", f"--shard={i:03d}", "--lr", "1e-5", "--note", "y", "--about", ABOUT]
                    ),
                    replicas=1 + i % 4,
                ),
                after=after,
                follow_logs=i % 100 == 0,
            )
        )
    return hv.Pipeline(jobs, max_dag_tasks=None).workflow("big")


@pytest.fixture(scope="module")
def big_yaml(big: Any) -> str:
    return str(hv.to_yaml(big))


def test_big_workflow_round_trips_to_exactly_to_dict_with_types(big: Any, big_yaml: str) -> None:
    data = big.to_dict()
    assert len(data["spec"]["templates"][0]["dag"]["tasks"]) == 2000, (
        "each job and its follower (a quiet one keeps its start limit)"
    )
    assert same_types(yaml.safe_load(big_yaml), data)


def test_big_workflow_matches_pyyaml_node_path_byte_for_byte(big: Any, big_yaml: str) -> None:
    assert big_yaml == reference(big.to_dict())


def test_bundled_workflows_match_pyyaml_node_path() -> None:
    from hera_volcano.examples import mpi_hello
    from hera_volcano.examples.hello_jobs import DAG, STEPS

    for wf in (mpi_hello.build(), mpi_hello.build(mpi_hello.Options(template=True)), STEPS.build(), DAG.build()):
        assert hv.to_yaml(wf) == reference(wf.to_dict())


HOSTILE: dict[str, Any] = {
    "z": 1,
    "name": "first",
    "retyped": RETYPED,
    "numbers": [0, -1, 2**40, 1.5, -0.0, 0.0, 1e300, float("inf"), True, False, None],
    "empty": {"map": {}, "list": [], "string": ""},
    "text": ["a: b", "a #b", " lead", "trail ", "- dash", "[x]", "{x}", "@at", "`tick", "'q'", '"d"', "%p", "!t"],
    "unicode": ["héllo", "日本語", "emoji \U0001f600", "tab\there", "nul\x00", "bell\x07", "\ufeffbom"],
    "multiline": ["a\nb\n", "a\nb", "a\n\nb\n\n", "trailing \nspace\n", "\n", "x\r\ny", "  indented\nfirst\n"],
    "long": " ".join(["word"] * 200),
    "expression": "{{inputs.parameters.message}} " + "x " * 100,
    "keys": {"1": "one", "true": "t", "": "empty", "a b": 2, "name": "not first here? moved"},
    "nested": [[["deep", {"name": "n", "a": [1, [2, [3]]]}]]],
}


def test_hostile_data_matches_pyyaml_node_path_and_round_trips() -> None:
    out = hv.to_yaml(HOSTILE)
    assert out == reference(HOSTILE)
    loaded = yaml.safe_load(out)
    assert loaded["retyped"] == RETYPED and loaded["multiline"] == HOSTILE["multiline"]
    assert next(iter(loaded)) == "name" and next(iter(loaded["keys"])) == "name"


def test_manifests_with_placeholders_match_pyyaml_node_path() -> None:
    data = {
        "replicas": Placeholder.input("replicas", 2),
        "command": Placeholder.input("command", ["a"]),
        "name": Placeholder.input("name", "x"),
        "prefix": "job-{{inputs.parameters.task}}-",
        "list": [Placeholder.input("a", 1), {"name": Placeholder.input("b", "s"), "x": 1.25}],
    }
    expected = reference(data, _NodePathManifest)
    text = yaml.dump(data, Dumper=emit._ManifestDumper, sort_keys=False, default_flow_style=False, width=emit._WIDTH)
    assert text == expected
    manifest = emit.dump_manifest(data)
    assert "replicas: {{inputs.parameters.replicas}}\n" in manifest
    assert '- name: "{{inputs.parameters.b}}"\n' in manifest
    assert "__hera_volcano_placeholder__" not in manifest


def test_pure_python_emitter_gives_the_same_output() -> None:
    """Without libyaml the same Dumper methods run on PyYAML's Python emitter."""
    pure = type("PureDumper", (yaml.SafeDumper,), {k: v for k, v in vars(emit._Dumper).items() if k != "__dict__"})
    data = {**HOSTILE, "numbers": HOSTILE["numbers"][:4]}
    out = yaml.dump(data, Dumper=pure, sort_keys=False, default_flow_style=False, width=emit._WIDTH, allow_unicode=True)
    assert yaml.safe_load(out) == yaml.safe_load(hv.to_yaml(data))
    assert out == reference(data, type("PureNodePath", (pure,), {"represent": BaseRepresenter.represent}))


def test_other_dump_settings_take_pyyaml_path() -> None:
    """Flow style or a default style are not what the fast path emits, so it steps aside."""
    data = {"a": [1, "x"], "name": "n"}
    for settings in ({"default_flow_style": True}, {"default_flow_style": None}, {"default_style": '"'}):
        out = yaml.dump(data, Dumper=emit._Dumper, sort_keys=False, **settings)
        assert out == yaml.dump(data, Dumper=_NodePath, sort_keys=False, **settings)


def test_long_strings_are_never_wrapped(big_yaml: str) -> None:
    long = " ".join(f"word{i}" for i in range(300))
    out = hv.to_yaml({"args": [long], "when": "{{tasks.a.status}} == Succeeded && " * 10})
    assert f"- {long}\n" in out
    assert len(out.splitlines()) == 3
    argument = next(line for line in big_yaml.splitlines() if ABOUT in line)
    assert len(argument) > 200


def test_multiline_strings_are_block_scalars(big_yaml: str) -> None:
    out = hv.to_yaml({"script": "echo a\necho b\n", "args": ["x\ny"]})
    assert "script: |\n  echo a\n  echo b\n" in out
    assert "- |-\n  x\n  y\n" in out
    assert re.search(r"\n *args:\n *- \|\n +# hera-volcano log follower", big_yaml), "the follower's program"
    assert "\n      manifest: |\n        apiVersion: batch.volcano.sh/v1alpha1\n" in big_yaml


def test_multiline_with_trailing_spaces_is_quoted_and_round_trips() -> None:
    text = "keep \nthis\n"
    out = hv.to_yaml({"s": text})
    assert "|" not in out
    assert yaml.safe_load(out) == {"s": text}


@pytest.mark.parametrize("text", RETYPED)
def test_retyped_strings_are_quoted(text: str) -> None:
    out = hv.to_yaml({"v": text, "l": [text]})
    assert out == f"v: '{text}'\nl:\n- '{text}'\n"
    assert same_types(yaml.safe_load(out), {"v": text, "l": [text]})


def test_retyped_strings_are_quoted_inside_the_big_workflow(big_yaml: str) -> None:
    assert 'value: \'["python", "train.py", "--shard=000", "--lr", "1e-5", "--note", "y"' in big_yaml
    assert "- '1e-5'" not in big_yaml  # inside the JSON argument, not a scalar of its own
    data = yaml.safe_load(big_yaml)
    manifest = data["spec"]["templates"][1]["resource"]["manifest"]
    assert "toJson(sprig.mustFromJson(replace(inputs.parameters['command']" in manifest, "a list, read as JSON"
