"""Containers' commands: a shell script (``sh -c``, ``bash -ec``...) that would read a run-time value as code.

The kubelet replaces ``$(NAME)`` in a container's command and arguments by the variable's value before the process
starts, and Argo pastes ``{{inputs.parameters.x}}`` into a template's text: either way a value given at run time
(``-p``, a DAG argument, an earlier step's output) lands inside the script, and the shell runs ``$(touch x)`` or
``; rm -rf /`` in it. ``Program.command`` refuses that when a job is built; this warns of it in hand-written
manifests, with the safe form (:func:`hera_volcano.kube.expansion.safe_shell_form`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Final

from hera_volcano.kube.expansion import safe_shell_form, shell_reads, shell_script
from hera_volcano.kube.loading import Budget, load_all
from hera_volcano.shared.findings import Finding, as_list, as_map, warning
from hera_volcano.tools.lint.context import MANIFEST_SEPARATOR

#: An Argo tag whose value is given at run time: a parameter, an input, a step's output, a loop item, an expression.
_RUNTIME_TAG: Final = re.compile(r"\{\{\s*(?:=|inputs\.|workflow\.parameters\.|tasks\.|steps\.|item\b)")
#: What stands for a tag when a manifest is read before Argo substitutes it.
_MARK: Final = "hera-volcano-run-time-value"
_TAG: Final = re.compile(r"\{\{.*?\}\}", re.DOTALL)
#: Where an Argo template holds containers of its own.
_TEMPLATE_CONTAINERS: Final = (("container",), ("containerSet", "containers"), ("initContainers",), ("sidecars",))


def check_template_commands(
    template: Mapping[str, object], path: str, budget: Budget | None = None
) -> Iterator[Finding]:
    """The containers of an Argo template, and those of the Volcano Job its resource step creates (its manifest
    parsed within ``budget``, the file's)."""
    for keys in _TEMPLATE_CONTAINERS:
        found: object = template
        for key in keys:
            found = as_map(found).get(key)
        at = f"{path}.{'.'.join(keys)}"
        if isinstance(found, Mapping):
            yield from _container(found, at, tag_fed=True)
        for i, item in enumerate(as_list(found)):
            yield from _container(as_map(item), f"{at}[{i}]", tag_fed=True)
    manifest = as_map(template.get("resource")).get("manifest")
    if isinstance(manifest, str) and "{{" in manifest:
        try:
            docs = [d for d in load_all(_TAG.sub(_MARK, manifest), budget=budget) if d is not None]
        except Exception:  # the resource's own check reports it
            return
        if len(docs) == 1 and isinstance(docs[0], Mapping):
            yield from check_job_commands(docs[0], f"{path}.resource.manifest{MANIFEST_SEPARATOR}", _MARK)


def check_job_commands(job: Mapping[str, object], prefix: str = "", fed_by: str = "{{") -> Iterator[Finding]:
    """The containers of a Volcano Job's tasks; a variable is given a run-time value when its value holds
    ``fed_by`` (an Argo tag)."""
    for t, task in enumerate(as_list(as_map(job.get("spec")).get("tasks"))):
        spec = as_map(as_map(as_map(task).get("template")).get("spec"))
        for key in ("initContainers", "containers"):
            for c, container in enumerate(as_list(spec.get(key))):
                at = f"{prefix}spec.tasks[{t}].template.spec.{key}[{c}]"
                yield from _container(as_map(container), at, tag_fed=False, fed_by=fed_by)


def _container(container: Mapping[str, object], path: str, *, tag_fed: bool, fed_by: str = "{{") -> Iterator[Finding]:
    """A shell script among the container's command and arguments that names a variable given a run-time value
    (``$(NAME)``), or (in an Argo template, ``tag_fed``) holds a run-time value's tag."""
    command, args = as_list(container.get("command")), as_list(container.get("args"))
    argv = [*command, *args]

    def where(index: int) -> str:
        return f"{path}.command[{index}]" if index < len(command) else f"{path}.args[{index - len(command)}]"

    fed = {
        str(e.get("name")): f"env {e.get('name')}"
        for e in map(as_map, as_list(container.get("env")))
        if isinstance(e.get("value"), str) and fed_by in str(e.get("value"))
    }
    found = shell_reads(argv, fed)
    if found is not None:
        index, name = found
        yield warning(
            where(index),
            f"is a shell script that names $({name}), whose value is given at run time: the kubelet pastes it into "
            f"the script and the shell runs it as code; {safe_shell_form(name)}",
        )
        return
    at = shell_script(argv)
    script = argv[at] if at is not None else None
    if at is not None and tag_fed and isinstance(script, str) and _RUNTIME_TAG.search(script):
        yield warning(
            where(at),
            "is a shell script holding a value given at run time ({{...}}): Argo pastes it into the script and the "
            f"shell runs it as code; {safe_shell_form('NAME')}, with the value in env NAME",
        )
