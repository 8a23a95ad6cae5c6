"""Every parameter of every public name (``hera_volcano.__all__``: its functions, its classes' public methods,
classmethods and staticmethods, a dataclass's fields in the class docstring) is documented in its docstring
(``:param NAME:``, what the API reference renders), once and in signature order, and every shared setting in
:class:`JobSettings`: a parameter added without a word fails here."""

from __future__ import annotations

import ast
import inspect
import re
from collections.abc import Callable

import pytest

import hera_volcano as hv
from hera_volcano.builders import settings

_PARAM = re.compile(r"^:param (\w+):", re.MULTILINE)


def _public() -> list[tuple[str, Callable[..., object], str]]:
    """Every function of ``hera_volcano.__all__`` and every public method (classmethods and staticmethods too) of
    its classes, with the docstring that documents it: a class's ``__init__`` (a dataclass's fields) is documented
    by the class docstring."""
    found = []
    for name in hv.__all__:
        obj = getattr(hv, name)
        if inspect.isfunction(obj):
            found.append((name, obj, inspect.getdoc(obj) or ""))
        elif inspect.isclass(obj):
            for attribute, value in vars(obj).items():
                if attribute.startswith("_") and attribute != "__init__":
                    continue
                function = value.__func__ if isinstance(value, classmethod | staticmethod) else value
                if not inspect.isfunction(function):
                    continue
                own = inspect.cleandoc(function.__doc__ or "")
                doc = (inspect.getdoc(obj) or "") + "\n" + own if attribute == "__init__" else own
                found.append((f"{name}.{attribute}", function, doc))
    return found


PUBLIC = _public()


def documented(doc: str) -> list[str]:
    return _PARAM.findall(doc)


def parameters(function: Callable[..., object]) -> list[str]:
    return [p for p in inspect.signature(function).parameters if p not in ("self", "cls")]


def test_every_public_name_is_checked() -> None:
    """Each public function and class is walked (JobSettings, a TypedDict, by the test of its own below)."""
    checked = {qualname for qualname, _, _ in PUBLIC}
    assert {"Pipeline.dag", "VolcanoJob.__init__", "Plugin.mpi", "Client.submit", "Run.logs"} <= checked
    walked = {qualname.split(".")[0] for qualname in checked}
    public = {
        name for name in hv.__all__ if inspect.isfunction(getattr(hv, name)) or inspect.isclass(getattr(hv, name))
    }
    assert walked == public - {"JobSettings"}


@pytest.mark.parametrize(("qualname", "function", "doc"), PUBLIC, ids=[q for q, _, _ in PUBLIC])
def test_every_parameter_is_documented_once_in_signature_order(
    qualname: str, function: Callable[..., object], doc: str
) -> None:
    assert documented(doc) == parameters(function), qualname


def test_the_check_reads_what_is_written() -> None:
    def half(a: int, b: int) -> None:
        """Half documented.

        :param a: documented.
        """

    assert documented(inspect.getdoc(half) or "") == ["a"] != parameters(half)


def test_every_shared_setting_is_documented() -> None:
    tree = ast.parse(inspect.getsource(settings))
    [cls] = [node for node in tree.body if isinstance(node, ast.ClassDef) and node.name == "JobSettings"]
    body = cls.body[1:]  # after the class docstring
    found = {}
    for node, after in zip(body, [*body[1:], None], strict=True):
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            doc = after.value.value if isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant) else None
            found[node.target.id] = doc
    assert tuple(found) == settings.KEYS
    assert all(isinstance(doc, str) and doc.strip() for doc in found.values()), found
