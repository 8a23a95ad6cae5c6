"""Everything the project ships, sent to a real kube-apiserver with the Argo v4 full CRDs and the Volcano CRDs.

a. Every YAML document under workflows/ and rbac/ (kustomization files aside) and every bundled CLI output goes
   through server-side dry run (dryRun=All) with strict field validation: apply, or create for objects named by
   generateName (argo submit creates; apply needs a name).
b. The Volcano Job manifest in each resource template (action create, apply or replace), with sample values for
   the Argo placeholders (sample_values.py), is created for real: the Job CRD's schema checks it (no Volcano
   webhook runs), then it is deleted.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from cluster_sources import (
    WORKFLOW_COMMANDS,
    Source,
    cli_sources,
    folder_sources,
    namespace_of,
    workflow_view,
)
from controlplane import ControlPlane
from kubernetes import client

from hera_volcano.argo.samples import resolved_manifests

SOURCES = folder_sources() + cli_sources()
WORKFLOW_SOURCES = folder_sources(("workflows",)) + cli_sources(WORKFLOW_COMMANDS)
WRITE_ACTIONS = ("create", "apply", "replace")
VOLCANO_JOB = ("batch.volcano.sh/v1alpha1", "Job")


def _error(e: client.ApiException) -> str:
    try:
        return str(yaml.safe_load(e.body).get("message") or e.body)
    except Exception:
        return f"{e.status} {e.body}"


def _describe(doc: dict[str, Any]) -> str:
    metadata = doc.get("metadata") or {}
    return f"{doc.get('kind')} {metadata.get('name') or metadata.get('generateName', '') + '*'}"


def dry_run(cp: ControlPlane, doc: dict[str, Any]) -> None:
    metadata = doc.get("metadata") or {}
    namespace = namespace_of(doc)
    cp.ensure_namespace(namespace)
    if metadata.get("name"):
        cp.apply(doc, namespace, dry_run=True)
    else:
        assert metadata.get("generateName"), "neither metadata.name nor metadata.generateName"
        cp.create(doc, namespace, dry_run=True)


@pytest.mark.parametrize("source", SOURCES, ids=[s.label for s in SOURCES])
def test_server_side_dry_run(control_plane: ControlPlane, source: Source) -> None:
    failures = []
    for i, doc in enumerate(source.documents()):
        try:
            dry_run(control_plane, doc)
        except client.ApiException as e:
            failures.append(f"document {i + 1} ({_describe(doc)}): {_error(e)}")
        except AssertionError as e:
            failures.append(f"document {i + 1} ({_describe(doc)}): {e}")
    assert not failures, f"{source.label}: rejected by the API server:\n" + "\n".join(failures)


def volcano_jobs(source: Source) -> list[tuple[str, str, dict[str, Any]]]:
    """(where, namespace, Volcano Job) for each Job manifest of a write action in the source's workflows."""
    jobs = []
    for doc in source.documents():
        workflow = workflow_view(doc)
        if workflow is None:
            continue
        templates = workflow["spec"]["templates"]
        for index, template, text in resolved_manifests(workflow):
            action = templates[index]["resource"].get("action")
            where = f"{_describe(doc)}, template {template}"
            objects = [o for o in yaml.safe_load_all(text) if o is not None]
            assert len(objects) == 1, f"{where}: the manifest holds {len(objects)} objects, Argo needs exactly one"
            manifest = objects[0]
            assert isinstance(manifest, dict), f"{where}: the manifest is not an object"
            if action in WRITE_ACTIONS and (manifest.get("apiVersion"), manifest.get("kind")) == VOLCANO_JOB:
                jobs.append((where, namespace_of(manifest, namespace_of(doc)), manifest))
    return jobs


@pytest.mark.parametrize("source", WORKFLOW_SOURCES, ids=[s.label for s in WORKFLOW_SOURCES])
def test_volcano_jobs_are_accepted(control_plane: ControlPlane, source: Source) -> None:
    jobs = volcano_jobs(source)
    if source.path is not None and not jobs:
        pytest.skip(f"{source.label} has no Volcano Job manifest (test_workflows_folder_has_volcano_jobs needs one)")
    assert jobs, f"{source.label}: no resource template creates a Volcano Job"
    failures = []
    for where, namespace, job in jobs:
        control_plane.ensure_namespace(namespace)
        try:
            created = control_plane.create(job, namespace)
        except client.ApiException as e:
            failures.append(f"{where}: {_error(e)}")
            continue
        control_plane.delete(created)  # fixed names repeat across sources; nothing acts on the job anyway
    assert not failures, f"{source.label}: Volcano Jobs rejected by the Job CRD:\n" + "\n".join(failures)


def test_workflows_folder_has_volcano_jobs() -> None:
    """The workflows/ folder as a whole must create at least one Volcano Job."""
    sources = [s for s in folder_sources(("workflows",)) if s.path is not None]
    assert sources, "workflows/ holds no YAML files (or does not exist yet)"
    assert any(volcano_jobs(s) for s in sources), "no workflow under workflows/ creates a Volcano Job"
