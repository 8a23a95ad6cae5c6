"""Argo's rules for a Workflow, WorkflowTemplate, ClusterWorkflowTemplate or CronWorkflow: its fields, names,
entrypoint, templates and their types, limits and images, parameters; DAGs, steps and resource steps have modules of
their own."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Final

from hera_volcano.argo import samples
from hera_volcano.argo.limits import MAX_TEMPLATES, WORKFLOW_KINDS
from hera_volcano.argo.parameters import Values, check_parameters
from hera_volcano.kube import names
from hera_volcano.kube.images import image_problem
from hera_volcano.kube.metadata import check_namespace, labels_and_annotations
from hera_volcano.kube.quantities import is_go_duration
from hera_volcano.shared.checks import INT32_MAX, INT32_MIN
from hera_volcano.shared.findings import Finding, as_list, as_map, error
from hera_volcano.tools.lint.api_calls import check_template_calls
from hera_volcano.tools.lint.arguments import check_entry_inputs
from hera_volcano.tools.lint.calls import check_steps
from hera_volcano.tools.lint.commands import check_template_commands
from hera_volcano.tools.lint.context import Source, Workflow, templates_by_name
from hera_volcano.tools.lint.dags import check_dag
from hera_volcano.tools.lint.fields import check_fields
from hera_volcano.tools.lint.followers import check_followers
from hera_volcano.tools.lint.job_steps import check_job_steps
from hera_volcano.tools.lint.outputs import check_node_references, check_output_references
from hera_volcano.tools.lint.raw_tags import check_raw_tags
from hera_volcano.tools.lint.references import check_input_references, check_workflow_parameters
from hera_volcano.tools.lint.resources import check_resource
from hera_volcano.tools.lint.sizes import check_size
from hera_volcano.tools.lint.template_mounts import check_template_mounts, check_workflow_volumes
from hera_volcano.tools.lint.wiring import check_wiring

_TEMPLATE_TYPES: Final = (
    "container",
    "containerSet",
    "script",
    "resource",
    "steps",
    "dag",
    "suspend",
    "data",
    "http",
    "plugin",
)
_NON_LEAF: Final = frozenset({"steps", "dag"})
#: ``timeout`` is refused wherever Argo's ``IsLeaf`` is false: also on suspend templates.
_NO_TIMEOUT: Final = frozenset({"steps", "dag", "suspend"})
_INTEGER: Final = re.compile(r"[+-]?[0-9]+")


def check_workflow(doc: Mapping[str, object], source: Source) -> list[Finding]:
    """Every rule for a workflow object (``doc["kind"]`` is one of Argo's workflow kinds); paths relative to it.

    The specific rules come first; the field check adds every unknown field, and a wrong type only where no
    specific rule said something about that field already."""
    kind = str(doc["kind"])
    found = [*check_size(doc, kind), *_lint_workflow(doc, kind, source)]
    fields = check_fields(doc, kind)
    said = {f.path for f in found if f.severity == "error"}
    found.extend(fields.names)
    found.extend(f for f in fields.types if f.path not in said)
    return found


def _lint_workflow(doc: Mapping[str, object], kind: str, source: Source) -> Iterator[Finding]:
    metadata = doc.get("metadata")
    if not isinstance(metadata, Mapping):
        yield error("metadata", "is required: a mapping with name or generateName")
        metadata = {}
    else:
        yield from _check_metadata(metadata, WORKFLOW_KINDS[kind], kind)
    spec, spec_path = doc.get("spec"), "spec"
    if kind == "CronWorkflow" and isinstance(spec, Mapping):
        spec, spec_path = spec.get("workflowSpec"), "spec.workflowSpec"
    if not isinstance(spec, Mapping):
        yield error(spec_path, "is required: a mapping")
        return
    defaults = as_map(spec.get("templateDefaults"))
    wf = Workflow(
        kind, metadata, spec, spec_path, templates_by_name(spec), defaults, source.stored, source.queues, source.budget
    )
    yield from _check_entrypoint(wf)
    yield from _check_templates(wf)
    yield from check_workflow_volumes(spec, spec_path)
    yield from check_followers(wf)
    yield from check_wiring(wf)
    if spec.get("workflowTemplateRef") is None:
        # With a workflowTemplateRef, Argo merges these arguments with the template's, which lint cannot see.
        arguments = spec.get("arguments")
        values: Values = "submitted" if wf.runnable else "optional"
        yield from check_parameters(arguments, f"{spec_path}.arguments", values=values)
    yield from check_workflow_parameters(wf)


def _check_metadata(metadata: Mapping[str, object], max_length: int, kind: str) -> Iterator[Finding]:
    """Argo limits ``metadata.name`` (it becomes a label value); Kubernetes wants a DNS subdomain or a generateName."""
    name, generate = metadata.get("name"), metadata.get("generateName")
    if name not in (None, ""):
        message = names.dns1123_subdomain(name)
        if message is not None:
            yield error("metadata.name", message)
        elif isinstance(name, str) and len(name) > max_length:
            yield error(
                "metadata.name", f"must be at most {max_length} characters for a {kind} (Argo), not {len(name)}"
            )
    elif generate not in (None, ""):
        # Kubernetes validates the prefix with one trailing '-' masked; it cuts it to fit the random suffix.
        masked = generate[:-1] + "a" if isinstance(generate, str) and generate.endswith("-") else generate
        message = names.dns1123_subdomain(masked)
        if message is not None:
            yield error("metadata.generateName", f"{message} (a trailing '-' is allowed)")
    else:
        yield error("metadata.name", "is required (or metadata.generateName)")
    yield from check_namespace(metadata, "metadata.namespace")
    yield from labels_and_annotations(metadata, "metadata")


def _check_entrypoint(wf: Workflow) -> Iterator[Finding]:
    for key in ("entrypoint", "onExit"):
        value = wf.spec.get(key)
        path = f"{wf.spec_path}.{key}"
        if value in (None, ""):
            if key == "entrypoint" and wf.runnable and wf.spec.get("workflowTemplateRef") is None:
                yield error(path, f"is required in a {wf.kind}: the name of the template to run first")
        elif not isinstance(value, str):
            yield error(path, "must be a string: the name of a template")
        elif "{{" in value or wf.spec.get("workflowTemplateRef") is not None:
            continue  # with a workflowTemplateRef, Argo looks the name up in the referenced template: not seen here
        elif value not in wf.templates:
            yield error(path, f"must name a template of {wf.spec_path}.templates; there is no template {value!r}")
        elif wf.runnable:  # a template's arguments may still come with the Workflow that references it
            called = f"the {key} template {value!r}"
            arguments = wf.spec.get("arguments")
            yield from check_entry_inputs(wf.templates[value], arguments, f"{wf.spec_path}.arguments", called)


def _check_templates(wf: Workflow) -> Iterator[Finding]:
    raw = wf.spec.get("templates")
    path = f"{wf.spec_path}.templates"
    if raw is not None and not isinstance(raw, list):
        yield error(path, "must be a list of templates")
        return
    templates = as_list(raw)
    if templates and wf.spec.get("workflowTemplateRef") is not None:
        yield error(path, "must be left out with workflowTemplateRef: the referenced template supplies them")
    if len(templates) > MAX_TEMPLATES:
        yield error(path, f"has {len(templates)} templates: Argo 4's CRD allows at most {MAX_TEMPLATES}")
    manifests = {
        index: text for index, _, text in samples.resolved_manifests({"metadata": wf.metadata, "spec": wf.spec})
    }
    seen: dict[str, int] = {}
    for i, template in enumerate(templates):
        at = f"{path}[{i}]"
        if not isinstance(template, Mapping):
            yield error(at, "must be a mapping")
            continue
        name = template.get("name")
        message = names.argo_name(name)
        if message is not None:
            yield error(f"{at}.name", message)
        if isinstance(name, str):
            if name in seen:
                yield error(f"{at}.name", f"duplicate template name {name!r}: also {path}[{seen[name]}]")
            else:
                seen[name] = i
        yield from _check_template(template, at, wf, manifests.get(i))
        yield from check_parameters(template.get("inputs"), f"{at}.inputs", values=None)
        yield from check_input_references(template, at)
        if template.get("dag") is not None or template.get("steps") is not None:
            yield from check_node_references(template, at)
            yield from check_output_references(template, at, wf)
    yield from check_job_steps(wf, manifests)


def _check_template(template: Mapping[str, object], path: str, wf: Workflow, manifest: str | None) -> Iterator[Finding]:
    types = [t for t in _TEMPLATE_TYPES if template.get(t) is not None]
    if not types:
        yield error(path, f"must set one template type: {', '.join(_TEMPLATE_TYPES)}")
        return
    if len(types) > 1:
        yield error(path, f"sets {', '.join(types)}: a template has exactly one type")
        return
    kind = types[0]
    yield from _check_limits(template, path, kind)
    limit = as_map(template.get("retryStrategy")).get("limit")
    if isinstance(limit, int) and not isinstance(limit, bool) and not INT32_MIN <= limit <= INT32_MAX:
        yield error(f"{path}.retryStrategy.limit", f"must be a 32-bit integer (at most {INT32_MAX}), got {limit}")
    if kind in ("container", "script"):
        yield from _check_image(template, path, kind, wf)
    elif kind == "steps":
        yield from check_steps(template["steps"], f"{path}.steps", wf)
    elif kind == "dag":
        yield from check_dag(template["dag"], f"{path}.dag", wf)
    elif kind == "resource":
        yield from check_resource(template, path, wf, manifest)
        yield from check_raw_tags(template, path)
    yield from check_template_commands(template, path, wf.budget)
    yield from check_template_mounts(template, path)
    yield from check_template_calls(template, path, wf.budget)


def _check_limits(template: Mapping[str, object], path: str, kind: str) -> Iterator[Finding]:
    """``activeDeadlineSeconds``: an int ≥ 0 or an Argo variable; ``timeout``: a duration. Leaf templates only."""
    for field, refused, check in (
        ("activeDeadlineSeconds", _NON_LEAF, _deadline_problem),
        ("timeout", _NO_TIMEOUT, _timeout_problem),
    ):
        value = template.get(field)
        if value is None:
            continue
        at = f"{path}.{field}"
        problem = (
            f"is only valid on leaf templates (container, script, resource, ...), not on {kind}"
            if kind in refused
            else check(value)
        )
        if problem is not None:
            yield error(at, problem)


def _deadline_problem(value: object) -> str | None:
    rule = "must be a non-negative integer (seconds) or an Argo variable such as {{inputs.parameters.deadline}}"
    if isinstance(value, bool):
        return rule
    if isinstance(value, int):
        if value > INT32_MAX:
            return f"must be at most {INT32_MAX} (a 32-bit integer), got {value}"
        return None if value >= 0 else f"must not be negative, got {value}"
    if isinstance(value, str):
        if _INTEGER.fullmatch(value):
            return None if int(value) >= 0 else f"must not be negative, got {value}"
        if value.startswith("{{") and value.endswith("}}"):
            return None
    return f"{rule}, got {value!r}"


def _timeout_problem(value: object) -> str | None:
    rule = "must be a duration string such as 300s or 1h"
    if isinstance(value, bool) or not isinstance(value, str):
        return f"{rule}, got {value!r}" + (" (a bare integer is refused)" if isinstance(value, int) else "")
    if "{{" in value:
        return None
    if _INTEGER.fullmatch(value.strip()):
        return f"{rule}, got the bare integer {value!r}: Argo refuses a timeout without a unit"
    if not is_go_duration(value):
        return f"{rule}, got {value!r}: Argo parses it when the step runs, and fails the step"
    return None


def _check_image(template: Mapping[str, object], path: str, kind: str, wf: Workflow) -> Iterator[Finding]:
    body = template[kind]
    if not isinstance(body, Mapping):
        yield error(f"{path}.{kind}", "must be a mapping")
        return
    if body.get("image") in (None, "") and as_map(wf.defaults.get(kind)).get("image") in (None, ""):
        yield error(
            f"{path}.{kind}.image",
            f"is required (or set {wf.spec_path}.templateDefaults.{kind}.image): Argo refuses a {kind} without one",
        )
    image = body.get("image")
    problem = image_problem(image) if isinstance(image, str) and image and "{{" not in image else None
    if problem:  # {{...}}: Argo fills it in when the step runs
        yield error(f"{path}.{kind}.image", problem)
