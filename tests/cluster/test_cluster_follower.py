"""The log follower's program against a real API server, as a pod runs it (no kubelet: pods and jobs change only as
the test writes them, through their status subresource), as a service account that has exactly the Role
``rbac_for`` derives from the calls the follower declares, with a token from the TokenRequest API. This proves what
the stand-in servers of tests/pods cannot: that its requests (paths, selectors, watches from a version) are what a
real API server takes, and that its declared calls are all the RBAC it needs."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from hera_volcano import follow_logs_template, rbac_for
from hera_volcano.pods import program
from hera_volcano.pods.run import Settings
from tests.job_steps import job_step

STEP_LABELS = {"workflows.argoproj.io/workflow": "wf", "hera-volcano/workflow": "wf", "hera-volcano/job": "train"}
POD_LABELS = {"hera-volcano/workflow": "wf", "hera-volcano/job": "train"}
JOB_LABELS = {"workflows.argoproj.io/workflow": "wf", "hera-volcano/job": "train"}
ACCOUNT = "follower"


def pod(name: str, labels: dict[str, str], containers: list[str], inits: list[str] = ()) -> dict[str, Any]:
    # The control plane runs no controller that makes each namespace's "default" account: name the follower's.
    spec: dict[str, Any] = {
        "containers": [{"name": c, "image": "x:1"} for c in containers],
        "serviceAccountName": ACCOUNT,
        "automountServiceAccountToken": False,
    }
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
    """The program run as a pod runs it: its service account folder (token, CA, namespace), short timings."""

    def __init__(self, cp: Any, namespace: str, tmp: Path) -> None:
        account = tmp / "serviceaccount"
        account.mkdir()
        request = {
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenRequest",
            "spec": {"expirationSeconds": 3600},
        }
        path = f"/api/v1/namespaces/{namespace}/serviceaccounts/{ACCOUNT}/token"
        (account / "token").write_text(cp.request("POST", path, request)["status"]["token"])
        (account / "ca.crt").write_bytes(Path(cp.pki["ca.crt"]).read_bytes())
        (account / "namespace").write_text(namespace)
        env = {
            "PATH": os.environ["PATH"],
            "KUBERNETES_SERVICE_HOST": "127.0.0.1",
            "KUBERNETES_SERVICE_PORT": str(cp.port),
            "SA_DIR": str(account),
            Settings.JOB_SELECTOR: "workflows.argoproj.io/workflow=wf,hera-volcano/job=train",
            Settings.POD_SELECTOR: "hera-volcano/workflow=wf,hera-volcano/job=train",
            Settings.FOLLOW_SECONDS: "120",
            Settings.GRACE_SECONDS: "60",
            Settings.TICK_SECONDS: "0.2",
            Settings.DRAIN_SECONDS: "1",
            Settings.STEP_GRACE_SECONDS: "2",
            Settings.BACKOFF_MAX_SECONDS: "2",
        }
        self.proc = subprocess.Popen(
            [sys.executable, "-I", "-c", program.source()], env=env, cwd=tmp, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True, start_new_session=True,
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
    """The follower's service account in ``namespace``, with the Role rbac_for derives for a follower's template."""
    follower = follow_logs_template(job_step("train"), name="logs")._build_template()
    workflow = {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Workflow",
        "metadata": {"name": "wf", "namespace": namespace},
        "spec": {"serviceAccountName": ACCOUNT, "templates": [follower.model_dump(by_alias=True, exclude_none=True)]},
    }
    for obj in rbac_for(workflow, service_accounts=True):
        # as `kubectl apply` would: the namespace exists already and takes the Pod Security labels it brings
        control_plane.apply(obj, namespace)
    return namespace


def test_the_follower_takes_a_real_api_server_s_watches_event_after_event_with_its_declared_rbac(
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
    assert "Forbidden" not in err, err
    assert (
        out[0]
        == "Following the leading task of the job labelled workflows.argoproj.io/workflow=wf,hera-volcano/job=train"
    )
    # The failed attempt of the init container, the master's run (no kubelet here: its log cannot be read), the end.
    assert "=== train-abc-master-0: init container wait-for-workers failed (restart 1); the end of its output:" in out
    assert "=== logs of train-abc-master-0 (Running)" in out
    assert out[-1] == "Job train-abc is Completed", out


def test_the_follower_sees_a_step_that_ended_without_its_job(control_plane: Any, account: str, tmp_path: Path) -> None:
    ns = account
    step = control_plane.create(pod("wf-train-1", STEP_LABELS, ["main", "wait"]), ns)
    status(control_plane, ns, step, {"phase": "Running"})
    follower = Follower(control_plane, ns, tmp_path)
    time.sleep(2)
    status(control_plane, ns, step, {"phase": "Failed"})
    code, out, err = follower.result()
    assert code == 0 and "Forbidden" not in err, (out, err)
    assert out[-1] == "The job's step has ended without creating a job", out
