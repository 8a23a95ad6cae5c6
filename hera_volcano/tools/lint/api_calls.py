"""Pods that call the API: ``hera-volcano rbac`` grants a pod the calls it declares (its template's
``hera-volcano/calls`` annotation, or a container whose exec form is ``kubectl``), never what the words of a shell
script look like. A script that runs ``kubectl`` in a pod template that declares nothing would be refused by the
API server: a warning with the declaration to add. A declaration that does not read is an error, as ``rbac`` refuses
it. The reading is :mod:`hera_volcano.tools.rbac.pods`'s, the one ``rbac_for`` uses.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from hera_volcano.kube.loading import Budget
from hera_volcano.shared.errors import ValidationError
from hera_volcano.shared.findings import Finding, as_map, error, warning
from hera_volcano.tools.lint.context import MANIFEST_SEPARATOR
from hera_volcano.tools.rbac.manifests import is_volcano_job, job_pod_templates, manifest_objects
from hera_volcano.tools.rbac.pods import CALLS_ANNOTATION, parse_calls, undeclared_scripts
from hera_volcano.tools.rbac.templates import pod_containers, task_containers


def check_template_calls(template: Mapping[str, object], path: str, budget: Budget | None = None) -> Iterator[Finding]:
    """An Argo template's pod, and the pods of the Volcano Job its resource step creates (its manifest read within
    the file's ``budget``)."""
    yield from _pod(template, pod_containers(template), path, "on the template")
    resource = as_map(template.get("resource"))
    if not isinstance(resource.get("manifest"), str):
        return
    try:
        objects = manifest_objects(resource, f"{path}.resource.manifest", budget)
    except ValidationError:
        return  # the resource's own check reports it
    for obj in objects:
        if is_volcano_job(obj):
            yield from check_job_calls(obj, f"{path}.resource.manifest{MANIFEST_SEPARATOR}")


def check_job_calls(job: Mapping[str, object], prefix: str = "") -> Iterator[Finding]:
    """The pod template of each task of a Volcano Job."""
    for t, (_, template) in enumerate(job_pod_templates(job)):
        at = f"{prefix}spec.tasks[{t}].template"
        yield from _pod(template, task_containers(template), at, f"on the task's pod template ({at}.metadata)")


def _pod(
    template: Mapping[str, object], containers: list[tuple[str, Mapping[str, object]]], path: str, where: str
) -> Iterator[Finding]:
    annotations = as_map(as_map(template.get("metadata")).get("annotations"))
    field = f"{path}.metadata.annotations[{CALLS_ANNOTATION}]"
    if CALLS_ANNOTATION in annotations:
        try:
            parse_calls(annotations[CALLS_ANNOTATION], field)
        except ValidationError as e:
            yield error(e.field, f"{e.rule}: hera-volcano rbac refuses it")
    for at, declaration in undeclared_scripts(template, containers):
        yield warning(
            f"{path}.{at}",
            "runs kubectl from a script, and hera-volcano rbac grants nothing for the words of a script (an echo reads"
            f" the same): declare its calls {where}, metadata.annotations {CALLS_ANNOTATION}: {declaration!r} (what"
            " its kubectl words read as: check it; '' if it calls none), or make kubectl the container's command"
            " (command: [kubectl, ...])",
        )
