"""What a resource step acts on: the objects of its manifest (or the resource its flags name), their resource names,
namespaces, and the accounts a Volcano Job's pods run as. What cannot be read is an error, never a guess."""

from __future__ import annotations

import re
from collections.abc import Mapping

from hera_volcano.kube import names
from hera_volcano.kube.loading import Budget, describe_error, load_all
from hera_volcano.shared.errors import ValidationError
from hera_volcano.shared.findings import as_list, as_map
from hera_volcano.shared.placeholders import substitute_text
from hera_volcano.tools.rbac.kubectl import qualified_resource
from hera_volcano.tools.rbac.need import Call

#: Verbs an action needs on the manifest's resource (``get`` for polling and outputs comes on top).
ACTION_VERBS: Mapping[str, tuple[str, ...]] = {
    "create": ("create",),
    "apply": ("create", "patch"),
    "patch": ("patch",),
    "replace": ("update",),
    "delete": ("delete", "list", "watch"),
    "get": (),
}
#: Plurals of kinds whose resource name is not the regular English plural of the lower-cased kind.
PLURALS: Mapping[str, str] = {"Endpoints": "endpoints"}
KIND = re.compile(r"[A-Z][A-Za-z0-9]*")
BY_HAND = "so the resource it acts on is unknown here: leave this workflow out and write its rule by hand"
#: What a manifest's placeholders read as here: ``{{workflow.namespace}}`` as the workflow's namespace, any other
#: as a value known only at run time. Neither is a Kubernetes name, so neither is granted anything by mistake.
WORKFLOW_NAMESPACE = "WORKFLOW_NAMESPACE"
RUN_TIME = "RUN_TIME_VALUE"
_SELECTING = ("--selector", "-l", "--field-selector", "--all")


def plural(kind: str) -> str:
    """The resource name of ``kind``: the table above, else the lower-cased kind in regular English plural.

    (``-s/-x/-z/-ch/-sh`` take ``-es``, consonant + ``y`` becomes ``-ies``, anything else takes ``-s``.) A CRD may
    declare another plural; write the Role by hand for such a kind.
    """
    if kind in PLURALS:
        return PLURALS[kind]
    low = kind.lower()
    if low.endswith(("s", "x", "z", "ch", "sh")):
        return low + "es"
    if low.endswith("y") and len(low) > 1 and low[-2] not in "aeiou":
        return low[:-1] + "ies"
    return low + "s"


def flag_needs(resource: Mapping[str, object], field: str) -> Call | None:
    """(group, resource, verbs) for a ``get`` or ``delete`` step that names its objects in flags, as in
    ``flags: [jobs.batch.volcano.sh, --selector, KEY=VALUE, --wait=false]`` (kubectl lists what a selector selects,
    gets what it names, and watches a deletion it waits for). None when the step has a manifest."""
    flags = resource.get("flags")
    if resource.get("manifest") is not None or resource.get("manifestFrom") is not None or flags is None:
        return None
    action = resource.get("action")
    if action not in ("get", "delete") or not isinstance(flags, list) or not all(isinstance(f, str) for f in flags):
        raise ValidationError(field, f"is absent (the object is named in flags), {BY_HAND}")
    positional = [
        f for i, f in enumerate(flags) if not f.startswith("-") and (i == 0 or flags[i - 1] not in _SELECTING)
    ]
    if not positional:
        raise ValidationError(f"{field[: -len('manifest')]}flags", f"name no resource, {BY_HAND}")
    kind = qualified_resource(positional[0].split("/")[0])
    if kind is None:
        raise ValidationError(
            f"{field[: -len('manifest')]}flags",
            f"name {positional[0]!r}, not RESOURCE.GROUP (say, jobs.batch.volcano.sh), {BY_HAND}",
        )
    selects = any(f.split("=")[0] in _SELECTING for f in flags)
    verbs: list[str] = ["list"] if selects else ["get"]
    if action == "delete":
        verbs.append("delete")
        if "--wait=false" not in flags:
            verbs += ["get", "watch"]
    return kind[0], kind[1], tuple(verbs)


def manifest_objects(
    resource: Mapping[str, object], field: str, budget: Budget | None = None
) -> list[Mapping[str, object]]:
    """The objects a resource step acts on; anything we cannot read is an error, never a Role that grants too little.
    ``budget``: what the file it came from may still expand to (lint's), so a manifest aliased many times costs
    once."""
    manifest = resource.get("manifest")
    if manifest is None and resource.get("manifestFrom") is not None:
        raise ValidationError(f"{field}From", f"the manifest comes from an artifact, {BY_HAND}")
    if manifest is None:
        raise ValidationError(field, f"is absent (the object is named in flags), {BY_HAND}")
    if not isinstance(manifest, str):
        raise ValidationError(field, "must be the object's YAML, as a string")
    try:
        text = substitute_text(manifest, {"workflow.namespace": WORKFLOW_NAMESPACE}, RUN_TIME)
        docs = [d for d in load_all(text, budget=budget) if d is not None]
    except Exception as e:  # yaml.YAMLError and friends: report, don't trace
        raise ValidationError(field, f"manifest is not YAML: {describe_error(e)}") from None
    if not all(isinstance(d, Mapping) for d in docs):
        raise ValidationError(field, f"is not an object (a JSON patch names its object in flags), {BY_HAND}")
    return docs


def manifest_namespace(obj: Mapping[str, object], field: str) -> str | None:
    """The namespace a manifest names (its object goes there, and so must the rule), or None for the workflow's."""
    namespace = as_map(obj.get("metadata")).get("namespace")
    if namespace is None or namespace in ("", WORKFLOW_NAMESPACE):
        return None
    if isinstance(namespace, str) and RUN_TIME in namespace:
        raise ValidationError(f"{field}.metadata.namespace", f"is only known at run time, {BY_HAND}")
    names.check(f"{field}.metadata.namespace", namespace, names.dns1123_label)
    return str(namespace)


def is_volcano_job(obj: Mapping[str, object]) -> bool:
    return str(obj.get("apiVersion", "")).startswith("batch.volcano.sh/") and obj.get("kind") == "Job"


def job_pod_templates(obj: Mapping[str, object]) -> list[tuple[str, Mapping[str, object]]]:
    """(task name, pod template: metadata and spec) of each task of a Volcano Job."""
    return [
        (str(as_map(task).get("name", "?")), as_map(as_map(task).get("template")))
        for task in as_list(as_map(obj.get("spec")).get("tasks"))
    ]


def job_accounts(obj: Mapping[str, object]) -> tuple[str, ...]:
    """The service accounts a Volcano Job's pod templates name (one given at run time, a placeholder, is not
    known here: the admission policy refuses it unless it is allowed by name)."""
    found = set()
    for _, template in job_pod_templates(obj):
        spec = as_map(template.get("spec"))
        for key in ("serviceAccountName", "serviceAccount"):
            value = spec.get(key)
            if isinstance(value, str) and names.dns1123_subdomain(value) is None:
                found.add(value)
    return tuple(sorted(found))


def service_account(value: object, field: str) -> str | None:
    """An account a workflow, template or pod names, checked; None when it names none."""
    if value is None or value == "":
        return None
    if isinstance(value, str) and RUN_TIME in value:
        raise ValidationError(field, "is only known at run time, so the account to grant rights to is unknown here")
    names.check(field, value, names.dns1123_subdomain)
    return str(value)
