"""Lint judges the wiring of job steps and followers as the follower selects at run time: a follower beside two job
steps of its label is refused (rule job-step-called-twice), and a job step is start-limited only by a follower that
selects exactly its job (a parametrised label is resolved call by call, never matched as text)."""

from __future__ import annotations

from dataclasses import replace

from hera.workflows import DAG, Steps, Workflow

import hera_volcano as hv
from hera_volcano.shared.findings import Finding
from hera_volcano.tools.lint import lint_document
from hera_volcano.tools.lint.wiring import CROSSING_RULE

JOB = hv.batch_job(image="busybox:1.37.0", program=hv.Program.command(["true"]), generate_name="t-")
POLLS = "polls its conditions until they hold, with no time limit"


def lint(w: Workflow) -> list[Finding]:
    return lint_document(w.to_dict())


def crossing(found: list[Finding]) -> list[Finding]:
    return [f for f in found if f.severity == "error" and CROSSING_RULE in f.message]


def workflow() -> Workflow:
    return Workflow(generate_name="w-", namespace="argo", entrypoint="main", service_account_name="volcano-workflows")


def test_the_hand_wired_pair_called_twice_in_one_dag_is_refused_naming_the_rule() -> None:
    with workflow() as w:
        train = hv.job_template(JOB, name="train")
        logs = hv.follow_logs_template(train, outputs=["loss"])
        with DAG(name="main"):
            train(name="train-a")
            logs(name="logs-a")
            train(name="train-b")
            logs(name="logs-b")
    [a, b] = crossing(lint(w))
    assert a.path == b.path == "spec.templates[2].dag.tasks[2]"
    assert "'train-a', 'train-b'" in a.message and "job_dag" in a.message


def test_in_steps_one_group_is_one_level_and_a_looped_step_beside_an_unlooped_follower_crosses() -> None:
    with workflow() as w:
        train = hv.job_template(JOB, name="train")
        logs = hv.follow_logs_template(train)
        with Steps(name="main") as s:
            with s.parallel():
                train(name="train-a")
                logs(name="logs-a")
            with s.parallel():
                train(name="train-b")
                logs(name="logs-b")
    assert crossing(lint(w)) == [], "each group is a level of its own"
    with workflow() as looped:
        train = hv.job_template(JOB, name="train")
        logs = hv.follow_logs_template(train)
        with DAG(name="main"):
            train(name="train", with_items=[1, 2])
            logs(name="logs")
    assert len(crossing(lint(looped))) == 1


def test_job_dag_called_twice_and_in_a_loop_and_a_pipeline_are_clean() -> None:
    with workflow() as w:
        run = hv.job_dag(JOB, name="train", outputs=["loss"])
        with DAG(name="main"):
            run(name="a")
            run(name="b")
            run(name="c", with_items=[1, 2])
    assert [f for f in lint(w) if f.severity == "error"] == []
    pipeline = hv.Pipeline([hv.PipelineJob("a", JOB, follow_logs=True), hv.PipelineJob("b", JOB, follow_logs=True)])
    assert [f for f in lint_document(pipeline.workflow("p").to_dict()) if f.severity == "error"] == []


def test_a_follower_is_matched_to_a_job_step_by_the_label_each_call_gives_not_by_the_text() -> None:
    """One job template whose label is an input, called for a and b; only a has a follower: the follower's text
    matched the template's, so lint said b could not wait for ever either."""
    with workflow() as w:
        run = hv.job_template(JOB, name="run", job_label=hv.Placeholder.input("job", "a"))
        keep = hv.follow_logs_template(run, quiet=True)
        with DAG(name="main"):
            run(name="a", arguments={"job": "a"})
            keep(name="a-start", arguments={"job": "a"})
            run(name="b", arguments={"job": "b"})
    assert len([f for f in lint(w) if f.severity == "warning" and POLLS in f.message]) == 1
    with workflow() as both:
        run = hv.job_template(JOB, name="run", job_label=hv.Placeholder.input("job", "a"))
        keep = hv.follow_logs_template(run, quiet=True)
        with DAG(name="main"):
            for name in "ab":
                run(name=name, arguments={"job": name})
                keep(name=f"{name}-start", arguments={"job": name})
    assert [f for f in lint(both) if POLLS in f.message] == []
    pipeline = hv.Pipeline([hv.PipelineJob("a", JOB), hv.PipelineJob("b", JOB, follow_logs=True)])
    assert [f for f in lint_document(pipeline.workflow("p").to_dict()) if POLLS in f.message] == []


def test_a_followers_limit_is_compared_only_with_the_job_steps_it_really_selects() -> None:
    """Two job templates whose labels are both the input `job`: the follower of a (60 s) was compared with b's step
    (no deadline), whose call gives another label, and refused as stopping first."""
    label = hv.Placeholder.input("job", "a")
    with workflow() as w:
        a = hv.job_template(replace(JOB, deadline=30), name="t-a", job_label=label)
        b = hv.job_template(JOB, name="t-b", job_label=label)
        logs = hv.follow_logs_template(a, timeout=60)
        with DAG(name="main"):
            a(name="a", arguments={"job": "a"})
            logs(name="a-logs", arguments={"job": "a"})
            b(name="b", arguments={"job": "b"})
    assert [f.message for f in lint(w) if "stops after" in f.message] == []
