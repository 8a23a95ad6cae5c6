"""The placeholder sample convention shared with the Go conformance harness and the cluster tests."""

from __future__ import annotations

import yaml

from hera_volcano.argo.samples import resolved_manifests, workflow_values

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


def test_json_parameter_expression_becomes_the_json_string_of_the_argument() -> None:
    wf = {
        "spec": {
            "arguments": {"parameters": [{"name": "job-name", "value": 'a"b'}]},
            "templates": [
                {"name": "t", "resource": {"manifest": "name: {{=toJson(workflow.parameters['job-name'])}}"}}
            ],
        }
    }
    ((_, _, text),) = resolved_manifests(wf)
    assert yaml.safe_load(text) == {"name": 'a"b'}


def test_workflow_parameter_values_are_resolved_once_more() -> None:
    wf = {"spec": {"arguments": {"parameters": [{"name": "queue", "value": "q-{{workflow.name}}"}]}}}
    values = workflow_values(wf)
    assert values["workflow.parameters.queue"] == "q-sample-workflow"
    assert values["=toJson(workflow.parameters['queue'])"] == '"q-sample-workflow"'


def test_escaping_expressions_become_the_json_string_with_doubled_dollars() -> None:
    wf = {
        "spec": {
            "arguments": {"parameters": [{"name": "w", "value": 'a"$(b)'}]},
            "templates": [
                {
                    "name": "t",
                    "inputs": {"parameters": [{"name": "lr", "default": "$1"}]},
                    "resource": {
                        "manifest": "w: {{=toJson(replace(workflow.parameters['w'], '$', '$$'))}}\n"
                        "lr: {{=toJson(replace(inputs.parameters['lr'], '$', '$$'))}}\n"
                    },
                }
            ],
        }
    }
    ((_, _, text),) = resolved_manifests(wf)
    assert yaml.safe_load(text) == {"w": 'a"$$(b)', "lr": "$$1"}
