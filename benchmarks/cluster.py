"""What the MPI hello world costs on the real cluster (``make bench``, second part): latency and API load.

Four ways to run the same Volcano MPI job, measured side by side in one run on the single-node cluster of
cluster/e2e (started here, torn down after):

- **ours**: ``python -m hera_volcano.mpi_hello | argo submit -``;
- **upstream**: Volcano's ``integrations/argo/mpi/hello-world.yaml`` with its ``rbac.yaml`` (when
  ``HERA_VOLCANO_UPSTREAM`` names the examples), in a namespace of its own;
- **floor**: our Volcano Job alone, ``kubectl create`` and waited for, no Argo;
- **the job step alone**: our workflow's job step (the same job and conditions) alone in a Workflow, no follower and
  no exit handler: what Argo itself adds to the floor for any workflow that runs the job through a resource step;
- **before**: our MPI hello world as it was before issue 33 (``BEFORE``, read from this repository's history: its bash
  follower with three kubectl watches), with that commit's Role beside today's, for the requests, waiting and memory
  rows.

Latency: seconds from submit to the first hello line (its log timestamp) and to the end (Succeeded, or the Job
Completed for the floor), medians of interleaved repetitions. API load: requests the workflow's own pods (their
service account: executor, follower, the master's wait) made, from the API server's audit log, per run, with 1, 3
and 10 runs at once. The job step's poll: latency and requests with argoexec checking the job every 1, 2, 5 and 10 s.
The cost of waiting: requests per minute of one workflow whose gang waits 5 minutes (it cannot fit), ours and
upstream's. Memory: the peak of each follower pod's cgroup and of its follower container, sampled from the node's
cgroups while the runs of the requests rows go. ``--only requests`` measures only the requests, waiting and memory
rows (about half an hour, not forty minutes). Needs root and Linux; otherwise it says so and exits 0. Results go to
RESULTS-cluster.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import threading
import time
from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "cluster" / "e2e"))
RESULTS = Path(__file__).resolve().with_name("RESULTS-cluster.md")

REPS = 3
CONCURRENCY = (1, 3, 10)
POLLS = (1, 2, 5, 10)
WAIT_MINUTES = 5
#: Argo's controller looking at a workflow again sooner after its pods change (its default is 10 s; 1 s is the least
#: its own code advises, informers lagging below that): what is left of the gap to the floor once the controller's
#: requeue delay is taken out, measured against floor runs interleaved with it.
QUICK_REQUEUE = "DEFAULT_REQUEUE_TIME=1s"
#: The job step's poll that brings one waiting workflow to 6 requests a minute (argoexec's GET every 10 s).
CHEAP_POLL = 10
FIRST_LINE_TARGET = 1.2  # ours <= 1.2x the floor to the first output line
END_TARGET = 1.3  # and <= 1.3x to Succeeded (issue 19)
UPSTREAM_NS = "upstream"
#: The job step alone in a Workflow: Argo's own cost of running the job, without our follower and exit handler.
STEP_ALONE = "job step alone"
OURS_USER = "system:serviceaccount:argo:volcano-workflows"
#: The last commit before issue 33 (its bash follower, kubectl in the pods): the rows issue 33 set targets against.
BEFORE = "81e76b2^"
#: Issue 33's target for requests per run: at most this much of upstream's.
REQUESTS_TARGET = 0.8
#: Where the node's pods' memory cgroups are (the kubelet's cgroupfs driver; v1 or v2).
KUBEPODS = (Path("/sys/fs/cgroup/memory/kubepods"), Path("/sys/fs/cgroup/kubepods"))
UPSTREAM_USER = f"system:serviceaccount:{UPSTREAM_NS}:argo"


def _stamp(text: str) -> float:
    return datetime.fromisoformat(text[:26].rstrip("Z") + "+00:00").timestamp()


class Bench:
    def __init__(self, node: Any) -> None:
        import layout

        self.node, self.layout = node, layout
        self.env = {**os.environ, **node.env()}
        self.argo_bin = str(layout.argo_binary(node.current_argo_line() or layout.DEFAULT_ARGO_LINE, "argo"))
        self.upstream = os.environ.get("HERA_VOLCANO_UPSTREAM")
        self.before = before_manifests()

    def sh(self, argv: list[str], input: str | None = None) -> str:
        proc = subprocess.run(argv, input=input, capture_output=True, text=True, env=self.env, check=False)
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)}: {proc.stderr.strip()[-1500:]}")
        return proc.stdout

    def kubectl(self, *args: str, input: str | None = None) -> str:
        return self.sh([str(self.layout.built("kubectl")), *args], input)

    def argo(self, namespace: str, *args: str, input: str | None = None) -> str:
        return self.sh([self.argo_bin, "-n", namespace, *args], input)

    def hera(self, *args: str) -> str:
        return self.sh([sys.executable, "-m", *args])

    # ------------------------------------------------------------------------------------------ set-up

    def setup(self) -> None:
        from welcome import apply_bundled_rbac

        apply_bundled_rbac(self.node)
        if self.before:
            self.kubectl("apply", "-f", "-", input=self.before["rbac"])
        if not self.upstream:
            return
        import yaml

        self.kubectl("create", "namespace", UPSTREAM_NS)
        self.kubectl("-n", UPSTREAM_NS, "create", "serviceaccount", "argo")
        rbac = [d for d in yaml.safe_load_all(Path(self.upstream, "integrations/argo/mpi/rbac.yaml").read_text()) if d]
        for d in rbac:
            d["metadata"]["namespace"] = UPSTREAM_NS
            for s in d.get("subjects") or []:
                s["namespace"] = UPSTREAM_NS
        self.kubectl("apply", "-f", "-", input=yaml.safe_dump_all(rbac))
        hello = Path(self.upstream, "integrations/argo/mpi/hello-world.yaml").read_text()
        [template] = [d for d in yaml.safe_load_all(hello) if d]
        template["metadata"]["namespace"] = UPSTREAM_NS
        self.kubectl("apply", "-f", "-", input=yaml.safe_dump(template))
        # The same example, its gang unable to fit (every pod asks 2 CPUs of the 2-CPU node): it waits.
        waits = json.loads(json.dumps(template))
        waits["metadata"]["name"] = "volcano-mpi-hello-waits"
        for t in waits["spec"]["templates"]:
            if "resource" in t:
                t["resource"]["manifest"] = t["resource"]["manifest"].replace("nvidia.com/gpu: 0", "cpu: 2")
        self.kubectl("apply", "-f", "-", input=yaml.safe_dump(waits))

    # ------------------------------------------------------------------------------------------ one run

    def first_hello(self, namespace: str, selector: str) -> float | None:
        """The earliest hello line's log timestamp among the pods ``selector`` picks."""
        pods = json.loads(self.kubectl("-n", namespace, "get", "pods", "-l", selector, "-o", "json"))["items"]
        best = None
        for pod in pods:
            for c in pod["spec"]["containers"]:
                try:
                    out = self.kubectl(
                        "-n", namespace, "logs", pod["metadata"]["name"], "-c", c["name"], "--timestamps"
                    )

                except RuntimeError:
                    continue
                for stamp in re.findall(r"^(\S+) Hello world from processor", out, re.MULTILINE):
                    t = _stamp(stamp)
                    best = t if best is None or t < best else best
        return best

    def wait_workflow(self, namespace: str, name: str, timeout: float = 600) -> float:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            wf = json.loads(self.kubectl("-n", namespace, "get", "workflows.argoproj.io", name, "-o", "json"))
            status = wf.get("status", {})
            if status.get("finishedAt"):
                if status.get("phase") != "Succeeded":
                    raise RuntimeError(f"{namespace}/{name} ended {status.get('phase')}: {status.get('message')}")
                return time.time()
            time.sleep(0.25)
        raise RuntimeError(f"{namespace}/{name} did not finish in {timeout} s")

    def ours(self, i: int, *args: str) -> dict[str, Any]:
        return self.submit(self.hera("hera_volcano.mpi_hello", *args))

    def before_run(self, i: int) -> dict[str, Any]:
        """Our MPI hello world as it was before issue 33 (bash follower, kubectl)."""
        assert self.before, "no history to run before's workflow from"
        return self.submit(self.before["workflow"])

    def step_alone(self, i: int, *args: str) -> dict[str, Any]:
        """Argo's own cost: our workflow's job step alone in a Workflow (no follower, no exit handler), the same job
        and conditions: what any workflow that runs the job through a resource step pays."""
        import yaml

        wf = yaml.safe_load(self.hera("hera_volcano.mpi_hello", *args))
        step = next(t for t in wf["spec"]["templates"] if "resource" in t)
        spec = {k: v for k, v in wf["spec"].items() if k != "onExit"}
        wf["spec"] = {**spec, "entrypoint": step["name"], "templates": [step]}
        return self.submit(yaml.safe_dump(wf, width=1_000_000))

    def submit(self, manifest: str) -> dict[str, Any]:
        """Submit a rendered workflow (rendering is not timed: the floor's manifest is ready before its clock too)
        and wait for it to succeed."""
        start = time.time()
        name = self.argo("argo", "submit", "-o", "name", "-", input=manifest).strip()
        end = self.wait_workflow("argo", name)
        hello = self.first_hello("argo", f"hera-volcano/workflow={name}")  # the job's pods carry our label
        return {"start": start, "hello": hello, "end": end, "name": name, "ns": "argo"}

    def waiting(self, namespace: str, submit: list[str], manifest: str | None, user: str) -> tuple[float, float]:
        """Requests per minute a workflow whose gang cannot fit makes while it waits WAIT_MINUTES (its job step and
        its follower; the watches it holds open excluded), then it is deleted."""
        name = self.argo(namespace, "submit", "-o", "name", *submit, input=manifest).strip()
        time.sleep(30)  # its pods have started and settled into waiting
        start = time.time()
        time.sleep(WAIT_MINUTES * 60)
        end = time.time()
        self.argo(namespace, "delete", name)
        time.sleep(2)
        counts = self.requests(user, start, end)
        beyond = sum(v for k, v in counts.items() if not k.startswith("watch")) / WAIT_MINUTES
        return beyond, counts.get("get jobs", 0) / WAIT_MINUTES  # all of them, and the job step's poll

    def upstream_run(self, i: int) -> dict[str, Any]:
        start = time.time()
        job = f"up-{i}-{int(start * 1000) % 100000}"
        name = self.argo(
            UPSTREAM_NS, "submit", "-o", "name", "--from", "workflowtemplate/volcano-mpi-hello", "-p", f"job-name={job}"
        ).strip()
        end = self.wait_workflow(UPSTREAM_NS, name)
        hello = self.first_hello(UPSTREAM_NS, f"workflows.argoproj.io/workflow={name}")  # its follower
        return {"start": start, "hello": hello, "end": end, "name": name, "ns": UPSTREAM_NS}

    def floor(self, i: int) -> dict[str, Any]:
        """Our Volcano Job without Argo: its manifest from the rendered workflow, Argo's placeholders filled in."""
        import yaml

        wf = yaml.safe_load(self.hera("hera_volcano.mpi_hello"))
        manifest = next(t["resource"]["manifest"] for t in wf["spec"]["templates"] if "resource" in t)
        label = f"floor-{i}-{int(time.time() * 1000) % 100000}"
        manifest = manifest.replace("{{=toJson(workflow.parameters['job-name'])}}", '""')
        manifest = manifest.replace("{{workflow.name}}", label)
        start = time.time()
        name = self.kubectl("-n", "argo", "create", "-f", "-", "-o", "name", input=manifest).strip().split("/")[-1]
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            job = json.loads(self.kubectl("-n", "argo", "get", "jobs.batch.volcano.sh", name, "-o", "json"))
            if job.get("status", {}).get("state", {}).get("phase") == "Completed":
                break
            time.sleep(0.25)
        end = time.time()
        hello = self.first_hello("argo", f"volcano.sh/job-name={name}")
        self.kubectl("-n", "argo", "delete", "jobs.batch.volcano.sh", name, "--wait=false")
        return {"start": start, "hello": hello, "end": end, "name": name, "ns": "argo"}

    # ------------------------------------------------------------------------------------------ API load

    def requests(self, user: str, since: float, until: float) -> Counter[str]:
        """The requests ``user`` made between two times, by 'verb resource', from the audit log."""
        counts: Counter[str] = Counter()
        seen = set()
        with open(self.node.paths.audit_log) as f:
            for line in f:
                event = json.loads(line)
                if event.get("user", {}).get("username") != user or event["auditID"] in seen:
                    continue
                t = _stamp(event["requestReceivedTimestamp"])
                if since <= t <= until:
                    seen.add(event["auditID"])
                    ref = event.get("objectRef", {})
                    sub = f"/{ref['subresource']}" if ref.get("subresource") else ""
                    counts[f"{event['verb']} {ref.get('resource', '?')}{sub}"] += 1
        return counts

    def follower_memory(self, run: dict[str, Any], peaks: CgroupPeaks) -> tuple[int, int] | None:
        """The peaks of a finished run's follower pod and of its follower container (Argo's ``main``), in bytes."""
        selector = f"workflows.argoproj.io/workflow={run['name']}"
        pods = json.loads(self.kubectl("-n", run["ns"], "get", "pods", "-l", selector, "-o", "json"))["items"]
        for pod in pods:
            if "-follow" not in pod["metadata"]["name"]:
                continue
            main = [c for c in pod["status"].get("containerStatuses", []) if c["name"] == "main"]
            cid = main[0].get("containerID", "").rpartition("/")[2] if main else ""
            whole, alone = peaks.peaks.get(f"pod{pod['metadata']['uid']}"), peaks.peaks.get(cid)
            if whole and alone:
                return whole, alone
        return None

    def load(self, run: Any, user: str, n: int) -> tuple[float, Counter[str], list[dict[str, Any]]]:
        results: list[dict[str, Any]] = []
        lock = threading.Lock()

        def one(i: int) -> None:
            r = run(i)
            with lock:
                results.append(r)

        start = time.time()
        threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        time.sleep(2)  # the audit log is written as requests complete
        counts = self.requests(user, start - 1, time.time())
        return sum(counts.values()) / max(len(results), 1), counts, results


class CgroupPeaks:
    """The memory high-water mark of every pod and container cgroup on the node (memory.max_usage_in_bytes on cgroup
    v1, memory.peak on v2), by the cgroup's name (``pod<uid>`` or the container's ID), read every 0.25 s in a thread
    while started: the kernel keeps the peak, so a read late in a container's life sees it (a peak in its last quarter
    of a second is missed). Page cache the container read (kubectl's binary, Python's modules) counts, as the kernel
    counts it against a limit."""

    def __init__(self) -> None:
        self.peaks: dict[str, int] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> CgroupPeaks:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(0.25):
            for root in KUBEPODS:
                for entry in _dirs(root):
                    for pod in [entry] if entry.name.startswith("pod") else _dirs(Path(entry.path)):
                        if pod.name.startswith("pod"):
                            self._read(Path(pod.path))
                            for container in _dirs(Path(pod.path)):
                                self._read(Path(container.path))

    def _read(self, path: Path) -> None:
        for name in ("memory.max_usage_in_bytes", "memory.peak"):
            try:
                value = int((path / name).read_text())
            except (OSError, ValueError):
                continue
            self.peaks[path.name] = max(self.peaks.get(path.name, 0), value)
            return


def _dirs(path: Path) -> list[os.DirEntry[str]]:
    try:
        return [e for e in os.scandir(path) if e.is_dir()]
    except OSError:
        return []


def before_manifests() -> dict[str, str] | None:
    """The MPI hello world and its Role as they were at BEFORE, from this repository's history (None without it):
    the WorkflowTemplate as a Workflow, its Role and RoleBinding renamed so that today's stay as they are."""
    import yaml

    def show(path: str) -> str | None:
        proc = subprocess.run(["git", "show", f"{BEFORE}:{path}"], cwd=ROOT, capture_output=True, text=True)
        return proc.stdout if proc.returncode == 0 else None

    workflow, rbac = show("workflows/volcano-mpi-hello.yaml"), show("rbac/rbac.yaml")
    if not workflow or not rbac:
        return None
    wf = yaml.safe_load(workflow)
    wf["kind"], wf["metadata"] = "Workflow", {"generateName": "before-", "namespace": "argo"}
    roles = [d for d in yaml.safe_load_all(rbac) if d and d["kind"] in ("Role", "RoleBinding")]
    for d in roles:
        d["metadata"] = {"name": d["metadata"]["name"] + "-before", "namespace": d["metadata"]["namespace"]}
        if d["kind"] == "RoleBinding":
            d["roleRef"]["name"] += "-before"
    waits = json.loads(json.dumps(wf))
    for t in waits["spec"]["templates"]:
        if "manifest" in t.get("resource", {}):  # every worker asks 2 CPUs of the 2-CPU node: the gang waits
            t["resource"]["manifest"] = re.sub(
                r"\n( *)- name: mpiworker\n( *)image: (\S+)\n",
                lambda m: f"{m.group(0)}{m.group(2)}resources: {{requests: {{cpu: '2'}}}}\n",
                t["resource"]["manifest"],
            )
    return {
        "workflow": yaml.safe_dump(wf, width=1_000_000),
        "waits": yaml.safe_dump(waits, width=1_000_000),
        "rbac": yaml.safe_dump_all(roles),
    }


def no_fit(upstream: bool, poll_seconds: int | None = None) -> tuple[list[str], str | None]:
    """A hello world whose gang cannot fit on the 2-CPU node (each pod asks 2 CPUs): it waits until deleted."""
    if upstream:
        return ["--from", "workflowtemplate/volcano-mpi-hello-waits", "-p", "job-name=up-waits"], None
    sys.path.insert(0, str(ROOT / "tests" / "e2e"))
    from workloads import mpi_workflow

    manifest = mpi_workflow(
        "waits",
        command=["mpi_hello_world"],
        deadline=3600,
        worker={"resources": {"requests": {"cpu": "2"}}},
        poll_seconds=poll_seconds,
    )
    return ["-"], manifest


def table(rows: list[tuple[str, str, str, str, str]]) -> str:
    lines = ["| # | Benchmark | Measured (medians) | Target | Result |", "|---|---|---|---|---|"]
    lines += [f"| {a} | {b} | {c} | {d} | {e} |" for a, b, c, d, e in rows]
    return "\n".join(lines)


def latencies(
    bench: Bench, node: Any
) -> tuple[dict[str, float], dict[str, float], dict[int, list[dict[str, Any]]], dict[str, float]]:
    """Rows 6, 7 and 9: submit to the first hello line and to the end, of each kind, interleaved; the job step's
    poll; and the end once more with Argo's controller requeueing sooner."""
    kinds = {"ours": bench.ours, "floor": bench.floor, STEP_ALONE: bench.step_alone}
    if bench.upstream:
        kinds["upstream"] = bench.upstream_run
    runs: dict[str, list[dict[str, Any]]] = {k: [] for k in kinds}
    order = list(kinds)
    for rep in range(REPS):
        for kind in order if rep % 2 == 0 else reversed(order):
            runs[kind].append(kinds[kind](rep))
    hello = {k: statistics.median(r["hello"] - r["start"] for r in v) for k, v in runs.items()}
    end = {k: statistics.median(r["end"] - r["start"] for r in v) for k, v in runs.items()}
    polls: dict[int, list[dict[str, Any]]] = {s: [] for s in POLLS}
    for rep in range(REPS):
        for seconds in POLLS if rep % 2 == 0 else reversed(POLLS):
            run = bench.ours(rep, "--poll-seconds", str(seconds))
            run["requests"] = sum(bench.requests(OURS_USER, run["start"] - 1, run["end"] + 5).values())
            polls[seconds].append(run)
    os.environ["HERA_VOLCANO_ARGO_SETTINGS"] = QUICK_REQUEUE
    node.use_argo(node.current_argo_line() or bench.layout.DEFAULT_ARGO_LINE)

    def ours_poll_2(i: int) -> dict[str, Any]:
        return bench.ours(i, "--poll-seconds", "2")

    def alone_poll_2(i: int) -> dict[str, Any]:
        return bench.step_alone(i, "--poll-seconds", "2")

    quick_kinds = {
        "floor": bench.floor,
        "ours": bench.ours,
        STEP_ALONE: bench.step_alone,
        "ours, poll 2 s": ours_poll_2,
        f"{STEP_ALONE}, poll 2 s": alone_poll_2,
    }
    quick_runs: dict[str, list[dict[str, Any]]] = {k: [] for k in quick_kinds}
    for rep in range(REPS):
        for kind in quick_kinds if rep % 2 == 0 else reversed(list(quick_kinds)):
            quick_runs[kind].append(quick_kinds[kind](rep))
    quick = {k: statistics.median(r["end"] - r["start"] for r in v) for k, v in quick_runs.items()}
    del os.environ["HERA_VOLCANO_ARGO_SETTINGS"]
    node.use_argo(node.current_argo_line() or bench.layout.DEFAULT_ARGO_LINE)
    return hello, end, polls, quick


def latency_rows(
    hello: dict[str, float], end: dict[str, float], polls: dict[int, list[dict[str, Any]]], quick: dict[str, float]
) -> list[tuple[str, str, str, str, str]]:
    rows = []
    measured_rows = (("first MPI output line", hello, FIRST_LINE_TARGET), ("Workflow Succeeded", end, END_TARGET))
    for i, (what, values, target) in enumerate(measured_rows, start=6):
        ratio = values["ours"] / values["floor"]
        measured = ", ".join(f"{k} {v:.1f} s" for k, v in values.items())
        measured += f": ours **{ratio:.2f}x** the floor"
        measured += f" (the job step alone {values[STEP_ALONE] / values['floor']:.2f}x; ours"
        measured += f" {values['ours'] / values[STEP_ALONE]:.2f}x the job step alone)"
        ok = ratio <= target
        if "upstream" in values:
            measured += f", **{values['ours'] / values['upstream']:.2f}x** upstream's"
            ok = ok and values["ours"] <= values["upstream"]
        rows.append(
            (
                str(i),
                f"Real cluster, submit → {what} ({REPS} reps each, interleaved)",
                measured,
                f"<= {target}x floor, <= upstream",
                "PASS" if ok else "MISS",
            )
        )
    for kind, alone in (("ours", STEP_ALONE), ("ours, poll 2 s", f"{STEP_ALONE}, poll 2 s")):
        rows.append(
            (
                "7",
                f"Real cluster, submit → Workflow Succeeded, Argo's controller at {QUICK_REQUEUE}, {kind}"
                f" ({REPS} reps each, interleaved with the floor's and the job step's alone)",
                f"{kind} {quick[kind]:.1f} s, {alone} {quick[alone]:.1f} s, floor {quick['floor']:.1f} s:"
                f" ours **{quick[kind] / quick['floor']:.2f}x** the floor, the job step alone"
                f" **{quick[alone] / quick['floor']:.2f}x**; ours {quick[kind] / quick[alone]:.2f}x the job step alone",
                f"<= {END_TARGET}x floor",
                "PASS" if quick[kind] / quick["floor"] <= END_TARGET else "MISS",
            )
        )
    for seconds, poll_runs in polls.items():
        end_s = statistics.median(r["end"] - r["start"] for r in poll_runs)
        asked = statistics.median(r["requests"] for r in poll_runs)
        rows.append(
            (
                "9",
                f"The job step checks the job every {seconds} s (RESOURCE_STATE_CHECK_INTERVAL): submit → Succeeded,"
                " and the requests of the run's pods",
                f"{end_s:.1f} s ({end_s / end['floor']:.2f}x the floor), {asked:.0f} requests",
                "latency against requests",
                "",
            )
        )
    return rows


def main(argv: list[str]) -> int:
    from host import cannot_run
    from node import Node

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--only",
        choices=["requests", "load"],
        help="requests: only the requests, waiting and memory rows (8, 10, 11); load: rows 8 and 11",
    )
    only = parser.parse_args(argv).only
    if cannot_run("benchmarks/cluster.py"):
        return 0
    began = time.monotonic()
    node = Node()
    node.up()
    hello: dict[str, float] = {}
    end: dict[str, float] = {}
    polls: dict[int, list[dict[str, Any]]] = {}
    quick: dict[str, float] = {}
    try:
        bench = Bench(node)
        bench.setup()
        if not only:
            hello, end, polls, quick = latencies(bench, node)
        waiting = {}
        if only != "load":
            waiting["ours"] = bench.waiting("argo", *no_fit(False), OURS_USER)
        if not only:
            waiting[f"ours, poll {CHEAP_POLL} s"] = bench.waiting("argo", *no_fit(False, CHEAP_POLL), OURS_USER)
        if bench.before and only != "load":
            waiting["before"] = bench.waiting("argo", ["-"], bench.before["waits"], OURS_USER)
        if bench.upstream and only != "load":
            waiting["upstream"] = bench.waiting(UPSTREAM_NS, *no_fit(True), UPSTREAM_USER)
        kinds = {"ours": bench.ours, "before": bench.before_run, "upstream": bench.upstream_run}
        runners = {k: v for k, v in kinds.items() if k == "ours" or getattr(bench, k)}
        loads: dict[str, dict[int, tuple[float, Counter[str]]]] = {k: {} for k in runners}
        memory: dict[str, list[tuple[int, int]]] = {k: [] for k in runners if k != "upstream"}
        with CgroupPeaks() as peaks:
            for n in CONCURRENCY:
                for kind, runner in runners.items():
                    per_run, counts, results = bench.load(runner, UPSTREAM_USER if kind == "upstream" else OURS_USER, n)
                    loads[kind][n] = per_run, counts
                    for r in results if kind in memory else []:
                        found = bench.follower_memory(r, peaks)
                        if found:
                            memory[kind].append(found)
    finally:
        problems = node.down()
    rows = [] if only else latency_rows(hello, end, polls, quick)
    for n in CONCURRENCY:
        parts = []
        for kind, by_n in loads.items():
            per_run, counts = by_n[n]
            watches = sum(v for k, v in counts.items() if k.startswith("watch"))
            parts.append(f"{kind} {per_run:.0f} ({watches / n:.0f} watches)")
        measured = ", ".join(parts)
        ok = True
        if "upstream" in loads:
            ratio = loads["ours"][n][0] / loads["upstream"][n][0]
            measured += f": ours **{ratio:.2f}x** upstream's"
            ok = ratio <= REQUESTS_TARGET
        rows.append(
            (
                "8",
                f"API requests per run by the workflow's own pods, {n} run(s) at once",
                measured,
                f"<= {REQUESTS_TARGET}x upstream's",
                "PASS" if ok else "MISS",
            )
        )
    cheap = waiting.pop(f"ours, poll {CHEAP_POLL} s", None)
    others = [waiting[k][0] for k in ("before", "upstream") if k in waiting]
    if "ours" in waiting:
        rows.append(
            (
                "10",
                f"A workflow whose gang waits {WAIT_MINUTES} min: requests per minute by its pods, beyond open watches",
                ", ".join(f"{k} {v:.1f}/min ({p:.1f} of them its job step's poll)" for k, (v, p) in waiting.items()),
                "<= before's, <= upstream's",
                "PASS" if all(waiting["ours"][0] <= v for v in others) else "MISS",
            )
        )
    if cheap:
        rows.append(
            (
                "10",
                f"The same, the job step checking the job every {CHEAP_POLL} s (`poll_seconds={CHEAP_POLL}`)",
                f"ours {cheap[0]:.1f}/min ({cheap[1]:.1f} of them its job step's poll)",
                "<= 6/min",
                "PASS" if cheap[0] <= 6 else "MISS",
            )
        )
    if memory.get("ours") and memory.get("before"):
        mib = {k: (statistics.median(w for w, _ in v) / 2**20, statistics.median(c for _, c in v) / 2**20)
               for k, v in memory.items() if v}  # fmt: skip
        rows.append(
            (
                "11",
                "Memory of a follower pod, the peak of its cgroup (its follower container's), medians over the runs"
                f" of row 8 ({', '.join(f'{k} {len(v)}' for k, v in memory.items())})",
                ", ".join(f"{k} {w:.1f} MiB ({c:.1f} MiB)" for k, (w, c) in mib.items())
                + f": ours **{mib['ours'][0] / mib['before'][0]:.2f}x** before's",
                "<= before's",
                "PASS" if mib["ours"][0] <= mib["before"][0] else "MISS",
            )
        )
    detail = "\n".join(
        f"- {kind}, {n} at once: " + ", ".join(f"{k} {v}" for k, v in sorted(c.items()))
        for kind, by_n in loads.items() for n, (_, c) in by_n.items()
    )  # fmt: skip
    header = (
        f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, Linux {platform.release()}, "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; Kubernetes v1.37.2, Volcano v1.15.1, Argo "
        f"{node.current_argo_line() or 'v4.1.4'}. Total {time.monotonic() - began:.0f} s."
        + (f" Only the rows of `--only {only}`; the others as `git log` of this file last had them." if only else "")
    )
    text = f"{header}\n\n{table(rows)}\n\nRequests by kind:\n{detail}\n"
    print(text)
    RESULTS.write_text(text)
    if problems:
        print("the host was not fully restored:\n" + "\n".join(problems), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
