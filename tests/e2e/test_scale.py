"""Many gangs on many GPU nodes sharing queues (issue 22): kwok's fake nodes beside the real one, Volcano's real
scheduler, Argo's real controller. The Volcano Jobs' pods go to the fake nodes (a node selector and a toleration,
through the builders' pod settings) and "work" for the delay their annotation gives; Argo's own pods (the job steps,
the followers) run on the real node.

Sizes: `HERA_VOLCANO_SCALE=small` (the default, inside `make test`: a few minutes) or `full` (`make test-scale`,
`make bench`: 64 nodes of 8 GPUs, 40 workflows, 30 waiting). Argo 4.1 line only: the scenarios measure Volcano and the
workflows' own pods, which do not differ between the Argo lines. They run after every other scenario of the line,
and remove their fake nodes at the end.

What is checked, while it runs (sampled every second from the API server):
- no gang is partly bound for longer than a scheduling cycle: for every job, the number of its pods on a node is 0
  or at least its minAvailable (a gang's pods are bound one request at a time, so a sample may fall between two of
  them: a job seen partly bound in two samples in a row, a second apart, is a violation);
- no queue's allocation exceeds its capability (Volcano's own `status.allocated`);
- jobs admitted in the order Volcano promises: Volcano orders a queue's waiting jobs by priority, then by their
  PodGroup's creation (the scheduler's JobInfo takes its creation time from the PodGroup, which Volcano's controller
  creates in its own order), and does not reserve: a smaller job may be admitted while a larger one waits. So a job
  is never admitted (its PodGroup past Pending) after a job of its queue and priority whose PodGroup came later and
  asks for as much or more. The same order by first bound pod is reported, not asserted: the job controller creates
  an admitted job's pods in its own order too;
- every follower ends within 15 s of its job finishing, though a fake pod's log stream never ends.
"""

from __future__ import annotations

import itertools
import json
import os
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest
import yaml
from harness import NAMESPACE, PODGROUPS, SERVICE_ACCOUNT, VOLCANO, Cluster, layout

import hera_volcano as hv
from hera_volcano.pods.run import Settings

SCALE = os.environ.get("HERA_VOLCANO_SCALE", "small")


@dataclass(frozen=True)
class Size:
    nodes: int
    burst: int  # workflows submitted at once
    max_workers: int  # the largest gang's GPU workers
    queue_gpus: int  # each of the two queues' capability
    waiting: int  # workflows left waiting for the cost measurement
    window: int  # seconds the cost is measured over
    work: int  # seconds each rank "works"


SIZES = {
    "small": Size(nodes=8, burst=8, max_workers=8, queue_gpus=16, waiting=4, window=20, work=10),
    "full": Size(nodes=64, burst=40, max_workers=16, queue_gpus=128, waiting=30, window=120, work=30),
}
SIZE = SIZES[SCALE]
GPUS_PER_NODE = 8
QUEUES = ("team-a", "team-b")
WAIT_QUEUE = "team-wait"
QUIET_POLL = 15  # seconds between the job step's checks of its job, for the waiting-cost goal (poll_seconds=)
KWOK_IMAGE = "busybox:1.37.0"  # never pulled: fake nodes run nothing
FAKE = hv.PodSettings(
    node_selector={"type": "kwok"},
    tolerations=[hv.Toleration(key="kwok.x-k8s.io/node", operator="Exists", effect="NoSchedule")],
)
RESULTS = Path(os.environ.get("HERA_VOLCANO_SCALE_RESULTS", "/dev/null"))


def on_fake_nodes(work: int) -> hv.PodSettings:
    """Pod settings that put a job's pods on the fake nodes, each "working" ``work`` seconds. The jitter equals the
    delay: kwok takes a jitter below the delay as the delay itself (0 s would complete every pod at once)."""
    annotations = {
        "pod-complete.stage.kwok.x-k8s.io/delay": f"{work}s",
        "pod-complete.stage.kwok.x-k8s.io/jitter-delay": f"{work}s",
    }
    return hv.PodSettings(node_selector=FAKE.node_selector, tolerations=FAKE.tolerations, annotations=annotations)


def gang(kind: str, workers: int, queue: str, work: int, priority: str | None = None) -> hv.VolcanoJob:
    """An MPI or PyTorch gang of ``workers`` workers with one GPU each, on the fake nodes."""
    pod = on_fake_nodes(work)
    if kind == "mpi":
        return hv.mpi_job(
            image=KWOK_IMAGE, program=hv.Program.command(["true"]), workers=workers, queue=queue, pod=pod,
            priority_class_name=priority, worker_pod=hv.PodSettings(gpus=1), service_account=SERVICE_ACCOUNT,
        )  # fmt: skip
    return hv.pytorch_job(
        image=KWOK_IMAGE, program=hv.Program.command(["true"]), workers=workers, queue=queue, pod=pod,
        priority_class_name=priority, worker_pod=hv.PodSettings(gpus=1),
    )  # fmt: skip


def workflow(name: str, job: hv.VolcanoJob, deadline: int = 1800, poll_seconds: int | None = None) -> str:
    from hera.workflows import DAG, Workflow

    with Workflow(
        generate_name=f"{name}-", namespace=NAMESPACE, entrypoint="main", service_account_name=SERVICE_ACCOUNT
    ) as w:
        run = hv.job_dag(replace(job, deadline=deadline), name="gang", poll_seconds=poll_seconds)
        with DAG(name="main"):
            run(name="gang")
        w.on_exit = hv.cleanup_on_failure()
    return hv.to_yaml(w)


def step_alone(name: str, job: hv.VolcanoJob, deadline: int = 1800) -> str:
    """The job's step alone in a Workflow (no follower, no exit handler): what Argo itself costs a workflow that runs
    the job through a resource step."""
    from hera.workflows import Workflow

    with Workflow(
        generate_name=f"{name}-", namespace=NAMESPACE, entrypoint="gang-job", service_account_name=SERVICE_ACCOUNT
    ) as w:
        hv.job_template(replace(job, deadline=deadline), name="gang-job")
    return hv.to_yaml(w)


def burst_sizes(count: int, largest: int) -> list[int]:
    """Gang sizes from 2 to ``largest`` workers, spread over ``count`` workflows."""
    return [2 + (i * (largest - 2)) // max(count - 1, 1) for i in range(count)]


@dataclass
class Sampler:
    """Every second: each job's bound pods, each queue's allocation against its capability, each PodGroup's phase."""

    cluster: Cluster
    samples: int = 0
    partly: dict[str, list[float]] = field(default_factory=dict)  # job -> times seen partly bound
    groups: dict[str, dict[str, Any]] = field(default_factory=dict)  # job -> its PodGroup, as last seen
    admitted: dict[str, float] = field(default_factory=dict)  # job -> first time its PodGroup was seen past Pending
    overuse: list[str] = field(default_factory=list)
    error: str | None = None
    _stop: threading.Event = field(default_factory=threading.Event)

    def __enter__(self) -> Sampler:
        threading.Thread(target=self._run, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()

    def _run(self) -> None:
        try:
            self._sample()
        except Exception as e:  # the test fails on it, rather than on too few samples
            self.error = repr(e)

    def _sample(self) -> None:
        custom, core = self.cluster.custom, self.cluster.core
        while not self._stop.wait(1):
            now = time.time()
            jobs = custom.list_namespaced_custom_object(*VOLCANO[:2], NAMESPACE, VOLCANO[2])["items"]
            pods = core.list_namespaced_pod(NAMESPACE).items
            bound: dict[str, int] = {}
            for pod in pods:
                owner = (pod.metadata.labels or {}).get("volcano.sh/job-name")
                if owner and pod.spec.node_name and pod.metadata.deletion_timestamp is None:
                    bound[owner] = bound.get(owner, 0) + 1
            for job in jobs:
                name, need = job["metadata"]["name"], job["spec"].get("minAvailable", 0)
                phase = ((job.get("status") or {}).get("state") or {}).get("phase", "")
                if phase in ("", "Pending", "Inqueue", "Running") and 0 < bound.get(name, 0) < need:
                    self.partly.setdefault(name, []).append(now)
            for group in custom.list_namespaced_custom_object(*PODGROUPS[:2], NAMESPACE, PODGROUPS[2])["items"]:
                if (job_name := owner_job(group)) is not None:
                    self.groups[job_name] = group
                    if (group.get("status") or {}).get("phase") not in (None, "", "Pending"):
                        self.admitted.setdefault(job_name, now)
            for queue in custom.list_cluster_custom_object("scheduling.volcano.sh", "v1beta1", "queues")["items"]:
                capability = queue["spec"].get("capability") or {}
                allocated = (queue.get("status") or {}).get("allocated") or {}
                for resource, limit in capability.items():
                    if resource in allocated and amount(allocated[resource]) > amount(limit):
                        self.overuse.append(f"{queue['metadata']['name']}: {resource} {allocated[resource]} > {limit}")
            self.samples += 1

    def stuck(self) -> dict[str, list[float]]:
        """Jobs seen partly bound in two samples in a row (about a second apart): a gang held half-placed."""
        return {j: t for j, t in self.partly.items() if any(0.5 < b - a < 2.5 for a, b in itertools.pairwise(t))}


def amount(value: object) -> float:
    from hera_volcano.kube.quantities import parse_quantity

    return float(parse_quantity(str(value)))


@pytest.fixture(scope="module")
def scale(cluster: Cluster) -> Iterator[Cluster]:
    names = cluster.node.add_fake_nodes(SIZE.nodes, gpus=GPUS_PER_NODE)
    queues = [hv.Queue(q, capability={"nvidia.com/gpu": SIZE.queue_gpus}, reclaimable=False) for q in QUEUES]
    # Smaller than any gang sent to it: its gangs wait until they are deleted, however long a measurement takes.
    queues.append(hv.Queue(WAIT_QUEUE, capability={"nvidia.com/gpu": 1}, reclaimable=False))
    priorities = [
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": n}, "value": v}
        for n, v in (("hera-volcano-high", 1000), ("hera-volcano-low", 10))
    ]
    cluster.kubectl("apply", "-f", "-", input=hv.to_yaml(*queues) + "---\n" + yaml.safe_dump_all(priorities)).ok()
    assert len(names) == SIZE.nodes
    yield cluster
    cluster.delete_workflows()
    cluster.kubectl("delete", "queues.scheduling.volcano.sh", *QUEUES, WAIT_QUEUE, "--wait=false")
    cluster.node.remove_fake_nodes()


def first_bind(cluster: Cluster, job: str) -> float | None:
    times = [p.bound_at for p in cluster.recorder.select(**{"volcano.sh/job-name": job}) if p.bound_at]
    return min(times) if times else None


def record(name: str, data: dict[str, Any]) -> None:
    print(f"scale {SCALE}: {name}: {json.dumps(data)}")
    if str(RESULTS) != "/dev/null":
        with RESULTS.open("a") as f:
            f.write(json.dumps({"scenario": name, "size": SCALE, **data}) + "\n")


@pytest.mark.scenario(f"22.3 a burst of gangs into two queues ({SCALE}): every workflow Succeeded, no half-placed gang")
def test_a_burst_of_gangs_drains_with_queues_holding(scale: Cluster) -> None:
    cluster = scale
    sizes = burst_sizes(SIZE.burst, SIZE.max_workers)
    gangs = [gang("mpi" if i % 2 else "pytorch", w, QUEUES[i % 2], SIZE.work) for i, w in enumerate(sizes)]
    manifests = [(f"burst-{i}", workflow(f"burst-{i}", g)) for i, g in enumerate(gangs)]
    # Its deadline only has to outlast explain's look at it: the longer it is, the longer the scenario.
    never_fits = gang("mpi", SIZE.nodes * GPUS_PER_NODE + 1, QUEUES[0], SIZE.work)
    never = workflow("never-fits", never_fits, deadline=4 * SIZE.work)
    with Sampler(cluster) as sampler:
        started = time.time()
        names = [cluster.start(m) for _, m in manifests]
        impossible = cluster.start(never)
        why = explained(cluster, impossible)
        finished = [cluster.wait(n, timeout=1800) for n in names]
        drained = time.time() - started
    assert [w["status"]["phase"] for w in finished] == ["Succeeded"] * len(names)
    stopped = cluster.wait(impossible, timeout=600)
    assert stopped["status"]["phase"] == "Failed"
    [never_job] = cluster.recorder.jobs_of(impossible)
    assert cluster.recorder.phases(never_job)[:1] == ["Pending"] and first_bind(cluster, never_job) is None
    assert "capability" in why, why
    assert sampler.error is None, f"the sampler failed: {sampler.error}"
    assert sampler.samples > 10
    assert not sampler.stuck(), f"gangs held partly bound: {sampler.stuck()}"
    assert not sampler.overuse, sampler.overuse
    jobs = {n: cluster.recorder.jobs_of(n)[0] for n in names}
    created = {n: sampler.groups[jobs[n]]["metadata"]["creationTimestamp"] for n in names}
    order = overtaken(names, sizes, created, {n: sampler.admitted.get(jobs[n]) for n in names})
    by_bind = overtaken(names, sizes, created, {n: first_bind(cluster, jobs[n]) for n in names})
    endings, in_argo = follower_endings(cluster, finished)
    cluster.delete_workflows()
    # The floor (the same jobs without Argo) only measures: the benchmark's sizes, not make test's.
    floor, floor_cpu = drain_without_argo(cluster, gangs) if SCALE == "full" else (None, None)
    # Only the benchmark needs them: the same burst as job steps alone (Argo's share of the drain), and as our
    # workflows with followers that do nothing (the follower's pod apart from its script).
    parts = {}
    if SCALE == "full":
        parts["steps_alone"] = drain_workflows(cluster, [step_alone(f"alone-{i}", g) for i, g in enumerate(gangs)])
        parts["idle_followers"] = drain_workflows(
            cluster, [idle_follower(workflow(f"idle-{i}", g)) for i, g in enumerate(gangs)]
        )
    alone, idle = (parts[k][0] if k in parts else None for k in ("steps_alone", "idle_followers"))
    record(
        "burst",
        {
            "steps_alone_s": alone and round(alone, 1),
            "drain_over_steps_alone": alone and round(drained / alone, 2),
            "steps_alone_over_floor": alone and floor and round(alone / floor, 2),
            "idle_followers_s": idle and round(idle, 1),
            "idle_followers_over_floor": idle and floor and round(idle / floor, 2),
            "host_cpu_s": {"floor": floor_cpu and round(floor_cpu, 1), **{k: round(v[1], 1) for k, v in parts.items()}},
            "nodes": SIZE.nodes,
            "gpus": SIZE.nodes * GPUS_PER_NODE,
            "gangs": len(names),
            "queues": len(QUEUES),
            "drain_s": round(drained, 1),
            "floor_s": floor and round(floor, 1),
            "drain_over_floor": floor and round(drained / floor, 2),
            "partly_bound_seen_once": len(sampler.partly),
            "partly_bound_held": len(sampler.stuck()),
            "queue_overuse": len(sampler.overuse),
            "overtaken_in_admission": len(order),
            "overtaken_in_first_bind": len(by_bind),
            "follower_end_after_job_s_max": round(max(endings), 1),
            "follower_step_end_in_argo_after_job_s_max": round(max(in_argo), 1),
            "settings": layout.settings(),
        },
    )
    assert not order, f"admitted after a later PodGroup of their queue that asked as much or more: {order}"
    assert max(endings) <= 15, f"followers ended {max(endings):.0f} s after their job"


def explained(cluster: Cluster, workflow: str) -> str:
    """What `hera-volcano explain` says of a gang waiting for its queue, once its PodGroup is there."""
    import sys

    def report() -> str:
        run = cluster.run([sys.executable, "-m", "hera_volcano", "explain", workflow, "-n", NAMESPACE], timeout=120)
        return run.out if run.code == 0 else ""

    cluster.wait_for(lambda: "PodGroup" in report(), f"explain of {workflow} to show its PodGroup", 180)
    text = report()
    assert QUEUES[0] in text and "nvidia.com/gpu" in text, text
    return text


def busy_seconds() -> float:
    """CPU-seconds the host has been busy since it booted, all cores (/proc/stat): the real node's pods, the kubelet,
    containerd and the control plane alike, which share its cores."""
    with open("/proc/stat") as f:
        ticks = [int(v) for v in f.readline().split()[1:]]
    return (sum(ticks) - ticks[3] - ticks[4]) / os.sysconf("SC_CLK_TCK")  # less idle and iowait


def drain_without_argo(cluster: Cluster, gangs: list[hv.VolcanoJob]) -> tuple[float, float]:
    """The floor: the same Volcano Jobs created at once with kubectl, no Argo; seconds until all are Completed, and
    the host's busy CPU-seconds meanwhile."""
    label = {"hera-volcano/floor": "burst"}
    docs = [{**g.to_dict(), "metadata": {**g.to_dict()["metadata"], "labels": label}} for g in gangs]
    busy = busy_seconds()
    started = time.time()
    cluster.kubectl("-n", NAMESPACE, "create", "-f", "-", input=yaml.safe_dump_all(docs)).ok()

    def done() -> bool:
        jobs = cluster.custom.list_namespaced_custom_object(
            *VOLCANO[:2], NAMESPACE, VOLCANO[2], label_selector="hera-volcano/floor=burst"
        )["items"]
        return len(jobs) == len(gangs) and all(j.get("status", {}).get("state", {}).get("phase") == "Completed"
                                               for j in jobs)  # fmt: skip

    cluster.wait_for(done, "the floor's jobs Completed", 1800)
    took, cpu = time.time() - started, busy_seconds() - busy
    cluster.kubectl(
        "-n", NAMESPACE, "delete", "jobs.batch.volcano.sh", "-l", "hera-volcano/floor=burst", "--wait=false"
    )
    return took, cpu


def drain_workflows(cluster: Cluster, manifests: list[str]) -> tuple[float, float]:
    """Workflows submitted at once: seconds until all Succeeded, and the host's busy CPU-seconds meanwhile."""
    busy = busy_seconds()
    started = time.time()
    names = [cluster.start(m) for m in manifests]
    finished = [cluster.wait(n, timeout=1800) for n in names]
    took, cpu = time.time() - started, busy_seconds() - busy
    assert [w["status"]["phase"] for w in finished] == ["Succeeded"] * len(names)
    cluster.delete_workflows()
    return took, cpu


def idle_follower(manifest: str) -> str:
    """Our workflow with its log follower doing nothing (its container sleeps a second): what the follower's pod
    costs the real node apart from its script."""
    doc = yaml.safe_load(manifest)
    followers = [
        t["container"] for t in doc["spec"]["templates"]
        if any(e["name"] == Settings.JOB_SELECTOR for e in t.get("container", {}).get("env", []))
    ]  # fmt: skip
    assert len(followers) == 1, followers
    followers[0]["args"] = ["import time; time.sleep(1)"]  # python3 -c
    return hv.to_yaml(doc)


def overtaken(names: list[str], sizes: list[int], created: dict[str, str], started: dict[str, float | None]
              ) -> list[tuple[str, str]]:  # fmt: skip
    """Pairs (a, b) of one queue where b's PodGroup was created after a's, b asks for as much or more, and b started
    (by ``started``) more than a second before a: Volcano orders a queue's jobs by priority, then by their PodGroup's
    creation, and may start a smaller job first. ``created``: each PodGroup's creationTimestamp (whole seconds)."""
    found = []
    for i, a in enumerate(names):
        for j, b in enumerate(names):
            if i % 2 != j % 2 or sizes[j] < sizes[i] or not created[a] < created[b]:
                continue  # another queue, a smaller job, or one not created later
            start_a, start_b = started[a], started[b]
            if start_a and start_b and start_b < start_a - 1:
                found.append((a, b))
    return found


def follower_endings(cluster: Cluster, finished: list[dict[str, Any]]) -> tuple[list[float], list[float]]:
    """Seconds from each job's end (as the recorder saw its phase) to its follower's end: the follower's own (its
    container's finishedAt, by the kubelet on this host; a pod's status reaches a watcher late under a burst) and its
    step's in Argo (the node's finishedAt: the latest of its containers', so it adds Argo's executor saving the
    step's outputs, slower under a burst on the one real node)."""
    from datetime import datetime

    own, in_argo = [], []
    for wf in finished:
        name = wf["metadata"]["name"]
        [job] = cluster.recorder.jobs_of(name)
        done = cluster.recorder.job_phase_at[job]["Completed"]
        logs = next(n for n in wf["status"]["nodes"].values() if n["displayName"] == "logs")
        pod = cluster.recorder.pods[f"{name}-{logs['templateName']}-{logs['id'].rsplit('-', 1)[-1]}"]
        own.append(pod.ended["main"] - done)
        in_argo.append(datetime.fromisoformat(logs["finishedAt"].replace("Z", "+00:00")).timestamp() - done)
    return own, in_argo


@pytest.mark.scenario("22.3 priority: a high-priority gang submitted into a full queue starts before the waiting ones")
def test_a_high_priority_gang_starts_first(scale: Cluster) -> None:
    cluster = scale
    fill = SIZE.queue_gpus // 2
    # The holders fill the queue until the test frees it (they would work an hour), so every contender is waiting
    # in Volcano's queue when capacity appears: the order it then starts them in is its own, not the test's timing.
    holders = [cluster.start(workflow("holder", gang("mpi", fill, QUEUES[0], 3600, "hera-volcano-low")))
               for _ in range(2)]  # fmt: skip
    cluster.wait_for(lambda: all(cluster.recorder.jobs_of(h) and first_bind(cluster, cluster.recorder.jobs_of(h)[0])
                                 for h in holders), "the queue full", 300)  # fmt: skip
    # Each waiting gang asks for the whole queue, so they run one at a time, in Volcano's order.
    whole = SIZE.queue_gpus
    waiting = [cluster.start(workflow("low", gang("mpi", whole, QUEUES[0], 5, "hera-volcano-low"))) for _ in range(2)]
    cluster.wait_for(lambda: all(cluster.recorder.jobs_of(w) for w in waiting), "the waiting jobs created", 120)
    time.sleep(2)  # the high-priority job comes after the waiting ones
    high = cluster.start(workflow("high", gang("mpi", whole, QUEUES[0], 5, "hera-volcano-high")))
    contenders = [*waiting, high]
    cluster.wait_for(lambda: all(cluster.recorder.jobs_of(n) for n in contenders), "the high-priority job created", 120)
    jobs = [cluster.recorder.jobs_of(n)[0] for n in contenders]
    cluster.wait_for(lambda: waiting_podgroups(cluster) >= set(jobs), "every contender's PodGroup Pending", 120)
    assert all(first_bind(cluster, j) is None for j in jobs), "a contender started while the queue was full"
    held = [cluster.recorder.jobs_of(h)[0] for h in holders]
    cluster.kubectl("-n", NAMESPACE, "delete", f"{VOLCANO[2]}.{VOLCANO[0]}", *held, "--wait=false").ok()
    for name in contenders:
        assert cluster.wait(name, timeout=900)["status"]["phase"] == "Succeeded"
    started = {n: first_bind(cluster, j) for n, j in zip(contenders, jobs, strict=True)}
    assert all(started[high] is not None and started[high] <= started[w] for w in waiting), started  # type: ignore[operator]
    record("priority", {"high_started_before_waiting": True})


def waiting_podgroups(cluster: Cluster) -> set[str]:
    """The Volcano Jobs whose PodGroup exists and waits for its queue (phase Pending), by job name."""
    groups = cluster.custom.list_namespaced_custom_object(*PODGROUPS[:2], NAMESPACE, PODGROUPS[2])
    return {
        job
        for pg in groups["items"]
        if (pg.get("status") or {}).get("phase") == "Pending" and (job := owner_job(pg)) is not None
    }


def owner_job(group: dict[str, Any]) -> str | None:
    """The Volcano Job a PodGroup belongs to (its owner), if any."""
    return next((r["name"] for r in group["metadata"].get("ownerReferences") or [] if r.get("kind") == "Job"), None)


@pytest.mark.full("measures: requests per waiting workflow, ours beside upstream's (19.3 asserts ours)")
@pytest.mark.scenario("22.3 the cost of waiting: requests per second per waiting workflow, ours and upstream's")
def test_waiting_costs_little(scale: Cluster) -> None:
    cluster = scale
    # Half at Argo's default poll (every 5 s), half at QUIET_POLL: the same window measures both.
    half = SIZE.waiting // 2
    polls = [None] * (SIZE.waiting - half) + [QUIET_POLL] * half
    waiting = [cluster.start(workflow("waiting", gang("mpi", 2, WAIT_QUEUE, 5), poll_seconds=p)) for p in polls]
    cluster.wait_for(
        lambda: all(cluster.recorder.jobs_of(w) for w in waiting), "every waiting workflow's job created", 600
    )
    jobs = [cluster.recorder.jobs_of(w)[0] for w in waiting]
    default, quiet = waiting[: len(waiting) - half], waiting[len(waiting) - half :]
    found = measure(cluster, {"default": default, "quiet": quiet}, SERVICE_ACCOUNT, NAMESPACE, jobs)
    cluster.delete_workflows(keep=[])  # room on the real node for upstream's pods
    theirs = upstream_waiting(cluster)
    cluster.delete_workflows(keep=[])
    ours, quieter = found["default"], found["quiet"]
    record(
        "cost of waiting",
        {"workflows": SIZE.waiting, "window_s": SIZE.window, "ours": ours, f"ours_poll_{QUIET_POLL}s": quieter,
         "upstream": theirs},
    )  # fmt: skip
    # Beyond its open watches a waiting workflow of ours makes only Argo's own requests: its executor's poll of the
    # job every RESOURCE_STATE_CHECK_INTERVAL (0.2 per second at Argo's default) and its reports; the follower asks
    # nothing more.
    assert ours["step_poll_per_s"] > 0, ours  # the measurement saw the steps waiting
    assert ours["other_per_s"] == 0, ours
    # The goal, at most 0.1 requests per second per waiting workflow, takes a poll of QUIET_POLL s (poll_seconds=).
    assert 0 < quieter["per_workflow_per_s_beyond_watches"] <= 0.1, quieter
    if theirs:
        assert ours["per_workflow_per_s_beyond_watches"] <= theirs["per_workflow_per_s_beyond_watches"], (ours, theirs)


def measure(
    cluster: Cluster, groups: dict[str, list[str]], account: str, namespace: str, jobs: list[str]
) -> dict[str, dict[str, Any]]:
    """Each group's requests over one window, once every follower has settled; every job still waits at its end."""
    time.sleep(20)  # every follower settled
    start = time.time()
    time.sleep(SIZE.window)
    end = time.time()
    phases = {j: job_phase(cluster, namespace, j) for j in jobs}
    assert set(phases.values()) <= {"Pending"}, f"a job stopped waiting during the measurement: {phases}"
    requests = cluster.requests(account, namespace)
    return {name: rate(requests, workflows, start, end) for name, workflows in groups.items()}


def job_phase(cluster: Cluster, namespace: str, job: str) -> str | None:
    """A Volcano Job's phase ("Pending" before Volcano gives it one), or None while it does not exist."""
    from kubernetes.client.exceptions import ApiException

    try:
        found = cluster.custom.get_namespaced_custom_object(*VOLCANO[:2], namespace, VOLCANO[2], job)
    except ApiException as e:
        if e.status == 404:
            return None
        raise
    return str(((found.get("status") or {}).get("state") or {}).get("phase") or "Pending")


def upstream_waiting(cluster: Cluster) -> dict[str, Any] | None:
    """Volcano's upstream MPI example run the same way (its job in the full queue, its pods for the fake nodes), in a
    namespace of its own with its own RBAC; None without the upstream examples."""
    path = os.environ.get("HERA_VOLCANO_UPSTREAM")
    if not path:
        return None
    from test_side_by_side import UPSTREAM_NS, _apply, _docs, _in_namespace, _upstream_template

    root = Path(path)
    cluster.kubectl("create", "namespace", UPSTREAM_NS)
    cluster.kubectl("-n", UPSTREAM_NS, "create", "serviceaccount", "argo")
    _apply(cluster, _in_namespace(_docs(root / "integrations/argo/mpi/rbac.yaml"), UPSTREAM_NS))
    _apply(cluster, [_upstream_template(root, "upstream-waits", {
        "schedulerName: volcano": f"schedulerName: volcano\n  queue: {WAIT_QUEUE}",
        "nvidia.com/gpu: 0": "nvidia.com/gpu: 1",
    })])  # fmt: skip
    argo = [str(cluster_argo(cluster)), "-n", UPSTREAM_NS, "submit", "-o", "name", "--from"]
    jobs = [f"up-waits-{i}" for i in range(SIZE.waiting)]
    names = [
        cluster.run([*argo, "workflowtemplate/upstream-waits", "-p", f"job-name={j}"]).ok().out.strip() for j in jobs
    ]
    cluster.wait_for(lambda: all(job_phase(cluster, UPSTREAM_NS, j) for j in jobs), "upstream's jobs created", 600)
    result = measure(cluster, {"upstream": names}, "argo", UPSTREAM_NS, jobs)["upstream"]
    cluster.run([str(cluster_argo(cluster)), "-n", UPSTREAM_NS, "delete", *names])
    return result


def cluster_argo(cluster: Cluster) -> Path:
    return Path(layout.argo_binary(cluster.line, "argo"))


def rate(requests: list[Any], workflows: list[str], start: float, end: float) -> dict[str, Any]:
    """Requests per second per workflow in a window, by verb, and those of the job step's poll alone."""
    mine = [r for r in requests if start <= r.at < end and any(r.pod.startswith(f"{w}-") for w in workflows)]
    seconds = (end - start) * len(workflows)
    by_verb: dict[str, int] = {}
    for r in mine:
        by_verb[r.verb] = by_verb.get(r.verb, 0) + 1
    beyond = [r for r in mine if r.verb != "watch"]
    polls = [r for r in beyond if r.verb == "get" and r.what == "jobs"]
    reports = [r for r in beyond if r.what == "workflowtaskresults"]
    return {
        "by_verb_per_workflow_per_s": {v: round(n / seconds, 4) for v, n in sorted(by_verb.items())},
        "per_workflow_per_s_beyond_watches": round(len(beyond) / seconds, 4),
        "step_poll_per_s": round(len(polls) / seconds, 4),
        "argo_reports_per_s": round(len(reports) / seconds, 4),
        "other_per_s": round((len(beyond) - len(polls) - len(reports)) / seconds, 4),
    }
