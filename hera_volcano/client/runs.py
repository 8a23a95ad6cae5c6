"""``Client`` and ``Run``: submit workflows, wait for them, follow their logs, explain a gang that does not start,
stop and delete them, straight through the API server (no Argo Server, no ``argo`` command)."""

from __future__ import annotations

import math
import os
import shutil
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, TextIO

from hera_volcano.argo.labels import JOB_LABEL, TASK_LABEL, WORKFLOW_LABEL
from hera_volcano.client import failures, kubeapi, submission
from hera_volcano.client.explain import Observed, Unreadable, explain
from hera_volcano.client.follow import TAIL_LINES, Follower, LineCursor, ShowInit, Stop, Stream, newest, pod_state
from hera_volcano.client.kubeapi import KubeApi
from hera_volcano.client.live import Live, Query
from hera_volcano.client.progress import ProgressView
from hera_volcano.client.report import format_explanation
from hera_volcano.client.resources import EVENTS, JOBS, NODES, PODGROUPS, PODS, QUEUES, WORKFLOW_TEMPLATES, WORKFLOWS
from hera_volcano.client.result import Result, job_status, result_of, workflow_finished
from hera_volcano.kube import names
from hera_volcano.shared.errors import ClusterError
from hera_volcano.shared.findings import as_map

#: How often a waiting follower looks again although nothing changed (for its grace period), in seconds.
_WAKE = 2.0


class Client:
    """A connection to one cluster, submitting to ``namespace`` (default: the kubeconfig context's namespace, or the
    pod's own inside a cluster).

    Inside a pod, with no ``kubeconfig`` or ``context`` given, it uses the pod's service account; otherwise the
    kubeconfig (``kubeconfig``, else ``KUBECONFIG``, else ``~/.kube/config``) and its current or the given context.
    Raises :class:`~hera_volcano.ClusterError` when there is no usable configuration (nothing is sent yet).
    """

    def __init__(
        self,
        namespace: str | None = None,
        *,
        kubeconfig: str | os.PathLike[str] | None = None,
        context: str | None = None,
    ) -> None:
        if namespace is not None:
            names.check("namespace", namespace, names.dns1123_label)
        api_client, configured = kubeapi.connect(kubeconfig, context)
        self._api = KubeApi(api_client)
        #: The namespace the kubeconfig context (or, in a pod, its service account) names; None when it names none.
        self.configured_namespace = configured
        self.namespace = namespace or configured or "default"
        self._explicit = namespace is not None

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Release the connections (the client is not usable afterwards)."""
        self._api.close()

    def __repr__(self) -> str:
        return f"Client(namespace={self.namespace!r}, server={self._api.host!r})"

    def submit(self, workflow: object) -> Run:
        """Create a Workflow: a Hera ``Workflow``, a dict, or YAML text holding exactly one Workflow. It goes to its
        own namespace, else the client's. Returns the :class:`Run` with the name the API server gave it."""
        body = submission.workflow_body(workflow)
        namespace = submission.in_namespace(body, self.namespace, self._explicit)
        body.setdefault("metadata", {})["namespace"] = namespace
        return self._create(body, namespace)

    def submit_from(self, template: str, parameters: Mapping[str, object] | None = None) -> Run:
        """Run the WorkflowTemplate ``template`` of the client's namespace, as
        ``argo submit --from workflowtemplate/TEMPLATE -p KEY=VALUE`` does; a parameter the template does not
        declare is a ValidationError (Argo would run without it)."""
        body = submission.from_template(template, parameters or {}, self.namespace)
        found = self._api.get(WORKFLOW_TEMPLATES, self.namespace, template)
        submission.check_parameters(found, parameters or {})
        return self._create(body, self.namespace)

    def _create(self, body: dict[str, Any], namespace: str) -> Run:
        created = self._api.create(WORKFLOWS, namespace, body)
        return Run(self._api, namespace, str(as_map(created.get("metadata")).get("name")))

    def workflows(self) -> list[dict[str, Any]]:
        """The namespace's Workflows as the API server sends them, newest first (then by name)."""
        items = [w for w in self._api.list(WORKFLOWS, self.namespace).get("items") or [] if isinstance(w, dict)]
        by_name = sorted(items, key=lambda w: str(as_map(w.get("metadata")).get("name", "")))
        return sorted(by_name, key=lambda w: str(as_map(w.get("metadata")).get("creationTimestamp", "")), reverse=True)

    def get(self, name: str) -> Run:
        """The run of an existing Workflow (ClusterError NotFound when there is none)."""
        names.check("name", name, names.dns1123_subdomain)
        self._api.get(WORKFLOWS, self.namespace, name)
        return Run(self._api, self.namespace, name)


class Run:
    """One submitted Workflow, by name: its result, its logs, why it does not start; stop or delete it."""

    def __init__(self, api: KubeApi, namespace: str, name: str) -> None:
        self._api = api
        self.namespace = namespace
        self.name = name

    def __repr__(self) -> str:
        return f"Run(name={self.name!r}, namespace={self.namespace!r})"

    def _workflow_query(self) -> Query:
        return Query(WORKFLOWS, fields=f"metadata.name={self.name}")

    def _jobs_selector(self, job: str | None = None) -> str:
        return f"{WORKFLOW_LABEL}={self.name}" + (f",{JOB_LABEL}={job}" if job else "")

    def status(self) -> Result:
        """Where the run is now (one read of the Workflow and its Volcano Jobs)."""
        workflow = self._api.get(WORKFLOWS, self.namespace, self.name)
        jobs = self._api.list(JOBS, self.namespace, labels=self._jobs_selector())
        return result_of(workflow, jobs.get("items") or [])

    def wait(self, timeout: float | None = None, *, progress: TextIO | None = None) -> Result:
        """Until the Workflow has finished (its exit handler too): the final :class:`Result`, with each Volcano Job
        as last seen (jobs the exit handler deleted included). Watches, never polls.

        ``progress`` (say ``sys.stderr``) gets a line for the workflow and one per job: redrawn in place on a
        terminal, written again when it changed otherwise; None writes nothing. Raises TimeoutError after ``timeout``
        seconds, ClusterError if the Workflow is deleted meanwhile."""
        deadline = None if timeout is None else time.monotonic() + timeout
        view = _view(progress)
        queries = {"workflow": self._workflow_query(), "jobs": Query(JOBS, labels=self._jobs_selector())}
        with Live(self._api, self.namespace, queries) as live:
            seen = 0
            while True:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    raise TimeoutError(f"workflow {self.name} has not finished after {timeout} s")
                seen = live.wait(seen, left)
                if not live.ready:
                    continue
                workflow = self._only(live.objects("workflow"))
                result = result_of(workflow, live.objects("jobs"), live.deleted("jobs"))
                if view is not None and progress is not None:
                    _write(progress, view.update(result))
                if workflow_finished(workflow):
                    return result

    def _only(self, workflows: Sequence[dict[str, Any]]) -> dict[str, Any]:
        if not workflows:
            raise failures.not_found(f"{WORKFLOWS.qualified} {self.name} (deleted?)", WORKFLOWS, self.namespace)
        return workflows[0]

    def logs(
        self, *, follow: bool = True, task: str = "mpimaster", job: str | None = None, container: str | None = None
    ) -> Iterator[str]:
        """The output of ``task``'s pod (the MPI master's by default) line by line, as it comes.

        Pods are found by labels (the workflow's, ``volcano.sh/task-spec: TASK``, and ``hera-volcano/job: JOB`` when
        given), so a generated job name needs no knowing. With ``follow`` it follows the newest such pod across
        restarts (a new pod or a restarted container each start with a ``=== logs of POD`` line) and ends when the
        job has finished, when no job appears within two minutes, or when the workflow has finished; lines that
        start with ``===`` are the follower's, as in the workflow's own log follower. Without ``follow`` it gives
        what the newest pod's container has written so far."""
        names.check("task", task, names.dns1123_label)
        names.check("container", container or task, names.dns1123_label)
        if job is not None:
            names.check("job", job, names.label_value)
        jobs = self._jobs_selector(job)
        pods = f"{jobs},{TASK_LABEL}={task}"
        if follow:
            return self._follow(jobs, pods, container or task)
        return self._logs_now(pods, container or task)

    def _logs_now(self, selector: str, container: str) -> Iterator[str]:
        pod = newest(self._api.list(PODS, self.namespace, labels=selector).get("items") or [])
        if pod is None:
            return
        state = pod_state(pod, container)
        if state.container_id:
            with self._api.log(self.namespace, state.name, container) as stream:
                yield from stream
        else:
            yield f"=== {container} has not started in {state.name}"
            yield from self._tails(state.name, state.containers)

    def _follow(self, jobs: str, pods: str, container: str) -> Iterator[str]:
        queries = {
            "workflow": self._workflow_query(),
            "jobs": Query(JOBS, labels=jobs),
            "pods": Query(PODS, labels=pods),
        }
        follower = Follower(container, pods)
        cursors: dict[tuple[str, str], tuple[LineCursor, list[float]]] = {}
        started = time.monotonic()
        with Live(self._api, self.namespace, queries) as live:
            seen = 0
            while True:
                seen = live.wait(seen, _WAKE)
                if not live.ready:
                    continue
                pod, job = newest(live.objects("pods")), newest(live.objects("jobs"))
                workflow = self._only(live.objects("workflow"))
                final = str(as_map(workflow.get("status")).get("phase")) if workflow_finished(workflow) else None
                state = pod_state(pod, container) if pod is not None else None
                steps = follower.next(state, job_status(job) if job else None, final, time.monotonic() - started)
                for step in steps:
                    if isinstance(step, ShowInit):
                        yield step.header
                        yield from self._tail(step.pod, step.container, previous=True)
                    elif isinstance(step, Stream) and state is not None:
                        yield step.header
                        cursor, received = cursors.setdefault((state.uid, state.container_id), (LineCursor(), [0.0]))
                        yield from self._stream(step, container, cursor, received)
                    elif isinstance(step, Stop):
                        yield step.message
                        if step.never_started is not None:
                            yield f"=== {container} never started in {step.never_started.name}"
                            yield from self._tails(step.never_started.name, step.never_started.containers)
                        return

    def _stream(self, step: Stream, container: str, cursor: LineCursor, received: list[float]) -> Iterator[str]:
        """One container run's log as it comes; reattached, from a little before the last line received (measured
        on this machine's clock, so the server's may differ), without repeating lines."""
        since = None
        if step.reattach:
            cursor.reattach()
            since = math.ceil(time.monotonic() - received[0]) + 10 if received[0] else None
        try:
            with self._api.log(
                self.namespace, step.pod, container, follow=True, timestamps=True, since_seconds=since
            ) as stream:
                for line in stream:
                    text = cursor.accept(line)
                    if text is not None:
                        received[0] = time.monotonic()
                        yield text
        except ClusterError as e:
            if not _gone_or_transient(e):
                raise

    def _tail(self, pod: str, container: str, *, previous: bool = False, prefix: str = "") -> Iterator[str]:
        """The last lines of one container's log, if it has one (a container that never ran has none)."""
        try:
            with self._api.log(self.namespace, pod, container, previous=previous, tail=TAIL_LINES) as stream:
                for line in stream:
                    yield prefix + line
        except ClusterError as e:
            if not _gone_or_transient(e):
                raise

    def _tails(self, pod: str, containers: Sequence[str]) -> Iterator[str]:
        for name in containers:
            yield from self._tail(pod, name, prefix=f"[pod/{pod}/{name}] ")

    def explain(self) -> str:
        """Why the run's gangs do not start, as a readable report: per Volcano Job its phase, its PodGroup (phase,
        conditions, the scheduler's events), its queue, its pods that are not running and why, and what to change
        (what the gang asks against the queue's capability and the nodes' allocatable). What the client may not
        read (nodes and queues are cluster-scoped) is named in the report instead of failing it."""
        workflow = self._api.get(WORKFLOWS, self.namespace, self.name)
        ns = self.namespace
        jobs = self._read("Volcano Jobs", lambda: self._api.list(JOBS, ns, labels=self._jobs_selector())["items"])
        groups = self._read("PodGroups", lambda: self._api.list(PODGROUPS, ns)["items"])
        pods = self._read("pods", lambda: self._api.list(PODS, ns, labels=self._jobs_selector())["items"])
        events = self._read("events", lambda: self._api.list(EVENTS, ns)["items"])
        nodes = self._read("nodes", lambda: self._api.list(NODES, None)["items"])
        queues: dict[str, Mapping[str, Any] | Unreadable | None] = {}
        for queue in [] if isinstance(jobs, Unreadable) else _queues(jobs):
            try:
                queues[queue] = self._api.get(QUEUES, None, queue)
            except ClusterError as e:
                if e.reason != "NotFound":
                    queues[queue] = self._unreadable(f"queue {queue}", e)
                queues.setdefault(queue, None)
        return format_explanation(explain(Observed(workflow, jobs, groups, pods, events, queues, nodes)))

    def _read(self, what: str, read: Callable[[], list[Any]]) -> list[Any] | Unreadable:
        """``read()``, or why it could not be read: RBAC refuses it, or the cluster does not serve the kind."""
        try:
            return read()
        except ClusterError as e:
            return self._unreadable(what, e)

    @staticmethod
    def _unreadable(what: str, e: ClusterError) -> Unreadable:
        if e.reason in ("Forbidden", "NotFound"):
            return Unreadable(what, str(e))
        raise e

    def stop(self) -> None:
        """Stop the run as ``argo stop`` does (``spec.shutdown: Stop``): running steps are stopped and the exit
        handler runs, which deletes the workflow's Volcano Jobs (``cleanup_on_failure``)."""
        self._api.patch(WORKFLOWS, self.namespace, self.name, {"spec": {"shutdown": "Stop"}})

    def delete(self) -> None:
        """Delete the Workflow; the garbage collector deletes its Volcano Jobs (they are owned by it), their pods
        and PodGroups."""
        self._api.delete(WORKFLOWS, self.namespace, self.name)


def _queues(jobs: Sequence[Any]) -> list[str]:
    """The queues the jobs name (``default`` when one names none, as Volcano's webhook fills it in)."""
    return sorted({str(as_map(as_map(job).get("spec")).get("queue") or "default") for job in jobs})


def _gone_or_transient(e: ClusterError) -> bool:
    """The pod went away, its container cannot be read yet (400), or the connection dropped: the next step
    decides what to do, rather than the error."""
    return e.reason == "NotFound" or e.status == 400 or failures.transient(e)


def _view(progress: TextIO | None) -> ProgressView | None:
    if progress is None:
        return None
    isatty = getattr(progress, "isatty", None)
    tty = bool(isatty()) if callable(isatty) else False
    return ProgressView(tty=tty, width=shutil.get_terminal_size().columns if tty else 120)


def _write(stream: TextIO, text: str) -> None:
    if text:
        stream.write(text)
        stream.flush()
