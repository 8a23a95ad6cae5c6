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
from collections.abc import Iterable, Mapping, Sequence
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


#: Shells that read a script given with ``-c`` (also by path: ``/bin/sh``).
SHELLS: Final = frozenset({"sh", "bash", "dash", "ash", "ksh", "mksh", "zsh", "busybox"})


def shell_script(argv: Sequence[object]) -> int | None:
    """The index of the script in ``argv`` when it runs a shell with ``-c`` (``sh -c``, ``/bin/bash -ec``,
    ``env sh -c``, ``busybox sh -c``), else None: the text a shell reads as code, not as data."""
    at = 0
    words = [a if isinstance(a, str) else "" for a in argv]
    if words and words[0].rsplit("/", 1)[-1] == "env":
        at = 1
    if len(words) > at and words[at].rsplit("/", 1)[-1] == "busybox":
        at += 1
    if len(words) <= at or words[at].rsplit("/", 1)[-1] not in SHELLS:
        return None
    i, reads_c = at + 1, False
    while i < len(words) and words[i][:1] in ("-", "+") and words[i] not in ("-", "+"):
        if words[i] == "--":
            i += 1
            break
        letters = words[i][1:]
        if not words[i].startswith("--"):
            reads_c = reads_c or "c" in letters
            if letters.endswith("o"):  # -o OPTION
                i += 1
        i += 1
    return i if reads_c and i < len(argv) else None


def expand(text: str, defined: Mapping[str, str]) -> str:
    """What a process gets for ``text`` in its container's command, arguments or an env value: the kubelet writes
    ``$$`` as ``$`` and ``$(NAME)`` as the value of a variable in ``defined`` (an undefined one, and any other ``$``,
    stay as they are)."""
    out: list[str] = []
    i = 0
    while i < len(text):
        if text[i] != "$" or i + 1 == len(text):
            out.append(text[i])
            i += 1
        elif text[i + 1] == "(" and ")" in text[i + 2 :]:
            end = text.index(")", i + 2)
            name = text[i + 2 : end]
            out.append(defined[name] if name in defined else text[i : end + 1])
            i = end + 1
        else:  # "$$" is "$"; "$(" never closed, or "$" before anything else, stays
            out.append("$" if text[i + 1] == "$" else text[i : i + 2])
            i += 2
    return "".join(out)


def expanded_names(text: str) -> list[str]:
    """The variables named ``$(NAME)`` in ``text`` that the kubelet expands (``$$(NAME)`` is written ``$(NAME)``
    literally), in order."""
    found: list[str] = []
    i = 0
    while i < len(text) - 1:
        if text[i] != "$":
            i += 1
        elif text[i + 1] == "$":
            i += 2
        elif text[i + 1] == "(" and ")" in text[i + 2 :]:
            end = text.index(")", i + 2)
            found.append(text[i + 2 : end])
            i = end + 1
        else:
            i += 2
    return found


def shell_reads(argv: Sequence[object], fed: Iterable[str]) -> tuple[int, str] | None:
    """Where a shell script in ``argv`` has the kubelet paste in one of the variables ``fed`` (given a run-time
    value): (the script's index, the variable), or None."""
    at = shell_script(argv)
    script = argv[at] if at is not None else None
    if at is None or not isinstance(script, str):
        return None
    names = set(fed)
    name = next((n for n in expanded_names(script) if n in names), None)
    return None if name is None else (at, name)


def safe_shell_form(name: str) -> str:
    """How to give a shell script a run-time value so that no shell reads it as code: the message of every
    refusal and warning."""
    return (
        f'pass the value as an argument after the script and quote it there (["sh", "-c", \'prog --x "$1"\','
        f' "sh", value]), or read the variable as "${name}" (quoted, without parentheses: the kubelet leaves it'
        " alone and the shell reads it as data)"
    )
