"""The scale scenarios at full size (``make bench``, third part): 64 fake GPU nodes of kwok beside the real node, 40
gangs into two queues, 30 workflows waiting, on Volcano's real scheduler and Argo's real controller.

It runs tests/e2e/test_scale.py with ``HERA_VOLCANO_SCALE=full`` (the same scenarios `make test` runs small), which
records what it measured, then the burst once more with Argo's controller given more room (``FASTER``: a higher
client QPS and burst, a shorter requeue delay), and writes the table to RESULTS-scale.md. ``--only burst`` runs the
burst alone, once (about 20 minutes, not 35). Needs root and Linux; otherwise it says so and exits 0.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "cluster" / "e2e"))
RESULTS = Path(__file__).resolve().with_name("RESULTS-scale.md")
#: Argo's workflow controller with more room than its defaults (qps 20, burst 30, DEFAULT_REQUEUE_TIME 10s).
FASTER = "qps=100,burst=200,DEFAULT_REQUEUE_TIME=2s"
#: Issue 33: the burst drains in at most this many times the drain of its job steps alone.
OVER_STEPS_ALONE = 1.35


def table(found: dict[str, dict[str, Any]], faster: dict[str, Any]) -> str:
    burst, cost = found.get("burst", {}), found.get("cost of waiting", {})
    ours, theirs = cost.get("ours", {}), cost.get("upstream") or {}
    cpu = burst.get("host_cpu_s", {})
    quiet = next(((k, v) for k, v in cost.items() if k.startswith("ours_poll_")), ("ours_poll_?", {}))
    rows = [
        (
            "fake nodes (8 nvidia.com/gpu each), the real node beside them",
            f"{burst.get('nodes')} ({burst.get('gpus')} GPUs)",
        ),
        ("gangs (MPI and PyTorch, 2 to 16 GPU workers), queues", f"{burst.get('gangs')}, {burst.get('queues')}"),
        (
            "drain: submit-all to all Succeeded; the floor (the same jobs with kubectl, no Argo)",
            f"{burst.get('drain_s')} s; {burst.get('floor_s')} s: **{burst.get('drain_over_floor')}x**",
        ),
        (
            "drain of the same jobs by their job steps alone (no follower, no exit handler: Argo's own cost); ours "
            "against it",
            f"{burst.get('steps_alone_s')} s: {burst.get('steps_alone_over_floor')}x the floor; ours "
            f"**{burst.get('drain_over_steps_alone')}x** (target <= {OVER_STEPS_ALONE}x: "
            f"{'PASS' if (burst.get('drain_over_steps_alone') or 99) <= OVER_STEPS_ALONE else 'MISS'})",
        ),
        (
            "drain of our workflows with followers that do nothing (each follower's pod sleeps 1 s: its pod's cost "
            "without its script)",
            f"{burst.get('idle_followers_s')} s: {burst.get('idle_followers_over_floor')}x the floor",
        ),
        (
            "the host's busy CPU-seconds (2 cores) during the floor; the job steps alone; the idle followers",
            "; ".join(str(cpu.get(k)) for k in ("floor", "steps_alone", "idle_followers")),
        ),
        (
            "requests per second per waiting workflow beyond its watches: ours (its job step's poll alone); upstream",
            f"{ours.get('per_workflow_per_s_beyond_watches')} ({ours.get('step_poll_per_s')}); "
            f"{theirs.get('per_workflow_per_s_beyond_watches', 'n/a')}",
        ),
        (
            f"the same, ours checking its job every {quiet[0].removeprefix('ours_poll_')} (poll_seconds)",
            str(quiet[1].get("per_workflow_per_s_beyond_watches")),
        ),
        (
            "gangs seen partly bound in one sample; held partly bound (two samples in a row)",
            f"{burst.get('partly_bound_seen_once')}; {burst.get('partly_bound_held')}",
        ),
        (
            f"drain with Argo's controller at {FASTER.replace(',', ', ')}; the floor",
            f"{faster.get('drain_s', 'n/a')} s; {faster.get('floor_s', 'n/a')} s: "
            f"**{faster.get('drain_over_floor', 'n/a')}x**",
        ),
        ("queue overuse seen", str(burst.get("queue_overuse"))),
        (
            "jobs admitted after a job of their queue whose PodGroup came later and asked as much or more; "
            "the same by first bound pod",
            f"{burst.get('overtaken_in_admission')}; {burst.get('overtaken_in_first_bind')}",
        ),
        (
            "a follower's end after its job's (the fake pods' log streams never end), worst; its step's end in Argo",
            f"{burst.get('follower_end_after_job_s_max')} s; "
            f"{burst.get('follower_step_end_in_argo_after_job_s_max')} s",
        ),
        (
            "a high-priority gang into a full queue started before the waiting ones",
            str(found.get("priority", {}).get("high_started_before_waiting")),
        ),
    ]
    return "\n".join(["| | |", "|---|---|", *(f"| {a} | {b} |" for a, b in rows)])


def main(argv: list[str]) -> int:
    from host import cannot_run

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--only", choices=["burst"], help="the burst alone, once (not the faster re-run)")
    only = parser.parse_args(argv).only
    if cannot_run("benchmarks/scale.py"):
        return 0
    began = time.monotonic()
    with tempfile.TemporaryDirectory() as folder:
        results = Path(folder) / "scale.jsonl"
        env = {
            **os.environ, "HERA_VOLCANO_SCALE": "full", "HERA_VOLCANO_TIER": "all",
            "HERA_VOLCANO_SCALE_RESULTS": str(results),
        }  # fmt: skip
        pytest = [sys.executable, "-m", "pytest", "tests/e2e/test_scale.py", "-s", "-q"]
        run = subprocess.run([*pytest, "-k", f"v4.1.4{' and burst' if only else ''}"], cwd=ROOT, env=env, check=False)
        found = read(results)
        results.unlink(missing_ok=True)
        again, faster = run, {}
        if not only:
            env["HERA_VOLCANO_ARGO_SETTINGS"] = FASTER
            again = subprocess.run([*pytest, "-k", "v4.1.4 and burst"], cwd=ROOT, env=env, check=False)
            faster = read(results).get("burst", {})
    header = (
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Linux {platform.release()}, "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; Kubernetes v1.37.2, Volcano v1.15.1, Argo v4.1.4, "
        f"kwok v0.8.0. Scenarios {'passed' if run.returncode == again.returncode == 0 else 'FAILED'}; "
        f"{time.monotonic() - began:.0f} s."
    )
    measured = {**found, "burst with faster Argo settings": faster}
    text = f"{header}\n\n{table(found, faster)}\n\nMeasured:\n" + "\n".join(
        f"- {k}: {json.dumps(v)}" for k, v in measured.items()
    )
    print(text)
    RESULTS.write_text(text + "\n")
    return run.returncode or again.returncode


def read(results: Path) -> dict[str, dict[str, Any]]:
    """The scenarios' records (one JSON object per line), by scenario."""
    found = {}
    if results.exists():
        for line in results.read_text().splitlines():
            entry = json.loads(line)
            found[entry["scenario"]] = entry
    return found


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
