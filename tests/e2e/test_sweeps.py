"""Sweeps (issue 44.1) on the real cluster: ``hv.sweep`` of four trials of a function whose loss is known from its
parameter, one trial failing on purpose (``max_failures=1``), picks the right best trial and Succeeds, its best value
reaching a later step; the same sweep over a list an earlier step writes at run time, as a ``PipelineSweep`` between
two steps of a ``Pipeline`` rendered as Steps. The pick reads the Workflow, so
the workflows run as an account of their own whose RBAC ``rbac_for`` derives from them (``get`` on workflows), as a
user applies ``hera-volcano rbac sweep.yaml``. The same sweep run here (``hv.run_local``, trial by trial) gives the
cluster's outputs. In the batch of every batched scenario (harness.Batch)."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
import yaml
from functions import sweep_trial
from harness import NAMESPACE, Batch, Cluster, Record, took

import hera_volcano as hv

#: This module's batched workflows run this long under CI's batch (four small trials, two at once, and a pick).
BATCH_WAITS = 120
IMAGE = "python:3.11-slim"
#: The account the sweeps run as: its Role is what rbac_for derives from them (the bundled account has no sweep).
ACCOUNT = "sweeper"
RATES = [0.1, 0.3, 0.5, 0.7]
#: The run-time list, in another order: the best is picked by its parameters, not by its place.
PRINTED = [0.7, 0.3, 0.5, 0.1]
PRINTED_TRIALS = [{"lr": r} for r in PRINTED]
#: The later step checks the best value and parameters it was given, byte for byte.
CHECK = 'echo "best loss=$LOSS params=$PARAMS"; test "$LOSS" = 0.0 && test "$PARAMS" = \'{"lr":0.3}\''


def sweep_job() -> hv.VolcanoJob:
    return hv.batch_job(
        image=IMAGE, program=hv.Program.function(sweep_trial, args={"lr": hv.Placeholder.input("lr", 0.1)})
    )


def check_step() -> Any:
    """The later step: it checks the best loss and parameters it was given, byte for byte."""
    from hera.workflows import Container, Parameter

    return Container(
        name="check",
        image="busybox:1.37.0",
        command=["sh", "-c", CHECK],
        inputs=[Parameter(name="loss"), Parameter(name="params")],
        env={"LOSS": "{{inputs.parameters.loss}}", "PARAMS": "{{inputs.parameters.params}}"},
    )


def sweep_workflow(run_time: bool) -> Any:
    """Four trials of ``sweep_trial`` (two at once, one failing), the best loss and parameters checked by a later
    step. Over a Grid, as a user wires ``hv.sweep`` into their own DAG; or (``run_time``) over the list an earlier
    step writes, as a :class:`hera_volcano.Pipeline` of that step, a ``PipelineSweep`` and the check, rendered as
    Steps."""
    from hera.workflows import DAG, Container, Parameter, Workflow
    from hera.workflows.models import ValueFrom

    job = sweep_job()
    if run_time:
        grid = Container(
            name="grid",
            image=IMAGE,
            command=["python3", "-c", f"import json; open('/tmp/list', 'w').write(json.dumps({PRINTED_TRIALS!r}))"],
            outputs=[Parameter(name="list", value_from=ValueFrom(path="/tmp/list"))],
        )
        best = {"loss": hv.StepOutput("tune", "best-loss"), "params": hv.StepOutput("tune", "best-params")}
        space = hv.TrialsFrom("{{tasks.grid.outputs.parameters.list}}", ["lr"])
        tune = hv.PipelineSweep(
            "tune", job, space, objective="loss", outputs=["lr"], parallelism=2, max_failures=1, after=["grid"]
        )
        pipeline = hv.Pipeline([hv.PipelineStep("grid", grid), tune, hv.PipelineStep("check", check_step(), best)])
        return pipeline.workflow("sweep-runtime", namespace=NAMESPACE, service_account=ACCOUNT, as_steps=True)
    with Workflow(
        generate_name="sweep-grid-", namespace=NAMESPACE, entrypoint="main", service_account_name=ACCOUNT
    ) as w:
        swept = hv.sweep(
            job, hv.Grid({"lr": RATES}), name="tune", objective="loss", outputs=["lr"], parallelism=2, max_failures=1
        )
        check = check_step()
        with DAG(name="main"):
            best = {
                "loss": "{{tasks.tune.outputs.parameters.best-loss}}",
                "params": "{{tasks.tune.outputs.parameters.best-params}}",
            }
            swept(name="tune") >> check(name="check", arguments=best)
        w.on_exit = hv.cleanup_on_failure()
    return w


def submit_batch(b: Batch, cluster: Cluster) -> None:
    wanted = {
        "sweep-grid": b.runs(test_a_sweep_picks_the_best_trial_tolerating_one_failure_and_a_later_step_reads_it),
        "sweep-runtime": b.runs(test_the_same_sweep_over_a_list_made_at_run_time_picks_the_same_best),
    }
    if not any(wanted.values()):
        return
    workflows = {key: sweep_workflow(key == "sweep-runtime") for key, wanted_ in wanted.items() if wanted_}
    # What a user applies: `hera-volcano rbac sweep.yaml | kubectl apply -f -` (the namespace is labelled already).
    objects = [o for o in hv.rbac_for(*workflows.values(), service_accounts=True) if o["kind"] != "Namespace"]
    text = yaml.safe_dump_all(objects)
    cluster.kubectl("apply", "-f", "-", input=text).ok()
    b.teardowns.append(lambda: cluster.kubectl("delete", "--ignore-not-found", "-f", "-", input=text))
    for key, w in workflows.items():
        b.submit(key, hv.to_yaml(w))


def outputs(node: dict[str, Any]) -> dict[str, str]:
    return {p["name"]: p.get("value", "") for p in (node.get("outputs") or {}).get("parameters") or []}


def shown(wf: dict[str, Any]) -> str:
    return "; ".join(
        f"{n['name']}: {n.get('phase')} {n.get('message', '')}".strip() for n in wf["status"]["nodes"].values()
    )


def run_here(run_time: bool) -> dict[str, str]:
    """The same sweep run on this machine, trial by trial (``hv.run_local``), the run-time list given as the step
    writes it."""
    from hera.workflows import Workflow

    space = hv.TrialsFrom("{{tasks.grid.outputs.result}}", ["lr"]) if run_time else hv.Grid({"lr": RATES})
    with Workflow(generate_name="here-", entrypoint="tune"):  # a sweep is a template: made inside a workflow
        settings: dict[str, Any] = {"objective": "loss", "outputs": ["lr"], "parallelism": 2, "max_failures": 1}
        tune = hv.sweep(sweep_job(), space, name="tune", **settings)
    given = {"sweep-trials": json.dumps(PRINTED_TRIALS)} if run_time else {}
    return hv.run_local(tune, arguments=given, output=io.StringIO())


def comparable(trials: str) -> list[tuple[Any, ...]]:
    """Each trial's place, parameters, whether it Succeeded and its values then (a failed one's reason is worded by
    where it ran)."""
    listed = json.loads(trials)
    return [
        (t["trial"], t["parameters"], t["phase"] == "Succeeded", t["values"] if t["phase"] == "Succeeded" else None)
        for t in listed
    ]


def check_sweep(cluster: Cluster, entry_name: str, wf: dict[str, Any], rates: list[float]) -> None:
    """The sweep Succeeded with trial lr=0.3 best (loss 0.0), lr=0.5 failed with its reason, every trial its own
    Volcano Job, and the later step got the best values; the same sweep run here gives the same outputs."""
    assert wf["status"]["phase"] == "Succeeded", shown(wf)
    sweep = next(n for n in wf["status"]["nodes"].values() if n.get("displayName") == "tune" and n["type"] == "DAG")
    given = outputs(sweep)
    assert (given["best-loss"], given["best-lr"], json.loads(given["best-params"])) == ("0.0", "0.3", {"lr": 0.3})
    assert given["best-trial"] == str(rates.index(0.3))
    trials = json.loads(given["trials"])
    assert [t["parameters"]["lr"] for t in trials] == rates
    by_rate = {t["parameters"]["lr"]: t for t in trials}
    assert by_rate[0.5]["phase"] in ("Failed", "Error") and by_rate[0.5]["reason"], trials
    assert {r: by_rate[r]["values"]["loss"] for r in (0.1, 0.3, 0.7)} == {0.1: "0.04", 0.3: "0.0", 0.7: "0.16"}
    assert all(by_rate[r]["phase"] == "Succeeded" for r in (0.1, 0.3, 0.7)), trials
    assert len(cluster.recorder.jobs_of(entry_name)) == 4  # each trial its own Volcano Job
    out = [text for pod, _, text in cluster.lines(entry_name) if "-check-" in pod]
    assert any(line == 'best loss=0.0 params={"lr":0.3}' for line in out), out
    # status shows each trial's job.
    with hv.Client(namespace=NAMESPACE, kubeconfig=cluster.node.paths.kubeconfig) as c:
        listed = [job.name for job in c.get(entry_name).status().jobs]
    assert sorted(listed) == sorted(cluster.recorder.jobs_of(entry_name)), listed
    here = run_here(rates == PRINTED)
    assert {k: v for k, v in here.items() if k != "trials"} == {k: given[k] for k in here if k != "trials"}
    assert comparable(here["trials"]) == comparable(given["trials"])


@pytest.mark.batch
@pytest.mark.scenario("44.1 a sweep of 4 trials, one failing (max_failures=1): the best trial reaches a later step")
def test_a_sweep_picks_the_best_trial_tolerating_one_failure_and_a_later_step_reads_it(
    cluster: Cluster, batch: Batch, record_property: Record
) -> None:
    entry, wf = batch.finish("sweep-grid")
    record_property("took", took(wf, entry.submitted))
    check_sweep(cluster, entry.name, wf, RATES)


@pytest.mark.batch
@pytest.mark.scenario(
    "44.1 the same sweep over a list an earlier step writes at run time (with_param), a PipelineSweep in Steps"
)
def test_the_same_sweep_over_a_list_made_at_run_time_picks_the_same_best(
    cluster: Cluster, batch: Batch, record_property: Record
) -> None:
    entry, wf = batch.finish("sweep-runtime")
    record_property("took", took(wf, entry.submitted))
    check_sweep(cluster, entry.name, wf, PRINTED)
