"""Every parameter of a public builder or template is documented in its docstring (``:param NAME:``, what the API
reference renders), and every shared setting in :class:`JobSettings`: a parameter added without a word fails here."""

from __future__ import annotations

import ast
import inspect
import re
from collections.abc import Callable

import pytest

import hera_volcano as hv
from hera_volcano.builders import settings

PUBLIC: list[Callable[..., object]] = [
    hv.mpi_job,
    hv.pytorch_job,
    hv.torchrun,
    hv.tensorflow_job,
    hv.batch_job,
    hv.job_template,
    hv.follow_logs_template,
    hv.job_dag,
    hv.cleanup_on_failure,
    hv.Pipeline,
    hv.Pipeline.dag,
    hv.Pipeline.steps,
    hv.Pipeline.workflow,
    hv.PipelineJob,
    hv.PipelineStep,
    hv.StepOutput,
    hv.Workspace,
]
_PARAM = re.compile(r"^:param (\w+):", re.MULTILINE)


def documented(function: Callable[..., object]) -> list[str]:
    return _PARAM.findall(inspect.getdoc(function) or "")


@pytest.mark.parametrize("function", PUBLIC, ids=lambda f: f.__qualname__)
def test_every_parameter_is_documented_once_in_signature_order(function: Callable[..., object]) -> None:
    parameters = [p for p in inspect.signature(function).parameters if p != "self"]
    assert documented(function) == parameters


def test_the_check_reads_what_is_written() -> None:
    def half(a: int, b: int) -> None:
        """Half documented.

        :param a: documented.
        """

    assert documented(half) == ["a"] != list(inspect.signature(half).parameters)


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
