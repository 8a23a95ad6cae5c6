"""The placeholder sample convention shared with the Go conformance harness and the cluster tests."""

from __future__ import annotations

import yaml

from hera_volcano.argo.samples import resolved_manifests, workflow_values
from hera_volcano.kube import values

WORKFLOW = yaml.safe_load("""
metadata: {generateName: demo-, namespace: team}
spec:
  arguments:
    parameters:
    - {name: image, value: "mpi:1"}
    - {name: workers, value: 3}
    - {name: unset}
  templates:
  - name: main
    steps:
    - - name: first
        template: job
        arguments:
          parameters:
          - {name: replicas, value: "{{workflow.parameters.workers}}"}
          - {name: image, value: "{{inputs.parameters.other}}"}
    - - name: second
        template: job
        arguments:
          parameters:
          - {name: replicas, value: "9"}
  - name: dag
    dag:
      tasks:
      - {name: t, template: other}
  - name: job
    inputs:
      parameters:
      - {name: replicas}
      - {name: image}
      - {name: tag, default: latest}
      - {name: fixed, value: "7", default: "8"}
      - {name: bare}
    resource:
      action: create
      manifest: |
        name: "{{workflow.name}}-{{ workflow.uid }}-{{workflow.namespace}}"
        replicas: {{inputs.parameters.replicas}}
        image: {{inputs.parameters.image}}:{{inputs.parameters.tag}}
        fixed: {{inputs.parameters.fixed}}
        bare: {{inputs.parameters.bare}}
        undeclared: {{inputs.parameters.nope}}
        wf: {{workflow.parameters.image}} {{workflow.parameters.unset}} {{workflow.parameters.nope}}
        other: {{steps.first.outputs.result}} {{=sprig.trim(inputs.parameters.image)}} {{pod.name}}
  - name: other
    resource: {action: get, manifest: "name: {{inputs.parameters.x}}"}
""")


def test_substitution_convention() -> None:
    (_, _, job), (_, name, other) = resolved_manifests(WORKFLOW)
    assert yaml.safe_load(job) == {
        "name": "sample-workflow-00000000-0000-0000-0000-000000000000-team",
        "replicas": 3,  # first call site's argument, resolved once more
        "image": "sample:latest",  # argument holding another placeholder; input default
        "fixed": 7,  # input value before default
        "bare": "sample",
        "undeclared": "sample",
        "wf": "mpi:1 sample sample",
        "other": "sample sample sample",
    }
    assert name == "other" and other == "name: sample"
    assert workflow_values({"metadata": {}})["workflow.namespace"] == "argo"


def test_value_expressions_become_the_scalar_argo_writes() -> None:
    """The manifest's expressions (kube.values) read the workflow's arguments and the first call's inputs."""
    text_tag = values.expression(values.Value("workflow", "job-name", "text", 1))
    number = values.expression(values.Value("inputs", "n", "integer", 1))
    joined = values.embedded("job-{{inputs.parameters.lr}}-$(X)", "f", dollars=2, executor=True)
    wf = {
        "spec": {
            "arguments": {"parameters": [{"name": "job-name", "value": 'a"b{{x}}'}]},
            "templates": [
                {
                    "name": "t",
                    "inputs": {"parameters": [{"name": "lr", "default": "$1"}, {"name": "n", "default": "4"}]},
                    "resource": {
                        "manifest": f"name: {{{{{text_tag}}}}}\nn: {{{{{number}}}}}\nj: {joined}\n"
                        "other: {{=sprig.upper('x')}}\n"
                    },
                }
            ],
        }
    }
    ((_, _, text),) = resolved_manifests(wf)
    # The argument's own tag is resolved once more (as Argo's start does); the literal $ is the executor's escape.
    assert yaml.safe_load(text) == {"name": 'a"bsample', "n": 4, "j": "job-$1-$$(X)", "other": "sample"}


def test_workflow_parameter_values_are_resolved_once_more() -> None:
    wf = {"spec": {"arguments": {"parameters": [{"name": "queue", "value": "q-{{workflow.name}}"}]}}}
    assert workflow_values(wf)["workflow.parameters.queue"] == "q-sample-workflow"
