"""Text that must reach a container's process byte for byte, through Kubernetes' ``$(VAR)`` expansion.

The kubelet expands ``$(NAME)`` in a container's ``command``, ``args`` and env ``value``s (from the container's
variables declared before it, for env), and turns ``$$`` into ``$``; any other ``$`` stays. So doubling every ``$``
is exactly what makes a text arrive unchanged: :func:`escape` at build time, and :func:`runtime_text` for a value
Argo substitutes at run time, whose ``$`` an Argo expression doubles (expr's ``replace``) and which it writes as one
YAML string that cannot add structure (:mod:`hera_volcano.kube.values`).
"""

from __future__ import annotations

import json
import re
from typing import Final

from hera_volcano.kube import values
from hera_volcano.shared.errors import ValidationError
from hera_volcano.shared.placeholders import Placeholder

_TAG: Final = re.compile(r"\{\{.*?\}\}", re.DOTALL)


def escape(text: str) -> str:
    """``text`` as written in a command, an argument or an env value so that the process sees ``text``."""
    return text.replace("$", "$$")


def runtime_text(value: Placeholder, field: str) -> Placeholder:
    """A placeholder standing for a text known at run time (an input parameter of the job's template, or a workflow
    parameter) in a pod's command, arguments or environment, rewritten so the process sees the parameter's exact
    value whatever it holds: quotes, ``$(...)``, line breaks, ``{{`` (:mod:`hera_volcano.kube.values`). Its sample
    (as text) is what the rules check."""
    if values.parse(value.expression) is None:
        raise ValidationError(
            field,
            "a value known at run time is Placeholder.input(...) or Placeholder.workflow_parameter(...), not "
            f"{{{{{value.expression}}}}}",
        )
    sample = value.sample if isinstance(value.sample, str) else json.dumps(value.sample)
    return values.placeholder(Placeholder(value.expression, sample), dollars=1, kind="text")


def escape_for_executor(manifest: str) -> str:
    """A resource template's manifest such that the job argoexec creates is the one written before this call.

    Argo hands a step's template to its executor in the pod's ``ARGO_TEMPLATE`` variable, which the kubelet expands
    like any other (``$$`` becomes ``$``, a defined ``$(NAME)`` its value) before argoexec creates the manifest:
    every ``$`` outside Argo's ``{{...}}`` is doubled. A run-time value's expression doubles its own ``$`` for the
    executor too (:func:`hera_volcano.kube.values.in_manifest`); other tags are Argo's to substitute."""
    out: list[str] = []
    last = 0
    for found in _TAG.finditer(manifest):
        out.append(escape(manifest[last : found.start()]))
        out.append(found.group(0))
        last = found.end()
    out.append(escape(manifest[last:]))
    return "".join(out)
