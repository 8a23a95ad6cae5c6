"""The shell scripts we generate, run against a fake kubectl: they follow restarts, stop, and never hang."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from hera_volcano.argo.follow_logs import _FOLLOW_SCRIPT
from hera_volcano.builders.mpi import _RESOLVE_SCRIPT, _WAIT_SCRIPT

# A stand-in for kubectl driven by a list of stages; each `kubectl logs` prints the stage's log and moves on (a
# stage with "drop" ends the stream while the container keeps running). Pods are {name: {phase, cid, running, log,
# inits ("NAME:RESTARTS "), init_log (what `logs --previous` prints)}}, jobs {name: phase}. For the master's wait,
# a stage {"ready": R, "count": N} lists N worker pods of which R are Ready, and `kubectl wait` succeeds (moving on)
# only in a stage with "wait". A stage with "fail" fails every call (or that many calls, then moves on); one with
# "times" moves on after that many calls.
FAKE_KUBECTL = """\
import json, os, sys
state_path = os.environ["FAKE_STATE"]
state = json.load(open(state_path))
args = sys.argv[1:]
state["calls"].append(args)
stage = state["stages"][min(state["stage"], len(state["stages"]) - 1)]
words = [a for a in args if not a.startswith("-")]
def count_down(key):
    if stage.get(key) is not True:
        stage[key] -= 1
        if stage[key] == 0:
            state["stage"] += 1
state["kubeconfigs"].append(os.environ.get("KUBECONFIG", ""))
if stage.get("fail"):
    count_down("fail")
    json.dump(state, open(state_path, "w"))
    print(stage.get("error", "error: dial tcp 10.96.0.1:443: connect: connection refused"), file=sys.stderr)
    sys.exit(1)
if stage.get("times"):
    count_down("times")
if "logs" in words and "--previous" in args:
    print(stage["pods"][words[words.index("logs") + 1]].get("init_log", ""))
elif "logs" in words:
    print(stage["pods"][words[-1]]["log"])
    state["stage"] += 1
elif "get" in words and "jobs.batch.volcano.sh" in words:
    print("\\n".join(f"{name}={phase}" for name, phase in stage.get("jobs", {}).items()))
elif "get" in words and "pods" in words and "ready" in stage:
    count = stage.get("count", stage["ready"] + 1)
    print("\\n".join(f"w-{i}={i < stage['ready']}" for i in range(count)))
    state["stage"] += 1
elif "get" in words and "pods" in words:
    for name, p in stage["pods"].items():
        print(f"{name}|{p['phase']}|{p['cid']}|{p.get('running', '')}|{p.get('inits', '')}")
elif "wait" in words and not stage.get("wait"):
    json.dump(state, open(state_path, "w"))
    print("error: timed out waiting for the condition on pods/w-0", file=sys.stderr)
    sys.exit(1)
elif "wait" in words:
    state["stage"] += 1
json.dump(state, open(state_path, "w"))
"""


def run_script(script: str, stages: list[dict[str, Any]], tmp_path: Path, **env: str) -> tuple[int, str, list[Any]]:
    code, out, _, state = run_script_state(script, stages, tmp_path, **env)
    return code, out, state["calls"]


def fake_environment(stages: list[dict[str, Any]], tmp_path: Path, **env: str) -> dict[str, str]:
    """The environment of a script run against the fake kubectl (and a fast ``sleep``), in ``tmp_path``."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    kubectl = bin_dir / "kubectl"
    kubectl.write_text(f"#!{sys.executable}\n{FAKE_KUBECTL}")
    fast_sleep = bin_dir / "sleep"
    fast_sleep.write_text("#!/bin/sh\nexec /bin/sleep 0.05\n")
    for tool in (kubectl, fast_sleep):
        tool.chmod(tool.stat().st_mode | stat.S_IEXEC)
    state = tmp_path / "state.json"
    state.write_text(json.dumps({"stages": stages, "stage": 0, "calls": [], "kubeconfigs": []}))
    base = {k: v for k, v in os.environ.items() if not k.startswith(("KUBERNETES_", "KUBECONFIG"))}
    return {**base, "PATH": f"{bin_dir}:{os.environ['PATH']}", "FAKE_STATE": str(state), "TMPDIR": str(tmp_path), **env}


def run_script_state(
    script: str, stages: list[dict[str, Any]], tmp_path: Path, **env: str
) -> tuple[int, str, str, dict[str, Any]]:
    """Run ``script`` with the fake kubectl; returns (exit code, stdout, stderr, the fake's final state)."""
    environment = fake_environment(stages, tmp_path, **env)
    p = subprocess.run(["bash", "-c", script], env=environment, capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr, json.loads(Path(environment["FAKE_STATE"]).read_text())


def pod(phase: str, cid: str, log: str = "", running: str = "") -> dict[str, str]:
    return {"phase": phase, "cid": cid, "log": log, "running": running}


FOLLOW = {
    "SELECTOR": "a=b,t=m",
    "JOB_SELECTOR": "a=b",
    "CONTAINER": "mpimaster",
    "FOLLOW_SECONDS": "20",
    "GRACE_SECONDS": "2",
}
RUNNING = {"j-1": "Running"}


def logs_lines(out: str) -> list[str]:
    return [line for line in out.splitlines() if line.startswith("rank") or line.startswith("try")]


def test_follower_streams_until_the_job_completes(tmp_path: Path) -> None:
    stages = [
        {"pods": {"m-0": pod("Running", "c1", "rank 0 says hello", running="t0")}, "jobs": RUNNING},
        {"pods": {"m-0": pod("Succeeded", "c1")}, "jobs": {"j-1": "Completed"}},
    ]
    code, out, calls = run_script(_FOLLOW_SCRIPT, stages, tmp_path, **FOLLOW)
    assert code == 0
    assert logs_lines(out) == ["rank 0 says hello"] and "Job j-1 is Completed" in out
    assert all("--request-timeout" in " ".join(c) for c in calls)


def test_follower_follows_a_restarted_container_and_a_new_pod(tmp_path: Path) -> None:
    stages = [
        {"pods": {"m-0": pod("Running", "c1", "try 1")}, "jobs": RUNNING},
        {"pods": {"m-0": pod("Running", "c2", "try 2")}, "jobs": RUNNING},
        {"pods": {"m-0": pod("Failed", "c2"), "m-0b": pod("Running", "c3", "try 3")}, "jobs": RUNNING},
        {"pods": {"m-0": pod("Failed", "c2"), "m-0b": pod("Succeeded", "c3")}, "jobs": {"j-1": "Completed"}},
    ]
    code, out, _ = run_script(_FOLLOW_SCRIPT, stages, tmp_path, **FOLLOW)
    assert code == 0 and logs_lines(out) == ["try 1", "try 2", "try 3"]


def test_follower_reattaches_after_a_dropped_stream_without_repeating(tmp_path: Path) -> None:
    stages = [
        {"pods": {"m-0": pod("Running", "c1", "rank first half", running="t0")}, "jobs": RUNNING},
        {"pods": {"m-0": pod("Running", "c1", "rank second half", running="t0")}, "jobs": RUNNING},
        {"pods": {"m-0": pod("Succeeded", "c1")}, "jobs": {"j-1": "Completed"}},
    ]
    code, out, calls = run_script(_FOLLOW_SCRIPT, stages, tmp_path, **FOLLOW)
    assert code == 0 and logs_lines(out) == ["rank first half", "rank second half"]
    streams = [c for c in calls if "logs" in c]
    assert not any(a.startswith("--since-time=") for a in streams[0])
    assert any(a.startswith("--since-time=") for a in streams[1]), "a reattached stream resumes where it stopped"


@pytest.mark.parametrize("phase", ["Failed", "Terminated", "Aborted"])
def test_follower_stops_when_the_job_ends_unsuccessfully(phase: str, tmp_path: Path) -> None:
    stages = [
        {"pods": {"m-0": pod("Running", "c1", "rank x")}, "jobs": RUNNING},
        {"pods": {"m-0": pod("Failed", "c1")}, "jobs": {"j-1": phase}},
    ]
    code, out, _ = run_script(_FOLLOW_SCRIPT, stages, tmp_path, **FOLLOW)
    assert code == 0 and f"Job j-1 is {phase}" in out


def test_follower_rides_out_a_failing_api_server(tmp_path: Path) -> None:
    stages = [
        {"pods": {}, "jobs": RUNNING, "times": 2},  # the job is seen, its pod not yet
        {"fail": 4},  # then a few calls fail, as on an API server restart
        {"pods": {"m-0": pod("Running", "c1", "rank late")}, "jobs": RUNNING},
        {"pods": {"m-0": pod("Succeeded", "c1")}, "jobs": {"j-1": "Completed"}},
    ]
    code, out, _ = run_script(_FOLLOW_SCRIPT, stages, tmp_path, **FOLLOW)
    assert code == 0 and logs_lines(out) == ["rank late"] and "Job j-1 is Completed" in out


def test_follower_gives_up_on_an_api_server_that_keeps_failing(tmp_path: Path) -> None:
    code, out, _ = run_script(_FOLLOW_SCRIPT, [{"fail": True}], tmp_path, **{**FOLLOW, "GRACE_SECONDS": "1"})
    assert code == 0 and "Cannot list the Volcano Jobs labelled a=b for 1 s" in out


def test_follower_shows_why_the_container_never_started(tmp_path: Path) -> None:
    stages = [
        {
            "pods": {"m-0": pod("Pending", "", "wait-for-workers: only 1 of 2 workers Ready")},
            "jobs": RUNNING,
            "times": 3,
        },
        {
            "pods": {"m-0": pod("Pending", "", "wait-for-workers: only 1 of 2 workers Ready")},
            "jobs": {"j-1": "Terminated"},
        },
    ]
    code, out, calls = run_script(_FOLLOW_SCRIPT, stages, tmp_path, **FOLLOW)
    assert code == 0 and "Job j-1 is Terminated" in out
    assert "mpimaster never started in m-0" in out and "only 1 of 2 workers Ready" in out
    [shown] = [c for c in calls if "logs" in c]
    assert "--all-containers" in shown and "-f" not in shown


def test_follower_shows_why_a_replacement_pod_never_started(tmp_path: Path) -> None:
    waiting = pod("Pending", "", "wait-for-workers: only 1 of 2 workers Ready")
    stages = [
        {"pods": {"m-0": pod("Running", "c1", "try 1")}, "jobs": RUNNING},
        {"pods": {"m-0": pod("Failed", "c1"), "m-0b": waiting}, "jobs": RUNNING, "times": 3},
        {"pods": {"m-0": pod("Failed", "c1"), "m-0b": waiting}, "jobs": {"j-1": "Terminated"}},
    ]
    code, out, _ = run_script(_FOLLOW_SCRIPT, stages, tmp_path, **FOLLOW)
    assert code == 0 and logs_lines(out) == ["try 1"]
    assert "mpimaster never started in m-0b" in out and "only 1 of 2 workers Ready" in out


def test_follower_shows_each_failed_init_attempt_while_the_pod_still_exists(tmp_path: Path) -> None:
    def waiting(restarts: int) -> dict[str, str]:
        attempt = {**pod("Pending", ""), "inits": f"wait-for-workers:{restarts} "}
        return {**attempt, "init_log": f"Only 0 of 2 workers Ready after 20 s (attempt {restarts})"}

    stages = [
        {"pods": {"m-0": waiting(0)}, "jobs": RUNNING, "times": 3},
        {"pods": {"m-0": waiting(1)}, "jobs": RUNNING, "times": 6},
        {"pods": {"m-0": waiting(2)}, "jobs": RUNNING, "times": 3},
        {"pods": {}, "jobs": {"j-1": "Terminated"}},  # the job ended and its pods are gone
    ]
    code, out, calls = run_script(_FOLLOW_SCRIPT, stages, tmp_path, **FOLLOW)
    assert code == 0 and "Job j-1 is Terminated" in out
    for attempt in (1, 2):
        assert out.count(f"=== m-0: init container wait-for-workers failed (restart {attempt})") == 1
        assert out.count(f"Only 0 of 2 workers Ready after 20 s (attempt {attempt})") == 1
    assert sum(1 for c in calls if "--previous" in c) == 2, "each failed attempt is read once"


def test_follower_stops_when_the_job_never_appears(tmp_path: Path) -> None:
    code, out, _ = run_script(_FOLLOW_SCRIPT, [{"pods": {}, "jobs": {}}], tmp_path, **FOLLOW)
    assert code == 0 and "No Volcano Job labelled a=b" in out


@pytest.mark.parametrize(
    "stages", [[{"pods": {}, "jobs": {"j-1": "Pending"}}], [{"fail": True}]], ids=["pending", "kubectl-fails"]
)
def test_follower_stops_at_its_timeout_and_still_exits_0(stages: list[dict[str, Any]], tmp_path: Path) -> None:
    env = {**FOLLOW, "FOLLOW_SECONDS": "2", "GRACE_SECONDS": "60"}
    code, out, _ = run_script(_FOLLOW_SCRIPT, stages, tmp_path, **env)
    assert code == 0 and "Stopped following after 2 s" in out


WAIT = {"JOB_NAME": "j", "NAMESPACE": "ns", "WORKER_TASK": "mpiworker", "WORKERS": "3", "WAIT_SECONDS": "20"}


def test_master_waits_until_every_worker_is_ready(tmp_path: Path) -> None:
    stages = [{"ready": 0}, {"ready": 1}, {"ready": 2}, {"ready": 3}]
    code, out, calls = run_script(_WAIT_SCRIPT, stages, tmp_path, **WAIT)
    assert code == 0 and "3 workers Ready" in out
    verbs = [next(a for a in c if not a.startswith("-")) for c in calls]
    assert verbs == ["get", "get", "get", "wait", "get"], "polls until every worker exists, then watches"
    assert "volcano.sh/job-name=j,volcano.sh/task-spec=mpiworker" in calls[0]


def test_once_every_worker_exists_the_master_waits_with_a_watch(tmp_path: Path) -> None:
    stages = [{"ready": 0, "count": 3, "wait": True}, {"ready": 3}]
    code, out, calls = run_script(_WAIT_SCRIPT, stages, tmp_path, **WAIT)
    assert code == 0 and "3 workers Ready" in out
    [wait] = [c for c in calls if "wait" in c]
    assert "--for=condition=Ready" in wait and any(a.startswith("--timeout=") for a in wait)
    assert len(calls) == 3, "one list, one watch, one list: no polling while the workers start"


def test_the_master_wait_stops_at_once_on_sigterm(tmp_path: Path) -> None:
    """As PID 1 of its container, bash ignores SIGTERM unless it traps it: a deleted pod would linger."""
    env = fake_environment([{"ready": 0, "count": 1}], tmp_path, **{**WAIT, "WAIT_SECONDS": "60"})
    p = subprocess.Popen(["bash", "-c", _WAIT_SCRIPT], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.5)
    p.terminate()
    assert p.wait(timeout=5) == 143


def test_master_wait_fails_after_its_limit_so_the_pod_restarts(tmp_path: Path) -> None:
    code, out, _ = run_script(_WAIT_SCRIPT, [{"ready": 1}], tmp_path, **{**WAIT, "WAIT_SECONDS": "1"})
    assert code == 1 and "Only 1 of 3 workers Ready" in out


def run_resolve(tmp_path: Path, getent: str | None) -> tuple[int, str, list[str]]:
    """The master's DNS wait under POSIX sh, with only ``tr``, a no-op ``sleep`` and (if given) a fake ``getent``."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "tr").symlink_to(shutil.which("tr") or "/usr/bin/tr")
    tools = {"sleep": "exit 0"}
    if getent is not None:
        tools["getent"] = getent
    for name, body in tools.items():
        (bin_dir / name).write_text(f"#!/bin/sh\n{body}\n")
        (bin_dir / name).chmod(0o755)
    log = tmp_path / "asked"
    log.touch()
    p = subprocess.run(
        ["/bin/sh", "-c", _RESOLVE_SCRIPT],
        env={"PATH": str(bin_dir), "HOSTS": "w-0.j:2,w-1.j:2", "ASKED": str(log)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    return p.returncode, p.stderr, log.read_text().split()


def test_master_waits_until_every_worker_resolves(tmp_path: Path) -> None:
    # w-1.j resolves on the third lookup; the slot counts are not part of the names looked up.
    getent = """echo "$2" >> "$ASKED"; n=0; [ -f "$ASKED.$2" ] && read -r n < "$ASKED.$2"
n=$((n + 1)); echo "$n" > "$ASKED.$2"; [ "$2" = w-0.j ] || [ "$n" -ge 3 ]"""
    code, _, asked = run_resolve(tmp_path, getent)
    assert code == 0 and asked == ["w-0.j", "w-1.j", "w-1.j", "w-1.j"]


def test_master_gives_up_on_a_worker_that_never_resolves(tmp_path: Path) -> None:
    code, err, asked = run_resolve(tmp_path, 'echo "$2" >> "$ASKED"; exit 2')
    assert code == 1 and "Worker w-0.j does not resolve after 60 attempts" in err and len(asked) == 60


def test_master_skips_the_dns_wait_without_getent(tmp_path: Path) -> None:
    code, _, asked = run_resolve(tmp_path, None)
    assert code == 0 and asked == []


# --- kubectl in a pod: the in-cluster configuration survives --request-timeout, and errors are shown ---

SA_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"


def in_pod(script: str, tmp_path: Path) -> tuple[str, dict[str, str]]:
    """``script`` as if in a pod: a service-account folder (at a test path) and the Service variables."""
    sa = tmp_path / "sa"
    sa.mkdir()
    for name, text in (("token", "t0ken"), ("ca.crt", "CA"), ("namespace", "ns")):
        (sa / name).write_text(text)
    return script.replace(SA_PATH, str(sa)), {"KUBERNETES_SERVICE_HOST": "10.96.0.1", "KUBERNETES_SERVICE_PORT": "443"}


@pytest.mark.parametrize(
    ("host", "server"), [("10.96.0.1", "https://10.96.0.1:443"), ("fd00::1", "https://[fd00::1]:443")]
)
def test_kubectl_in_a_pod_gets_the_in_cluster_configuration_as_a_kubeconfig(
    host: str, server: str, tmp_path: Path
) -> None:
    script, env = in_pod(_WAIT_SCRIPT, tmp_path)
    env["KUBERNETES_SERVICE_HOST"] = host
    code, _, _, state = run_script_state(script, [{"ready": 3}], tmp_path, **{**WAIT, **env})
    assert code == 0
    [kubeconfig] = set(state["kubeconfigs"])
    assert kubeconfig, "every kubectl call runs with the written kubeconfig"
    config = yaml.safe_load(Path(kubeconfig).read_text())
    [cluster] = config["clusters"]
    [user] = config["users"]
    assert cluster["cluster"] == {"server": server, "certificate-authority": str(tmp_path / "sa" / "ca.crt")}
    assert user["user"] == {"tokenFile": str(tmp_path / "sa" / "token")}, "the token file, re-read as it rotates"
    assert config["current-context"] == "in-cluster" and config["contexts"][0]["context"]["user"] == "in-cluster"


def test_a_kubeconfig_given_to_the_pod_is_kept(tmp_path: Path) -> None:
    script, env = in_pod(_WAIT_SCRIPT, tmp_path)
    code, _, _, state = run_script_state(script, [{"ready": 3}], tmp_path, **{**WAIT, **env, "KUBECONFIG": "/mine"})
    assert code == 0 and set(state["kubeconfigs"]) == {"/mine"}


def test_outside_a_pod_kubectl_keeps_its_own_configuration(tmp_path: Path) -> None:
    code, _, _, state = run_script_state(_WAIT_SCRIPT, [{"ready": 3}], tmp_path, **WAIT)
    assert code == 0 and set(state["kubeconfigs"]) == {""}


def test_kubectl_errors_are_shown_once_per_message_not_swallowed(tmp_path: Path) -> None:
    stages = [
        {"fail": 5, "error": "error: connection refused"},
        {"fail": 2, "error": "Error from server (Forbidden): pods is forbidden"},
        {"ready": 3},
    ]
    code, _, err, _ = run_script_state(_WAIT_SCRIPT, stages, tmp_path, **WAIT)
    assert code == 0
    assert err.splitlines() == [
        "kubectl: error: connection refused",
        "kubectl: Error from server (Forbidden): pods is forbidden",
    ], "each distinct error once (a repeat waits 30 s), none lost"


def test_the_follower_shows_why_it_cannot_list(tmp_path: Path) -> None:
    stages = [
        {"fail": True, "error": 'Error from server (Forbidden): jobs.batch.volcano.sh is forbidden: cannot "list"'}
    ]
    code, out, err, _ = run_script_state(_FOLLOW_SCRIPT, stages, tmp_path, **{**FOLLOW, "GRACE_SECONDS": "1"})
    assert code == 0 and "Cannot list the Volcano Jobs" in out
    assert err.count('kubectl: Error from server (Forbidden): jobs.batch.volcano.sh is forbidden: cannot "list"') == 1
