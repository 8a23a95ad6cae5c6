"""The Volcano Jobs a workflow's resource steps create, judged with what the rest of the workflow and its stream say:
the account their API-calling pods need, the capability of a Queue defined beside them, and the loops that create
them more than once."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Final

from hera_volcano.kube.loading import Budget, load_all
from hera_volcano.shared.findings import Finding, as_list, as_map, error
from hera_volcano.tools.lint.context import MANIFEST_SEPARATOR, Workflow
from hera_volcano.tools.lint.jobs import is_volcano_job
from hera_volcano.volcano.accounts import accountless_api_callers
from hera_volcano.volcano.queue_rules import check_gang_fits

_LOOPS: Final = ("withItems", "withParam", "withSequence")
#: The manifest's metadata block (as the builders and most hands write it: a block, keys indented alike).
_METADATA: Final = re.compile(r"^metadata:[ \t]*\n((?:[ \t]+\S.*\n?)+)", re.MULTILINE)
_PLACEHOLDER: Final = re.compile(r"\{\{\s*([^{}]*?)\s*\}\}")


def check_job_steps(wf: Workflow, manifests: Mapping[int, str]) -> Iterator[Finding]:
    """Rules about each resource step's Volcano Job that need more than the step: ``manifests`` are the templates'
    manifests (by template index) with sample values substituted."""
    looped = _looped_templates(wf)
    for i, template in enumerate(as_list(wf.spec.get("templates"))):
        text = manifests.get(i)
        if text is None or "batch.volcano.sh/" not in text:
            continue
        job = _one_object(text, wf.budget)
        if job is None or not is_volcano_job(job):
            continue
        at = f"{wf.spec_path}.templates[{i}].resource.manifest{MANIFEST_SEPARATOR}"
        queue = wf.queues.get(str(as_map(job.get("spec")).get("queue")))
        fits = () if queue is None else check_gang_fits(job, queue)
        for f in (*accountless_api_callers(job), *fits):
            yield Finding(at + f.path, f.severity, f.message)
        name = as_map(template).get("name")
        if isinstance(name, str) and name in looped:
            yield from _fixed_name_in_loop(as_map(template), at, looped[name])


def _one_object(text: str, budget: Budget | None) -> Mapping[str, object] | None:
    """The manifest's one object; None when it is not one mapping (the resource rules report that)."""
    try:
        docs = [d for d in load_all(text, budget=budget) if d is not None]
    except Exception:  # reported by the resource rules, which parse it first
        return None
    return docs[0] if len(docs) == 1 and isinstance(docs[0], Mapping) else None


def _calls(template: Mapping[str, object]) -> Iterator[Mapping[str, object]]:
    """The steps or DAG tasks of a template."""
    for group in as_list(template.get("steps")):
        yield from (as_map(step) for step in as_list(group))
    yield from (as_map(task) for task in as_list(as_map(template.get("dag")).get("tasks")))


def _looped_templates(wf: Workflow) -> dict[str, str]:
    """The templates a loop runs more than once, each with the call whose loop does: called from a step or task
    with ``withItems``/``withParam``/``withSequence``, or from a template that is itself looped."""
    looped: dict[str, str] = {}
    edges = [
        (caller, call.get("template"), call)
        for caller, template in wf.templates.items()
        for call in _calls(template)
        if isinstance(call.get("template"), str)
    ]
    changed = True
    while changed:
        changed = False
        for caller, callee, call in edges:
            loop = next((key for key in _LOOPS if call.get(key) is not None), None)
            if not isinstance(callee, str) or callee in looped:
                continue
            if loop is not None:
                looped[callee] = f"{loop} of {caller}'s step {call.get('name')!r}"
            elif caller in looped:
                looped[callee] = looped[caller]
            else:
                continue
            changed = True
    return looped


def _fixed_name_in_loop(template: Mapping[str, object], at: str, loop: str) -> Iterator[Finding]:
    """A job name the same in every iteration: the second ``create`` fails with AlreadyExists (or a ``get`` of it
    finds the first iteration's job)."""
    name = _raw_name(as_map(template.get("resource")).get("manifest"))
    if name is None:
        return
    if all(p.startswith("workflow.") for p in _PLACEHOLDER.findall(name)):
        yield error(
            f"{at}metadata.name",
            f"is the same job name {name!r} in every iteration of the loop ({loop}): the second iteration's create"
            " fails with AlreadyExists; use generateName, or a name built from the loop's {{item}} or an input",
        )


def _raw_name(manifest: object) -> str | None:
    """``metadata.name`` as the unsubstituted manifest spells it (placeholders kept), or None."""
    block = _METADATA.search(manifest) if isinstance(manifest, str) else None
    if block is None:
        return None
    lines = block.group(1).splitlines()
    indent = lines[0][: len(lines[0]) - len(lines[0].lstrip())]
    for line in lines:
        if line.startswith(f"{indent}name:"):
            return line.removeprefix(f"{indent}name:").split(" #")[0].strip().strip("'\"")
    return None
