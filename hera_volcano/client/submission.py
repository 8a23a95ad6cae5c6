"""What :meth:`Client.submit` creates: exactly one Workflow, from a Hera object, a dict or YAML text, and the Workflow
``argo submit --from workflowtemplate/NAME -p KEY=VALUE`` creates for a template."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from hera_volcano.kube import names
from hera_volcano.kube.emit import plain
from hera_volcano.kube.loading import describe_error, load_all
from hera_volcano.shared.errors import ValidationError
from hera_volcano.shared.findings import as_map

API_VERSION = "argoproj.io/v1alpha1"
#: The label Argo gives a Workflow submitted from a WorkflowTemplate (``common.LabelKeyWorkflowTemplate``).
WORKFLOW_TEMPLATE_LABEL = "workflows.argoproj.io/workflow-template"


def workflow_body(workflow: object) -> dict[str, Any]:
    """The Workflow to create, as plain JSON data (a copy: the caller's object is not changed)."""
    if isinstance(workflow, str | bytes):
        text = workflow.decode("utf-8", "replace") if isinstance(workflow, bytes) else workflow
        try:
            docs = [d for d in load_all(text) if d is not None]
        except Exception as e:  # yaml.YAMLError and friends: one line, no traceback
            raise ValidationError("workflow", f"is not YAML: {describe_error(e)}") from None
        if len(docs) != 1:
            raise ValidationError("workflow", f"must hold exactly one document, not {len(docs)}")
        data: Any = docs[0]
        if not isinstance(data, Mapping):
            raise ValidationError("workflow", "must be a Workflow object")
    else:
        data = plain(workflow, "workflow")
    kind = data.get("kind")
    if kind != "Workflow":
        hint = " (submit_from runs a WorkflowTemplate)" if kind == "WorkflowTemplate" else ""
        raise ValidationError("kind", f"must be Workflow, not {kind!r}{hint}")
    if data.get("apiVersion") != API_VERSION:
        raise ValidationError("apiVersion", f"must be {API_VERSION}, not {data.get('apiVersion')!r}")
    body: dict[str, Any] = json.loads(json.dumps(data, default=_unserializable))
    meta = as_map(body.get("metadata"))
    if not meta.get("name") and not meta.get("generateName"):
        raise ValidationError("metadata", "needs a name or a generateName")
    if meta.get("name"):
        names.check("metadata.name", meta["name"], names.dns1123_subdomain)
    if meta.get("namespace") is not None:
        names.check("metadata.namespace", meta["namespace"], names.dns1123_label)
    return body


def _unserializable(value: object) -> Any:
    raise ValidationError("workflow", f"holds a {type(value).__name__}, which is not plain data (JSON)")


def in_namespace(body: Mapping[str, Any], namespace: str, explicit: bool) -> str:
    """Where the Workflow goes: its own namespace, else the client's; both named and different is an error (the API
    server would refuse the request)."""
    own = as_map(body.get("metadata")).get("namespace")
    if own and explicit and own != namespace:
        raise ValidationError("metadata.namespace", f"is {own!r}, but the client submits to namespace {namespace!r}")
    return str(own or namespace)


def from_template(template: str, parameters: Mapping[str, object], namespace: str) -> dict[str, Any]:
    """A Workflow that runs WorkflowTemplate ``template`` with ``parameters`` (strings, or numbers and booleans,
    which Argo reads as their text), named ``TEMPLATE-xxxxx`` as Argo names it."""
    names.check("template", template, names.dns1123_subdomain)
    arguments = [{"name": key, "value": text} for key, text in _texts(parameters).items()]
    spec: dict[str, Any] = {"workflowTemplateRef": {"name": template}}
    if arguments:
        spec["arguments"] = {"parameters": arguments}
    return {
        "apiVersion": API_VERSION,
        "kind": "Workflow",
        "metadata": {
            "generateName": f"{template}-",
            "namespace": namespace,
            "labels": {WORKFLOW_TEMPLATE_LABEL: template},
        },
        "spec": spec,
    }


def _texts(parameters: Mapping[str, object]) -> dict[str, str]:
    """Parameter values as the text Argo substitutes: strings, or numbers and booleans as Argo reads them."""
    if not isinstance(parameters, Mapping):
        raise ValidationError("parameters", "must be a mapping of parameter names to values")
    texts = {}
    for key, value in parameters.items():
        if not isinstance(key, str) or not key:
            raise ValidationError("parameters", f"names must be non-empty strings, not {key!r}")
        if isinstance(value, bool):
            texts[key] = "true" if value else "false"
        elif isinstance(value, str | int | float):
            texts[key] = str(value)
        else:
            raise ValidationError(f"parameters[{key}]", f"must be a string or a number, not {type(value).__name__}")
    return texts


def with_parameters(body: dict[str, Any], parameters: Mapping[str, object]) -> dict[str, Any]:
    """``body`` (a Workflow from :func:`workflow_body`) with the values of some of its declared arguments replaced,
    as ``argo submit FILE -p KEY=VALUE`` does; a parameter it does not declare is a ValidationError."""
    texts = _texts(parameters)
    check_parameters(body, texts)
    for parameter in as_map(as_map(body.get("spec")).get("arguments")).get("parameters") or []:
        if isinstance(parameter, dict) and parameter.get("name") in texts:
            parameter["value"] = texts[parameter["name"]]
            parameter.pop("valueFrom", None)
    return body


def template_parameters(template: Mapping[str, Any]) -> set[str]:
    """The parameter names a WorkflowTemplate declares (``spec.arguments.parameters``)."""
    parameters = as_map(as_map(template.get("spec")).get("arguments")).get("parameters")
    return {str(p["name"]) for p in parameters or [] if isinstance(p, Mapping) and "name" in p}


def check_parameters(template: Mapping[str, Any], parameters: Mapping[str, object]) -> None:
    """A parameter the template does not declare is a typo Argo would not report (the run would go on without it)."""
    declared = template_parameters(template)
    unknown = sorted(set(parameters) - declared)
    if unknown:
        meta = as_map(template.get("metadata"))
        name = meta.get("name") or meta.get("generateName") or "the workflow"
        offered = ", ".join(sorted(declared)) or "none"
        raise ValidationError("parameters", f"{', '.join(unknown)}: not declared by {name} (it declares {offered})")
