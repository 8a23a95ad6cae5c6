"""Records the API objects under ``tests/client/fixtures/`` from a real API server and Volcano's own controllers.

    .venv/bin/python tests/client/record_fixtures.py     # about a minute; rewrites the fixtures

It starts the test control plane of ``tests/cluster`` (kube-apiserver and etcd on free loopback ports), Volcano's
controller manager and scheduler on free loopback ports against it (no kubelet, no Argo controller), and a Node
object of 2 CPUs. Then, as argoexec would, it creates each scenario's Workflow and, owned by it, the Volcano Job of
its resource step, and lets Volcano act: what the fixtures hold is what Volcano wrote. Two things are written by
this script instead of the daemons that are missing: the Workflow's ``status`` (Argo's controller) and, in the
``running`` scenario, the pods' phase (a kubelet). The webhook's defaults (queue, each task's minAvailable) are set
in the manifests, as the admission webhook would. Error bodies (403, 404, 401, 409, 422) are the API server's
answers to a service account without RBAC and to bad requests.
"""

from __future__ import annotations

import contextlib
import copy
import json
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "cluster"))
sys.path.insert(0, str(ROOT / "tests" / "e2e"))
sys.path.insert(0, str(ROOT))

from controlplane import ControlPlane, build, cache_dir, free_port  # noqa: E402
from workloads import mpi_workflow  # noqa: E402

OUT = Path(__file__).resolve().parent / "fixtures"
NAMESPACE = "argo"
WORKFLOWS = "/apis/argoproj.io/v1alpha1/namespaces/argo/workflows"
JOBS = "/apis/batch.volcano.sh/v1alpha1/namespaces/argo/jobs"
PODGROUPS = "/apis/scheduling.volcano.sh/v1beta1/namespaces/argo/podgroups"


def save(path: str, data: Any) -> None:
    """Write one fixture, without ``metadata.managedFields`` (as ``kubectl get`` shows objects)."""
    for item in [data, *data.get("items", [])] if isinstance(data, dict) else []:
        item.get("metadata", {}).pop("managedFields", None)
    target = OUT / path
    target.parent.mkdir(parents=True, exist_ok=True)
    text = data if isinstance(data, str) else json.dumps(data, indent=1, sort_keys=True) + "\n"
    target.write_text(text)


def wait_for(check: Callable[[], bool], what: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out waiting for {what}")
        time.sleep(0.5)


@contextlib.contextmanager
def volcano(cp: ControlPlane) -> Iterator[None]:
    """Volcano's controller manager and scheduler against ``cp``, every port of theirs a free loopback one."""
    binaries = cache_dir() / "bin"
    assert cp.dir is not None
    common = [f"--kubeconfig={cp.kubeconfig}", "--leader-elect=false", "--scheduler-name=volcano", "-v=2"]
    commands = {
        "vc-controller-manager": [
            *common,
            f"--healthz-address=127.0.0.1:{free_port()}",
            f"--listen-address=127.0.0.1:{free_port()}",
        ],
        "vc-scheduler": [
            *common,
            f"--scheduler-conf={cache_dir() / 'volcano' / 'scheduler.conf'}",
            "--default-queue=default",
            f"--healthz-address=127.0.0.1:{free_port()}",
            f"--listen-address=127.0.0.1:{free_port()}",
        ],
    }
    procs = []
    try:
        for name, args in commands.items():
            with open(cp.dir / f"{name}.log", "ab") as log:
                procs.append(subprocess.Popen([str(binaries / name), *args], stdout=log, stderr=subprocess.STDOUT))
        wait_for(lambda: _queue_open(cp), "queue default Open")
        yield
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait(timeout=15)


def _queue_open(cp: ControlPlane) -> bool:
    try:
        return bool(
            cp.request("GET", "/apis/scheduling.volcano.sh/v1beta1/queues/default")["status"]["state"] == "Open"
        )
    except Exception:
        return False


def add_node(cp: ControlPlane, name: str, cpu: str) -> None:
    """A Node as a kubelet registers it: capacity, allocatable, Ready."""
    cp.request("POST", "/api/v1/nodes", {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}})
    # The API server taints a new node not-ready; the node lifecycle controller (not running here) would lift it.
    cp.request(
        "PATCH", f"/api/v1/nodes/{name}", {"spec": {"taints": None}}, content_type="application/merge-patch+json"
    )
    resources = {"cpu": cpu, "memory": "8131676Ki", "pods": "110", "ephemeral-storage": "40901312Ki"}
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    status = {
        "capacity": resources,
        "allocatable": resources,
        "conditions": [
            {
                "type": "Ready",
                "status": "True",
                "reason": "KubeletReady",
                "message": "kubelet is posting ready status",
                "lastHeartbeatTime": now,
                "lastTransitionTime": now,
            }
        ],
        "nodeInfo": {
            "kubeletVersion": "v1.37.2",
            "containerRuntimeVersion": "containerd://1.6.20",
            "operatingSystem": "linux",
            "architecture": "amd64",
            "kernelVersion": "6.1.0",
            "osImage": "Debian GNU/Linux 12 (bookworm)",
            "machineID": "",
            "systemUUID": "",
            "bootID": "",
            "kubeProxyVersion": "",
        },
    }
    cp.request("PATCH", f"/api/v1/nodes/{name}/status", {"status": status}, content_type="application/merge-patch+json")


def submit(cp: ControlPlane, manifest: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """Create the Workflow, then its Volcano Job owned by it, as argoexec's resource step does."""
    wf = yaml.safe_load(manifest)
    created = cp.request("POST", WORKFLOWS, wf)
    name, uid = created["metadata"]["name"], created["metadata"]["uid"]
    template = next(t for t in wf["spec"]["templates"] if "resource" in t)
    job = yaml.safe_load(template["resource"]["manifest"].replace("{{workflow.name}}", name))
    job["metadata"]["ownerReferences"] = [
        {
            "apiVersion": "argoproj.io/v1alpha1",
            "kind": "Workflow",
            "name": name,
            "uid": uid,
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]
    job["spec"]["queue"] = "default"  # the admission webhook's defaults
    for task in job["spec"]["tasks"]:
        task.setdefault("minAvailable", task["replicas"])
    return created, cp.request("POST", JOBS, job)


def set_workflow_status(cp: ControlPlane, wf: dict[str, Any], status: dict[str, Any]) -> dict[str, Any]:
    """What Argo's controller would write (the Workflow CRD has no status subresource)."""
    path = f"{WORKFLOWS}/{wf['metadata']['name']}"
    labels = {"workflows.argoproj.io/phase": status["phase"]}
    if status.get("finishedAt"):
        labels["workflows.argoproj.io/completed"] = "true"
    body = {"metadata": {"labels": labels}, "status": status}
    result: dict[str, Any] = cp.request("PATCH", path, body, content_type="application/merge-patch+json")
    return result


def nodes_of(wf: dict[str, Any], phase: str, steps: dict[str, tuple[str, str]], finished: bool) -> dict[str, Any]:
    """A Workflow status as Argo writes one: the DAG node and a Pod node per step (display name -> phase, message)."""
    name = wf["metadata"]["name"]
    started = wf["metadata"]["creationTimestamp"]
    nodes: dict[str, Any] = {
        name: {
            "id": name,
            "name": name,
            "displayName": name,
            "type": "DAG",
            "templateName": "main",
            "templateScope": "local/",
            "phase": "Running" if not finished else phase,
            "startedAt": started,
            "finishedAt": started if finished else None,
            "children": [],
        }
    }
    for i, (step, (step_phase, message)) in enumerate(steps.items()):
        node_id = f"{name}-{1000000000 + i * 7919}"
        nodes[name]["children"].append(node_id)
        node = {
            "id": node_id,
            "name": f"{name}.{step}",
            "displayName": step,
            "type": "Pod",
            "templateName": step.replace("-job", "").replace("-logs", ""),
            "templateScope": "local/",
            "phase": step_phase,
            "boundaryID": name,
            "startedAt": started,
            "hostNodeName": "node-1",
            "finishedAt": started if step_phase in ("Succeeded", "Failed", "Error") else None,
        }
        if message:
            node["message"] = message
        nodes[node_id] = node
    if finished:  # the exit handler, whose only step runs unless the workflow Succeeded
        exit_id, skip_id = f"{name}-2000000000", f"{name}-2000007919"
        nodes[exit_id] = {
            "id": exit_id,
            "name": f"{name}.onExit",
            "displayName": f"{name}.onExit",
            "type": "Steps",
            "templateName": "cleanup-volcano-jobs",
            "templateScope": "local/",
            "phase": phase,
            "startedAt": started,
            "finishedAt": started,
            "children": [skip_id],
        }
        ran = phase != "Succeeded"
        nodes[skip_id] = {
            "id": skip_id,
            "name": f"{name}.onExit[0].delete-volcano-jobs",
            "displayName": "delete-volcano-jobs",
            "type": "Pod" if ran else "Skipped",
            "templateName": "delete-volcano-jobs",
            "templateScope": "local/",
            "boundaryID": exit_id,
            "phase": "Succeeded" if ran else "Skipped",
            "startedAt": started,
            "finishedAt": started,
        }
        if not ran:
            nodes[skip_id]["message"] = f"when '{phase} != Succeeded' evaluated false"
    status: dict[str, Any] = {
        "phase": phase,
        "startedAt": started,
        "finishedAt": started if finished else None,
        "progress": "0/2",
        "nodes": nodes,
    }
    return status


def snapshot(cp: ControlPlane, scenario: str, wf: dict[str, Any], job: dict[str, Any]) -> None:
    """Everything the client reads about one run, as the API server returns it."""
    name = wf["metadata"]["name"]
    save(f"{scenario}/workflow.json", cp.request("GET", f"{WORKFLOWS}/{name}"))
    save(
        f"{scenario}/jobs.json",
        cp.request("GET", JOBS, query={"labelSelector": f"workflows.argoproj.io/workflow={name}"}),
    )
    groups = cp.request("GET", PODGROUPS)
    uid = job["metadata"]["uid"]
    groups["items"] = [
        g for g in groups["items"] if any(o["uid"] == uid for o in g["metadata"].get("ownerReferences", []))
    ]
    save(f"{scenario}/podgroups.json", groups)
    save(
        f"{scenario}/pods.json",
        cp.request("GET", "/api/v1/namespaces/argo/pods", query={"labelSelector": f"hera-volcano/workflow={name}"}),
    )
    events = cp.request("GET", "/api/v1/namespaces/argo/events")
    involved = {uid} | {g["metadata"]["uid"] for g in groups["items"]}
    pods = cp.request("GET", "/api/v1/namespaces/argo/pods")["items"]
    involved |= {
        p["metadata"]["uid"]
        for p in pods
        if p["metadata"]["labels"].get("volcano.sh/job-name") == job["metadata"]["name"]
    }
    events["items"] = [e for e in events["items"] if e["involvedObject"].get("uid") in involved]
    save(f"{scenario}/events.json", events)
    save(f"{scenario}/queue-default.json", cp.request("GET", "/apis/scheduling.volcano.sh/v1beta1/queues/default"))
    save(f"{scenario}/nodes.json", cp.request("GET", "/api/v1/nodes"))


def job_has(cp: ControlPlane, job: dict[str, Any], check: Callable[[dict[str, Any]], bool]) -> Callable[[], bool]:
    return lambda: check(cp.request("GET", f"{JOBS}/{job['metadata']['name']}"))


def group_of(cp: ControlPlane, job: dict[str, Any]) -> dict[str, Any] | None:
    for g in cp.request("GET", PODGROUPS)["items"]:
        if any(o["uid"] == job["metadata"]["uid"] for o in g["metadata"].get("ownerReferences", [])):
            return dict(g)
    return None


def events_for(cp: ControlPlane, uid: str) -> list[dict[str, Any]]:
    items = cp.request("GET", "/api/v1/namespaces/argo/events")["items"]
    return [e for e in items if e["involvedObject"].get("uid") == uid]


def pods_of(cp: ControlPlane, job: dict[str, Any]) -> list[dict[str, Any]]:
    query = {"labelSelector": f"volcano.sh/job-name={job['metadata']['name']}"}
    return list(cp.request("GET", "/api/v1/namespaces/argo/pods", query=query)["items"])


def remove(cp: ControlPlane, job: dict[str, Any]) -> None:
    """Delete a job with its PodGroup and pods (no garbage collector runs here)."""
    for pod in pods_of(cp, job):
        query = {"gracePeriodSeconds": "0"}
        cp.request("DELETE", f"/api/v1/namespaces/argo/pods/{pod['metadata']['name']}", query=query)
    group = group_of(cp, job)
    if group is not None:
        cp.request("DELETE", f"{PODGROUPS}/{group['metadata']['name']}")
    cp.request("DELETE", f"{JOBS}/{job['metadata']['name']}")


def set_pod_phase(cp: ControlPlane, pod: dict[str, Any], phase: str, container_state: dict[str, Any]) -> None:
    """What a kubelet would report for a pod with one container (and its init containers done)."""
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    spec = pod["spec"]
    running = "running" in container_state
    status = {
        "phase": phase,
        "hostIP": "10.244.0.1",
        "podIP": "10.244.0.17",
        "startTime": now,
        "conditions": [{"type": "Ready", "status": "True" if running else "False", "lastTransitionTime": now}],
        "initContainerStatuses": [
            {
                "name": c["name"],
                "image": c["image"],
                "imageID": "",
                "ready": True,
                "restartCount": 0,
                "containerID": f"containerd://{'0' * 63}{i}",
                "state": {"terminated": {"exitCode": 0, "reason": "Completed", "startedAt": now, "finishedAt": now}},
            }
            for i, c in enumerate(spec.get("initContainers", []))
        ],
        "containerStatuses": [
            {
                "name": c["name"],
                "image": c["image"],
                "imageID": "",
                "ready": running,
                "restartCount": 0,
                "containerID": f"containerd://{'a' * 63}{i}",
                "started": running,
                "state": container_state,
            }
            for i, c in enumerate(spec["containers"])
        ],
    }
    cp.request(
        "PATCH",
        f"/api/v1/namespaces/argo/pods/{pod['metadata']['name']}/status",
        {"status": status},
        content_type="application/merge-patch+json",
    )


def record_scenarios(cp: ControlPlane) -> None:
    # 1. The e2e scenario: 3 workers asking 1 CPU each on a 2-CPU node. Volcano does not even enqueue the gang.
    wf, job = submit(
        cp,
        mpi_workflow(
            "no-fit",
            command=["mpi_hello_world"],
            workers=3,
            deadline=40,
            worker={"resources": {"requests": {"cpu": "1"}}},
        ),
    )
    wait_for(lambda: (g := group_of(cp, job)) is not None and bool(events_for(cp, g["metadata"]["uid"])), "no-fit")
    set_workflow_status(
        cp, wf, nodes_of(wf, "Running", {"submit-job": ("Running", ""), "follow-logs": ("Running", "")}, False)
    )
    time.sleep(3)  # a few scheduling sessions: the event's count grows
    snapshot(cp, "no-fit", wf, job)
    remove(cp, job)

    # 2. A second node of 1 CPU: 2 workers of 1.5 CPU fit the cluster's 3 (Volcano enqueues the gang and creates its
    #    pods), but once the first is placed the second fits no node: the gang plugin marks the PodGroup
    #    Unschedulable and each pod gets FailedScheduling.
    add_node(cp, "node-2", "1")
    # 2a. Without the pods' service accounts (no controller manager creates "default" here), Volcano cannot create
    #     the pods: the Job's events say why.
    wf, job = submit(cp, mpi_workflow("no-account", command=["mpi_hello_world"], workers=2))
    wait_for(lambda: any(e["reason"] == "FailedCreate" for e in events_for(cp, job["metadata"]["uid"])), "no SA")
    set_workflow_status(
        cp, wf, nodes_of(wf, "Running", {"submit-job": ("Running", ""), "follow-logs": ("Running", "")}, False)
    )
    snapshot(cp, "no-account", wf, job)
    remove(cp, job)
    for account in ("argo", "default"):
        cp.request("POST", "/api/v1/namespaces/argo/serviceaccounts", {"metadata": {"name": account}})
    wf, job = submit(
        cp,
        mpi_workflow(
            "tight", command=["mpi_hello_world"], workers=2, worker={"resources": {"requests": {"cpu": "1500m"}}}
        ),
    )

    def unschedulable() -> bool:
        group = group_of(cp, job)
        conditions = (group or {}).get("status", {}).get("conditions", [])
        return any(c["type"] == "Unschedulable" for c in conditions) and len(pods_of(cp, job)) == 3

    wait_for(unschedulable, "tight: Unschedulable with 3 pods")
    set_workflow_status(
        cp, wf, nodes_of(wf, "Running", {"submit-job": ("Running", ""), "follow-logs": ("Running", "")}, False)
    )
    time.sleep(3)
    snapshot(cp, "tight", wf, job)
    remove(cp, job)

    # 3. A gang that fits: Volcano binds its pods; a stand-in kubelet runs them, then the master completes.
    wf, job = submit(
        cp,
        mpi_workflow(
            "fits", command=["mpi_hello_world"], workers=2, worker={"resources": {"requests": {"cpu": "500m"}}}
        ),
    )
    wait_for(
        lambda: len(pods_of(cp, job)) == 3 and all(p["spec"].get("nodeName") for p in pods_of(cp, job)), "fits: bound"
    )
    for pod in pods_of(cp, job):
        set_pod_phase(
            cp, pod, "Running", {"running": {"startedAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}}
        )
    wait_for(
        job_has(cp, job, lambda j: j.get("status", {}).get("state", {}).get("phase") == "Running"), "fits: Running"
    )
    set_workflow_status(
        cp, wf, nodes_of(wf, "Running", {"submit-job": ("Running", ""), "follow-logs": ("Running", "")}, False)
    )
    time.sleep(2)
    snapshot(cp, "running", wf, job)
    master = next(p for p in pods_of(cp, job) if p["metadata"]["labels"]["volcano.sh/task-spec"] == "mpimaster")
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    set_pod_phase(
        cp,
        master,
        "Succeeded",
        {"terminated": {"exitCode": 0, "reason": "Completed", "startedAt": now, "finishedAt": now}},
    )
    wait_for(
        job_has(cp, job, lambda j: j.get("status", {}).get("state", {}).get("phase") == "Completing"),
        "fits: Completing",
    )
    # Volcano deletes the workers that still run; a kubelet would stop them and let the deletion finish.
    for pod in pods_of(cp, job):
        if pod["metadata"].get("deletionTimestamp"):
            query = {"gracePeriodSeconds": "0"}
            cp.request("DELETE", f"/api/v1/namespaces/argo/pods/{pod['metadata']['name']}", query=query)
    wait_for(
        job_has(cp, job, lambda j: j.get("status", {}).get("state", {}).get("phase") == "Completed"),
        "fits: Completed",
    )
    steps = {"submit-job": ("Succeeded", ""), "follow-logs": ("Succeeded", "")}
    status = nodes_of(wf, "Succeeded", steps, True)
    status["progress"] = "2/2"
    set_workflow_status(cp, wf, status)
    snapshot(cp, "succeeded", wf, job)


def record_errors(cp: ControlPlane) -> None:
    """The API server's error bodies, verbatim."""
    from kubernetes import client

    nobody = cp.service_account_client(NAMESPACE, "nobody")
    custom, core = client.CustomObjectsApi(nobody), client.CoreV1Api(nobody)
    calls: dict[str, Callable[[], Any]] = {
        "forbidden-create-workflows": lambda: custom.create_namespaced_custom_object(
            "argoproj.io",
            "v1alpha1",
            NAMESPACE,
            "workflows",
            {"apiVersion": "argoproj.io/v1alpha1", "kind": "Workflow", "metadata": {"generateName": "x-"}},
        ),
        "forbidden-list-nodes": lambda: core.list_node(),
        "forbidden-pods-log": lambda: core.read_namespaced_pod_log("some-pod", NAMESPACE),
        "forbidden-get-queue": lambda: custom.get_cluster_custom_object(
            "scheduling.volcano.sh", "v1beta1", "queues", "default"
        ),
    }
    admin = client.CustomObjectsApi(cp.api_client())
    calls["notfound-workflow"] = lambda: admin.get_namespaced_custom_object(
        "argoproj.io", "v1alpha1", NAMESPACE, "workflows", "no-such-workflow"
    )
    calls["notfound-resource"] = lambda: admin.list_namespaced_custom_object(
        "argoproj.io", "v1alpha1", NAMESPACE, "nosuchkinds"
    )
    wf = {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Workflow",
        "metadata": {"name": "fixed-name"},
        "spec": {"entrypoint": "main", "templates": [{"name": "main", "container": {"image": "busybox:1.37.0"}}]},
    }
    admin.create_namespaced_custom_object("argoproj.io", "v1alpha1", NAMESPACE, "workflows", wf)
    calls["already-exists"] = lambda: admin.create_namespaced_custom_object(
        "argoproj.io", "v1alpha1", NAMESPACE, "workflows", wf
    )
    bad = copy.deepcopy(wf)
    bad["metadata"] = {"generateName": "bad-"}
    bad["spec"]["templates"] = "not a list"
    calls["invalid"] = lambda: admin.create_namespaced_custom_object(
        "argoproj.io", "v1alpha1", NAMESPACE, "workflows", bad
    )
    configuration = client.Configuration()
    configuration.host = cp.server
    configuration.ssl_ca_cert = str(cp.pki["ca.crt"])
    configuration.api_key = {"authorization": "not-a-token"}
    configuration.api_key_prefix = {"authorization": "Bearer"}
    stranger = client.CustomObjectsApi(client.ApiClient(configuration))
    calls["unauthorized"] = lambda: stranger.list_namespaced_custom_object(
        "argoproj.io", "v1alpha1", NAMESPACE, "workflows"
    )
    for name, call in calls.items():
        try:
            call()
        except client.ApiException as e:
            save(f"errors/{name}.json", {"status": e.status, "reason": e.reason, "body": e.body})
        else:
            raise SystemExit(f"{name}: no error")


def main() -> None:
    cp = ControlPlane(build()).start()
    try:
        cp.install_crds()
        # Every CRD Volcano's controllers watch (the test control plane installs only Job, Queue and PodGroup).
        cp.install_crds(Path(line) for line in (cache_dir() / "crds" / "volcano.list").read_text().split())
        cp.ensure_namespace(NAMESPACE)
        add_node(cp, "node-1", "2")
        with volcano(cp):
            try:
                record_scenarios(cp)
            except SystemExit:
                for path in (PODGROUPS, "/api/v1/namespaces/argo/pods", "/api/v1/namespaces/argo/events", JOBS):
                    for item in cp.request("GET", path)["items"]:
                        print(
                            path.rsplit("/", 1)[1],
                            item["metadata"]["name"],
                            json.dumps(item.get("status"))[:600],
                            item.get("message", ""),
                            file=sys.stderr,
                        )
                raise
        record_errors(cp)
    finally:
        cp.stop()
    print(f"fixtures written to {OUT}")


if __name__ == "__main__":
    main()
