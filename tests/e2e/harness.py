"""What the end-to-end scenarios share: the CLIs of the running Argo line, the API, and a record of every pod.

A scenario submits exactly what a user would (``python -m hera_volcano.mpi_hello | argo submit --wait -``), then
checks the outcome against the live objects and the :class:`PodRecorder`'s record: the Volcano Jobs and PodGroups,
the scheduler that bound each pod, restarts, and the events.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "cluster" / "e2e"))

import layout  # noqa: E402
from node import Node  # noqa: E402

from hera_volcano.argo.conditions import FAILURE_PHASES  # noqa: E402
from hera_volcano.argo.defaults import SERVICE_ACCOUNT as DEFAULT_SERVICE_ACCOUNT  # noqa: E402

NAMESPACE = layout.ARGO_NAMESPACE
SERVICE_ACCOUNT = DEFAULT_SERVICE_ACCOUNT  # the bundled workflows' own, which their RBAC creates
VOLCANO = ("batch.volcano.sh", "v1alpha1", "jobs")
PODGROUPS = ("scheduling.volcano.sh", "v1beta1", "podgroups")
WORKFLOWS = ("argoproj.io", "v1alpha1", "workflows")
WORKFLOW_LABEL = "workflows.argoproj.io/workflow"
#: pytest's ``record_property``: a batched scenario records its own duration ("took") for the end-of-run summary.
Record = Callable[[str, object], None]


class CommandFailed(AssertionError):
    pass


@dataclass
class Run:
    """A finished command: its exit code and output."""

    code: int
    out: str
    err: str

    def ok(self) -> Run:
        if self.code != 0:
            raise CommandFailed(f"exit {self.code}\nstdout:\n{self.out[-3000:]}\nstderr:\n{self.err[-3000:]}")
        return self


@dataclass(frozen=True)
class Request:
    """One request to the API server, from its audit log: when, by which pod, the verb and what it asked for (a
    resource, or a path such as /api for discovery)."""

    at: float
    pod: str
    verb: str
    what: str


@dataclass
class PodRecord:
    """What was seen of one pod over its life (pods of finished jobs may be deleted before a test looks)."""

    name: str
    labels: dict[str, str]
    created: str
    scheduler: str = ""
    node: str = ""
    phases: list[str] = field(default_factory=list)
    restarts: dict[str, int] = field(default_factory=dict)
    waiting: set[str] = field(default_factory=set)  # reasons its containers waited for (ImagePullBackOff, ...)
    deleted: bool = False
    bound_at: float | None = None  # when it was first seen on a node
    started: dict[str, float] = field(default_factory=dict)  # container -> when it started (the kubelet's startedAt)
    ended: dict[str, float] = field(default_factory=dict)  # container -> when it ended (the kubelet's finishedAt)
    step: str = ""  # the Argo node it runs (workflows.argoproj.io/node-name), for a workflow's pod
    deleting_at: float | None = None  # when it was first seen with a deletionTimestamp (its deletion asked for)
    exit_codes: dict[str, int] = field(default_factory=dict)  # container -> the exit code it first ended with

    @property
    def created_at(self) -> float:
        """When the API server created the pod (whole seconds)."""
        return datetime.fromisoformat(self.created).timestamp()

    def describe(self) -> str:
        """One line for a failure message: name, node, phases, restarts, what its containers waited for."""
        restarts = {c: n for c, n in self.restarts.items() if n}
        return (
            f"{self.name}: {' -> '.join(self.phases) or '(no phase)'}"
            + (f" on {self.node}" if self.node else ", not bound")
            + (f", restarts {restarts}" if restarts else "")
            + (f", waited for {sorted(self.waiting)}" if self.waiting else "")
            + (", deleted" if self.deleted else "")
        )


class Recorder:
    """Watches a namespace's pods and PodGroups in threads; keeps a :class:`PodRecord` per pod and the last
    version of each PodGroup seen (Volcano deletes a finished job's PodGroup, and some of its pods)."""

    def __init__(self, core: Any, custom: Any, namespace: str) -> None:
        self.pods: dict[str, PodRecord] = {}
        self.groups: dict[str, dict[str, Any]] = {}
        self.job_phases: dict[str, list[str]] = {}  # Volcano Job name -> the phases it went through
        self.job_phase_at: dict[str, dict[str, float]] = {}  # Volcano Job name -> phase -> when first seen
        self.jobs: dict[str, dict[str, Any]] = {}  # Volcano Job name -> its last version seen
        self.deleted: dict[str, float] = {}  # "pod/NAME", "podgroup/UID", "job/NAME" -> when it was deleted
        #: What went wrong while watching (the suite fails on any at the end: a gap in the record is a test bug).
        self.errors: list[str] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        group_list = functools.partial(custom.list_namespaced_custom_object, *PODGROUPS[:2], namespace, PODGROUPS[2])
        job_list = functools.partial(custom.list_namespaced_custom_object, *VOLCANO[:2], namespace, VOLCANO[2])
        for lister, record in (
            (functools.partial(core.list_namespaced_pod, namespace), self._pod),
            (group_list, self._group),
            (job_list, self._job),
        ):
            threading.Thread(target=self._run, args=(lister, record), daemon=True).start()

    def _run(self, lister: Callable[..., Any], record: Callable[[str, Any], None]) -> None:
        """Watch without gaps: each new watch resumes from the last resource version seen, so no event (a
        deletion above all) falls between two; only when the server has forgotten that version does it start over."""
        from kubernetes import client, watch

        version: str | None = None
        while not self._stop.is_set():
            w = watch.Watch()
            try:
                kwargs = {"resource_version": version} if version else {}
                for event in w.stream(lister, timeout_seconds=30, **kwargs):
                    with self._lock:
                        record(event["type"], event["object"])
                    if self._stop.is_set():
                        w.stop()
                version = w.resource_version or version
            except client.ApiException as e:
                if e.status == 410:  # Gone: too old, list again (the watch resumes without a gap)
                    version = None
                else:
                    self._error(f"{lister.func.__name__}: {e.status} {e.reason}")  # type: ignore[attr-defined]
                time.sleep(0.5)
            except Exception as e:
                if self._stop.is_set():
                    return
                self._error(f"{lister.func.__name__}: {type(e).__name__}: {e}")  # type: ignore[attr-defined]
                version = w.resource_version or version
                time.sleep(0.5)

    def _error(self, message: str) -> None:
        print(f"recorder: {message}", file=sys.stderr)
        with self._lock:
            self.errors.append(message)

    def _pod(self, kind: str, pod: Any) -> None:
        meta, spec, status = pod.metadata, pod.spec, pod.status
        rec = self.pods.get(meta.name)
        if rec is None or rec.created != str(meta.creation_timestamp):
            rec = PodRecord(meta.name, dict(meta.labels or {}), str(meta.creation_timestamp))
            self.pods[meta.name] = rec
        rec.scheduler = spec.scheduler_name or ""
        rec.step = (meta.annotations or {}).get("workflows.argoproj.io/node-name", rec.step)
        rec.node = spec.node_name or rec.node
        if rec.node and rec.bound_at is None:
            rec.bound_at = time.time()
        if status.phase and (not rec.phases or rec.phases[-1] != status.phase):
            rec.phases.append(status.phase)
        for cs in [*(status.init_container_statuses or []), *(status.container_statuses or [])]:
            rec.restarts[cs.name] = max(rec.restarts.get(cs.name, 0), cs.restart_count or 0)
            if cs.state and cs.state.waiting and cs.state.waiting.reason not in (None, "PodInitializing"):
                rec.waiting.add(cs.state.waiting.reason)
            begun = cs.state and (cs.state.running or cs.state.terminated)
            if begun and begun.started_at:
                rec.started.setdefault(cs.name, begun.started_at.timestamp())
            if cs.state and cs.state.terminated and cs.state.terminated.finished_at:
                rec.ended.setdefault(cs.name, cs.state.terminated.finished_at.timestamp())
                rec.exit_codes.setdefault(cs.name, cs.state.terminated.exit_code)
        if meta.deletion_timestamp and rec.deleting_at is None:
            rec.deleting_at = time.time()
        rec.deleted = kind == "DELETED"
        if rec.deleted:
            self.deleted[f"pod/{meta.name}"] = time.time()

    def _group(self, kind: str, group: dict[str, Any]) -> None:
        self.groups[group["metadata"]["uid"]] = group
        if kind == "DELETED":
            self.deleted[f"podgroup/{group['metadata']['uid']}"] = time.time()

    def _job(self, kind: str, job: dict[str, Any]) -> None:
        self.jobs[job["metadata"]["name"]] = job
        if kind == "DELETED":
            self.deleted[f"job/{job['metadata']['name']}"] = time.time()
        phases = self.job_phases.setdefault(job["metadata"]["name"], [])
        phase = job.get("status", {}).get("state", {}).get("phase")
        if phase and (not phases or phases[-1] != phase):
            phases.append(phase)
        if phase:
            self.job_phase_at.setdefault(job["metadata"]["name"], {}).setdefault(phase, time.time())

    def gone_at(self, job: str) -> float | None:
        """When the last of a Volcano Job, its pods and its PodGroups was deleted (None while one is left)."""
        with self._lock:
            uid = self.jobs[job]["metadata"]["uid"]
            keys = [f"job/{job}"]
            keys += [f"pod/{p.name}" for p in self.pods.values() if p.labels.get("volcano.sh/job-name") == job]
            keys += [
                f"podgroup/{g}"
                for g, o in self.groups.items()
                if any(r.get("uid") == uid for r in o["metadata"].get("ownerReferences", []))
            ]
            times = [self.deleted.get(k) for k in keys]
        return None if any(t is None for t in times) else max(t for t in times if t is not None)

    def jobs_of(self, workflow: str) -> list[str]:
        """The names of the Volcano Jobs seen for a workflow (they carry its label), even if deleted since."""
        with self._lock:
            return sorted(
                n for n, j in self.jobs.items() if j["metadata"].get("labels", {}).get(WORKFLOW_LABEL) == workflow
            )

    def phases(self, job: str) -> list[str]:
        """The phases a Volcano Job went through, as seen (it may be deleted by now)."""
        with self._lock:
            return list(self.job_phases.get(job, []))

    def ended_at(self, job: str, phases: Collection[str] = FAILURE_PHASES) -> float:
        """When the Volcano Job was first seen in one of ``phases`` (by default the phases of the job step's failure
        condition: Terminating waits for the pods to go, which is Kubernetes' time): the moment the step's condition
        can fire. Raises with the phases seen when it never was."""
        with self._lock:
            at = [t for phase, t in self.job_phase_at.get(job, {}).items() if phase in phases]
        assert at, f"job {job} never reached {sorted(phases)}: it went {self.phases(job)}"
        return min(at)

    def select(self, **labels: str) -> list[PodRecord]:
        with self._lock:
            return [p for p in self.pods.values() if all(p.labels.get(k) == v for k, v in labels.items())]

    def groups_of(self, job: dict[str, Any]) -> list[dict[str, Any]]:
        """The PodGroups seen for a Volcano Job (owned by it)."""
        uid = job["metadata"]["uid"]
        with self._lock:
            return [
                g
                for g in self.groups.values()
                if any(o.get("uid") == uid for o in g["metadata"].get("ownerReferences", []))
            ]

    def stop(self) -> None:
        self._stop.set()


class Cluster:
    """The running cluster as the tests use it, on one Argo line at a time."""

    def __init__(self, node: Node) -> None:
        from kubernetes import client, config

        self.node = node
        self.api_client = config.new_client_from_config(config_file=str(node.paths.kubeconfig))
        self.core = client.CoreV1Api(self.api_client)
        self.custom = client.CustomObjectsApi(self.api_client)
        self.rbac = client.RbacAuthorizationV1Api(self.api_client)
        self.line = node.current_argo_line() or layout.DEFAULT_ARGO_LINE
        self.recorder = Recorder(self.core, self.custom, NAMESPACE)
        #: Workflows of the batch (harness.Batch): a scenario that runs alone does not delete them after itself.
        self.batched: set[str] = set()

    # ---------------------------------------------------------------------------------------------- commands

    def env(self) -> dict[str, str]:
        import os

        return {**os.environ, **self.node.env()}

    def run(self, argv: Sequence[str], input: str | None = None, timeout: float = 600) -> Run:
        proc = subprocess.run(
            list(argv), input=input, capture_output=True, text=True, timeout=timeout, env=self.env(), check=False
        )
        return Run(proc.returncode, proc.stdout, proc.stderr)

    def hera(self, module: str, *args: str) -> str:
        """What ``python -m hera_volcano.MODULE ARGS`` prints (the user's first command)."""
        return self.run([sys.executable, "-m", f"hera_volcano.{module}", *args], timeout=120).ok().out

    def argo(self, *args: str, input: str | None = None, timeout: float = 600) -> Run:
        return self.run([str(layout.argo_binary(self.line, "argo")), "-n", NAMESPACE, *args], input, timeout)

    def kubectl(self, *args: str, input: str | None = None) -> Run:
        return self.run([str(layout.built("kubectl")), *args], input, 120)

    def submit(self, manifest: str, *args: str, timeout: float = 600) -> dict[str, Any]:
        """``argo submit --wait -o json - ARGS``: the finished Workflow."""
        run = self.argo("submit", "--wait", "-o", "json", "-", *args, input=manifest, timeout=timeout)
        if run.code not in (0, 1) or not run.out.strip().startswith("{"):
            run.ok()
            raise CommandFailed(f"argo submit printed no workflow:\n{run.out}\n{run.err}")
        wf: dict[str, Any] = json.loads(run.out)
        return self.workflow(wf["metadata"]["name"])

    # ---------------------------------------------------------------------------------------------- objects

    def start(self, manifest: str, *args: str) -> str:
        """``argo submit -o name - ARGS`` without waiting: the workflow's name."""
        return self.argo("submit", "-o", "name", "-", *args, input=manifest).ok().out.strip()

    def wait(self, name: str, timeout: float = 600) -> dict[str, Any]:
        """The workflow once it has finished (exit handler included), or AssertionError after ``timeout`` saying
        what it was doing then."""
        self.wait_for(
            lambda: bool(self.workflow(name).get("status", {}).get("finishedAt")),
            f"workflow {name} to finish",
            timeout,
            seen=lambda: self.describe(name),
        )
        return self.workflow(name)

    def describe(self, name: str) -> str:
        """What a failure message shows of a workflow, so a CI log alone explains it: its phase and message, each
        step's phase and message, its Volcano Jobs' phases and every pod seen (phases, restarts, what its containers
        waited for), from the live objects and the recorder (a finished job's pods may be gone)."""
        lines = []
        try:
            status = self.workflow(name).get("status", {})
        except Exception as e:  # kubernetes.client.ApiException: deleted, or the API is down
            status = {}
            lines.append(f"workflow {name}: cannot be read ({type(e).__name__}: {str(e).strip()[:200]})")
        else:
            message = f", message {status['message']!r}" if status.get("message") else ""
            lines.append(f"workflow {name}: phase {status.get('phase') or '(none yet)'}{message}")
        nodes = sorted(status.get("nodes", {}).values(), key=lambda n: (n.get("startedAt") or "", n["displayName"]))
        began = status.get("startedAt")
        for node in nodes:
            if node.get("type") in ("Pod", "Retry", "Skipped", "Suspend"):
                message = f": {node['message']!r}" if node.get("message") else ""
                span = _span(began, node.get("startedAt"), node.get("finishedAt"))
                lines.append(f"  step {node['displayName']}: {node.get('phase')}{span}{message}")
        pods = self.recorder.select(**{WORKFLOW_LABEL: name})
        for job in self.recorder.jobs_of(name):
            lines.append(f"  volcano job {job}: phases {' -> '.join(self.recorder.phases(job)) or '(none seen)'}")
            pods += self.recorder.select(**{"volcano.sh/job-name": job})
        lines += [f"  pod {p.describe()}" for p in pods]
        return "\n".join(lines)

    def lines(self, name: str, container: str = "main") -> list[tuple[str, datetime, str]]:
        """(pod, time, text) of every log line of the workflow's pods, from ``argo logs --timestamps``."""
        out = self.argo("logs", name, "-c", container, "--timestamps", "--no-color", timeout=120).ok().out
        found = []
        for line in out.splitlines():
            m = re.match(r"(\S+): (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z) ?(.*)$", line)
            if m:
                stamp = m.group(2)[:26].rstrip("Z") + "+00:00"
                found.append((m.group(1), datetime.fromisoformat(stamp), m.group(3)))
        return found

    def job_pods(self, job: str) -> list[Any]:
        """The pods of a Volcano Job that exist now."""
        return list(self.core.list_namespaced_pod(NAMESPACE, label_selector=f"volcano.sh/job-name={job}").items)

    def job_logs(self, job: str, container: str) -> dict[str, str]:
        """The log of ``container`` in each pod of a Volcano Job that exists now, by pod."""
        return {
            p.metadata.name: self.core.read_namespaced_pod_log(p.metadata.name, NAMESPACE, container=container)
            for p in self.job_pods(job)
        }

    def job_exists(self, job: str) -> bool:
        try:
            self.custom.get_namespaced_custom_object(*VOLCANO[:2], NAMESPACE, VOLCANO[2], job)
            return True
        except Exception as e:  # kubernetes.client.ApiException
            if getattr(e, "status", None) == 404:
                return False
            raise

    def podgroups_now(self, job_uid: str) -> list[dict[str, Any]]:
        items = self.custom.list_namespaced_custom_object(*PODGROUPS[:2], NAMESPACE, PODGROUPS[2])["items"]
        return [g for g in items if any(o.get("uid") == job_uid for o in g["metadata"].get("ownerReferences", []))]

    def refused(self, service_account: str) -> set[str]:
        """What the API server answered 403 to ``service_account`` of the workflows' namespace: 'resource' or
        'resource/subresource', from its audit log (which records every service account's requests)."""
        user = f"system:serviceaccount:{NAMESPACE}:{service_account}"
        found = set()
        with open(self.node.paths.audit_log) as f:
            for line in f:
                if user not in line:
                    continue
                event = json.loads(line)
                if event["user"]["username"] == user and event.get("responseStatus", {}).get("code") == 403:
                    ref = event.get("objectRef", {})
                    sub = ref.get("subresource")
                    found.add(ref.get("resource", "?") + (f"/{sub}" if sub else ""))
        return found

    def requests(self, service_account: str = SERVICE_ACCOUNT, namespace: str = NAMESPACE) -> list[Request]:
        """Every request the pods of ``service_account`` (of ``namespace``) made, from the API server's audit log,
        with the pod that made it (service-account tokens of pods name their pod). Once each: a watch or a log stream
        is logged at its ResponseStarted and again at its ResponseComplete, under one auditID."""
        user = f"system:serviceaccount:{namespace}:{service_account}"
        found = []
        seen = set()
        with open(self.node.paths.audit_log) as f:
            for line in f:
                if user not in line:
                    continue
                event = json.loads(line)
                if event["user"]["username"] != user or event["auditID"] in seen:
                    continue
                seen.add(event["auditID"])
                pod = (event["user"].get("extra", {}).get("authentication.kubernetes.io/pod-name") or ["?"])[0]
                ref = event.get("objectRef") or {}
                what = ref.get("resource", "") + (f"/{ref['subresource']}" if ref.get("subresource") else "")
                at = datetime.fromisoformat(event["requestReceivedTimestamp"][:26].rstrip("Z") + "+00:00").timestamp()
                found.append(Request(at, pod, event["verb"], what or event["requestURI"].split("?")[0]))
        return found

    def restart(self, component: str, ready: Callable[[], bool], timeout: float = 120) -> None:
        """Restart one of the cluster's daemons (same command) and wait until it is ready again."""
        self.node.procs.restart(component)
        self.wait_for(ready, f"{component} ready after its restart", timeout)

    def workflow(self, name: str) -> dict[str, Any]:
        wf: dict[str, Any] = self.custom.get_namespaced_custom_object(*WORKFLOWS[:2], NAMESPACE, WORKFLOWS[2], name)
        return wf

    def workflows(self) -> list[dict[str, Any]]:
        """Every Workflow of the namespace, now."""
        items: list[dict[str, Any]] = self.custom.list_namespaced_custom_object(
            *WORKFLOWS[:2], NAMESPACE, WORKFLOWS[2]
        )["items"]
        return items

    def jobs(self, workflow: str) -> list[dict[str, Any]]:
        """The Volcano Jobs of a workflow (they carry its label), oldest first."""
        items = self.custom.list_namespaced_custom_object(
            *VOLCANO[:2], NAMESPACE, VOLCANO[2], label_selector=f"workflows.argoproj.io/workflow={workflow}"
        )["items"]
        return sorted(items, key=lambda j: (j["metadata"]["creationTimestamp"], j["metadata"]["name"]))

    def events(self, name: str) -> list[Any]:
        return list(self.core.list_namespaced_event(NAMESPACE, field_selector=f"involvedObject.name={name}").items)

    def logs(self, workflow: str) -> str:
        return self.argo("logs", workflow, timeout=120).ok().out

    def delete_workflows(self, keep: Collection[str] = ()) -> None:
        """Remove every workflow but ``keep`` (their Volcano Jobs and pods follow through owner references)."""
        names = sorted({w["metadata"]["name"] for w in self.workflows()} - set(keep))
        if names:
            self.argo("delete", *names, timeout=120)

    def wait_for(
        self, check: Callable[[], bool], what: str, timeout: float = 120, seen: Callable[[], str] | None = None
    ) -> None:
        """Until ``check()``; after ``timeout`` seconds, AssertionError naming ``what`` it waited for and, with
        ``seen``, what it saw then."""
        deadline = time.monotonic() + timeout
        while not check():
            if time.monotonic() > deadline:
                saw = f"; saw:\n{seen()}" if seen is not None else ""
                raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}{saw}")
            time.sleep(1)

    def close(self) -> None:
        self.recorder.stop()
        with contextlib.suppress(Exception):
            self.api_client.close()


@dataclass
class Entry:
    """One workflow of the batch: when it was submitted, and when its action (if any) was taken (wall clock,
    which the workflow's own timestamps and the recorder's deletion times use too), and what the action saw."""

    name: str
    submitted: float
    acted: float | None = None
    seen: dict[str, Any] = field(default_factory=dict)
    error: BaseException | None = None
    done: threading.Event = field(default_factory=threading.Event)


class Batch:
    """Workflows of every batched scenario of an Argo line, submitted together (each test module that has any gives
    them in ``submit_batch(batch, cluster)``, the modules whose scenarios wait longest first); an action runs in a
    thread beside its workflow (say, deleting a worker once the job runs). A test then checks its own entry.

    Submissions are spaced ``SPACING`` seconds apart: 40-odd workflows submitted in one go started some 200 pods at
    once on 2 cores, and a follower's pod then waited up to 172 s to start (CI, 2026-12-06). Spaced, the pods of a
    workflow start while the ones before it run, and the batch still overlaps every scenario's waiting."""

    #: Seconds between two submissions (``HERA_VOLCANO_BATCH_SPACING`` overrides it).
    SPACING = float(os.environ.get("HERA_VOLCANO_BATCH_SPACING", "3"))

    def __init__(self, cluster: Cluster, here: Collection[str]) -> None:
        self.cluster = cluster
        #: The test functions that run on this line (conftest.py's selection): only their workflows are submitted.
        self.here = frozenset(here)
        self.entries: dict[str, Entry] = {}
        self._last = 0.0  # when the last workflow was submitted (monotonic)
        self.teardowns: list[Callable[[], object]] = []
        #: The workflows the running test has finished: a failing test's report describes them (conftest.py).
        self.opened: list[str] = []

    def runs(self, test: Callable[..., object]) -> bool:
        """Whether the scenario ``test`` runs on this line and tier, so its workflow belongs in the batch."""
        return test.__name__ in self.here

    def submit(
        self, key: str, manifest: str | None, action: Callable[[Entry], None] | None = None, args: Sequence[str] = ()
    ) -> Entry:
        """``argo submit`` of ``manifest`` (or, without one, of ``args`` such as ``--from``) under ``key``, at
        least ``SPACING`` seconds after the previous one."""
        time.sleep(max(0.0, self._last + self.SPACING - time.monotonic()))
        self._last = time.monotonic()
        if manifest is None:
            name = self.cluster.argo("submit", "-o", "name", *args).ok().out.strip()
        else:
            name = self.cluster.start(manifest, *args)
        entry = Entry(name, time.time())
        self.entries[key] = entry
        self.cluster.batched.add(name)
        if action is None:
            entry.done.set()
            return entry

        def act() -> None:
            try:
                action(entry)
            except BaseException as e:  # reported by the test that owns the entry
                entry.error = e
            finally:
                entry.done.set()

        threading.Thread(target=act, daemon=True).start()
        return entry

    def get(self, key: str, timeout: float = 900) -> Entry:
        """The entry once its action (if any) is done; its action's error is raised here, in the owning test."""
        entry = self.entries[key]
        if not entry.done.wait(timeout):
            raise AssertionError(
                f"timed out after {timeout:.0f} s waiting for the action on {key}; saw:\n"
                + self.cluster.describe(entry.name)
            )
        if entry.error is not None:
            raise entry.error
        return entry

    def finish(self, key: str, timeout: float = 900) -> tuple[Entry, dict[str, Any]]:
        """The entry and its workflow once finished."""
        entry = self.get(key)
        self.opened.append(entry.name)
        return entry, self.cluster.wait(entry.name, timeout=timeout)

    def close(self) -> None:
        for teardown in self.teardowns:
            teardown()
        self.cluster.batched.clear()
        self.cluster.delete_workflows()


def _span(began: str | None, start: str | None, end: str | None) -> str:
    """' (+12..+46 s)': a step's start and end in seconds after its workflow's start, so a CI log shows where the
    time went."""
    if not began or not start:
        return ""
    ended = f"+{_seconds(end) - _seconds(began):.0f}" if end else ""
    return f" (+{_seconds(start) - _seconds(began):.0f}..{ended} s)"


def _seconds(stamp: str) -> float:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


#: The job step's condition fires within this many seconds of its Volcano Job's failure: argoexec polls the job
#: every 5 s; the rest is room for a loaded node, whose kubelet stamps whole seconds.
SEEN = 30


def condition_fired(cluster: Cluster, workflow: dict[str, Any], job: str, step: str = "submit-job") -> float:
    """The job step's failure condition fired within ``SEEN`` seconds of its Volcano Job's failure (as the recorder
    first saw it): its pod's main container, argoexec polling the job, ended. The step's end as Argo records it
    comes later, once the executor's wait container has reported and the controller noticed (Argo's time, on a busy
    node up to 40 s more in CI): printed beside. Returns the seconds."""
    name = workflow["metadata"]["name"]
    failed_at = cluster.recorder.ended_at(job)
    pods = [p for p in cluster.recorder.select(**{WORKFLOW_LABEL: name}) if p.step.endswith(f".{step}")]
    ends = [p.ended["main"] for p in pods if "main" in p.ended]
    seen = cluster.describe(name)
    assert ends, f"no {step} pod's main container was seen ending\n{seen}"
    seconds = max(ends) - failed_at
    print(f"{name}: {step}'s condition fired {seconds:.0f} s after job {job} failed, its node ended "
          f"{took(workflow, failed_at, step=step):.0f} s after")  # fmt: skip
    assert seconds <= SEEN + 1, (
        f"{step}'s main container ended {seconds:.0f} s after job {job} failed ({cluster.recorder.phases(job)}),"
        f" bound {SEEN} s\n{seen}"
    )
    return seconds


def took(workflow: dict[str, Any], since: float, step: str | None = None) -> float:
    """Seconds from ``since`` (wall clock) to the workflow's end, or to the end of its node named ``step``
    (finishedAt has whole seconds)."""
    status = workflow["status"]
    if step is not None:
        (status,) = [n for n in status["nodes"].values() if n.get("displayName") == step]
    return _seconds(status["finishedAt"]) - since
