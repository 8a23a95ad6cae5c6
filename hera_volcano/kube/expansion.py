"""Text that must reach a container's process byte for byte, through Kubernetes' ``$(VAR)`` expansion.

The kubelet expands ``$(NAME)`` in a container's ``command``, ``args`` and env ``value``s (from the container's
variables declared before it, for env), and turns ``$$`` into ``$``; any other ``$`` stays. So doubling every ``$``
is exactly what makes a text arrive unchanged: :func:`escape` at build time, and :func:`runtime_text` for a value
Argo substitutes at run time, whose ``$`` an Argo expression doubles (expr's ``replace``) and whose quotes, line
breaks and backslashes Argo's ``toJson`` escapes, so the value is one YAML string that cannot add structure.
"""

from __future__ import annotations

import json
import re
from typing import Final

from hera_volcano.shared.errors import ValidationError
from hera_volcano.shared.placeholders import Placeholder

_VARIABLE: Final = re.compile(r"(inputs|workflow)\.parameters\.([-a-zA-Z0-9_]+)")
_WORKFLOW_JSON: Final = re.compile(r"=toJson\(workflow\.parameters\['([-a-zA-Z0-9_]+)'\]\)")
_RUNTIME: Final = re.compile(r"=toJson\(replace\((inputs|workflow)\.parameters\['[-a-zA-Z0-9_]+'\], '\$', '\$\$'\)\)")


_TAG: Final = re.compile(r"\{\{.*?\}\}", re.DOTALL)


def escape(text: str) -> str:
    """``text`` as written in a command, an argument or an env value so that the process sees ``text``."""
    return text.replace("$", "$$")


def runtime_expression(root: str, name: str) -> str:
    """The Argo expression giving ``ROOT.parameters.NAME`` as a JSON string literal (valid YAML) whose ``$`` are
    doubled: Argo 3.7 and 4.x both offer ``toJson`` and expr's ``replace``."""
    return f"=toJson(replace({root}.parameters['{name}'], '$', '$$'))"


def runtime_text(value: Placeholder, field: str) -> Placeholder:
    """A placeholder standing for a text known at run time (an input parameter of the job's template, or a workflow
    parameter), rewritten so the process sees the parameter's exact value whatever it holds: quotes, ``$(...)``,
    line breaks, ``{{``. Its sample (as text) is what the rules check."""
    if _RUNTIME.fullmatch(value.expression):
        return value  # already rewritten
    variable = _VARIABLE.fullmatch(value.expression)
    json_form = _WORKFLOW_JSON.fullmatch(value.expression)
    if variable is not None:
        root, name = variable.group(1), variable.group(2)
    elif json_form is not None:
        root, name = "workflow", json_form.group(1)
    else:
        raise ValidationError(
            field,
            "a value known at run time is Placeholder.input(...), Placeholder.workflow_parameter(...) or "
            f"Placeholder.workflow_parameter_json(...), not {{{{{value.expression}}}}}",
        )
    sample = value.sample if isinstance(value.sample, str) else json.dumps(value.sample)
    return Placeholder(runtime_expression(root, name), sample, quoted=False)


def escape_for_executor(manifest: str) -> str:
    """A resource template's manifest such that the job argoexec creates is the one written before this call.

    Argo hands a step's template to its executor in the pod's ``ARGO_TEMPLATE`` variable, which the kubelet expands
    like any other (``$$`` becomes ``$``, a defined ``$(NAME)`` its value) before argoexec creates the manifest:
    every ``$`` outside Argo's ``{{...}}`` is doubled, and a run-time value's expression doubles its ``$`` twice
    over (once for the executor's variable, once for the job's pods). Other tags are Argo's to substitute."""
    out: list[str] = []
    last = 0
    for found in _TAG.finditer(manifest):
        out.append(escape(manifest[last : found.start()]))
        tag = found.group(0)
        if _RUNTIME.fullmatch(tag[2:-2]):
            tag = tag.replace("'$$'))}}", "'$$$$'))}}")
        out.append(tag)
        last = found.end()
    out.append(escape(manifest[last:]))
    return "".join(out)
