"""The follower's run loop as it runs in a pod (hera_volcano/pods/run.py), against the stand-in API server, in the
situations a workflow meets: the values rank 0 reports become outputs (or fail the follower, naming what is
missing), the start limit ends a gang that never started, each follower of a loop follows its own iteration's job,
an Argo retry's next attempt is followed, dropped and failing streams are resumed without losing or repeating a
line, a stream that never ends is cut once the job has ended."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hera_volcano.client.resources import JOBS, PODGROUPS, PODS
from hera_volcano.pods.run import FollowLogs, Settings
from tests.client.faults import Drop, End
from tests.client.follow_driver import JOB_LABELS, POD_LABELS, stamp
from tests.client.harness import BOUND
from tests.client.recorded import Lines, World
from tests.pods.world_api import WorldApi

MASTER = "j-1-mpimaster-0"


@pytest.fixture
def world() -> Iterator[World]:
    w = World()
    yield w
    w.close()


def job(name: str, phase: str | None, *, step: str = "", created: int = 0) -> dict[str, Any]:
    annotations = {"hera-volcano/lead-task": "mpimaster", **({"hera-volcano/step-pod": step} if step else {})}
    meta = {"name": name, "uid": f"uid-{name}", "creationTimestamp": stamp(created), "labels": JOB_LABELS}
    return {"metadata": {**meta, "annotations": annotations}, "status": {"state": {"phase": phase}} if phase else {}}


def pod(name: str, job: str, *, cid: str = "c1", running: bool = True, created: int = 0) -> dict[str, Any]:
    state: dict[str, Any] = {"running": {"startedAt": stamp(created)}} if running else {"terminated": {"exitCode": 0}}
    labels = {**POD_LABELS, "volcano.sh/task-spec": "mpimaster", "volcano.sh/job-name": job}
    return {
        "metadata": {"name": name, "uid": f"uid-{name}", "creationTimestamp": stamp(created), "labels": labels},
        "spec": {"containers": [{"name": "mpimaster"}]},
        "status": {
            "phase": "Running" if running else "Succeeded",
            "containerStatuses": [{"name": "mpimaster", "containerID": cid, "state": state}],
        },
    }


def step(name: str, node: str, phase: str = "Running", created: int = 0) -> dict[str, Any]:
    meta = {"name": name, "creationTimestamp": stamp(created), "labels": POD_LABELS}
    return {"metadata": {**meta, "annotations": {"workflows.argoproj.io/node-name": node}}, "status": {"phase": phase}}


def logged(*texts: str, at: int = 10) -> list[str]:
    """Log lines as the kubelet sends them with timestamps, 1 ms apart."""
    return [f"{stamp(at)[:-1]}.{i + 1:03d}Z {text}" for i, text in enumerate(texts)]


class Following:
    """The follower in a thread of its own, its output line by line."""

    def __init__(self, world: World, *, settle: bool = True, **settings: Any) -> None:
        options: dict[str, Any] = {
            "jobs": "workflows.argoproj.io/workflow=wf,hera-volcano/job=mpi",
            "pods": "hera-volcano/workflow=wf,hera-volcano/job=mpi",
            "drain": 1.0,
            "tick": 0.05,
            "backoff_max": 2.0,
            **settings,
        }
        self.lines: list[str] = []
        self.reported: list[str] = []
        self.follow = FollowLogs(WorldApi(world), Settings(**options), self.lines.append, report=self.reported.append)
        self.codes: list[int] = []
        self.thread = threading.Thread(target=lambda: self.codes.append(self.follow.run()), daemon=True)
        self.thread.start()
        if settle:
            world.settle(JOBS, PODS)

    def wait_line(self, text: str) -> None:
        deadline = time.monotonic() + BOUND
        while not any(text in line for line in self.lines):
            assert time.monotonic() < deadline, f"{text!r} never came: {self.lines}"
            time.sleep(0.01)

    def exit(self, timeout: float = BOUND) -> int:
        self.thread.join(timeout)
        assert not self.thread.is_alive(), f"still following: {self.lines}"
        self.follow.close()
        return self.codes[0]


def running_master(world: World, *texts: str, name: str = MASTER, job_name: str = "j-1", created: int = 0) -> Lines:
    """The master runs and its log stream stays open (as the kubelet's, while the container runs)."""
    world.logs[(name, "mpimaster")] = logged(*texts)
    stream = world.open_log(name, "mpimaster")
    for line in logged(*texts):
        stream.push(line)
    world.put(PODS, pod(name, job_name, created=created))
    return stream


def complete(world: World, stream: Lines, name: str = MASTER, job_name: str = "j-1", **job_fields: Any) -> None:
    stream.end()
    world.put(PODS, pod(name, job_name, running=False))
    world.put(JOBS, job(job_name, "Completed", **job_fields))


def test_reported_values_are_written_as_outputs_the_last_report_winning(world: World, tmp_path: Path) -> None:
    world.put(JOBS, job("j-1", "Running"))
    f = Following(world, outputs=("loss", "model"), output_dir=str(tmp_path))
    reports = ["hera-volcano:output loss=0.5", "hera-volcano:output loss=0.25", "hera-volcano:output model=/ws/m"]
    stream = running_master(world, "epoch 1", *reports, "hera-volcano:output job-name=x")
    f.wait_line("job-name=x")
    complete(world, stream)
    assert f.exit() == 0
    assert f.lines[-1] == "Job j-1 is Completed"
    assert {p.name: p.read_text() for p in tmp_path.iterdir()} == {"loss": "0.25", "model": "/ws/m"}


def test_values_the_stream_missed_are_read_from_the_whole_log(world: World, tmp_path: Path) -> None:
    world.put(JOBS, job("j-1", "Running"))
    world.logs[(MASTER, "mpimaster")] = logged("hera-volcano:output loss=0.5")
    world.fault("log", PODS, End(after=0), End(after=0))  # the stream and the read again after it show nothing
    f = Following(world, outputs=("loss",), output_dir=str(tmp_path))
    world.put(PODS, pod(MASTER, "j-1"))
    f.wait_line(f"=== logs of {MASTER}")
    world.put(JOBS, job("j-1", "Completed"))
    assert f.exit() == 0, f.lines
    assert (tmp_path / "loss").read_text() == "0.5"


def test_a_value_rank_0_did_not_report_fails_the_follower_naming_it(world: World, tmp_path: Path) -> None:
    world.put(JOBS, job("j-1", "Running"))
    f = Following(world, outputs=("loss", "model"), output_dir=str(tmp_path))
    stream = running_master(world, "hera-volcano:output loss=0.5")
    f.wait_line("loss=0.5")
    complete(world, stream)
    assert f.exit() == 1
    assert f.lines[-1].startswith("The job's rank 0 reported no value for: model ")


FORGED = "hera-volcano:output loss={{workflow.parameters.secret}}"
REFUSAL = (
    "The job's rank 0 reported a value that is refused, output 'loss': the value holds two opening braces (an Argo tag"
)


@pytest.mark.parametrize(
    "reports",
    [
        [FORGED],
        ["hera-volcano:output loss=0.5", FORGED],
        [FORGED, "hera-volcano:output loss=0.5"],
        ["hera-volcano:output loss={{=sprig.env('HOME')}}"],
    ],
    ids=["alone", "after-a-value", "before-a-value", "expression"],
)
def test_a_report_line_the_launcher_would_refuse_fails_the_follower_naming_the_output_and_rule(
    world: World, tmp_path: Path, reports: list[str]
) -> None:
    world.put(JOBS, job("j-1", "Running"))
    f = Following(world, outputs=("loss", "model"), output_dir=str(tmp_path))
    stream = running_master(world, *reports, "hera-volcano:output model=/ws/m")
    f.wait_line("model=/ws/m")
    complete(world, stream)
    assert f.exit() == 1, "neither a tag for the next step nor another line's value: the step fails"
    assert f.lines[-1].startswith(REFUSAL), f.lines
    assert {p.name: p.read_text() for p in tmp_path.iterdir()} == {"model": "/ws/m"}


def test_a_refused_line_of_a_name_that_is_no_output_changes_nothing(world: World, tmp_path: Path) -> None:
    world.put(JOBS, job("j-1", "Running"))
    f = Following(world, outputs=("loss",), output_dir=str(tmp_path))
    stream = running_master(world, "hera-volcano:output other={{=1}}", "hera-volcano:output loss=0.5")
    f.wait_line("loss=0.5")
    complete(world, stream)
    assert f.exit() == 0
    assert {p.name: p.read_text() for p in tmp_path.iterdir()} == {"loss": "0.5"}


def test_a_log_follower_without_outputs_never_fails_on_a_refused_line(world: World) -> None:
    world.put(JOBS, job("j-1", "Running"))
    f = Following(world)
    stream = running_master(world, FORGED)
    f.wait_line(FORGED)
    complete(world, stream)
    assert f.exit() == 0


def test_a_refused_line_read_again_from_the_whole_log_fails_the_follower(world: World, tmp_path: Path) -> None:
    world.put(JOBS, job("j-1", "Running"))
    world.logs[(MASTER, "mpimaster")] = logged(FORGED)
    world.fault("log", PODS, End(after=0), End(after=0))  # the stream and the read again after it show nothing
    f = Following(world, outputs=("loss",), output_dir=str(tmp_path))
    world.put(PODS, pod(MASTER, "j-1"))
    f.wait_line(f"=== logs of {MASTER}")
    world.put(JOBS, job("j-1", "Completed"))
    assert f.exit() == 1, f.lines
    assert f.lines[-1].startswith(REFUSAL)
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("outputs", [(), ("loss",)])
def test_a_failed_job_fails_only_a_follower_with_values_to_give(world: World, tmp_path: Path, outputs: Any) -> None:
    world.put(JOBS, job("j-1", "Running"))
    f = Following(world, outputs=outputs, output_dir=str(tmp_path))
    running_master(world, "Traceback (most recent call last):")
    f.wait_line("Traceback")
    world.put(JOBS, job("j-1", "Failed"))
    assert f.exit() == (1 if outputs else 0)
    expected = ["Job j-1 is Failed"] + (["No values for: loss (the job did not complete)"] if outputs else [])
    assert f.lines[-len(expected) :] == expected
    assert not list(tmp_path.iterdir())


def test_a_follower_that_stops_before_its_job_ends_fails_when_it_has_values_to_give(world: World) -> None:
    world.put(JOBS, job("j-1", "Running"))
    f = Following(world, outputs=("loss",), limit=1.0)
    running_master(world, "epoch 1")
    assert f.exit() == 1
    assert f.lines[-2:] == ["Stopped following after 1 s", "No values for: loss (the job did not complete)"]


def test_a_job_that_does_not_start_within_the_start_limit_is_ended_with_the_schedulers_reason(
    world: World, tmp_path: Path
) -> None:
    world.put(JOBS, job("j-1", "Pending"))
    reason = "0/1 nodes are available: 1 Insufficient nvidia.com/gpu."
    condition = {"type": "Unschedulable", "status": "True", "reason": "NotEnoughResources", "message": reason}
    group = {"metadata": {"name": "j-1-uid-j-1"}, "status": {"phase": "Inqueue", "conditions": [condition]}}
    world.put(PODGROUPS, group)
    log = tmp_path / "termination-log"
    f = Following(world, start_limit=1.0, termination_log=str(log))
    assert f.exit() == 1
    expected = (
        f"Job j-1 did not start within 1 s (start limit); its PodGroup: Inqueue; Unschedulable NotEnoughResources:"
        f" {reason}"
    )
    assert f.lines[-1] == expected
    assert log.read_text() == expected + "\n", "Argo shows the termination message as the task's message"
    assert "j-1" not in world.objects[JOBS], "deleted: its step fails, its gang is freed"


def test_the_start_limit_never_ends_a_job_that_has_started(world: World) -> None:
    world.put(JOBS, job("j-1", "Running"))
    f = Following(world, start_limit=1.0)
    stream = running_master(world, "epoch 1")
    f.wait_line("epoch 1")
    time.sleep(1.5)
    complete(world, stream)
    assert f.exit() == 0
    assert ("delete", JOBS, "j-1") not in world.calls


def test_the_start_limit_reads_the_jobs_phase_again_and_never_deletes_a_job_the_watch_lags_behind(
    world: World,
) -> None:
    world.put(JOBS, job("j-1", "Pending"))
    f = Following(world, start_limit=1.0)
    with world._lock:  # the job has started, and the watch has not said so yet
        world.objects[JOBS]["j-1"] = job("j-1", "Running")
    time.sleep(1.5)
    assert ("get", JOBS, "j-1") in world.calls, "its phase read once more at the start limit"
    stream = running_master(world, "epoch 1")
    f.wait_line("epoch 1")
    complete(world, stream)
    assert f.exit() == 0, f.lines
    assert ("delete", JOBS, "j-1") not in world.calls
    assert not any("start limit" in line for line in f.lines)


@pytest.mark.parametrize("items", [("0:c|d.e", "1:c|d.f", "2:x"), ("0:g(y).z", "1:g(y).w", "2:a(b")])
def test_a_loop_item_holding_a_bar_dots_or_parentheses_still_finds_its_own_iterations_job(
    world: World, tmp_path: Path, items: tuple[str, ...]
) -> None:
    streams = []
    for i, item in enumerate(items):
        world.put(PODS, step(f"wf-trial-job-{i}", f"wf.main.trial({item}).job", created=i))
        world.put(JOBS, job(f"j-{i}", "Running", created=i, step=f"wf-trial-job-{i}"))
        name = f"j-{i}-mpimaster-0"
        streams.append(
            running_master(world, f"trial {i}", f"hera-volcano:output loss=0.{i}", name=name, job_name=f"j-{i}")
        )
    f = Following(world, node=f"wf.main.trial({items[1]}).logs", outputs=("loss",), output_dir=str(tmp_path))
    f.wait_line("trial 1")
    complete(world, streams[1], "j-1-mpimaster-0", "j-1", step="wf-trial-job-1", created=1)
    assert f.exit() == 0, f.lines
    assert (tmp_path / "loss").read_text() == "0.1"
    assert "trial 2" not in f.lines and "trial 0" not in f.lines


def test_in_a_loop_each_follower_follows_the_job_its_own_iteration_created(world: World, tmp_path: Path) -> None:
    streams = []
    for i, item in enumerate(["0:lr=0.01", "1:lr=0.1", "2:lr=1"]):
        world.put(PODS, step(f"wf-trial-job-{i}", f"wf.main.trial({item}).job", created=i))
        world.put(JOBS, job(f"j-{i}", "Running", created=i, step=f"wf-trial-job-{i}"))
        name = f"j-{i}-mpimaster-0"
        streams.append(
            running_master(world, f"trial {i}", f"hera-volcano:output loss=0.{i}", name=name, job_name=f"j-{i}")
        )
    f = Following(world, node="wf.main.trial(1:lr=0.1).logs", outputs=("loss",), output_dir=str(tmp_path))
    f.wait_line("trial 1")
    complete(world, streams[1], "j-1-mpimaster-0", "j-1", step="wf-trial-job-1", created=1)
    assert f.exit() == 0, f.lines
    assert (tmp_path / "loss").read_text() == "0.1", "iteration 1's own value, not the newest job's"
    assert "trial 2" not in f.lines and "trial 0" not in f.lines


def test_after_an_argo_retry_the_new_attempts_job_is_followed_without_the_old_values(
    world: World, tmp_path: Path
) -> None:
    world.put(PODS, step("wf-run-job-a", "wf.main.run.job(0)"))
    world.put(JOBS, job("j-a", "Running", step="wf-run-job-a"))
    first = running_master(
        world, "hera-volcano:output loss=9.9", "then it broke", name="j-a-mpimaster-0", job_name="j-a"
    )
    f = Following(world, node="wf.main.run.logs", step_retries=1, outputs=("loss",), output_dir=str(tmp_path))
    f.wait_line("then it broke")
    first.end()
    world.put(JOBS, job("j-a", "Failed", step="wf-run-job-a"))
    world.put(PODS, step("wf-run-job-a", "wf.main.run.job(0)", "Failed"))
    time.sleep(0.5)
    assert f.thread.is_alive(), "Argo retries the step: the follower waits for the next attempt"
    world.put(PODS, step("wf-run-job-b", "wf.main.run.job(1)", created=5))
    world.put(JOBS, job("j-b", "Running", step="wf-run-job-b", created=5))
    second = running_master(world, "second attempt, no report", name="j-b-mpimaster-0", job_name="j-b", created=5)
    f.wait_line("second attempt")
    complete(world, second, "j-b-mpimaster-0", "j-b", step="wf-run-job-b", created=5)
    assert f.exit() == 1
    assert f.lines[-1].startswith("The job's rank 0 reported no value for: loss")
    assert not (tmp_path / "loss").exists(), "the first attempt's 9.9 is not the second's"


def test_a_dropped_stream_is_resumed_from_its_last_line_without_repeating_or_losing_one(world: World) -> None:
    world.put(JOBS, job("j-1", "Running"))
    world.logs[(MASTER, "mpimaster")] = logged(*[f"line {i}" for i in range(6)])
    world.fault("log", PODS, Drop(after=3))
    f = Following(world)
    world.put(PODS, pod(MASTER, "j-1"))
    f.wait_line("line 5")
    world.put(JOBS, job("j-1", "Completed"))
    assert f.exit() == 0
    assert [line for line in f.lines if line.startswith("line")] == [f"line {i}" for i in range(6)]
    assert f"=== reattaching to {MASTER}" in f.lines
    since = [options.get("since_time") for _, _, options in world.log_calls if options.get("follow")]
    assert since[:2] == [None, "2026-01-01T00:00:10Z"], "from the second of the last line relayed"


def test_streams_that_end_at_once_back_off_and_the_failure_is_reported(world: World) -> None:
    world.put(JOBS, job("j-1", "Running"))
    world.logs[(MASTER, "mpimaster")] = []
    world.fault("log", PODS, *[End(after=0)] * 50)
    f = Following(world, backoff_max=1.0)
    world.put(PODS, pod(MASTER, "j-1"))
    time.sleep(3)
    follows = [options for _, _, options in world.log_calls if options.get("follow")]
    # Back-off 2 s at first, then at most backoff_max (1 s): a handful of tries in 3 s, not hundreds.
    assert 2 <= len(follows) <= 4, len(follows)
    world.put(JOBS, job("j-1", "Completed"))
    assert f.exit() == 0


def test_a_stream_that_never_ends_is_cut_once_the_job_has_ended(world: World) -> None:
    world.put(JOBS, job("j-1", "Running"))
    f = Following(world, drain=1.0)
    stream = running_master(world, "rank 0")
    f.wait_line("rank 0")
    done = time.monotonic()
    world.put(JOBS, job("j-1", "Completed"))
    assert f.exit() == 0 and time.monotonic() - done < 3
    assert stream.closed and f.lines[-1] == "Job j-1 is Completed"


def test_a_last_stream_that_failed_is_read_again_once_the_job_has_ended(world: World) -> None:
    """The e2e failure: the stream was asked for while the kubelet still said the container was waiting to start
    (400), the program ran and ended in between, the job Completed: every rank's line is still shown."""
    world.put(JOBS, job("j-1", "Running"))
    f = Following(world)
    world.put(PODS, pod(MASTER, "j-1"))  # no log yet: the stream request is answered 400
    f.wait_line(f"=== logs of {MASTER}")
    time.sleep(0.3)
    world.logs[(MASTER, "mpimaster")] = logged("Hello from rank 0", "Hello from rank 1")
    world.put(PODS, pod(MASTER, "j-1", running=False))
    world.put(JOBS, job("j-1", "Completed"))
    assert f.exit() == 0
    assert f.lines[-3:] == ["Hello from rank 0", "Hello from rank 1", "Job j-1 is Completed"]


def test_a_last_stream_that_broke_is_read_again_from_its_last_line_once_the_job_has_ended(world: World) -> None:
    """The job ended before the broken stream's back-off was over: the rest of the log is read once, from the
    second of the last line relayed, repeating none."""
    world.put(JOBS, job("j-1", "Running"))
    world.logs[(MASTER, "mpimaster")] = logged(*[f"line {i}" for i in range(6)])
    world.fault("log", PODS, Drop(after=2))
    f = Following(world)
    world.put(PODS, pod(MASTER, "j-1"))
    f.wait_line("line 1")
    world.put(JOBS, job("j-1", "Completed"))
    assert f.exit() == 0, f.lines
    assert [line for line in f.lines if line.startswith("line")] == [f"line {i}" for i in range(6)]
    assert f"=== reattaching to {MASTER}" not in f.lines, "the job had ended: read once, not followed"
    again = [options for _, _, options in world.log_calls if not options.get("follow")]
    assert [o.get("since_time") for o in again] == ["2026-01-01T00:00:10Z"]


@pytest.mark.parametrize("outputs", [(), ("loss",)], ids=["no values", "values to give"])
def test_a_watch_the_server_refuses_ends_the_follower_at_once_saying_why(
    world: World, outputs: tuple[str, ...], tmp_path: Path
) -> None:
    """RBAC does not change while the follower waits: without the right to watch jobs it ends, rather than
    waiting out its limit; it fails only when it has values to give."""
    world.refuse("list", JOBS)
    f = Following(world, settle=False, outputs=outputs, output_dir=str(tmp_path), limit=BOUND * 10)
    assert f.exit() == (1 if outputs else 0)
    assert any("refused the watch" in line and "Forbidden" in line for line in f.lines), f.lines
    assert [c[1] for c in world.calls if c[0] == "list"].count(JOBS) == 1, "asked once, not until the limit"


def test_a_failing_watch_is_reported_and_the_follower_recovers(world: World) -> None:
    from tests.client.faults import UNAVAILABLE, Answer

    world.put(JOBS, job("j-1", "Running"))
    world.fault("watch", JOBS, Answer.of(UNAVAILABLE))
    f = Following(world)
    stream = running_master(world, "after the fault")
    f.wait_line("after the fault")
    complete(world, stream)
    assert f.exit() == 0
    assert any("watch jobs" in r and "ServiceUnavailable" in r for r in f.reported), f.reported


def test_a_refused_line_of_a_failed_attempt_does_not_fail_the_next_attempt(world: World, tmp_path: Path) -> None:
    world.put(PODS, step("wf-run-job-a", "wf.main.run.job(0)"))
    world.put(JOBS, job("j-a", "Running", step="wf-run-job-a"))
    first = running_master(world, FORGED, "then it broke", name="j-a-mpimaster-0", job_name="j-a")
    f = Following(world, node="wf.main.run.logs", step_retries=1, outputs=("loss",), output_dir=str(tmp_path))
    f.wait_line("then it broke")
    first.end()
    world.put(JOBS, job("j-a", "Failed", step="wf-run-job-a"))
    world.put(PODS, step("wf-run-job-a", "wf.main.run.job(0)", "Failed"))
    world.put(PODS, step("wf-run-job-b", "wf.main.run.job(1)", created=5))
    world.put(JOBS, job("j-b", "Running", step="wf-run-job-b", created=5))
    second = running_master(world, "hera-volcano:output loss=0.5", name="j-b-mpimaster-0", job_name="j-b", created=5)
    f.wait_line("loss=0.5")
    complete(world, second, "j-b-mpimaster-0", "j-b", step="wf-run-job-b", created=5)
    assert f.exit() == 0, f.lines
    assert (tmp_path / "loss").read_text() == "0.5"
