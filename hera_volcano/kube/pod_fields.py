"""Field names and scalar kinds of the Kubernetes types inside a pod template, as Hera's generated models define them.

The Volcano rules reject unknown fields in pod templates. Walking Hera's models at run time would import
``hera.workflows`` (half a second) into every lint, so the table is a snapshot, ``pod_fields.json``, made by
``python -m hera_volcano.kube.pod_fields`` and checked against the installed Hera by the test suite.

A field's kind is ``"str"``, ``"int"``, ``"bool"``, ``"int-or-str"``, ``"quantity"``, ``"any"``,
``{"list": KIND}``, ``{"map": KIND}`` or ``{"model": "NAME"}`` (a key of the table).
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Collection, Mapping, Sequence
from importlib import resources
from typing import Final, TypeAlias

#: A field's kind, as the module's docstring lists them.
FieldKind: TypeAlias = "str | dict[str, FieldKind]"
#: Each model's fields and their kinds, by the model's table key.
Table: TypeAlias = dict[str, dict[str, FieldKind]]

CORE = "hera.workflows.models.io.k8s.api.core.v1"
META = "hera.workflows.models.io.k8s.apimachinery.pkg.apis.meta.v1"
#: The types a Volcano pod template names directly; everything they reference is in the table too.
ROOTS = (
    (CORE, "Affinity"),
    (CORE, "Container"),
    (CORE, "HostAlias"),
    (CORE, "LocalObjectReference"),
    (CORE, "PersistentVolumeClaimSpec"),
    (CORE, "PodDNSConfig"),
    (CORE, "PodSecurityContext"),
    (CORE, "ResourceRequirements"),
    (CORE, "Toleration"),
    (CORE, "Volume"),
    (META, "LabelSelector"),
    (META, "ObjectMeta"),
)
FILE = "pod_fields.json"
#: Fields Hera's generated models type more narrowly than Kubernetes (an IntOrString typed as int).
CORRECTIONS: dict[tuple[str, str], str] = {("HTTPGetAction", "port"): "int-or-str"}
#: Fields newer than Hera's models (Kubernetes 1.34+) that the API servers of Argo 4.1 and Volcano 1.14 know.
NEWER_FIELDS: Final[Mapping[str, tuple[str, ...]]] = {
    "Container": ("restartPolicyRules",),
    "EnvVarSource": ("fileKeyRef",),
    "VolumeProjection": ("podCertificate",),
}


def key(module: str, name: str) -> str:
    """The table key of a model: its name, prefixed by ``meta.`` for apimachinery types (names may repeat)."""
    return f"meta.{name}" if module == META else name


def model_name(kind: Mapping[str, FieldKind]) -> str:
    """The model a ``{"model": NAME}`` kind names."""
    name = kind["model"]
    if not isinstance(name, str):
        raise TypeError(f"a model kind names its model, not {name!r}")
    return name


@functools.cache
def table() -> Table:
    """The committed snapshot, read once per process."""
    data: Table = json.loads(resources.files("hera_volcano.kube").joinpath(FILE).read_text())
    return data


def snapshot(roots: Sequence[tuple[str, str]] = ROOTS, elsewhere: Collection[str] = frozenset()) -> Table:
    """The table from the installed Hera (imports ``hera.workflows``): every model reachable from ``roots``, except
    those keyed in ``elsewhere`` (another table has them; references to them stay)."""
    import importlib

    out: Table = {}
    todo = list(roots)
    while todo:
        module, name = todo.pop()
        if key(module, name) in out or key(module, name) in elsewhere:
            continue
        cls = getattr(importlib.import_module(module), name)
        fields = {}
        for field, info in sorted(cls.model_fields.items(), key=lambda kv: kv[1].alias or kv[0]):
            alias = info.alias or field
            fields[alias] = CORRECTIONS.get((name, alias)) or _kind(info.annotation, todo)
        out[key(module, name)] = fields
    return dict(sorted(out.items()))


def _kind(annotation: object, todo: list[tuple[str, str]]) -> FieldKind:
    import types
    import typing
    from enum import Enum

    from pydantic import BaseModel, RootModel

    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        options = [a for a in args if a is not type(None)]
        if len(options) == 1:
            return _kind(options[0], todo)
        return "int-or-str" if set(options) == {str, int} else "any"
    if origin is typing.Annotated:
        return _kind(args[0], todo)
    if origin is list:
        return {"list": _kind(args[0], todo)}
    if origin is dict:
        return {"map": _kind(args[1], todo)}
    scalars: dict[object, str] = {bool: "bool", int: "int", str: "str"}
    if annotation in scalars:
        return scalars[annotation]
    if not isinstance(annotation, type):
        return "any"
    if issubclass(annotation, Enum):
        return "str"
    if issubclass(annotation, RootModel):
        special = {"Quantity": "quantity", "IntOrString": "int-or-str"}.get(annotation.__name__)
        # Others wrap a type of their own (Argo's ParallelSteps: a list of steps).
        return special or _kind(annotation.model_fields["root"].annotation, todo)
    if issubclass(annotation, BaseModel) and annotation.model_fields:
        todo.append((annotation.__module__, annotation.__name__))
        return {"model": key(annotation.__module__, annotation.__name__)}
    return "any"


def render(table: Mapping[str, Mapping[str, object]] | None = None) -> str:
    """A table's JSON text (this module's by default): sorted, one type per line, so a Hera upgrade shows as a
    readable diff."""
    items = (snapshot() if table is None else table).items()
    lines = [f"  {json.dumps(k)}: {json.dumps(v, sort_keys=True)}" for k, v in items]
    return "{\n" + ",\n".join(lines) + "\n}\n"


if __name__ == "__main__":
    sys.stdout.write(render())
