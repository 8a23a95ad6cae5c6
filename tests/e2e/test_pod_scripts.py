"""The scripts that run in the workflows' pods, on the real cluster (issue 19): the MPI master's wait ends at once
when its job is deleted, and the log follower costs no requests while its gang waits to be scheduled.

Both scenarios run in the batch of every batched scenario (harness.Batch): the second on a gang that cannot fit, like
scenario 13.3's, whose step waits twice as long for its deadline.
"""

from __future__ import annotations

import time

import pytest
from harness import NAMESPACE, Batch, Cluster, Entry, PodRecord, Record
from workloads import mpi_workflow

#: How long after the kubelet's "Killing" event (its SIGTERM) a container may end: well within the grace period its
#: pod keeps (30 s), after which it would be killed (137). The runtime's own time to stop a container and record its
#: end grows with the node's load: under CI's full batch (2026-12-06, Argo 3.7) the workers' shells, which end at
#: once, took 3 s and the master's wait 4 s.
AFTER_ITS_SIGNAL = 10
#: The master's wait against the workers' shells beside it, on the same node at the same moment: the event and
#: finishedAt count whole seconds.
BESIDE_THE_WORKERS = 1
#: The step's deadline of the gang that cannot fit (19.3), counted from its pod's start.
QUIET_DEADLINE = 300
#: This module's batched workflows wait this long at least (conftest.py submits the longest waits first).
BATCH_WAITS = QUIET_DEADLINE
#: How long 19.3's follower must have had every watch open while its gang waited: a follower polling every 3 s
#: would have asked 20 times.
QUIET = 60
#: Workers that never become Ready (no sshd) but end at once on SIGTERM, unlike `sleep` as PID 1.
IDLE_WORKER = ["/bin/sh", "-c", "trap 'exit 0' TERM; while :; do sleep 1; done"]


def waiting_master(cluster: Cluster, workflow: str, timeout: float = 240) -> str:
    """Until the workflow's job has a master whose wait for its workers is running and workers whose containers
    run (a container the kubelet starts just as its pod is deleted gets SIGTERM before its shell has set its trap,
    and PID 1 ignores it: that worker would take its whole grace period); returns the job's name."""

    def waiting() -> bool:
        names = cluster.recorder.jobs_of(workflow)
        if not names:
            return False
        master, workers = False, 0
        for pod in cluster.job_pods(names[0]):
            for status in pod.status.init_container_statuses or []:
                if status.name == "wait-for-workers" and status.state and status.state.running:
                    master = True
            statuses = pod.status.container_statuses or []
            if (pod.metadata.labels or {}).get("volcano.sh/task-spec") == "mpiworker" and statuses:
                workers += all(c.state and c.state.running for c in statuses)
        return master and workers == 2

    cluster.wait_for(waiting, f"the master of {workflow} waiting for its workers", timeout)
    return cluster.recorder.jobs_of(workflow)[0]


def signalled(cluster: Cluster, pod: PodRecord) -> dict[str, float]:
    """When the kubelet set out to stop each of the pod's containers (its "Killing" event, then SIGTERM)."""
    out: dict[str, float] = {}
    for event in cluster.events(pod.name):
        if event.reason == "Killing" and event.message.startswith("Stopping container "):
            at = event.first_timestamp or event.event_time
            out.setdefault(event.message.removeprefix("Stopping container ").strip(), at.timestamp())
    return out


def timeline(cluster: Cluster, pods: list[PodRecord], start: float) -> str:
    """Where a deleted job's pods spent their time, in seconds from ``start``: their deletion asked for (the
    garbage collector), their containers signalled (the kubelet's SIGTERM) and ended (SIGTERM answered), the pod gone
    (the kubelet's teardown)."""

    def at(t: float | None) -> str:
        return "?" if t is None else f"{t - start:+.1f}"

    def containers(p: PodRecord) -> str:
        sent = signalled(cluster, p)
        return ", ".join(f"{c} signalled {at(sent.get(c))} ended {at(t)}" for c, t in sorted(p.ended.items()))

    def gone(p: PodRecord) -> str:
        return at(cluster.recorder.deleted.get(f"pod/{p.name}"))

    return "; ".join(
        f"{p.name}: deletion {at(p.deleting_at)}, {containers(p)}, gone {gone(p)}"
        for p in sorted(pods, key=lambda p: p.name)
    )


def submit_batch(b: Batch, cluster: Cluster) -> None:
    def delete_job(entry: Entry) -> None:
        job = waiting_master(cluster, entry.name)
        time.sleep(3)  # well into its watch of the workers
        entry.seen["job"] = job
        entry.acted = time.time()
        cluster.kubectl("-n", NAMESPACE, "delete", "jobs.batch.volcano.sh", job, "--wait=false").ok()

    if b.runs(test_deleting_a_job_whose_master_waits_removes_every_pod_at_once):
        idle = mpi_workflow(
            "delete-waiting", command=["mpi_hello_world"], wait_seconds=600, worker={"command": IDLE_WORKER}
        )
        b.submit("delete-waiting", idle, delete_job)
    if not b.runs(test_a_waiting_gang_costs_its_follower_nothing):
        return
    # 3 workers asking for a whole CPU each, on a node of 2: the gang waits for its step's deadline. 300 s, not 13.3's
    # 150: under the batch's load the follower's pod once started 135 s after the step's, leaving its watches 15 s.
    b.submit(
        "quiet-wait",
        mpi_workflow(
            "quiet-wait", command=["mpi_hello_world"], workers=3, deadline=QUIET_DEADLINE,
            follow_timeout=QUIET_DEADLINE + 10, worker={"resources": {"requests": {"cpu": "1"}}},
        ),
    )  # fmt: skip


@pytest.mark.batch
@pytest.mark.scenario(
    "19.2 a job deleted while its master waits for its workers: the wait ends at once on SIGTERM, as the workers do;"
    " no container is killed at the end of its grace period"
)
def test_deleting_a_job_whose_master_waits_removes_every_pod_at_once(
    cluster: Cluster, batch: Batch, record_property: Record
) -> None:
    """What is ours is how the master's wait answers SIGTERM, measured from the kubelet's own record of sending it;
    how soon the garbage collector deletes the pods and the kubelet gets to each of them and tears it down is
    Kubernetes' own cost, which grows with the node's load (4 s alone, up to 28 s in CI's full batch): it is printed.
    The workers' shells, which end at once on SIGTERM, measure the runtime's part beside the master's wait."""
    entry = batch.get("delete-waiting")
    job = entry.seen["job"]
    assert entry.acted is not None
    cluster.wait_for(lambda: not cluster.job_pods(job), f"the pods of {job} gone", 90)
    cluster.wait_for(lambda: cluster.recorder.gone_at(job) is not None, f"the recorder to see {job} go", 30)
    pods = cluster.recorder.select(**{"volcano.sh/job-name": job})
    assert len(pods) == 3 and all(p.deleted for p in pods), pods
    gone = max(cluster.recorder.deleted[f"pod/{p.name}"] for p in pods)
    record_property("took", gone - entry.acted)
    (master,) = [p for p in pods if p.labels.get("volcano.sh/task-spec") == "mpimaster"]
    workers = [p for p in pods if p is not master]
    running = [(master, "wait-for-workers"), *((w, "mpiworker") for w in workers)]
    cluster.wait_for(
        lambda: all(c in signalled(cluster, p) for p, c in running), "the kubelet's Killing events of the pods", 30
    )
    seen = f"seconds after the job's deletion: {timeline(cluster, pods, entry.acted)}"
    # Each ended on SIGTERM by its own trap (143: the wait's PID 1; 0: the workers' shells), none killed (137) at the
    # end of the grace period its pod keeps (Kubernetes' default 30 s).
    assert master.exit_codes.get("wait-for-workers") == 143, f"the wait's exit code {master.exit_codes}; {seen}"
    assert all(w.exit_codes.get("mpiworker") == 0 for w in workers), f"the workers' exit codes; {seen}"
    late = {p.name: p.ended[name] - signalled(cluster, p)[name] for p, name in running}
    for pod, name in running:
        assert late[pod.name] <= AFTER_ITS_SIGNAL, f"{pod.name}'s {name} ended {late[pod.name]:.0f} s after; {seen}"
    workers_late = max(late[w.name] for w in workers)
    assert late[master.name] <= workers_late + BESIDE_THE_WORKERS, f"the wait ended after the workers; {seen}"
    print(seen)
    wf = cluster.wait(entry.name, timeout=300)
    assert wf["status"]["phase"] == "Failed"


@pytest.mark.batch
@pytest.mark.scenario("19.3 a gang waiting to be scheduled: its follower makes no request beyond its two watches")
def test_a_waiting_gang_costs_its_follower_nothing(cluster: Cluster, batch: Batch, record_property: Record) -> None:
    entry = batch.get("quiet-wait")
    wf = cluster.wait(entry.name, timeout=QUIET_DEADLINE + 300)
    pods = {n["displayName"]: n.get("id", "") for n in wf["status"]["nodes"].values()}
    assert "follow-logs" in pods and "submit-job" in pods
    mine = [r for r in cluster.requests() if r.pod.startswith(entry.name)]
    # The follower pod's own requests; its executor's reports (workflowtaskresults) are Argo's, not the script's.
    follower = [r for r in mine if "-follow" in r.pod and r.what != "workflowtaskresults"]
    step = [r for r in mine if "-submit" in r.pod]
    assert follower and step, mine
    start = min(r.at for r in follower)
    end = max(r.at for r in step)  # the step polls the job until its deadline
    minutes = (end - start) / 60
    watches = [r for r in follower if r.verb == "watch"]
    others = [r for r in follower if r.verb != "watch" and r.at <= end]
    polls = [r for r in step if r.verb == "get" and r.what == "jobs"]
    record_property("took", end - start)
    print(
        f"while the gang waited {end - start:.0f} s: follower {len(watches)} watches + {len(others)} other requests"
        f" ({', '.join(sorted({f'{r.verb} {r.what}' for r in others}))}); the step polled the job {len(polls)} times"
        f" ({len(polls) / minutes:.1f}/min); watches at {', '.join(f'{r.what} +{r.at - start:.0f}' for r in watches)}"
    )
    assert sorted({r.what for r in watches}) == ["jobs", "pods"]
    # Discovery and one list per watch when the watches open, and again once the job names its lead task (the
    # lead task's pods get a watch of their own): a fixed handful, not a rate. Polling every 3 s would make over 50.
    assert len(others) <= 12, others
    # Every watch open: the first watch of each kind (a watch the server ends is resumed: one more watch request,
    # no list). The follower also goes on after its step's deadline, so its last watch can come after the step's end.
    quiet = max(min(r.at for r in watches if r.what == what) for what in ("jobs", "pods")) + 5
    assert end - quiet >= QUIET, f"the gang waited only {end - quiet:.0f} s with every watch open"
    assert not [r for r in others if r.at > quiet], "requests while the watches were open"
