"""Resource templates: the action, the manifest, and the Volcano Job a step creates (Volcano's admission rules, the
owner reference Argo adds, names that collide on a second run, and the conditions that end the step)."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any, Final

import yaml

from hera_volcano.kube.loading import Budget, DuplicateKey, describe_error, load_all
from hera_volcano.shared.findings import Finding, as_list, as_map, error, warning
from hera_volcano.tools.lint.conditions import Conditions, check_job_conditions, parse_conditions
from hera_volcano.tools.lint.context import MANIFEST_SEPARATOR, Workflow
from hera_volcano.tools.lint.jobs import is_volcano_job, misplaced_volcano_job
from hera_volcano.tools.lint.locations import duplicate_findings
from hera_volcano.tools.lint.wiring import start_limited
from hera_volcano.volcano.rules import check_job

RESOURCE_ACTIONS: Final = ("get", "create", "apply", "delete", "replace", "patch")
#: Actions whose manifest need not be a whole object: a patch, or just the name of what to read or delete.
_PARTIAL_ACTIONS: Final = frozenset({"get", "delete", "patch"})
#: Actions that update an existing object: Volcano lets only these fields of a Job change.
_UPDATING_ACTIONS: Final = frozenset({"apply", "replace"})
_UPDATABLE: Final = "minAvailable, tasks[].replicas, tasks[].minAvailable and priorityClassName"
#: A job or task name built from a placeholder, such as ``name: {{workflow.name}}-train``: its length is a guess.
_PLACEHOLDER_NAME: Final = re.compile(r"^[ \t-]*(?:name|generateName):[^\n]*\{\{", re.MULTILINE)
_WHOLE_PLACEHOLDER: Final = re.compile(r"\{\{[^{}]*\}\}")


def check_resource(template: Mapping[str, Any], path: str, wf: Workflow, manifest: str | None) -> Iterator[Finding]:
    """A resource template; ``manifest`` is its manifest with sample values substituted (None: none to parse)."""
    resource = template["resource"]
    at = f"{path}.resource"
    if not isinstance(resource, Mapping):
        yield error(at, "must be a mapping")
        return
    action = resource.get("action")
    if action in (None, ""):
        yield error(f"{at}.action", f"is required: one of {', '.join(RESOURCE_ACTIONS)}")
    elif action not in RESOURCE_ACTIONS:
        hint = ": Argo 4's CRD enforces the list, so it cannot be a parameter" if "{{" in str(action) else ""
        yield error(f"{at}.action", f"must be one of {', '.join(RESOURCE_ACTIONS)}, not {action!r}{hint}")
    has_manifest, has_from = resource.get("manifest") is not None, resource.get("manifestFrom") is not None
    if has_manifest == has_from and action not in ("delete", "get"):  # these may name their object in flags
        yield error(at, "must set exactly one of manifest and manifestFrom")
    if has_manifest and not isinstance(resource["manifest"], str):
        yield error(f"{at}.manifest", "must be a string: the object as YAML text")
    if resource.get("setOwnerReference") is True and has_from and not has_manifest:
        yield warning(f"{at}.setOwnerReference", "has no effect with manifestFrom: Argo only adds it to manifest")
    conditions, findings = parse_conditions(resource, at, template, wf)
    yield from findings
    obj: Mapping[str, Any] | None = None
    raw = resource.get("manifest")
    json_patch = action == "patch" and resource.get("mergeStrategy") == "json"
    whole_placeholder = isinstance(raw, str) and _WHOLE_PLACEHOLDER.fullmatch(raw.strip()) is not None
    if manifest is not None and not json_patch and not whole_placeholder:
        # A JSON patch is a list of operations; a manifest that is one placeholder is only known at run time.
        obj, findings = _manifest_object(manifest, f"{at}.manifest", wf.budget)
        yield from findings
    if obj is not None and is_volcano_job(obj):
        yield from _check_volcano_step(obj, resource, at, wf, conditions)
    elif obj is not None:
        misplaced = misplaced_volcano_job(obj)
        if misplaced is not None:
            yield error(f"{at}.manifest{MANIFEST_SEPARATOR}apiVersion", misplaced)
    conditioned = resource.get("successCondition") or resource.get("failureCondition")
    if conditioned and not _has_deadline(template, wf) and not start_limited(str(template.get("name")), wf):
        yield warning(
            path,
            "a resource step polls its conditions until they hold, with no time limit: set activeDeadlineSeconds"
            " or timeout on this template, or follow its job with a start limit (job_dag's start_limit)",
        )


def _has_deadline(template: Mapping[str, Any], wf: Workflow) -> bool:
    return any(
        source.get(key) is not None
        for source in (template, wf.defaults)
        for key in ("activeDeadlineSeconds", "timeout")
    )


def _manifest_object(text: str, path: str, budget: Budget | None) -> tuple[Mapping[str, Any] | None, list[Finding]]:
    """The one object a manifest holds (parsed after sample substitution, as Argo parses it after its own); a key
    written twice is an error, as kubectl decodes the object strictly."""
    duplicates: list[DuplicateKey] = []
    try:
        docs = [d for d in load_all(text, duplicates, budget) if d is not None]
    except (yaml.YAMLError, ValueError, OverflowError, RecursionError) as e:
        return None, [error(path, f"is not valid YAML once placeholders are substituted: {describe_error(e)}")]
    if len(docs) != 1:
        return None, [error(path, f"must hold exactly one object, not {len(docs)}: Argo creates one per step")]
    if not isinstance(docs[0], Mapping):
        return None, [error(path, "must hold a Kubernetes object (a mapping)")]
    found = duplicate_findings(text, duplicates, lambda _: f"{path}{MANIFEST_SEPARATOR}")
    return docs[0], found


def _check_volcano_step(
    job: Mapping[str, Any], resource: Mapping[str, Any], path: str, wf: Workflow, conditions: Conditions
) -> Iterator[Finding]:
    at = f"{path}.manifest{MANIFEST_SEPARATOR}"
    action = resource.get("action")
    if not isinstance(action, str) or action not in _PARTIAL_ACTIONS:  # a bad action is reported already
        raw_manifest = resource.get("manifest")
        names_known = not (isinstance(raw_manifest, str) and _PLACEHOLDER_NAME.search(raw_manifest))
        for f in check_job(job, names_known=names_known):
            yield Finding(at + f.path, f.severity, f.message)
    metadata = as_map(job.get("metadata"))
    raw = resource.get("manifest")
    raw_text = raw if isinstance(raw, str) else ""
    if resource.get("setOwnerReference") is True:
        yield from _check_owner(metadata, at, wf, raw_text)
    name = metadata.get("name")
    if wf.runnable and action == "create" and isinstance(name, str) and name and _literal_name(raw_text, name):
        yield warning(
            f"{at}metadata.name",
            f"is the fixed name {name!r}: a second run of this Workflow (or a retry) fails with AlreadyExists;"
            " use generateName, or a name built from {{workflow.name}}",
        )
    if isinstance(action, str) and action in _UPDATING_ACTIONS:
        yield _updating_action(action, metadata, f"{path}.action")
    if action != "delete":
        yield from check_job_conditions(job, resource, path, conditions)


def _check_owner(metadata: Mapping[str, Any], at: str, wf: Workflow, raw: str) -> Iterator[Finding]:
    """Argo's owner reference points at the Workflow: same namespace, and the only controller."""
    namespace = metadata.get("namespace")
    if isinstance(namespace, str) and namespace:
        expected = wf.namespace
        if expected is not None and namespace != expected:
            yield error(
                f"{at}metadata.namespace",
                f"must be the Workflow's namespace {expected!r} with setOwnerReference: true, not {namespace!r}:"
                " Kubernetes garbage-collects an object whose owner is in another namespace",
            )
        elif expected is None and "workflow.namespace" not in raw:
            yield warning(
                f"{at}metadata.namespace",
                f"with setOwnerReference: true the job must live in the Workflow's namespace; this only holds when"
                f" the workflow runs in {namespace!r}: use {{{{workflow.namespace}}}} or leave the namespace out",
            )
    for j, ref in enumerate(as_list(metadata.get("ownerReferences"))):
        if isinstance(ref, Mapping) and ref.get("controller") is True:
            yield error(
                f"{at}metadata.ownerReferences[{j}].controller",
                "must not be true with setOwnerReference: true: Argo adds the Workflow as controller, and an object"
                " has at most one",
            )


def _literal_name(raw: str, name: str) -> bool:
    """Whether the unsubstituted manifest spells the job's name out (rather than building it from a placeholder)."""
    pattern = rf"^[ \t]*name:[ \t]*(['\"]?){re.escape(name)}\1[ \t]*(?:#.*)?$"
    return re.search(pattern, raw, re.MULTILINE) is not None


def _updating_action(action: str, metadata: Mapping[str, Any], at: str) -> Finding:
    """``apply`` and ``replace`` update the job when it exists; Volcano refuses most changes to a Job."""
    if metadata.get("name") in (None, "") and metadata.get("generateName") not in (None, ""):
        return error(
            at,
            f"{action} cannot create an object from generateName (kubectl needs a name to {action}): the step fails;"
            " use action: create",
        )
    return warning(
        at,
        f"{action} updates the Volcano Job when it exists (a second run, a retry), and Volcano lets only {_UPDATABLE}"
        " change: it refuses any other change, and an unchanged job is the finished one, whose old status ends the"
        " step at once; use action: create with generateName",
    )
