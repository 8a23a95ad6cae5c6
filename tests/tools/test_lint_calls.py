"""`hera-volcano lint` on this library's own pitfalls in hand-written YAML: a call's arguments against the inputs of the
template it calls, a log follower that stops before its job, and a workflow too big to store."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml

from hera_volcano.tools.lint import LintFinding, lint_text
from hera_volcano.tools.lint.sizes import MAX_BYTES, WARN_BYTES, stored_size

TRAIN = """\
apiVersion: argoproj.io/v1alpha1
kind: WorkflowTemplate
metadata:
  name: train
spec:
  entrypoint: main
  templates:
  - name: main
    dag:
      tasks:
      - name: train
        template: train
{call}
  - name: train
    inputs:
      parameters:
      - name: data-dir
{data_default}
      - name: epochs
        default: "3"
    container:
      image: python:3.12
      command: [python, train.py, "{{{{inputs.parameters.data-dir}}}}", "{{{{inputs.parameters.epochs}}}}"]
"""


def train(call: str = "", data_default: str = "") -> str:
    """The workflow with the task's extra lines ``call`` and the input data-dir's extra lines ``data_default``."""
    return TRAIN.format(call=call, data_default=data_default)


def lint(text: str) -> list[LintFinding]:
    return lint_text(text, "wf.yaml")


def errors(text: str) -> list[LintFinding]:
    return [f for f in lint(text) if f.severity == "error"]


TASK = "[0].spec.templates[0].dag.tasks[0]"


# ---- arguments against inputs ----------------------------------------------------------------------------------------


def test_a_call_passing_every_input_without_a_default_is_clean() -> None:
    call = """\
        arguments:
          parameters:
          - name: data-dir
            value: /data/train
"""
    assert lint(train(call)) == []
    # An input with a default may be left out, and passed.
    both = call + "          - name: epochs\n            value: '10'\n"
    assert lint(train(both)) == []


def test_a_misspelt_argument_names_the_input_it_misses_and_the_default_the_input_keeps() -> None:
    call = """\
        arguments:
          parameters:
          - name: data_dir
            value: /data/train
"""
    # As job_dag declares its inputs: the default 'null' is what the ranks would train on.
    [found] = errors(train(call, "        default: 'null'"))
    assert found.path == f"{TASK}.arguments.parameters[0].name"
    assert found.line == 15
    assert "'data_dir' is not an input of template 'train' (did you mean 'data-dir'?)" in found.message
    assert "'data-dir' keeps its default 'null'" in found.message


def test_a_misspelt_argument_for_an_input_without_a_default_is_one_error_saying_argo_refuses_it() -> None:
    call = """\
        arguments:
          parameters:
          - name: Data-Dir
            value: /data/train
          - name: epoch
            value: '10'
"""
    found = {f.path: f.message for f in errors(train(call))}
    assert set(found) == {f"{TASK}.arguments.parameters[0].name", f"{TASK}.arguments.parameters[1].name"}
    assert "did you mean 'data-dir'?" in found[f"{TASK}.arguments.parameters[0].name"]
    assert "inputs.parameters.data-dir was not supplied" in found[f"{TASK}.arguments.parameters[0].name"]
    assert "did you mean 'epochs'?" in found[f"{TASK}.arguments.parameters[1].name"]


def test_an_argument_like_no_input_lists_the_inputs() -> None:
    call = """\
        arguments:
          parameters:
          - name: data-dir
            value: /data
          - name: learning-rate
            value: '0.1'
"""
    [found] = errors(train(call))
    assert found.path == f"{TASK}.arguments.parameters[1].name"
    assert "its inputs are 'data-dir', 'epochs'" in found.message


def test_a_call_that_leaves_out_an_input_without_a_default_is_refused() -> None:
    [found] = errors(train())
    assert found.path == f"{TASK}.arguments"
    assert found.line == 11  # the task: it has no arguments to point at
    assert "does not pass 'data-dir', an input of template 'train' without a default" in found.message
    assert "inputs.parameters.data-dir was not supplied" in found.message
    # An input with a value of its own, or a default, needs no argument.
    assert lint(train(data_default="        value: /data")) == []
    assert lint(train(data_default="        default: ''")) == []
    # A ConfigMap's key gives it one; no other valueFrom does (Argo's ProcessArgs): the builders' rule too.
    assert lint(train(data_default="        valueFrom: {configMapKeyRef: {name: s, key: k}}")) == []
    [found] = errors(train(data_default="        valueFrom: {supplied: {}}"))
    assert "inputs.parameters.data-dir was not supplied" in found.message


def test_loop_arguments_are_arguments() -> None:
    loop = """\
        withItems: [/data/a, /data/b]
        arguments:
          parameters:
          - name: {name}
            value: "{{{{item}}}}"
"""
    assert lint(train(loop.format(name="data-dir"))) == []
    [found] = errors(train(loop.format(name="datadir")))
    assert "did you mean 'data-dir'?" in found.message


def test_steps_are_checked_like_tasks() -> None:
    text = """\
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: steps-
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - name: say
        template: say
        arguments:
          parameters:
          - name: mesage
            value: hi
  - name: say
    inputs:
      parameters:
      - name: message
    container:
      image: alpine:3
      command: [echo, "{{inputs.parameters.message}}"]
"""
    [found] = errors(text)
    assert found.path == "[0].spec.templates[0].steps[0][0].arguments.parameters[0].name"
    assert "did you mean 'message'?" in found.message
    assert errors(text.replace("mesage", "message")) == []


# ---- a follower that stops before its job ----------------------------------------------------------------------------

FOLLOWED = """\
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: train-
spec:
  entrypoint: main
  templates:
  - name: main
    dag:
      tasks:
      - name: job
        template: train-job
      - name: logs
        template: train-logs
  - name: train-job
{job_deadline}
    metadata:
      labels:
        hera-volcano/job: train
    resource:
      action: create
      setOwnerReference: true
      successCondition: status.state.phase == Completed
      failureCondition: status.state.phase in (Failed, Terminated, Aborted)
      manifest: |
        apiVersion: batch.volcano.sh/v1alpha1
        kind: Job
        metadata:
          generateName: train-
          labels:
            hera-volcano/job: train
        spec:
          schedulerName: volcano
          minAvailable: 1
          tasks:
          - name: master
            replicas: 1
            template:
              spec:
                restartPolicy: Never
                containers:
                - name: master
                  image: python:3.12
                  command: [python, train.py]
  - name: train-logs
{follower_deadline}
    outputs:
      parameters:
      - name: loss
        valueFrom:
          path: /tmp/hera-volcano/outputs/loss
          default: ""
    container:
      image: bitnami/kubectl:1.31
      command: [bash, -c, follow]
      env:
      - name: JOB_SELECTOR
        value: workflows.argoproj.io/workflow={{{{workflow.name}}}},hera-volcano/job=train
      - name: OUTPUTS
        value: loss
{follow_seconds}
"""


def followed(job_deadline: str = "", follower_deadline: str = "", follow_seconds: str = "") -> str:
    """The workflow with a job step deadline, a follower deadline and FOLLOW_SECONDS as given (blank: none)."""
    return FOLLOWED.format(
        job_deadline=job_deadline and f"    activeDeadlineSeconds: {job_deadline}",
        follower_deadline=follower_deadline and f"    activeDeadlineSeconds: {follower_deadline}",
        follow_seconds=follow_seconds and f"      - name: FOLLOW_SECONDS\n        value: '{follow_seconds}'",
    )


def test_a_follower_that_stops_before_its_job_step_is_an_error() -> None:
    # job_template's deadline raised to 2 h, the follower wired by hand with the old 3660 s.
    [found] = errors(followed(job_deadline="7200", follow_seconds="3660"))
    assert found.path == "[0].spec.templates[2].container.env[2].value"
    assert "follower 'train-logs' stops after 3660 s" in found.message
    assert "the step 'train-job' of its job 'train' waits up to 7200 s" in found.message
    assert "its outputs (loss) empty" in found.message


def test_a_follower_whose_own_deadline_is_shorter_is_an_error_at_that_deadline() -> None:
    [found] = errors(followed(job_deadline="7200", follower_deadline="600", follow_seconds="9000"))
    assert found.path == "[0].spec.templates[2].activeDeadlineSeconds"
    assert "stops after 600 s" in found.message


def test_a_follower_with_a_limit_following_a_job_without_one_is_an_error() -> None:
    [found] = errors(followed(follow_seconds="3660"))
    assert "the step 'train-job' of its job 'train' has no deadline" in found.message


@pytest.mark.parametrize(
    ("job_deadline", "follower_deadline", "follow_seconds"),
    [
        ("", "", ""),  # no limits anywhere
        ("3600", "", ""),  # a follower without a limit outlasts any job
        ("", "", "0"),  # FOLLOW_SECONDS 0: no limit
        ("3600", "", "0"),
        ("3600", "", "3660"),  # the library's default: the deadline and a minute
        ("3600", "", "3600"),
        ("3600", "4000", "3660"),
        ("7200", "", "{{inputs.parameters.follow}}"),  # known only at run time
        ("{{inputs.parameters.deadline}}", "", "3660"),
    ],
)
def test_a_follower_that_outlasts_its_job_or_cannot_be_judged_is_fine(
    job_deadline: str, follower_deadline: str, follow_seconds: str
) -> None:
    found = lint(followed(job_deadline, follower_deadline, follow_seconds))
    assert [f for f in found if "follower" in f.message] == []


def test_a_follower_of_another_job_is_not_compared() -> None:
    other = followed(job_deadline="7200", follow_seconds="60").replace("/job=train", "/job=eval")
    assert [f for f in errors(other) if "follower" in f.message] == []


# ---- size ------------------------------------------------------------------------------------------------------------


def big(size: int, kind: str = "Workflow") -> dict[str, Any]:
    """A ``kind`` of ``size`` bytes as stored, most of them data pasted into its script's source."""

    def document(source: str) -> dict[str, Any]:
        script = {"image": "python:3.12", "command": ["python"], "source": source}
        spec: dict[str, Any] = {"entrypoint": "main", "templates": [{"name": "main", "script": script}]}
        if kind == "CronWorkflow":
            spec = {"schedules": ["0 * * * *"], "workflowSpec": spec}
        return {"apiVersion": "argoproj.io/v1alpha1", "kind": kind, "metadata": {"name": "big"}, "spec": spec}

    rows = ";".join(f"ROW_{i:07d}={i * 7 % 1000}" for i in range(size // 12 + 1))
    doc = document(rows[: size - stored_size(document(""))])
    assert stored_size(doc) == size
    return doc


def test_the_stored_size_is_compact_json_with_go_escapes() -> None:
    doc = {"a": "x < y && z", "b": "é"}
    compact = json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode()
    assert stored_size(doc) == len(compact) + 3 * 5  # <, & and & are six bytes each in Go's JSON


@pytest.mark.parametrize("kind", ["Workflow", "WorkflowTemplate", "CronWorkflow"])
def test_a_large_workflow_is_a_warning_and_one_etcd_refuses_an_error(kind: str) -> None:
    def text(size: int) -> str:
        return yaml.safe_dump(big(size, kind))

    assert lint(text(WARN_BYTES - 1)) == []
    [warned] = lint(text(WARN_BYTES))
    assert (warned.severity, warned.path, warned.line) == ("warning", "[0]", 1)
    assert "KiB as JSON" in warned.message
    assert [f.severity for f in lint(text(MAX_BYTES))] == ["warning"]
    [refused] = lint(text(MAX_BYTES + 1))
    assert (refused.severity, refused.path) == ("error", "[0]")
    assert "MiB as JSON: the API server refuses" in refused.message


# ---- calls through templateRef ---------------------------------------------------------------------------------------

LIBRARY = """\
apiVersion: argoproj.io/v1alpha1
kind: {kind}
metadata:
  name: lib
  namespace: ml
spec:
  templates:
  - name: train
    inputs:
      parameters:
      - name: data-dir
    container:
      image: python:3.12
      command: [python, train.py, "{{{{inputs.parameters.data-dir}}}}"]
"""
CALLER = """\
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: run-
  namespace: {namespace}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - name: train
        templateRef:
          name: lib
          template: {template}
{scope}
        arguments:
          parameters:
          - name: {argument}
            value: /data
"""


def stream(
    kind: str = "WorkflowTemplate",
    namespace: str = "ml",
    template: str = "train",
    argument: str = "data-dir",
    scope: str = "",
) -> str:
    """A WorkflowTemplate (or ClusterWorkflowTemplate) ``lib`` and, in the same stream, a Workflow that calls it."""
    caller = CALLER.format(namespace=namespace, template=template, argument=argument, scope=scope)
    return LIBRARY.format(kind=kind) + "---\n" + caller


def test_a_call_through_template_ref_is_checked_against_a_template_of_the_same_stream() -> None:
    assert lint(stream()) == []
    [found] = errors(stream(argument="data_dir"))
    assert found.path == "[1].spec.templates[0].steps[0][0].arguments.parameters[0].name"
    assert "'data_dir' is not an input of template 'train' of WorkflowTemplate 'lib'" in found.message
    assert "did you mean 'data-dir'?" in found.message
    [missing] = errors(stream(template="trian"))
    assert missing.path == "[1].spec.templates[0].steps[0][0].templateRef.template"
    assert "there is no 'trian' (did you mean 'train'?)" in missing.message


def test_a_cluster_workflow_template_is_called_with_cluster_scope() -> None:
    scoped = "          clusterScope: true"
    assert lint(stream("ClusterWorkflowTemplate", scope=scoped)) == []
    [found] = errors(stream("ClusterWorkflowTemplate", argument="datadir", scope=scoped))
    assert "of ClusterWorkflowTemplate 'lib' (did you mean 'data-dir'?)" in found.message
    # Without clusterScope Argo looks for a WorkflowTemplate, which lint has not seen.
    assert lint(stream("ClusterWorkflowTemplate", argument="datadir")) == []


def test_templates_lint_has_not_seen_are_not_judged() -> None:
    # In another namespace: the WorkflowTemplate Argo finds is another one.
    assert lint(stream(namespace="other", argument="data_dir")) == []
    # Not in the stream at all.
    alone = CALLER.format(namespace="ml", template="trian", argument="data_dir", scope="")
    assert lint(alone) == []
