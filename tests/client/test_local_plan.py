"""What a local run starts, decided without starting anything (``client.local_plan``): each kind's processes and the
variables each gets in place of the cluster's, from the job as its builder made it; the arguments checked as a call
of the job's template checks them."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable

import pytest

import hera_volcano as hv
from hera_volcano.client.local_plan import LOOPBACK, LocalPlan, mpiexec_command, plan
from hera_volcano.pods import launcher
from hera_volcano.pods import program as pods_program
from hera_volcano.pods.launcher import LaunchSettings
from tests.client import localfuncs

PYTHON = "/opt/py/bin/python3"
#: Quotes, dollars, Kubernetes' $(VAR), a line break: what a value must arrive with, exactly.
TRICKY = 'it\'s "quoted" $(HOME) $$ ${X} `id` \\ back\nline two'


def ports() -> Callable[[], int]:
    return itertools.count(41000).__next__


def launched(p: LocalPlan, rank: int = 0) -> dict[str, object]:
    """The keyword arguments the launcher would call the function with, read from the rank's variables by the
    launcher's own rules."""
    return launcher.arguments(LaunchSettings.from_env(p.ranks[rank].env))


def test_a_batch_job_is_one_process_per_replica_with_its_index_as_volcanos_env_plugin_sets_it() -> None:
    job = hv.batch_job(
        image="python:3.11-slim",
        program=hv.Program.function(localfuncs.echo_text, args={"text": hv.Placeholder.input("text", "x")}),
        replicas=3,
        pod=hv.PodSettings(env={"STAGE": "dev"}),
    )
    p = plan(job, {"text": TRICKY}, python=PYTHON, free_port=ports())
    assert p.kind == "replica" and p.launcher
    assert [(r.rank, r.env["VC_TASK_INDEX"], r.env["VK_TASK_INDEX"]) for r in p.ranks] == [
        (0, "0", "0"),
        (1, "1", "1"),
        (2, "2", "2"),
    ]
    boot = pods_program.launcher_bootstrap()
    assert all(r.argv == (PYTHON, "-u", "-c", boot, "replica") for r in p.ranks), "the pods' own launcher command"
    assert launched(p) == {"text": TRICKY}, "the value arrives byte for byte"
    assert p.ranks[2].env["STAGE"] == "dev", "the pod's own variables too"
    assert len(plan(job, {"text": "x"}, python=PYTHON, free_port=ports(), processes=5).ranks) == 5


def test_a_pytorch_function_gets_torchruns_variables_on_one_node_of_all_its_processes() -> None:
    job = hv.pytorch_job(
        image="pytorch",
        program=hv.Program.function(localfuncs.torch_sum, args={"scale": hv.Placeholder.input("scale", 1)}),
        workers=1,
        nproc_per_node=2,
    )
    p = plan(job, {"scale": 3}, python=PYTHON, free_port=ports())
    assert p.kind == "torchrun" and len(p.ranks) == 4, "2 pods of 2 processes each"
    for r in p.ranks:
        assert (r.env["RANK"], r.env["LOCAL_RANK"], r.env["WORLD_SIZE"]) == (str(r.rank), str(r.rank), "4")
        assert (r.env["MASTER_ADDR"], r.env["MASTER_PORT"]) == (LOOPBACK, "41000"), "one free port for all"
        assert r.argv[-1] == "torchrun" and r.argv[0] == PYTHON
    assert launched(p, 3) == {"scale": 3}, "a non-string sample: the value is parsed as JSON"
    two = plan(job, {"scale": 3}, python=PYTHON, free_port=ports(), processes=2)
    assert [r.env["WORLD_SIZE"] for r in two.ranks] == ["2", "2"]


def test_a_pytorch_command_gets_the_plugins_variables_per_pod_expanded_into_it() -> None:
    job = hv.pytorch_job(image="pytorch", program=hv.Program.command(hv.torchrun("train.py", "--lr=$(LR)")), workers=2)
    p = plan(job, None, python=PYTHON, free_port=ports())
    assert not p.launcher and len(p.ranks) == 3, "one process per pod: torchrun starts its own"
    argv = p.ranks[2].argv
    assert argv[:6] == (
        "torchrun",
        "--nnodes=3",
        "--node_rank=2",
        "--nproc_per_node=1",
        f"--master_addr={LOOPBACK}",
        "--master_port=41000",
    )
    assert argv[6:] == ("train.py", "--lr=$(LR)"), "an undefined variable stays as the kubelet leaves it"


def test_an_mpi_job_runs_the_ranks_the_master_would_under_one_mpiexec() -> None:
    job = hv.mpi_job(
        image="mpi",
        program=hv.Program.function(localfuncs.mpi_sum, args={"scale": 2}),
        workers=2,
        slots_per_worker=2,
        service_account="mpi",
    )
    p = plan(job, None, python=PYTHON, free_port=ports())
    assert p.kind == "mpi" and len(p.ranks) == 4, "workers * slots_per_worker ranks"
    assert p.ranks[0].argv[-1] == "mpi" and launched(p) == {"scale": 2}
    argv = mpiexec_command("/usr/bin/mpiexec", p, "/tmp/out", root=True)
    assert argv[:5] == ["/usr/bin/mpiexec", "-n", "4", "--oversubscribe", "--allow-run-as-root"]
    assert argv[-5:] == list(p.ranks[0].argv)
    assert "--allow-run-as-root" not in mpiexec_command("mpiexec", p, "/tmp/out", root=False)
    assert len(plan(job, None, python=PYTHON, free_port=ports(), processes=3).ranks) == 3


def test_an_mpi_command_runs_as_the_master_passes_it_to_mpiexec() -> None:
    job = hv.mpi_job(image="mpi", program=hv.Program.command(["mpi_hello_world", "--n=3"]), workers=3)
    p = plan(job, None, python=PYTHON, free_port=ports())
    assert (p.kind, p.launcher, len(p.ranks), p.ranks[0].argv) == ("mpi", False, 3, ("mpi_hello_world", "--n=3"))


def test_tensorflow_gives_every_process_its_tf_config_which_the_launcher_reads_as_its_rank(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    job = hv.tensorflow_job(
        image="tf", program=hv.Program.function(localfuncs.tf_config, args={"marks": "/m"}), workers=2, ps=1
    )
    p = plan(job, None, python=PYTHON, free_port=ports())
    assert p.kind == "tensorflow" and len(p.ranks) == 4
    configs = [json.loads(r.env["TF_CONFIG"]) for r in p.ranks]
    assert [c["task"] for c in configs] == [
        {"type": "chief", "index": 0},
        {"type": "worker", "index": 0},
        {"type": "worker", "index": 1},
        {"type": "ps", "index": 0},
    ]
    cluster = configs[0]["cluster"]
    assert cluster == {
        "chief": [f"{LOOPBACK}:41000"],
        "ps": [f"{LOOPBACK}:41001"],
        "worker": [f"{LOOPBACK}:41002", f"{LOOPBACK}:41003"],
    }, "every address a port of its own on this machine"
    for r in p.ranks:
        monkeypatch.setenv("TF_CONFIG", r.env["TF_CONFIG"])
        assert launcher.rank("tensorflow") == r.rank, "the launcher's rank is the process's place"
    five = plan(job, None, python=PYTHON, free_port=ports(), processes=5)
    assert json.loads(five.ranks[0].env["TF_CONFIG"])["cluster"]["worker"].__len__() == 3, "workers make up the rest"
    with pytest.raises(hv.ValidationError) as e:
        plan(job, None, python=PYTHON, free_port=ports(), processes=2)
    assert e.value.field == "processes"


def test_a_misspelt_argument_is_refused_naming_it_and_the_input_it_meant() -> None:
    job = hv.batch_job(
        image="python:3.11-slim",
        program=hv.Program.function(
            localfuncs.replica_sum, args={"scale": hv.Placeholder.input("scale", 1), "marks": "/m"}
        ),
    )
    with pytest.raises(hv.ValidationError) as e:
        plan(job, {"scael": 2}, python=PYTHON, free_port=ports())
    assert e.value.field == "arguments.scael"
    assert "did you mean 'scale'" in e.value.rule
    with pytest.raises(hv.ValidationError) as e:
        plan(job, {}, python=PYTHON, free_port=ports())
    assert (e.value.field, e.value.rule) == ("arguments", "must give the input scale of the job: it has no default")


def test_a_value_of_the_wrong_kind_is_refused_before_anything_runs() -> None:
    job = hv.batch_job(
        image="python:3.11-slim",
        program=hv.Program.function(
            localfuncs.replica_sum, args={"scale": hv.Placeholder.input("scale", 1), "marks": "/m"}
        ),
    )
    with pytest.raises(hv.ValidationError) as e:
        plan(job, {"scale": "three"}, python=PYTHON, free_port=ports())
    assert e.value.field == "arguments.scale" and "must be JSON" in e.value.rule
    with pytest.raises(hv.ValidationError) as e:
        plan(job, {"scale": ["a", "list"]}, python=PYTHON, free_port=ports())
    assert e.value.field == "arguments[scale]", "the values a submission takes: text and numbers"


def test_a_variable_the_cluster_fills_in_is_noted_not_silently_dropped() -> None:
    job = hv.batch_job(
        image="python:3.11-slim",
        program=hv.Program.command(["python3", "-c", "print(1)"]),
        pod=hv.PodSettings(
            patch={
                "spec": {
                    "containers": [
                        {
                            "name": "main",
                            "env": [{"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}],
                        }
                    ]
                }
            }
        ),
    )
    p = plan(job, None, python=PYTHON, free_port=ports())
    assert p.ranks[0].argv == (PYTHON, "-c", "print(1)"), "a command's python3 is the chosen python"
    assert p.notes == ("NODE is read from the cluster (valueFrom): not set in a local run",)


def test_a_job_no_builder_made_is_refused() -> None:
    job = hv.VolcanoJob(
        name="x",
        tasks=[
            hv.VolcanoTask(name="a", template={"spec": {"containers": [{"name": "a", "image": "i"}]}}),
            hv.VolcanoTask(name="b", template={"spec": {"containers": [{"name": "b", "image": "i"}]}}),
        ],
    )
    with pytest.raises(hv.ValidationError) as e:
        plan(job, None, python=PYTHON, free_port=ports())
    assert e.value.field == "job"
    with pytest.raises(hv.ValidationError):
        plan("job", None, python=PYTHON, free_port=ports())  # type: ignore[arg-type]
