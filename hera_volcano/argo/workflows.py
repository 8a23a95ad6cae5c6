"""Building blocks shared by the bundled workflows: a Workflow or a WorkflowTemplate around the same spec."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hera.workflows import Parameter, Workflow, WorkflowTemplate


def workflow(
    *,
    name: str,
    template: bool,
    namespace: str,
    service_account: str,
    entrypoint: str,
    arguments: Sequence[Parameter] = (),
) -> Workflow:
    """A WorkflowTemplate named ``name``, or a Workflow with ``generateName: NAME-`` so each submission is new."""
    common: dict[str, Any] = {
        "namespace": namespace,
        "entrypoint": entrypoint,
        "service_account_name": service_account,
        "arguments": list(arguments) or None,
    }
    if template:
        return WorkflowTemplate(name=name, **common)
    return Workflow(generate_name=f"{name}-", **common)
