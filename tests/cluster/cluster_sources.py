"""What the cluster tests send to the API server: the repo's YAML folders and the bundled CLI outputs."""

from __future__ import annotations

import functools
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from controlplane import REPO_ROOT

YAML_FOLDERS = ("workflows", "rbac")
#: The bundled CLI commands whose output is checked, as `python -m MODULE ARGS...`.
CLI_COMMANDS: tuple[tuple[str, ...], ...] = (
    ("hera_volcano.mpi_hello",),
    ("hera_volcano.mpi_hello", "--template"),
    ("hera_volcano.pytorch_hello",),
    ("hera_volcano.pytorch_hello", "--template"),
    ("hera_volcano.steps",),
    ("hera_volcano.steps", "--template"),
    ("hera_volcano.dag",),
    ("hera_volcano.dag", "--template"),
    ("hera_volcano.rbac",),
)
WORKFLOW_COMMANDS = tuple(c for c in CLI_COMMANDS if c[0] != "hera_volcano.rbac")
WORKFLOW_KINDS = ("Workflow", "WorkflowTemplate", "ClusterWorkflowTemplate", "CronWorkflow")
DEFAULT_NAMESPACE = "argo"


@dataclass(frozen=True)
class Source:
    """A YAML file of the repo, or a CLI command whose output is YAML."""

    label: str
    path: Path | None = None
    command: tuple[str, ...] | None = None
    missing: str | None = None  # why there is nothing to read: the test fails with this

    def text(self) -> str:
        if self.missing:
            raise AssertionError(self.missing)
        if self.path is not None:
            return self.path.read_text(encoding="utf-8")
        assert self.command is not None
        return run_cli(*self.command)

    def documents(self) -> list[dict[str, Any]]:
        docs = [d for d in yaml.safe_load_all(self.text()) if d is not None]
        for doc in docs:
            assert isinstance(doc, dict) and doc.get("apiVersion") and doc.get("kind"), (
                f"{self.label}: not an API object: {str(doc)[:200]}"
            )
        assert docs, f"{self.label}: no YAML documents"
        return docs


@functools.cache
def run_cli(module: str, *args: str) -> str:
    """stdout of `python -m MODULE ARGS...` run from the repo root (cached: the tests read each output twice)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), env.get("PYTHONPATH")) if p)
    proc = subprocess.run(
        [sys.executable, "-m", module, *args],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, (
        f"python -m {module} {' '.join(args)} exited {proc.returncode}:\n{proc.stderr.strip()[-3000:]}"
    )
    return proc.stdout


def is_kustomization(path: Path) -> bool:
    return path.name.lower() in ("kustomization.yaml", "kustomization.yml")


def folder_sources(folders: tuple[str, ...] = YAML_FOLDERS) -> list[Source]:
    """One Source per YAML file under each folder (kustomization files excluded); a failing one if none."""
    found: list[Source] = []
    for folder in folders:
        root = REPO_ROOT / folder
        files = (
            sorted(
                p for p in root.rglob("*") if p.is_file() and p.suffix in (".yaml", ".yml") and not is_kustomization(p)
            )
            if root.is_dir()
            else []
        )
        if not files:
            found.append(Source(f"{folder}/", missing=f"{folder}/ holds no YAML files (or does not exist yet)"))
        found.extend(Source(str(p.relative_to(REPO_ROOT)), path=p) for p in files)
    return found


def cli_sources(commands: tuple[tuple[str, ...], ...] = CLI_COMMANDS) -> list[Source]:
    return [Source("python -m " + " ".join(c), command=c) for c in commands]


def namespace_of(doc: dict[str, Any], default: str = DEFAULT_NAMESPACE) -> str:
    return str((doc.get("metadata") or {}).get("namespace") or default)


def workflow_view(doc: dict[str, Any]) -> dict[str, Any] | None:
    """The document as a workflow (metadata + spec) for placeholder substitution; None if it is no workflow."""
    if doc.get("kind") not in WORKFLOW_KINDS:
        return None
    if doc["kind"] == "CronWorkflow":
        return {"metadata": doc.get("metadata") or {}, "spec": (doc.get("spec") or {}).get("workflowSpec") or {}}
    return doc


def service_accounts(doc: dict[str, Any]) -> set[str]:
    """Service accounts a workflow's pods run as: the workflow's, each template's; ``default`` if unset."""
    view = workflow_view(doc)
    if view is None:
        return set()
    spec = view.get("spec") or {}
    default = spec.get("serviceAccountName") or "default"
    accounts = {default}
    for template in spec.get("templates") or []:
        accounts.add(template.get("serviceAccountName") or default)
    return accounts
