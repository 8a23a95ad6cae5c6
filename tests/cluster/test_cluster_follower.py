"""The log follower's script with the real kubectl against a real API server (no kubelet: pods and jobs change only
as the test writes them, through their status subresource). This proves what the fake kubectl of tests/pods cannot:
that the script's selectors and JSONPath templates are what kubectl and the API server take, event after event
(kubectl's JSONPath once kept a `range` from one watched object to the next and failed on the second)."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from hera_volcano.kube import pod_scripts

FOLLOW = pod_scripts.with_kubectl("hera_volcano.argo", "follow_logs.sh")
STEP_LABELS = {"workflows.argoproj.io/workflow": "wf", "hera-volcano/workflow": "wf", "hera-volcano/job": "train"}
POD_LABELS = {"hera-volcano/workflow": "wf", "hera-volcano/job": "train"}
JOB_LABELS = {"workflows.argoproj.io/workflow": "wf", "hera-volcano/job": "train"}


def pod(name: str, labels: dict[str, str], containers: list[str], inits: list[str] = ()) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": c, "image": "x:1"} for c in containers]}
    if inits:
        spec["initContainers"] = [{"name": c, "image": "x:1"} for c in inits]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": labels}, "spec": spec}


def job(name: str) -> dict[str, Any]:
    template = {"spec": {"containers": [{"name": "master", "image": "x:1"}]}}
    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": name, "labels": JOB_LABELS, "annotations": {"hera-volcano/lead-task": "master"}},
        "spec": {"tasks": [{"name": "master", "replicas": 1, "template": template}]},
    }


class Follower:
    """The script run with the real kubectl, as a pod would (its namespace given, short timings)."""

    def __init__(self, cp: Any, namespace: str, tmp: Path) -> None:
        kubectl = (
            Path(os.environ.get("HERA_VOLCANO_CLUSTER_CACHE") or Path(__file__).resolve().parents[2] / ".cache/cluster")
            / "bin"
        )
        env = {
            "PATH": f"{kubectl}:{os.environ['PATH']}",
            "KUBECONFIG": str(cp.kubeconfig),
            "TMPDIR": str(tmp),
            "NAMESPACE": namespace,
            "JOB_SELECTOR": "workflows.argoproj.io/workflow=wf,hera-volcano/job=train",
            "POD_SELECTOR": "hera-volcano/workflow=wf,hera-volcano/job=train",
            "TASK": "",
            "CONTAINER": "",
            "FOLLOW_SECONDS": "120",
            "GRACE_SECONDS": "60",
            "TICK_SECONDS": "0.2",
            "DRAIN_SECONDS": "1",
            "STEP_GRACE_SECONDS": "2",
            "BACKOFF_MAX_SECONDS": "2",
        }
        self.proc = subprocess.Popen(
            ["bash", "-c", FOLLOW], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            start_new_session=True,
        )  # fmt: skip

    def result(self, timeout: float = 60) -> tuple[int, list[str], str]:
        try:
            out, err = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            out, err = self.proc.communicate()
            raise AssertionError(f"the follower did not end:\n{out}\n{err}") from None
        finally:
            if self.proc.poll() is None:
                os.killpg(self.proc.pid, signal.SIGKILL)
        return self.proc.returncode, out.splitlines(), err


def status(cp: Any, namespace: str, obj: dict[str, Any], value: dict[str, Any]) -> None:
    path = cp.resource_path(obj, namespace) + "/status"
    cp.request("PATCH", path, {"status": value}, content_type="application/merge-patch+json")


@pytest.fixture
def account(control_plane: Any, namespace: str) -> str:
    control_plane.create(
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default", "namespace": namespace}},
        namespace,
    )
    return namespace


def test_the_real_kubectl_takes_the_follower_s_watches_event_after_event(
    control_plane: Any, account: str, tmp_path: Path
) -> None:
    ns = account
    step = control_plane.create(pod("wf-train-1", STEP_LABELS, ["main", "wait"]), ns)
    status(control_plane, ns, step, {"phase": "Running"})
    follower = Follower(control_plane, ns, tmp_path)
    time.sleep(2)
    created = control_plane.create(job("train-abc"), ns)
    status(control_plane, ns, created, {"state": {"phase": "Pending"}})
    master = control_plane.create(pod("train-abc-master-0", {**POD_LABELS, "volcano.sh/task-spec": "master"},
                                      ["master"], ["wait-for-workers"]), ns)  # fmt: skip
    worker = control_plane.create(pod("train-abc-worker-0", {**POD_LABELS, "volcano.sh/task-spec": "worker"},
                                      ["worker"]), ns)  # fmt: skip
    for obj in (master, worker):  # pods without statuses, then with: each a watch event the templates must print
        status(control_plane, ns, obj, {"phase": "Pending"})
    waiting = {"waiting": {"reason": "PodInitializing"}}
    status(control_plane, ns, master, {
        "phase": "Pending",
        "initContainerStatuses": [{"name": "wait-for-workers", "restartCount": 1, "ready": False, "image": "x:1",
                                   "imageID": "", "state": waiting}],
        "containerStatuses": [{"name": "master", "restartCount": 0, "ready": False, "image": "x:1", "imageID": "",
                               "state": waiting}],
    })  # fmt: skip
    time.sleep(2)
    status(control_plane, ns, master, {
        "phase": "Running",
        "containerStatuses": [{"name": "master", "restartCount": 0, "ready": True, "image": "x:1", "imageID": "",
                               "containerID": "containerd://abc", "started": True,
                               "state": {"running": {"startedAt": "2026-12-02T00:00:00Z"}}}],
    })  # fmt: skip
    status(control_plane, ns, created, {"state": {"phase": "Running"}})
    time.sleep(3)
    status(control_plane, ns, created, {"state": {"phase": "Completed"}})
    code, out, err = follower.result()
    assert code == 0, (out, err)
    assert "jsonpath" not in err and "Error executing template" not in err, err
    assert (
        out[0]
        == "Following the leading task of the job labelled workflows.argoproj.io/workflow=wf,hera-volcano/job=train"
    )
    # The failed attempt of the init container, the master's run (no kubelet here: its log cannot be read), the end.
    assert "=== train-abc-master-0: init container wait-for-workers failed (restart 1); the end of its output:" in out
    assert "=== logs of train-abc-master-0 (Running)" in out
    assert out[-1] == "Job train-abc is Completed", out


def test_the_real_kubectl_sees_a_step_that_ended_without_its_job(
    control_plane: Any, account: str, tmp_path: Path
) -> None:
    ns = account
    step = control_plane.create(pod("wf-train-1", STEP_LABELS, ["main", "wait"]), ns)
    status(control_plane, ns, step, {"phase": "Running"})
    follower = Follower(control_plane, ns, tmp_path)
    time.sleep(2)
    status(control_plane, ns, step, {"phase": "Failed"})
    code, out, err = follower.result()
    assert code == 0 and "jsonpath" not in err, (out, err)
    assert out[-1] == "The job's step has ended without creating a job", out
