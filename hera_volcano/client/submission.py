"""What :meth:`Client.submit` creates: exactly one Workflow (or with :meth:`Client.create_cron`, one CronWorkflow),
from a Hera object, a dict or YAML text, and the Workflow ``argo submit --from workflowtemplate/NAME -p KEY=VALUE``
creates for a template or ``argo submit --from cronwf/NAME`` for a CronWorkflow."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any

from hera_volcano.kube import names
from hera_volcano.kube.emit import plain
from hera_volcano.kube.loading import describe_error, load_all
from hera_volcano.pods import program
from hera_volcano.shared.errors import ValidationError
from hera_volcano.shared.findings import as_list, as_map
from hera_volcano.shared.placeholders import carried

API_VERSION = "argoproj.io/v1alpha1"
#: The label Argo gives a Workflow submitted from a WorkflowTemplate (``common.LabelKeyWorkflowTemplate``).
WORKFLOW_TEMPLATE_LABEL = "workflows.argoproj.io/workflow-template"
#: The label Argo gives a Workflow a CronWorkflow started (``common.LabelKeyCronWorkflow``).
CRON_WORKFLOW_LABEL = "workflows.argoproj.io/cron-workflow"
#: When the run was due; Argo's ``{{workflow.scheduledTime}}`` reads it (``common.AnnotationKeyCronWfScheduledTime``).
SCHEDULED_TIME_ANNOTATION = "workflows.argoproj.io/scheduled-time"
#: A CronWorkflow's label Argo copies to its Workflows: the controller instance that runs them.
INSTANCE_ID_LABEL = "workflows.argoproj.io/controller-instanceid"


def workflow_body(workflow: object, kinds: tuple[str, ...] = ("Workflow",)) -> dict[str, Any]:
    """The Workflow (or another of ``kinds``) to create, as plain JSON data (a copy: the caller's object is not
    changed)."""
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
    if kind not in kinds:
        hint = {
            "WorkflowTemplate": " (submit_from runs a WorkflowTemplate)",
            "CronWorkflow": " (create_cron creates a CronWorkflow)",
        }.get(str(kind), "")
        raise ValidationError("kind", f"must be {' or '.join(kinds)}, not {kind!r}{hint}")
    if data.get("apiVersion") != API_VERSION:
        raise ValidationError("apiVersion", f"must be {API_VERSION}, not {data.get('apiVersion')!r}")
    try:
        body: dict[str, Any] = json.loads(json.dumps(data, default=_unserializable))
    except (TypeError, ValueError) as e:  # a key JSON has no form for (``!!binary``): one line, no traceback
        raise ValidationError("workflow", f"is not plain data (JSON): {e}") from None
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
    arguments = [{"name": key, "value": text} for key, text in parameter_texts(parameters).items()]
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


def from_cron(cron: Mapping[str, Any], parameters: Mapping[str, object], now: datetime) -> dict[str, Any]:
    """The Workflow ``argo submit --from cronwf/NAME -p KEY=VALUE`` creates for CronWorkflow ``cron`` (as read from
    the cluster): its ``spec.workflowSpec``, named ``NAME-xxxxx``, labelled with the CronWorkflow's name (and its
    controller instance), with its ``workflowMetadata``'s labels, annotations and finalizers, due ``now`` (the
    ``scheduled-time`` annotation behind ``{{workflow.scheduledTime}}``) and owned by the CronWorkflow, so deleting
    it deletes the run as it deletes the runs of its schedule. A parameter ``workflowSpec`` does not declare is a
    ValidationError (Argo would run without it)."""
    meta = as_map(cron.get("metadata"))
    name = str(meta.get("name") or "")
    names.check("cronworkflow", name, names.dns1123_subdomain)
    check_parameters(cron, parameter_texts(parameters))  # named by the CronWorkflow, not by the run's NAME- prefix
    spec = as_map(cron.get("spec"))
    workflow_spec = json.loads(json.dumps(as_map(spec.get("workflowSpec"))))
    labels = {CRON_WORKFLOW_LABEL: name}
    if INSTANCE_ID_LABEL in as_map(meta.get("labels")):
        labels[INSTANCE_ID_LABEL] = str(meta["labels"][INSTANCE_ID_LABEL])
    extra = as_map(spec.get("workflowMetadata"))
    labels.update({str(k): str(v) for k, v in as_map(extra.get("labels")).items()})
    annotations = {SCHEDULED_TIME_ANNOTATION: now.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")}
    annotations.update({str(k): str(v) for k, v in as_map(extra.get("annotations")).items()})
    metadata: dict[str, Any] = {"generateName": f"{name}-", "labels": labels, "annotations": annotations}
    if meta.get("namespace"):
        metadata["namespace"] = meta["namespace"]
    if extra.get("finalizers"):
        metadata["finalizers"] = list(extra["finalizers"])
    if meta.get("uid"):
        # As Argo's controller reference, less blockOwnerDeletion (which needs the right to update the
        # CronWorkflow's finalizers, a right a submitter does not otherwise need).
        owner = {"apiVersion": cron.get("apiVersion", API_VERSION), "kind": "CronWorkflow", "name": name}
        metadata["ownerReferences"] = [{**owner, "uid": meta["uid"], "controller": True}]
    body = {"apiVersion": API_VERSION, "kind": "Workflow", "metadata": metadata, "spec": workflow_spec}
    return with_parameters(body, parameters) if parameters else body


def parameter_texts(parameters: Mapping[str, object], field: str = "parameters") -> dict[str, str]:
    """Parameter values as the text Argo substitutes: strings, or numbers and booleans as Argo reads them. A value
    Argo cannot carry unchanged (``{{``, NUL: :func:`~hera_volcano.shared.placeholders.refusal`) is refused here,
    before anything is sent (``field``: what a message names, ``parameters`` or a local run's ``arguments``)."""
    if not isinstance(parameters, Mapping):
        raise ValidationError(field, "must be a mapping of parameter names to values")
    texts = {}
    for key, value in parameters.items():
        if not isinstance(key, str) or not key:
            raise ValidationError(field, f"names must be non-empty strings, not {key!r}")
        if isinstance(value, bool):
            texts[key] = "true" if value else "false"
        elif isinstance(value, str | int | float):
            texts[key] = carried(f"{field}[{key}]", str(value))
        else:
            raise ValidationError(f"{field}[{key}]", f"must be a string or a number, not {type(value).__name__}")
    return texts


def with_parameters(body: dict[str, Any], parameters: Mapping[str, object]) -> dict[str, Any]:
    """``body`` (a Workflow or CronWorkflow from :func:`workflow_body`) with the values of some of its declared
    arguments replaced, as ``argo submit FILE -p KEY=VALUE`` does; a parameter it does not declare is a
    ValidationError."""
    texts = parameter_texts(parameters)
    check_parameters(body, texts)
    for parameter in as_list(_arguments(body).get("parameters")):
        if isinstance(parameter, dict) and isinstance(parameter.get("name"), str) and parameter["name"] in texts:
            parameter["value"] = texts[parameter["name"]]
            parameter.pop("valueFrom", None)
    return body


def _arguments(body: Mapping[str, Any]) -> Mapping[str, Any]:
    """The workflow arguments of a Workflow or WorkflowTemplate (``spec.arguments``) or a CronWorkflow (under
    ``spec.workflowSpec``)."""
    spec = as_map(body.get("spec"))
    if body.get("kind") == "CronWorkflow":
        spec = as_map(spec.get("workflowSpec"))
    return as_map(spec.get("arguments"))


def template_parameters(template: Mapping[str, Any]) -> set[str]:
    """The parameter names a WorkflowTemplate (or Workflow, or CronWorkflow) declares (``spec.arguments``)."""
    parameters = _arguments(template).get("parameters")
    return {str(p["name"]) for p in as_list(parameters) if isinstance(p, Mapping) and "name" in p}


def check_parameters(template: Mapping[str, Any], parameters: Mapping[str, object]) -> None:
    """A parameter the template does not declare is a typo Argo would not report (the run would go on without it)."""
    declared = template_parameters(template)
    unknown = sorted(set(parameters) - declared)
    if unknown:
        meta = as_map(template.get("metadata"))
        name = meta.get("name") or meta.get("generateName") or "the workflow"
        offered = ", ".join(sorted(declared)) or "none"
        raise ValidationError("parameters", f"{', '.join(unknown)}: not declared by {name} (it declares {offered})")


def follower_programs(spec: Mapping[str, Any]) -> list[str]:
    """The ConfigMaps of the pods' program (the log follower, the MPI master's wait for its workers) that the
    templates of a Workflow's (or WorkflowTemplate's) ``spec`` mount, or the Volcano Jobs their resource steps create
    name: they must be in its namespace before it runs."""
    found = set()
    for template in as_list(spec.get("templates")):
        template = as_map(template)
        found |= {as_map(as_map(volume).get("configMap")).get("name") for volume in as_list(template.get("volumes"))}
        manifest = as_map(template.get("resource")).get("manifest")
        if isinstance(manifest, str):
            found |= set(program.CONFIG_MAP_NAME.findall(manifest))
    return sorted(str(name) for name in found if program.is_config_map_name(name))
