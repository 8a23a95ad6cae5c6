"""The shell scripts we generate, run against a fake kubectl: they follow restarts, stop, and never hang."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hera_volcano.argo import _FOLLOW_SCRIPT
from hera_volcano.mpi import _WAIT_SCRIPT

# A stand-in for kubectl driven by a list of stages; each `kubectl logs` prints the stage's log and moves on.
FAKE_KUBECTL = """\
import json, os, sys
state_path = os.environ["FAKE_STATE"]
state = json.load(open(state_path))
args = sys.argv[1:]
state["calls"].append(args)
stage = state["stages"][min(state["stage"], len(state["stages"]) - 1)]
if stage.get("fail"):
    json.dump(state, open(state_path, "w"))
    sys.exit(1)
if args[0] == "logs":
    pod = args[-1]
    print(stage["pods"][pod]["log"])
    state["stage"] += 1
elif args[0] == "get" and args[1] == "pods":
    if "ready" in stage:
        print("\\n".join(["True"] * stage["ready"] + ["False"]), end="")
        state["stage"] += 1
    else:
        print("\\n".join(stage["pods"]))
elif args[0] == "get" and args[1] == "pod":
    pod = next(a for a in args[2:] if not a.startswith("-") and a in stage["pods"])
    path = next(a for a in args if a.startswith("{") or a.startswith("-o"))
    want = args[args.index("-o") + 1] if "-o" in args else path
    info = stage["pods"][pod]
    print(info["phase"] if "phase" in want else info["cid"], end="")
json.dump(state, open(state_path, "w"))
"""


def run_script(script: str, stages: list[dict[str, Any]], tmp_path: Path, **env: str) -> tuple[int, str, list[Any]]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    kubectl = bin_dir / "kubectl"
    kubectl.write_text(f"#!{sys.executable}\n{FAKE_KUBECTL}")
    fast_sleep = bin_dir / "sleep"
    fast_sleep.write_text("#!/bin/sh\nexec /bin/sleep 0.05\n")
    for tool in (kubectl, fast_sleep):
        tool.chmod(tool.stat().st_mode | stat.S_IEXEC)
    state = tmp_path / "state.json"
    state.write_text(json.dumps({"stages": stages, "stage": 0, "calls": []}))
    p = subprocess.run(
        ["bash", "-c", script],
        env={**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "FAKE_STATE": str(state), **env},
        capture_output=True,
        text=True,
        timeout=60,
    )
    return p.returncode, p.stdout, json.loads(state.read_text())["calls"]


def pod(phase: str, cid: str, log: str = "") -> dict[str, str]:
    return {"phase": phase, "cid": cid, "log": log}


FOLLOW = {"SELECTOR": "a=b", "CONTAINER": "mpimaster", "FOLLOW_SECONDS": "20", "GRACE_SECONDS": "1"}


def test_follower_streams_until_the_pod_succeeds(tmp_path: Path) -> None:
    stages = [{"pods": {"m-0": pod("Running", "c1", "hello from rank 0")}}, {"pods": {"m-0": pod("Succeeded", "c1")}}]
    code, out, calls = run_script(_FOLLOW_SCRIPT, stages, tmp_path, **FOLLOW)
    assert code == 0
    assert out.count("hello from rank 0") == 1 and "succeeded" in out
    assert all("--request-timeout" in " ".join(c) for c in calls)


def test_follower_follows_a_restarted_container_and_a_new_pod(tmp_path: Path) -> None:
    stages = [
        {"pods": {"m-0": pod("Running", "c1", "first try")}},
        {"pods": {"m-0": pod("Running", "c2", "second try")}},
        {"pods": {"m-0": pod("Failed", "c2"), "m-0b": pod("Running", "c3", "new pod")}},
        {"pods": {"m-0": pod("Failed", "c2"), "m-0b": pod("Succeeded", "c3")}},
    ]
    code, out, _ = run_script(_FOLLOW_SCRIPT, stages, tmp_path, **FOLLOW)
    assert code == 0
    assert [line for line in out.splitlines() if "try" in line or "new pod" in line] == [
        "first try",
        "second try",
        "new pod",
    ]


def test_follower_gives_up_after_grace_when_no_pod_restarts(tmp_path: Path) -> None:
    stages = [{"pods": {"m-0": pod("Running", "c1", "x")}}, {"pods": {"m-0": pod("Failed", "c1")}}]
    code, out, _ = run_script(_FOLLOW_SCRIPT, stages, tmp_path, **FOLLOW)
    assert code == 0 and "No restarted pod" in out


@pytest.mark.parametrize("stages", [[{"pods": {}}], [{"fail": True}]], ids=["no-pod", "kubectl-fails"])
def test_follower_stops_at_its_timeout_and_still_exits_0(stages: list[dict[str, Any]], tmp_path: Path) -> None:
    code, out, _ = run_script(_FOLLOW_SCRIPT, stages, tmp_path, **{**FOLLOW, "FOLLOW_SECONDS": "2"})
    assert code == 0 and "Stopped following after 2 s" in out


WAIT = {"JOB_NAME": "j", "NAMESPACE": "ns", "WORKER_TASK": "mpiworker", "WORKERS": "3", "WAIT_SECONDS": "20"}


def test_master_waits_until_every_worker_is_ready(tmp_path: Path) -> None:
    stages = [{"ready": 0}, {"ready": 1}, {"ready": 2}, {"ready": 3}]
    code, out, calls = run_script(_WAIT_SCRIPT, stages, tmp_path, **WAIT)
    assert code == 0 and "3 workers Ready" in out
    assert len(calls) == 4
    assert "volcano.sh/job-name=j,volcano.sh/task-spec=mpiworker" in calls[0]


def test_master_wait_fails_after_its_limit_so_the_pod_restarts(tmp_path: Path) -> None:
    code, out, _ = run_script(_WAIT_SCRIPT, [{"ready": 1}], tmp_path, **{**WAIT, "WAIT_SECONDS": "1"})
    assert code == 1 and "Only 1 of 3 workers Ready" in out
