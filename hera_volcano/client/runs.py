"""``Client`` and ``Run``: submit workflows, wait for them, follow their logs, explain a gang that does not start,
stop and delete them, straight through the API server (no Argo Server, no ``argo`` command)."""

from __future__ import annotations

import contextlib
import functools
import math
import os
import shutil
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import datetime, timezone
from typing import Any, TextIO

from hera_volcano.argo.labels import JOB_LABEL, POD_WORKFLOW_LABEL, TASK_LABEL, WORKFLOW_LABEL
from hera_volcano.client import failures, kubeapi, submission
from hera_volcano.client.explain import Observed, Unreadable, explain
from hera_volcano.client.kubeapi import KubeApi
from hera_volcano.client.kubeapi import Stream as LineStream
from hera_volcano.client.live import Live, Query
from hera_volcano.client.patience import Failing, Patience, retrying
from hera_volcano.client.progress import ProgressView
from hera_volcano.client.report import format_explanation
from hera_volcano.client.resources import (
    CONFIG_MAPS,
    CRON_WORKFLOWS,
    EVENTS,
    JOBS,
    NODES,
    PODGROUPS,
    PODS,
    QUEUES,
    WORKFLOW_TEMPLATES,
    WORKFLOWS,
    Resource,
)
from hera_volcano.client.result import Result, result_of, workflow_finished
from hera_volcano.kube import names
from hera_volcano.pods.follow import (
    DRAIN,
    JOB_FINISHED,
    TAIL_LINES,
    Follower,
    LineCursor,
    Seen,
    ShowInit,
    Stop,
    Stream,
    failure_lines,
    job_phase,
    lead_task,
    name_of,
    newest,
    pod_state,
)
from hera_volcano.pods.labels import JOB_NAME_LABEL
from hera_volcano.shared.errors import ClusterError
from hera_volcano.shared.findings import as_map


class Client:
    """A connection to one cluster, submitting to ``namespace`` (default: the kubeconfig context's namespace, or the
    pod's own inside a cluster).

    Inside a pod, with no ``kubeconfig`` or ``context`` given, it uses the pod's service account; otherwise the
    kubeconfig (``kubeconfig``, else ``KUBECONFIG``, else ``~/.kube/config``) and its current or the given context.
    ``patience`` says how long failures that may pass (the server unreachable, overloaded, restarting) are retried.
    Raises :class:`~hera_volcano.ClusterError` when there is no usable configuration (nothing is sent yet).
    """

    def __init__(
        self,
        namespace: str | None = None,
        *,
        kubeconfig: str | os.PathLike[str] | None = None,
        context: str | None = None,
        patience: Patience | None = None,
    ) -> None:
        if namespace is not None:
            names.check("namespace", namespace, names.dns1123_label)
        api_client, configured = kubeapi.connect(kubeconfig, context)
        self._api = KubeApi(api_client)
        #: The namespace the kubeconfig context (or, in a pod, its service account) names; None when it names none.
        self.configured_namespace = configured
        self.namespace = namespace or configured or "default"
        self._explicit = namespace is not None
        self._patience = patience or Patience()

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
        found = retrying(lambda: self._api.get(WORKFLOW_TEMPLATES, self.namespace, template), self._patience)
        submission.check_parameters(found, parameters or {})
        self._check_programs(as_map(found.get("spec")), self.namespace)
        return self._create(body, self.namespace)

    def create_cron(self, cron: object) -> dict[str, Any]:
        """Create a CronWorkflow (a Hera ``CronWorkflow``, a dict, or YAML text holding exactly one), in its own
        namespace, else the client's, as ``argo cron create`` does. Returns it as the API server stored it: it runs
        on its schedule; :meth:`submit_from_cron` runs it once now."""
        body = submission.workflow_body(cron, ("CronWorkflow",))
        namespace = submission.in_namespace(body, self.namespace, self._explicit)
        body.setdefault("metadata", {})["namespace"] = namespace
        return self._api.create(CRON_WORKFLOWS, namespace, body)

    def cron_run(self, cron: str, parameters: Mapping[str, object] | None = None) -> dict[str, Any]:
        """The Workflow :meth:`submit_from_cron` would create for CronWorkflow ``cron`` of the client's namespace
        (read from the cluster; nothing is created)."""
        names.check("cronworkflow", cron, names.dns1123_subdomain)
        found = retrying(lambda: self._api.get(CRON_WORKFLOWS, self.namespace, cron), self._patience)
        body = submission.from_cron(found, parameters or {}, datetime.now(timezone.utc))
        body["metadata"]["namespace"] = self.namespace
        return body

    def submit_from_cron(self, cron: str, parameters: Mapping[str, object] | None = None) -> Run:
        """Run the CronWorkflow ``cron`` of the client's namespace once now, as
        ``argo submit --from cronwf/CRON -p KEY=VALUE`` does: a Workflow of its ``workflowSpec`` named
        ``CRON-xxxxx`` (:func:`~hera_volcano.client.submission.from_cron`); its schedule is left as it was."""
        return self._create(self.cron_run(cron, parameters), self.namespace)

    def _check_programs(self, spec: Mapping[str, Any], namespace: str) -> None:
        """The workflow's log followers run their program from a ConfigMap of its namespace: one missing there is
        said now, not by each follower at run time. A submitter who may not read ConfigMaps (a Role from before
        this check) is not stopped: the follower says it then."""
        for name in submission.follower_programs(spec):
            try:
                retrying(functools.partial(self._api.get, CONFIG_MAPS, namespace, name), self._patience)
            except ClusterError as e:
                if e.reason == "Forbidden":
                    continue
                if e.reason == "NotFound":
                    raise ClusterError(
                        f"the log follower's program (ConfigMap {name}) is not in namespace {namespace}: apply what"
                        " `hera-volcano rbac` renders for this workflow first",
                        reason="NotFound",
                        status=404,
                        resource=CONFIG_MAPS.plural,
                        group="",
                        namespace=namespace,
                    ) from None
                raise

    def _create(self, body: dict[str, Any], namespace: str) -> Run:
        if "workflowTemplateRef" not in as_map(body.get("spec")):
            self._check_programs(as_map(body.get("spec")), namespace)
        created = self._api.create(WORKFLOWS, namespace, body)
        return Run(self._api, namespace, str(as_map(created.get("metadata")).get("name")), patience=self._patience)

    def workflows(self) -> list[dict[str, Any]]:
        """The namespace's Workflows as the API server sends them, newest first (then by name)."""
        items = [w for w in self._api.list(WORKFLOWS, self.namespace).get("items") or [] if isinstance(w, dict)]
        by_name = sorted(items, key=lambda w: str(as_map(w.get("metadata")).get("name", "")))
        return sorted(by_name, key=lambda w: str(as_map(w.get("metadata")).get("creationTimestamp", "")), reverse=True)

    def get(self, name: str) -> Run:
        """The run of an existing Workflow (ClusterError NotFound when there is none)."""
        names.check("name", name, names.dns1123_subdomain)
        retrying(lambda: self._api.get(WORKFLOWS, self.namespace, name), self._patience)
        return Run(self._api, self.namespace, name, patience=self._patience)


class Run:
    """One submitted Workflow, by name: its result, its logs, why it does not start; stop or delete it.

    Reads are tried again while their failures may pass, for ``patience.grace``; changes (stop, delete) are not."""

    def __init__(self, api: KubeApi, namespace: str, name: str, *, patience: Patience | None = None) -> None:
        self._api = api
        self.namespace = namespace
        self.name = name
        self._patience = patience or Patience()

    def __repr__(self) -> str:
        return f"Run(name={self.name!r}, namespace={self.namespace!r})"

    def _workflow_query(self) -> Query:
        return Query(WORKFLOWS, fields=f"metadata.name={self.name}")

    def _pods_selector(self, job: str | None = None) -> str:
        """The pods of the run's jobs and of their steps (not Argo's label: see hera_volcano.argo.labels)."""
        return f"{POD_WORKFLOW_LABEL}={self.name}" + (f",{JOB_LABEL}={job}" if job else "")

    def _jobs_selector(self, job: str | None = None) -> str:
        return f"{WORKFLOW_LABEL}={self.name}" + (f",{JOB_LABEL}={job}" if job else "")

    def _get(self, resource: Resource, namespace: str | None, name: str) -> dict[str, Any]:
        return retrying(lambda: self._api.get(resource, namespace, name), self._patience)

    def _list(self, resource: Resource, labels: str | None = None) -> list[Any]:
        """The items of ``resource`` in the run's namespace (cluster-wide for nodes), with ``labels``."""
        namespace = self.namespace if resource.namespaced else None
        listing = retrying(lambda: self._api.list(resource, namespace, labels=labels), self._patience)
        return list(listing.get("items") or [])

    def status(self) -> Result:
        """Where the run is now (one read of the Workflow and its Volcano Jobs)."""
        workflow = self._get(WORKFLOWS, self.namespace, self.name)
        return result_of(workflow, self._list(JOBS, self._jobs_selector()))

    def wait(self, timeout: float | None = None, *, progress: TextIO | None = None) -> Result:
        """Until the Workflow has finished (its exit handler too): the final :class:`Result`, with each Volcano Job
        as last seen (jobs the exit handler deleted included). Watches, never polls.

        ``progress`` (say ``sys.stderr``) gets a line for the workflow and one per job: redrawn in place on a
        terminal, written again when it changed otherwise; None writes nothing. Raises TimeoutError after ``timeout``
        seconds, ClusterError if the Workflow is deleted meanwhile or the API server keeps failing (past
        ``patience.grace``) or refuses a watch."""
        deadline = None if timeout is None else time.monotonic() + timeout
        view = _view(progress)
        queries = {"workflow": self._workflow_query(), "jobs": Query(JOBS, labels=self._jobs_selector())}
        with Live(self._api, self.namespace, queries, patience=self._patience) as live:
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
        self,
        *,
        follow: bool = True,
        task: str | None = None,
        job: str | None = None,
        job_name: str | None = None,
        container: str | None = None,
        timeout: float | None = None,
    ) -> Iterator[str]:
        """The output of ``task``'s pod line by line, as it comes; without ``task``, the pod of the task that leads the
        run's newest Volcano Job (its ``hera-volcano/lead-task`` annotation: ``mpimaster``, PyTorch's ``master``,
        TensorFlow's ``chief``...; ``mpimaster`` for a job that names none).

        Pods are found by labels (the workflow's, ``volcano.sh/task-spec: TASK``, and ``hera-volcano/job: JOB`` when
        given), so a generated job name needs no knowing; ``job_name`` narrows them to one Volcano Job by its name (as
        :meth:`status` lists it: one iteration of a loop, one attempt of a retried step, whose jobs share their label);
        the container is the task's namesake unless ``container`` names another. With ``follow`` it follows the newest
        such pod across restarts (a new pod or a restarted container each start with a ``=== logs of POD`` line) and
        across dropped streams (reattached without repeating or losing a line), and ends when the job has finished, when
        no job appears within two minutes, or when the workflow has finished; lines that start with ``===`` are the
        follower's, as in the workflow's own log follower. It raises TimeoutError after ``timeout`` seconds of following
        (a stream in progress is cut then), ClusterError when the API server refuses a read or keeps failing past
        ``patience.grace``. Without ``follow`` it gives what the newest pod's container has written so far."""
        if task is not None:
            names.check("task", task, names.dns1123_label)
        if container is not None:
            names.check("container", container, names.dns1123_label)
        if job is not None:
            names.check("job", job, names.label_value)
        jobs, pods = self._jobs_selector(job), self._pods_selector(job)
        if job_name is not None:
            names.check("job_name", job_name, names.dns1123_subdomain)
            pods += f",{JOB_NAME_LABEL}={job_name}"
        if follow:
            return self._follow(jobs, pods, task, container, timeout, job_name)
        return self._logs_now(jobs, pods, task, container, job_name)

    def _logs_now(
        self, jobs: str, pods: str, task: str | None, container: str | None, job_name: str | None
    ) -> Iterator[str]:
        job = newest([j for j in self._list(JOBS, jobs) if job_name is None or name_of(j) == job_name])
        lead = task or lead_task(job)
        found = self._list(PODS, f"{pods},{TASK_LABEL}={lead}")
        if job is not None:  # the newest job's own pods (an earlier attempt's may still be there)
            found = [p for p in found if _labels(p).get(JOB_NAME_LABEL, name_of(job)) == name_of(job)]
        pod = newest(found)
        if pod is None:
            return
        name = container or lead
        state = pod_state(pod, name)
        if state.container_id:
            opened = retrying(lambda: self._api.log(self.namespace, state.name, name), self._patience)
            with opened as stream:
                yield from stream
        else:
            yield f"=== {name} has not started in {state.name}"
            yield from self._tails(state.name, state.containers)

    def _follow(
        self,
        jobs: str,
        pods: str,
        task: str | None,
        container: str | None,
        timeout: float | None,
        job_name: str | None,
    ) -> Iterator[str]:
        """The follower's state machine (:mod:`hera_volcano.pods.follow`, the one the workflow's follower runs),
        driven by the client's watches."""
        queries = {
            "workflow": self._workflow_query(),
            "jobs": Query(JOBS, labels=jobs, fields=None if job_name is None else f"metadata.name={job_name}"),
            # Every pod of the run's jobs (the followed job's lead task is known as it comes) and of their steps.
            "pods": Query(PODS, labels=pods),
        }
        # No back-off of its own before reattaching: failures that may pass are tried again within the patience.
        follower = Follower(jobs, task=task, container=container, backoff=0.0)
        cursors: dict[tuple[str, str], tuple[LineCursor, list[float]]] = {}
        failing = Failing(self._patience.grace)
        started = time.monotonic()
        deadline = None if timeout is None else started + timeout
        streamed = False
        with Live(self._api, self.namespace, queries, patience=self._patience) as live:
            seen = 0
            while True:
                wake = (
                    self._patience.wake if deadline is None else min(self._patience.wake, deadline - time.monotonic())
                )
                seen = live.wait(seen, max(wake, 0.0))
                if deadline is not None and time.monotonic() >= deadline:
                    raise TimeoutError(f"workflow {self.name}: still following its logs after {timeout} s")
                if not live.ready:
                    continue
                every: list[Mapping[str, Any]] = list(live.objects("pods"))
                if streamed and follower.seen_pod is not None:
                    every, streamed = self._fresh(every, follower.seen_pod.name), False
                workflow = self._only(live.objects("workflow"))
                final = str(as_map(workflow.get("status")).get("phase")) if workflow_finished(workflow) else None
                look = Seen(
                    live.objects("jobs"),
                    every,
                    time.monotonic() - started,
                    live.deleted("jobs"),
                    live.deleted("pods"),
                    workflow=final,
                )
                for step in follower.next(look):
                    name = follower.followed
                    if isinstance(step, ShowInit):
                        yield step.header
                        logs = [
                            self._run_log(step.pod, step.container, previous=p, timestamps=True)
                            for p in (step.previous, not step.previous)
                        ]
                        yield from failure_lines(step.window, *logs)
                    elif isinstance(step, Stream) and follower.streamed is not None:
                        yield step.header
                        cursor, received = cursors.setdefault(follower.streamed, (LineCursor(), [0.0]))
                        outcome = {"failed": False, "relayed": False}
                        began = time.monotonic()
                        yield from self._stream(
                            step, name, cursor, received, failing, deadline, live, follower.job, outcome
                        )
                        follower.stream_ended(
                            time.monotonic() - started,
                            time.monotonic() - began,
                            failed=outcome["failed"],
                            relayed=outcome["relayed"],
                        )
                        streamed = True
                    elif isinstance(step, Stop):
                        if follower.needs_reread() and follower.streamed is not None and follower.seen_pod:
                            cursor, _ = cursors.setdefault(follower.streamed, (LineCursor(), [0.0]))
                            yield from self._reread(follower.seen_pod.name, name, cursor)
                        yield step.message
                        if step.never_started is not None:
                            yield f"=== {name} never started in {step.never_started.name}"
                            yield from self._tails(step.never_started.name, step.never_started.containers)
                        return

    def _reread(self, pod: str, container: str, cursor: LineCursor) -> Iterator[str]:
        """The log of a run whose last stream failed or relayed nothing, read once more (what was shown is not
        shown again)."""
        cursor.reattach()
        try:
            with self._api.log(self.namespace, pod, container, timestamps=True) as stream:
                for line in stream:
                    text = cursor.accept(line)
                    if text is not None:
                        yield text
        except ClusterError as e:
            if not _gone_or_transient(e):
                raise

    def _fresh(self, pods: Sequence[Mapping[str, Any]], name: str) -> list[Mapping[str, Any]]:
        """``pods`` with the pod ``name`` as the API server has it now. When a stream has ended, the watch may not
        have brought the pod's restart yet: reattaching to the run that ended would show the new run's lines, then
        again from its start."""
        old = next((p for p in pods if name_of(p) == name), None)
        if old is None:
            return list(pods)
        try:
            fresh = self._api.get(PODS, self.namespace, name)
        except ClusterError:
            return list(pods)  # gone, or the server busy: the watch will tell
        if as_map(fresh.get("metadata")).get("uid") != as_map(old.get("metadata")).get("uid"):
            return list(pods)
        return [fresh if p is old else p for p in pods]

    def _stream(
        self,
        step: Stream,
        container: str,
        cursor: LineCursor,
        received: list[float],
        failing: Failing,
        deadline: float | None,
        live: Live,
        job: str | None,
        outcome: dict[str, bool],
    ) -> Iterator[str]:
        """One container run's log as it comes; reattached, from a little before the last line received (measured
        on this machine's clock, so the server's may differ), without repeating lines. A stream that breaks is the
        follower's to reattach; requests that fail in a way that may pass are too, for the grace period. At
        ``deadline`` the stream is cut, and ``DRAIN`` seconds after the job has finished (the stream of a fake node's
        pod never ends)."""
        since = None
        if step.reattach:
            cursor.reattach()
            since = math.ceil(time.monotonic() - received[0]) + 10 if received[0] else None
        try:
            stream = self._api.log(
                self.namespace, step.pod, container, follow=True, timestamps=True, since_seconds=since
            )
        except ClusterError as e:
            outcome["failed"] = True
            if e.reason == "NotFound" or e.status == 400:  # the pod went away, or its container cannot be read yet
                return
            if failing.again(e):
                return
            raise
        failing.passed()
        try:
            with stream, _cut_at(deadline, stream), _cut_when_finished(live, stream, job, outcome):
                for line in stream:
                    text = cursor.accept(line)
                    if text is not None:
                        received[0] = time.monotonic()
                        outcome["relayed"] = True
                        yield text
        except ClusterError as e:
            outcome["failed"] = True
            if not _gone_or_transient(e):
                raise

    def _run_log(
        self, pod: str, container: str, *, previous: bool = False, timestamps: bool = False
    ) -> list[str] | None:
        """The last lines of one run of a container; None when the kubelet has none (it never ran, no previous run
        yet, or the pod is gone)."""
        try:
            with self._api.log(
                self.namespace, pod, container, previous=previous, timestamps=timestamps, tail=TAIL_LINES
            ) as stream:
                return list(stream)
        except ClusterError as e:
            if not _gone_or_transient(e):
                raise
            return None

    def _tails(self, pod: str, containers: Sequence[str]) -> Iterator[str]:
        for name in containers:
            yield from (f"[pod/{pod}/{name}] {line}" for line in self._run_log(pod, name) or [])

    def explain(self) -> str:
        """Why the run's gangs do not start, as a readable report: per Volcano Job its phase, its PodGroup (phase,
        conditions, the scheduler's events), its queue, its pods that are not running and why, and what to change
        (what the gang asks against the queue's capability and the nodes' allocatable). What the client may not
        read (nodes and queues are cluster-scoped) is named in the report instead of failing it."""
        workflow = self._get(WORKFLOWS, self.namespace, self.name)
        jobs = self._read("Volcano Jobs", lambda: self._list(JOBS, self._jobs_selector()))
        groups = self._read("PodGroups", lambda: self._list(PODGROUPS))
        pods = self._read("pods", lambda: self._list(PODS, self._pods_selector()))
        events = self._read("events", lambda: self._list(EVENTS))
        nodes = self._read("nodes", lambda: self._list(NODES))
        queues: dict[str, Mapping[str, Any] | Unreadable | None] = {}
        for queue in [] if isinstance(jobs, Unreadable) else _queues(jobs):
            try:
                queues[queue] = self._get(QUEUES, None, queue)
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


def _labels(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return as_map(as_map(obj.get("metadata")).get("labels"))


@contextlib.contextmanager
def _cut_at(deadline: float | None, stream: LineStream) -> Iterator[None]:
    """Close ``stream`` at ``deadline`` (from another thread: a read in progress ends), unless it ended before."""
    if deadline is None:
        yield
        return
    timer = threading.Timer(max(deadline - time.monotonic(), 0.0), stream.close)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()


@contextlib.contextmanager
def _cut_when_finished(live: Live, stream: LineStream, job: str | None, outcome: dict[str, bool]) -> Iterator[None]:
    """Close ``stream`` ``DRAIN`` seconds after the followed Volcano Job has finished, unless it ended before (a cut
    stream counts as failed: its log is read once more)."""
    ended = threading.Event()

    def watch() -> None:
        seen = 0
        while not ended.is_set():
            try:
                seen = live.wait(seen, 0.5)
            except ClusterError:
                return  # the follower's own loop reports it
            found = next((j for j in live.objects("jobs") if name_of(j) == job), None)
            if found is not None and job_phase(found) in JOB_FINISHED:
                if not ended.wait(DRAIN):
                    outcome["failed"] = True
                    stream.close()
                return

    thread = threading.Thread(target=watch, name="hera-volcano-drain", daemon=True)
    thread.start()
    try:
        yield
    finally:
        ended.set()


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
