"""The bundled PyTorch hello world: its workflow, its job, and the program every rank runs."""

from __future__ import annotations

import contextlib
import io
import re
import sys
import types
from typing import Any

import pytest

from hera_volcano.examples import pytorch_hello
from hera_volcano.examples.pytorch_hello import PROGRAM, Options, build, render
from hera_volcano.pods.run import Settings
from tests.commands import run
from tests.conftest import manifests


def workflow(**kwargs: Any) -> dict[str, Any]:
    data: dict[str, Any] = build(Options(**kwargs)).to_dict()
    return data


def test_a_dag_of_the_job_and_its_log_follower_with_the_exit_handler() -> None:
    wf = workflow()
    assert wf["metadata"]["generateName"] == "volcano-pytorch-hello-"
    templates = {t["name"]: t for t in wf["spec"]["templates"]}
    main = templates["main"]["dag"]["tasks"]
    assert [(t["name"], t["template"]) for t in main] == [
        ("submit-job", "submit-volcano-job"),
        ("follow-logs", "follow-master-logs"),
    ]
    assert main[1]["continueOn"] == {"failed": True, "error": True}
    env = {e["name"]: e.get("value") for e in templates["follow-master-logs"]["container"]["env"]}
    assert env[Settings.POD_SELECTOR].endswith("hera-volcano/job=pytorch-hello")
    assert env[Settings.TASK] == "master"
    assert wf["spec"]["onExit"] == "cleanup-volcano-jobs"


@pytest.mark.parametrize("workers", [1, 2, 5])
def test_one_gang_of_master_and_workers_each_running_one_rank(workers: int) -> None:
    [job] = manifests(workflow(workers=workers))
    assert job["metadata"]["generateName"] == "pytorch-hello-"
    assert job["spec"]["minAvailable"] == workers + 1
    assert [(t["name"], t["replicas"]) for t in job["spec"]["tasks"]] == [("master", 1), ("worker", workers)]
    for task in job["spec"]["tasks"]:
        [container] = task["template"]["spec"]["containers"]
        assert container["image"] == "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime"
        assert container["command"] == ["python3", "-c", PROGRAM]
        assert "env" not in container, "the plugin's variables are all the program needs"


def test_the_program_is_constant_text_that_neither_kubernetes_nor_argo_rewrites() -> None:
    compile(PROGRAM, "hello.py", "exec")
    assert "$(" not in PROGRAM, "Kubernetes expands $(VAR) in commands"
    assert "{{" not in PROGRAM, "Argo substitutes {{...}} in manifests"


def _run_rank(rank: int, size: int) -> str:
    """The program's output on ``rank`` of ``size``, with torch.distributed played by a stand-in whose collectives
    give what every rank would contribute."""

    class Tensor:
        def __init__(self, values: list[int]) -> None:
            self.values = values

        def item(self) -> int:
            return self.values[0]

    def all_reduce(tensor: Tensor) -> None:
        tensor.values = [sum(r + 1 for r in range(size))]

    def all_gather_object(out: list[Any], line: str) -> None:
        for r in range(size):
            out[r] = line.replace(f"rank {rank} ", f"rank {r} ", 1)

    dist = types.SimpleNamespace(
        init_process_group=lambda backend: None,
        get_rank=lambda: rank,
        get_world_size=lambda: size,
        all_reduce=all_reduce,
        all_gather_object=all_gather_object,
        destroy_process_group=lambda: None,
    )
    torch = types.ModuleType("torch")
    torch.tensor = Tensor  # type: ignore[attr-defined]
    torch.distributed = dist  # type: ignore[attr-defined]
    out = io.StringIO()
    saved = {name: sys.modules.get(name) for name in ("torch", "torch.distributed")}
    sys.modules.update({"torch": torch, "torch.distributed": dist})  # type: ignore[dict-item]
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(PROGRAM, "hello.py", "exec"), {})
    finally:
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module
    return out.getvalue()


def test_the_master_prints_every_ranks_sum_and_each_worker_its_own() -> None:
    assert _run_rank(0, 3).splitlines() == [f"rank {r} of 3: all-reduce sum 6" for r in range(3)]
    assert _run_rank(2, 3).splitlines() == ["rank 2 of 3: all-reduce sum 6"]
    line = re.compile(r"rank (\d+) of (\d+): all-reduce sum (\d+)")
    assert all(line.fullmatch(text) for text in _run_rank(0, 5).splitlines())


def test_options_reach_the_workflow() -> None:
    wf = workflow(namespace="ml", service_account="runner", image="example.com/torch:2", template=True)
    assert wf["kind"] == "WorkflowTemplate" and wf["metadata"] == {"name": "volcano-pytorch-hello", "namespace": "ml"}
    assert wf["spec"]["serviceAccountName"] == "runner"
    [job] = manifests(wf)
    assert {t["template"]["spec"]["containers"][0]["image"] for t in job["spec"]["tasks"]} == {"example.com/torch:2"}


def test_renders_the_same_every_time_and_lints_clean() -> None:
    text = render()
    assert text == render() == pytorch_hello.render(Options())
    r = run("hera_volcano.lint", "-", stdin=text)
    assert (r.code, r.out) == (0, ""), r.out
