"""Lint (and ``submit --dry-run``) over documents of the right shape with a wrong type anywhere: every field lint
reads (kind, metadata, spec, templates, steps, DAG tasks, arguments, the Volcano Job inside a resource manifest...)
replaced by a list, a map, a number, null, a key that is not a string, a lone surrogate... Whatever the input, the
answer is findings (or none), never an exception: not even one lint turns into "malformed document"."""

from __future__ import annotations

import copy
import datetime
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hera_volcano.client import submission
from hera_volcano.kube.emit import to_json, to_yaml
from hera_volcano.kube.loading import load_all
from hera_volcano.shared.errors import ValidationError
from hera_volcano.tools.lint import lint_documents, lint_text
from hera_volcano.tools.lint.context import Source
from tests import lint_corpus
from tests.conftest import ROOT
from tests.tools.test_lint import JOB, workflow

#: What the bundled files hold, the unit tests' clean documents of every kind, and the corpus' Volcano Jobs.
_BUNDLED: Final = [
    doc
    for path in sorted([*Path(ROOT, "workflows").glob("*.yaml"), *Path(ROOT, "rbac").glob("*.yaml")])
    for doc in load_all(path.read_text(encoding="utf-8"))
    if isinstance(doc, dict)
]


def _cron() -> dict[str, Any]:
    doc = workflow("CronWorkflow")
    doc["spec"] = {"schedule": "* * * * *", "workflowSpec": doc["spec"]}
    return doc


def _queue() -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "metadata": {"name": "q"},
        "spec": {"weight": 1, "capability": {"cpu": "4"}},
    }


BASES: Final = [
    *_BUNDLED,
    *(workflow(kind) for kind in ("Workflow", "WorkflowTemplate", "ClusterWorkflowTemplate")),
    _cron(),
    yaml.safe_load(JOB),
    _queue(),
    {"apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization", "resources": ["a.yaml"]},
    *(case.document for case in lint_corpus.CASES[::4]),
]
#: A wrong value of every type YAML can give (``!!binary`` bytes, ``!!timestamp`` dates, ``!!omap`` pairs).
WRONG: Final[list[object]] = [
    [],
    [[]],
    {},
    {"a": {}},
    None,
    0,
    -1,
    2**70,
    1.5,
    float("nan"),
    float("inf"),
    True,
    "",
    "x",
    "{{",
    "{{inputs.parameters.x}}",
    "{{=1}}",
    "$(X)",
    "a" * 300,
    "\ud800",
    "0",
    ["a"],
    [{}],
    [None],
    [1],
    [["a", "b"]],
    {"name": []},
    {"name": 1},
    {"name": "main"},
    [{"name": "main"}],
    {"template": "main"},
    {1: 2},
    {None: 1},
    {True: 1},
    {b"key": 1},
    b"bytes",
    datetime.date(2024, 1, 1),
    [("k", 1)],
]
#: Keys that replace a field's own: not strings, or strings that look like paths.
KEYS: Final[list[object]] = [1, None, True, 1.5, b"k", "", "{{x}}", "a.b", "[0]", "::"]


def _is_manifest(value: object) -> bool:
    return isinstance(value, str) and "\n" in value and "kind:" in value


def _mutate(doc: object, walk: list[int], action: int, value: object) -> object:
    """``doc`` with the node ``walk`` leads to (each number picks a child) replaced by ``value``, or its key by a
    wrong one, or (a manifest) mutated inside its YAML."""
    if not walk or not isinstance(doc, dict | list) or not doc:
        return value
    keys = list(doc) if isinstance(doc, dict) else list(range(len(doc)))
    key = keys[walk[0] % len(keys)]
    child = doc[key]
    if _is_manifest(child) and len(walk) > 1:
        try:
            inner = yaml.safe_load(child)
            new: object = yaml.safe_dump(_mutate(inner, walk[1:], action, value), allow_unicode=True)
        except yaml.YAMLError:
            new = value
    else:
        new = _mutate(child, walk[1:], action, value)
    if isinstance(doc, dict) and len(walk) == 1 and action == 1:
        doc.pop(key)
        doc[KEYS[walk[0] % len(KEYS)]] = child  # the same value under a key of the wrong type
    else:
        doc[key] = new
    return doc


_values = st.recursive(
    st.sampled_from(WRONG),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(["name", "x"]), inner)),
    max_leaves=4,
)
_mutation = st.tuples(st.lists(st.integers(0, 40), max_size=12), st.integers(0, 3), _values)


@st.composite
def documents(draw: st.DrawFn) -> object:
    doc: object = copy.deepcopy(draw(st.sampled_from(BASES)))
    for walk, action, value in draw(st.lists(_mutation, min_size=1, max_size=3)):
        doc = _mutate(doc, walk, action, copy.deepcopy(value))
    return doc


def internal(found: list[Any]) -> list[str]:
    """Findings that stand for an exception inside lint (caught, reported, but a bug)."""
    return [f.message for f in found if "cannot check it" in f.message or "lint failed" in f.message]


FUZZ: Final[Callable[[Callable[..., None]], Callable[..., None]]] = settings(
    max_examples=250,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@FUZZ
@given(doc=documents())
def test_lint_never_raises_on_a_document_of_wrong_types(doc: object) -> None:
    found = lint_documents([doc], Source("f.yaml"))
    assert not internal(found), internal(found)


@FUZZ
@given(docs=st.lists(documents(), min_size=1, max_size=3))
def test_lint_of_a_stream_never_raises_and_each_document_is_checked(docs: list[object]) -> None:
    try:
        text = yaml.safe_dump_all(docs, allow_unicode=True)
    except yaml.YAMLError:
        return  # a value YAML cannot write (a tuple key): not an input
    found = lint_text(text, "f.yaml")
    assert not internal(found), internal(found)


@FUZZ
@given(doc=documents())
def test_submit_reads_any_document_or_refuses_it_in_one_line(doc: object) -> None:
    # What ``submit --dry-run FILE -p x=1`` does before it prints: read, set a parameter, write YAML and JSON.
    try:
        body = submission.workflow_body(yaml.safe_dump(doc, allow_unicode=True), ("Workflow", "CronWorkflow"))
        body = submission.with_parameters(body, {"x": "1"})
        to_yaml(body)
        to_json(body)
    except (ValidationError, yaml.YAMLError):
        pass
