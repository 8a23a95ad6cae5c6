"""The log follower (hera_volcano/argo/scripts/follow_logs.sh), run under bash against a fake kubectl whose world
each test changes as a cluster would: every branch of the script, including the faults of issue 19 (a stream that
ends at once, fails, drops or never ends; a watch that fails or expires; a step that fails before creating its job;
SIGTERM), with its bound."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from hera_volcano.kube import pod_scripts
from hera_volcano.shared import outputs
from tests.pods.world import FOLLOW_ENV, Script, World, group_alive, running

FOLLOW = pod_scripts.with_kubectl("hera_volcano.argo", "follow_logs.sh")
MASTER = "j-1-mpimaster-0"


@pytest.fixture
def world(tmp_path: Path) -> World:
    w = World(tmp_path)
    w.step_pod()
    return w


def start(world: World, **env: str) -> Script:
    return Script(FOLLOW, world, {**FOLLOW_ENV, **env})


def master_running(world: World, cid: str = "c1", *lines: str) -> None:
    world.pod(MASTER, phase="Running", cid=cid, running=True)
    if lines:
        world.log(MASTER, "mpimaster", *lines)


def complete(world: World) -> float:
    world.pod(MASTER, phase="Succeeded", cid="c1")
    world.job("j-1", "Completed")
    return time.monotonic()


def log_calls(world: World) -> list[list[str]]:
    return [c["args"] for c in world.calls() if c["args"][0] == "logs" and "-f" in c["args"]]


def busiest(times: list[float], window: float) -> int:
    """The most calls that fell within any ``window`` seconds."""
    return max((sum(1 for u in times if t <= u < t + window) for t in times), default=0)


def test_streams_the_master_until_the_job_completes(world: World) -> None:
    world.job("j-1", "Pending")
    with running(FOLLOW, world, FOLLOW_ENV) as run:
        master_running(world, "c1", "rank 0 says hello", "rank 1 says hello")
        run.wait_line("rank 1 says hello")
        complete(world)
        code, _ = run.exit()
        assert code == 0
        assert run.output[1:] == [
            f"=== logs of {MASTER} (Running)",
            "rank 0 says hello",
            "rank 1 says hello",
            "Job j-1 is Completed",
        ]
    # Each call found its kubeconfig and a writable discovery cache of its own.
    assert {c["cache"] for c in world.calls()} == {f"{world.folder}/hera-volcano-{run.proc.pid}/kube-cache"}


def test_pays_for_api_discovery_once(world: World) -> None:
    """Its watches start together: on an empty discovery cache each would pay for discovery (on the test cluster,
    /api and /apis). One call before them writes the cache; every later call, the job's watch too, finds it."""
    world.job("j-1", "Pending")
    with running(FOLLOW, world, FOLLOW_ENV) as run:
        master_running(world, "c1", "rank 0 says hello")
        run.wait_line("rank 0 says hello")
        complete(world)
        assert run.exit()[0] == 0
    calls = world.calls()
    assert ["api-resources" in c["args"] for c in calls if c["discovered"]] == [True]
    assert sum(1 for c in calls if "--watch" in c["args"]) >= 2


def test_the_job_s_lead_task_annotation_names_whose_output_to_follow(world: World) -> None:
    world.job("j-1", "Running", lead="master")
    world.pod("j-1-worker-0", task="worker", phase="Running", cid="w1", running=True)
    world.log("j-1-worker-0", "worker", "a worker's line")
    with running(FOLLOW, world, FOLLOW_ENV) as run:
        world.pod("j-1-master-0", task="master", phase="Running", cid="m1", running=True)
        world.log("j-1-master-0", "master", "the master's line")
        run.wait_line("the master's line")
        world.job("j-1", "Completed", lead="master")
        assert run.exit()[0] == 0
        assert "a worker's line" not in run.output


def test_an_explicit_task_and_container_win_over_the_annotation(world: World) -> None:
    world.job("j-1", "Running", lead="master")
    world.pod("j-1-worker-0", task="worker", phase="Running", cid="w1", running=True)
    world.log("j-1-worker-0", "worker", "a worker's line")
    with running(FOLLOW, world, {**FOLLOW_ENV, "TASK": "worker"}) as run:
        run.wait_line("a worker's line")
        world.job("j-1", "Completed", lead="master")
        assert run.exit()[0] == 0


def test_follows_a_restarted_container_and_a_new_pod(world: World) -> None:
    world.job("j-1", "Running")
    with running(FOLLOW, world, FOLLOW_ENV) as run:
        master_running(world, "c1", "try 1")
        run.wait_line("try 1")
        world.log(MASTER, "mpimaster", "try 2", restarted=True)
        world.pod(MASTER, phase="Running", cid="c2", running=False)
        run.wait_line("try 2")
        world.pod("j-1-mpimaster-0b", phase="Running", cid="c3", running=True, created=5)
        world.log("j-1-mpimaster-0b", "mpimaster", "try 3")
        run.wait_line("try 3")
        world.pod("j-1-mpimaster-0b", phase="Succeeded", cid="c3", created=5)
        world.job("j-1", "Completed")
        assert run.exit()[0] == 0
        assert [t for t in run.output if t.startswith(("try", "==="))] == [
            f"=== logs of {MASTER} (Running)",
            "try 1",
            f"=== logs of {MASTER} (Running)",
            "try 2",
            "=== logs of j-1-mpimaster-0b (Running)",
            "try 3",
        ]


def test_a_dropped_stream_is_resumed_without_repeating_or_losing_a_line(world: World) -> None:
    world.job("j-1", "Running")
    master_running(world)
    world.log(MASTER, "mpimaster", *[f"line {i}" for i in range(6)], drop_after=3)
    with running(FOLLOW, world, FOLLOW_ENV) as run:
        run.wait_line("line 5")
        world.log(MASTER, "mpimaster", "line 6")
        run.wait_line("line 6")
        complete(world)
        assert run.exit()[0] == 0
    assert [t for t in run.output if t.startswith("line")] == [f"line {i}" for i in range(7)]
    assert f"=== reattaching to {MASTER}" in run.output
    resumed = log_calls(world)[1]
    assert any(a.startswith("--since-time=2026-01-01T00:00:10Z") for a in resumed), resumed


@pytest.mark.parametrize("mode", ["end-at-once", "forbidden"])
def test_a_stream_that_ends_at_once_backs_off_and_the_job_s_end_still_ends_the_follower(
    world: World, mode: str
) -> None:
    """Issue 19: `kubectl logs -f` returning at once (no log endpoint, pods/log forbidden) while the container runs
    must not spin; the follower still ends with the job."""
    world.job("j-1", "Running")
    master_running(world)
    spec = {"mode": "end-at-once"} if mode == "end-at-once" else {"forbidden": True}
    world.log(MASTER, "mpimaster", "never shown", **spec)
    with running(FOLLOW, world, FOLLOW_ENV) as run:
        run.wait_for(lambda: len(log_calls(world)) >= 4, "4 attempts to stream", 30)
        times = [c["at"] for c in world.calls() if c["args"][0] == "logs"]
        # Back-off 2 s (BACKOFF_MAX here; counted in bash's whole seconds): never two attempts within 0.9 s, where a
        # loop without it makes a dozen.
        assert busiest(times, 0.9) <= 1, times
        done = complete(world)
        code, ended = run.exit()
        assert code == 0 and ended - done < 3, ended - done
        if mode == "forbidden":
            assert sum("Forbidden" in e for e in run.errors) == 1, run.errors  # shown once, not once per attempt


@pytest.mark.parametrize("loaded", [False, True], ids=["idle", "loaded"])
def test_a_stream_that_never_ends_is_cut_when_the_job_has_finished(world: World, loaded: bool) -> None:
    """kwok's fake pods: their log streams never end. The follower ends within DRAIN of the job's end anyway, also
    on a node whose CPU is saturated (a burst of workflows), where each short pause takes far longer than asked
    (``loaded``: each takes 1 s): the drain is bounded by the clock, not by a count of pauses."""
    if loaded:
        slow = world.folder / "bin" / "sleep"
        slow.parent.mkdir(exist_ok=True)
        slow.write_text("#!/bin/sh\nexec /bin/sleep 1\n")
        slow.chmod(0o755)
    world.job("j-1", "Running")
    master_running(world, "c1")
    world.log(MASTER, "mpimaster", "rank 0", mode="never-end")
    with running(FOLLOW, world, FOLLOW_ENV) as run:
        run.wait_line("rank 0")
        done = complete(world)
        code, ended = run.exit()
        # DRAIN_SECONDS is 1; loaded: two whole seconds of bash's clock at most, plus one pause and the exit.
        assert code == 0 and ended - done < (4.5 if loaded else 3), ended - done
        assert "Job j-1 is Completed" in run.output


def test_a_slow_stream_is_waited_for(world: World) -> None:
    world.job("j-1", "Running")
    world.fault("logs", delay=1.5)
    with running(FOLLOW, world, FOLLOW_ENV) as run:
        master_running(world, "c1", "late line")
        run.wait_line("late line")
        complete(world)
        assert run.exit()[0] == 0


def test_a_failed_job_ends_the_follower_at_once(world: World) -> None:
    world.job("j-1", "Running")
    with running(FOLLOW, world, FOLLOW_ENV) as run:
        master_running(world, "c1", "about to fail")
        run.wait_line("about to fail")
        world.job("j-1", "Terminated")
        code, _ = run.exit()
        assert code == 0 and "Job j-1 is Terminated" in run.output


def test_stops_when_the_job_step_failed_before_creating_a_job(world: World) -> None:
    with running(FOLLOW, world, {**FOLLOW_ENV, "GRACE_SECONDS": "600"}) as run:
        time.sleep(1)
        failed = time.monotonic()
        world.step_pod(phase="Failed")
        code, ended = run.exit()
        assert code == 0
        assert run.output[-1] == "The job's step has ended without creating a job"
        assert 1 <= ended - failed < 4.5, ended - failed  # STEP_GRACE_SECONDS is 2 here (bash counts whole seconds)


def test_stops_when_the_step_s_pod_is_gone_and_no_job_runs(world: World) -> None:
    with running(FOLLOW, world, FOLLOW_ENV) as run:
        # Once its watches run (a fixed wait was too short on a loaded machine: the pod went before the follower
        # ever saw it, so it waited out its grace for a step that never appeared).
        run.wait_for(lambda: any(c["args"][:2] == ["get", "pods"] for c in world.calls()), "the step's watch")
        time.sleep(0.5)  # its first event, the pod as it is
        world.remove_pod("wf-submit-1")
        assert run.exit()[0] == 0
        assert run.output[-1] == "The job's step has ended without creating a job"


def test_stops_when_the_step_gave_up_on_a_job_that_never_ran(world: World) -> None:
    """The step's deadline passed while the gang waited: the exit handler deletes the job, but only once the
    follower has ended; it must not wait for the job."""
    world.job("j-1", "Pending")
    with running(FOLLOW, world, FOLLOW_ENV) as run:
        time.sleep(0.5)
        world.step_pod(phase="Failed")
        assert run.exit()[0] == 0
        assert run.output[-1] == "The job's step has ended; job j-1 is Pending"


def test_waits_for_a_job_that_comes_late_while_its_step_runs(world: World) -> None:
    """Issue 19: under load the step may take long to create the job; no fixed grace may end the follower then."""
    with running(FOLLOW, world, {**FOLLOW_ENV, "GRACE_SECONDS": "1"}) as run:
        time.sleep(3)  # longer than GRACE_SECONDS: the step's pod is there, so the follower waits
        assert run.proc.poll() is None, run.report()
        world.job("j-1", "Running")
        master_running(world, "c1", "finally")
        run.wait_line("finally")
        complete(world)
        assert run.exit()[0] == 0


def test_gives_up_when_neither_the_step_nor_a_job_appears(tmp_path: Path) -> None:
    with running(FOLLOW, World(tmp_path), {**FOLLOW_ENV, "GRACE_SECONDS": "2"}) as run:
        code, _ = run.exit()
        assert code == 0 and "appeared within 2 s" in run.output[-1]


def test_stops_when_a_job_it_saw_is_gone(world: World) -> None:
    world.job("j-1", "Running")
    with running(FOLLOW, world, FOLLOW_ENV) as run:
        run.wait_for(lambda: any("--watch" in c["args"] for c in world.calls()), "the watches")
        time.sleep(0.5)  # its first event, the job as it is
        world.remove_job("j-1")
        assert run.exit()[0] == 0
        assert run.output[-1] == "Job j-1 is gone"


def test_stops_after_follow_seconds(world: World) -> None:
    world.job("j-1", "Running")
    with running(FOLLOW, world, {**FOLLOW_ENV, "FOLLOW_SECONDS": "2"}) as run:
        assert run.exit()[0] == 0
        assert run.output[-1] == "Stopped following after 2 s"


def test_shows_a_failed_init_container_and_a_container_that_never_started(world: World) -> None:
    world.job("j-1", "Running")
    world.change(lambda s: s["previous"].update({f"{MASTER}/wait-for-workers": "Only 0 of 2 workers Ready"}))
    world.log(MASTER, "wait-for-workers", "Only 0 of 2 workers Ready")
    with running(FOLLOW, world, FOLLOW_ENV) as run:
        world.pod(MASTER, phase="Pending", inits={"wait-for-workers": 1})
        run.wait_line("init container wait-for-workers failed (restart 1)")
        run.wait_line("Only 0 of 2 workers Ready")
        world.job("j-1", "Terminated")
        assert run.exit()[0] == 0
        assert f"=== mpimaster never started in {MASTER}" in run.output


def test_a_failing_watch_backs_off_reports_once_and_recovers(world: World) -> None:
    world.job("j-1", "Running")
    world.fault("watch-jobs", fail=True, error="Error from server (Forbidden): jobs.batch.volcano.sh is forbidden")
    with running(FOLLOW, world, FOLLOW_ENV) as run:

        def attempts() -> list[float]:
            return [c["at"] for c in world.calls() if "jobs.v1alpha1.batch.volcano.sh" in c["args"]]

        run.wait_for(lambda: len(attempts()) >= 4, "4 attempts to watch the jobs", 30)
        assert busiest(attempts(), 2.5) <= 2, attempts()  # back-off 1, 2, 2 s
        assert sum("Forbidden" in e for e in run.errors) == 1, run.errors
        world.fault("watch-jobs")
        master_running(world, "c1", "after the fault")
        run.wait_line("after the fault", timeout=10)
        complete(world)
        assert run.exit(10)[0] == 0


def test_a_watch_the_server_ends_is_reopened_and_loses_nothing(world: World) -> None:
    world.fault("watch-jobs", expire_after=1)
    world.job("j-1", "Running")
    with running(FOLLOW, world, FOLLOW_ENV) as run:
        master_running(world, "c1", "hello")
        run.wait_line("hello")
        complete(world)
        assert run.exit()[0] == 0
    assert sum(1 for c in world.calls() if "jobs.v1alpha1.batch.volcano.sh" in c["args"]) >= 2


@pytest.mark.parametrize("task", ["", "mpimaster"])
def test_waiting_for_a_gang_costs_its_watches_and_nothing_more(world: World, task: str) -> None:
    """Issue 19: while the gang waits to be scheduled, the follower makes no requests beyond its watches: of the
    job, of its step's pod and of the lead task's pods (opened with the other two again once the job names its lead
    task, when no task was given), after the one call that writes kubectl's discovery cache."""
    world.job("j-1", "Pending")
    with running(FOLLOW, world, {**FOLLOW_ENV, "TASK": task}) as run:
        run.wait_for(lambda: len(world.calls()) >= (4 if task else 6), "the watches")
        opened = world.calls()
        time.sleep(4)
        assert world.calls() == opened, "no request while the gang waits"
        assert "api-resources" in opened[0]["args"]
        opened = opened[1:]
        assert all("--watch" in c["args"] for c in opened)
        selectors = sorted(c["args"][c["args"].index("-l") + 1] for c in opened)
        assert any(s.endswith(",volcano.sh/task-spec=mpimaster") for s in selectors), selectors
        run.kill()


def test_sigterm_ends_the_follower_and_what_it_started_at_once(world: World) -> None:
    world.job("j-1", "Running")
    master_running(world, "c1", "streaming")
    world.log(MASTER, "mpimaster", mode="never-end")
    with running(FOLLOW, world, FOLLOW_ENV) as run:
        run.wait_line("streaming")
        sent = run.terminate()
        code, ended = run.exit(5)
        assert ended - sent < 2 and code == 143
        time.sleep(0.3)
        assert not group_alive(run.proc.pid), "a watch or the stream outlived the follower"


@pytest.mark.parametrize("task", ["", "mpimaster"])
@pytest.mark.parametrize("end", ["completed", "sigterm"])
def test_the_follower_leaves_no_process_for_argo_s_executor_to_reap(world: World, task: str, end: str) -> None:
    """argoexec's emissary ends the step only once it reaped the script, and it reaps any orphan first, one a second:
    on the cluster a follower that left its watches to it ended 6 to 7 s after its last line. Every process the
    follower starts is ended and reaped by the follower itself (with no task given, its watches are restarted once
    the job names its lead task, and those of the first round too)."""
    report = world.folder / "reaped.json"
    world.job("j-1", "Running")
    master_running(world, "c1", "hello")
    with running(FOLLOW, world, {**FOLLOW_ENV, "TASK": task}, reaper=report) as run:
        run.wait_line("hello")
        if end == "completed":
            complete(world)
        else:
            run.terminate()
        code, _ = run.exit(10)
        assert code == (0 if end == "completed" else 143), run.report()
    assert json.loads(report.read_text()) == {"orphans": 0, "alive": False}


def test_reported_values_are_written_as_outputs(world: World) -> None:
    world.job("j-1", "Running")
    env = {**FOLLOW_ENV, "OUTPUTS": "loss model", "OUTPUT_DIR": str(world.folder / "out")}
    with running(FOLLOW, world, env) as run:
        master_running(world, "c1", "epoch 1", "hera-volcano:output loss=0.5", "hera-volcano:output loss=0.25")
        world.log(MASTER, "mpimaster", "hera-volcano:output model=/ws/model.pt", "hera-volcano:output job-name=x")
        run.wait_line("model=/ws/model.pt")
        complete(world)
        assert run.exit()[0] == 0
    assert (world.folder / "out" / "loss").read_text() == "0.25"  # the last report wins
    assert (world.folder / "out" / "model").read_text() == "/ws/model.pt"
    assert not (world.folder / "out" / "job-name").exists()  # reserved: the job step's own output


def test_values_the_stream_missed_are_read_from_the_whole_log(world: World) -> None:
    world.job("j-1", "Running")
    master_running(world)
    world.log(MASTER, "mpimaster", "hera-volcano:output loss=0.5", mode="end-at-once")  # streams show nothing
    env = {**FOLLOW_ENV, "OUTPUTS": "loss", "OUTPUT_DIR": str(world.folder / "out")}
    with running(FOLLOW, world, env) as run:
        time.sleep(1)
        complete(world)
        assert run.exit()[0] == 0
    assert (world.folder / "out" / "loss").read_text() == "0.5"


def test_a_value_rank_0_did_not_report_fails_the_follower_naming_it(world: World) -> None:
    world.job("j-1", "Running")
    env = {**FOLLOW_ENV, "OUTPUTS": "loss model", "OUTPUT_DIR": str(world.folder / "out")}
    with running(FOLLOW, world, env) as run:
        master_running(world, "c1", "hera-volcano:output loss=0.5")
        run.wait_line("loss=0.5")
        complete(world)
        code, _ = run.exit()
        assert code == 1
        assert run.output[-1].startswith("The job's rank 0 reported no value for: model ")


def test_a_job_that_failed_collects_no_values_and_leaves_the_failure_to_its_step(world: World) -> None:
    world.job("j-1", "Running")
    env = {**FOLLOW_ENV, "OUTPUTS": "loss", "OUTPUT_DIR": str(world.folder / "out")}
    with running(FOLLOW, world, env) as run:
        master_running(world, "c1", "Traceback (most recent call last):")
        run.wait_line("Traceback")
        world.job("j-1", "Failed")
        assert run.exit()[0] == 0


@pytest.mark.parametrize(
    "line",
    [
        "hera-volcano:output loss=0.5",
        "hera-volcano:output a_b-c=with = signs and 'quotes' $(x) {{y}}",
        "hera-volcano:output empty=",
        "hera-volcano:output cr=value\r",
        "hera-volcano:output bad name=x",
        "hera-volcano:output noequals",
        "hera-volcano:output job-phase=Completed",
        " hera-volcano:output indented=x",
        "hera-volcano:output long=" + "x" * (outputs.MAX_LINE - 24),
        "hera-volcano:output long=" + "x" * (outputs.MAX_LINE - 23),
    ],
)
def test_the_follower_reads_report_lines_as_the_shared_rules_do(world: World, line: str) -> None:
    """The follower (bash) and hera_volcano.shared.outputs (Python) agree on every report line."""
    world.job("j-1", "Running")
    out = world.folder / "out"
    with running(FOLLOW, world, {**FOLLOW_ENV, "OUTPUT_DIR": str(out)}) as run:
        master_running(world, "c1", line, "the end")
        run.wait_line("the end")
        complete(world)
        assert run.exit()[0] == 0
    written = {p.name: p.read_text() for p in out.iterdir()} if out.exists() else {}
    parsed = outputs.parse_line(line)
    assert written == ({parsed[0]: parsed[1]} if parsed else {})
