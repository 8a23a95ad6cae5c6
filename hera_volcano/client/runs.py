"""``Client`` and ``Run``: submit workflows, wait for them, follow their logs, explain a gang that does not start,
stop and delete them, straight through the API server (no Argo Server, no ``argo`` command)."""

from __future__ import annotations

import functools
import os
import shutil
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, TextIO

from hera_volcano.argo.labels import TASK_LABEL
from hera_volcano.client import failures, kubeapi, submission
from hera_volcano.client.dry_run import DryRun
from hera_volcano.client.explain import Observed, Unreadable, explain
from hera_volcano.client.kubeapi import KubeApi
from hera_volcano.client.patience import Patience, retrying
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
from hera_volcano.client.transport import KubeTransport, Relay, cluster_error, watcher
from hera_volcano.kube import names
from hera_volcano.pods.follow import labels_of, lead_task, name_of, newest, pod_state
from hera_volcano.pods.kubeapi import JOBS as JOB_KIND
from hera_volcano.pods.kubeapi import WORKFLOWS as WORKFLOW_KIND
from hera_volcano.pods.kubeapi import Store
from hera_volcano.pods.labels import JOB_NAME_LABEL, JobIdentity
from hera_volcano.pods.run import FollowLogs, Settings, tails
from hera_volcano.shared.errors import ClusterError
from hera_volcano.shared.findings import Finding, as_map


@dataclass(frozen=True)
class Cron:
    """A CronWorkflow as the API server stored it: its name, namespace and schedules, and the whole ``manifest``.

    :param name: the CronWorkflow's name.
    :param namespace: the namespace it lives in.
    :param schedules: its cron schedules (``spec.schedules``, or the single ``spec.schedule``).
    :param manifest: the whole object as the API server returned it.
    """

    name: str
    namespace: str
    schedules: tuple[str, ...]
    manifest: Mapping[str, object]

    @classmethod
    def of(cls, stored: Mapping[str, object]) -> Cron:
        """The :class:`Cron` of a CronWorkflow read from or created on the cluster.

        :param stored: the CronWorkflow as the API server returned it.
        """
        meta, spec = as_map(stored.get("metadata")), as_map(stored.get("spec"))
        schedules = spec.get("schedules") or ([spec["schedule"]] if spec.get("schedule") else [])
        return cls(str(meta.get("name") or ""), str(meta.get("namespace") or ""), tuple(map(str, schedules)), stored)


@dataclass(frozen=True)
class RunSummary:
    """A Workflow as a listing shows it: name, phase (Pending before Argo gives one), message, and when it was
    created and finished (RFC 3339; empty while it runs). ``Client.get(name)`` gives its :class:`Run`.

    :param name: the Workflow's name.
    :param phase: its phase (``Pending`` before Argo gives one).
    :param message: Argo's message, why it failed for instance (empty if none).
    :param created: when it was created (RFC 3339).
    :param finished: when it finished (RFC 3339; empty while it runs).
    """

    name: str
    phase: str
    message: str
    created: str
    finished: str

    @classmethod
    def of(cls, workflow: object) -> RunSummary:
        """The summary of a Workflow read from the cluster.

        :param workflow: the Workflow as the API server returned it (a dict).
        """
        meta, status = as_map(as_map(workflow).get("metadata")), as_map(as_map(workflow).get("status"))
        return cls(
            name=str(meta.get("name") or ""),
            phase=str(status.get("phase") or "Pending"),
            message=str(status.get("message") or ""),
            created=str(meta.get("creationTimestamp") or ""),
            finished=str(status.get("finishedAt") or ""),
        )


class Client:
    """A connection to one cluster, submitting to ``namespace`` (default: the kubeconfig context's namespace, or the
    pod's own inside a cluster).

    Inside a pod, with no ``kubeconfig`` or ``context`` given, it uses the pod's service account; otherwise the
    kubeconfig (``kubeconfig``, else ``KUBECONFIG``, else ``~/.kube/config``) and its current or the given context.
    ``patience`` says how long failures that may pass (the server unreachable, overloaded, restarting) are retried.
    Raises :class:`~hera_volcano.ClusterError` when there is no usable configuration (nothing is sent yet).

    :param namespace: where it submits and lists workflows (default: the context's, the pod's, else ``default``);
        a workflow that names its own namespace goes there unless this is given.
    :param kubeconfig: the kubeconfig file (default: ``KUBECONFIG``, else ``~/.kube/config``).
    :param context: the kubeconfig context (default: its current one).
    :param patience: how long failures that may pass are retried (default: ``Patience()``).
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
        self._dry_run = DryRun(self._api, self._patience)

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
        own namespace, else the client's. Returns the :class:`Run` with the name the API server gave it.

        :param workflow: the Workflow to create (a Hera ``Workflow``, a dict, or YAML text).
        """
        body = submission.workflow_body(workflow)
        namespace = submission.in_namespace(body, self.namespace, self._explicit)
        body.setdefault("metadata", {})["namespace"] = namespace
        return self._create(body, namespace)

    def submit_from(self, template: str, parameters: Mapping[str, object] | None = None) -> Run:
        """Run the WorkflowTemplate ``template`` of the client's namespace, as
        ``argo submit --from workflowtemplate/TEMPLATE -p KEY=VALUE`` does; a parameter the template does not
        declare is a ValidationError (Argo would run without it).

        :param template: the WorkflowTemplate's name.
        :param parameters: values of the template's arguments, by name (default: the template's own values).
        """
        body = submission.from_template(template, parameters or {}, self.namespace)
        found = retrying(lambda: self._api.get(WORKFLOW_TEMPLATES, self.namespace, template), self._patience)
        submission.check_parameters(found, parameters or {})
        self._check_programs(as_map(found.get("spec")), self.namespace)
        return self._create(body, self.namespace)

    def create_cron(self, cron: object) -> Cron:
        """Create a CronWorkflow (a Hera ``CronWorkflow``, a dict, or YAML text holding exactly one), in its own
        namespace, else the client's, as ``argo cron create`` does. It runs on its schedule;
        :meth:`submit_from_cron` runs it once now.

        :param cron: the CronWorkflow to create (a Hera ``CronWorkflow``, a dict, or YAML text).
        """
        body = submission.workflow_body(cron, ("CronWorkflow",))
        namespace = submission.in_namespace(body, self.namespace, self._explicit)
        body.setdefault("metadata", {})["namespace"] = namespace
        return Cron.of(self._api.create(CRON_WORKFLOWS, namespace, body))

    def preview_from_cron(self, cron: str, parameters: Mapping[str, object] | None = None) -> dict[str, Any]:
        """The Workflow :meth:`submit_from_cron` would create for CronWorkflow ``cron`` of the client's namespace
        (read from the cluster; nothing is created), as a manifest.

        :param cron: the CronWorkflow's name.
        :param parameters: values of its workflow's arguments, by name (default: the CronWorkflow's own values).
        """
        names.check("cronworkflow", cron, names.dns1123_subdomain)
        found = retrying(lambda: self._api.get(CRON_WORKFLOWS, self.namespace, cron), self._patience)
        body = submission.from_cron(found, parameters or {}, datetime.now(timezone.utc))
        body["metadata"]["namespace"] = self.namespace
        return body

    def submit_from_cron(self, cron: str, parameters: Mapping[str, object] | None = None) -> Run:
        """Run the CronWorkflow ``cron`` of the client's namespace once now, as
        ``argo submit --from cronwf/CRON -p KEY=VALUE`` does: a Workflow of its ``workflowSpec`` named
        ``CRON-xxxxx`` (:func:`~hera_volcano.client.submission.from_cron`); its schedule is left as it was.

        :param cron: the CronWorkflow's name.
        :param parameters: values of its workflow's arguments, by name (default: the CronWorkflow's own values).
        """
        return self._create(self.preview_from_cron(cron, parameters), self.namespace)

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

    def dry_run(self, document: object) -> list[Finding]:
        """What the API server says of creating ``document`` (parsed YAML: a Volcano Job, a Workflow, any object),
        asked by a server-side dry run (``kubectl create --dry-run=server``): nothing is created. It goes to the
        client's namespace when one was given, else its own, else the client's. For Argo's workflow kinds the object
        each creating resource step makes is asked too, with sample values for its placeholders (Argo has no webhook;
        Volcano's judges the job only then). One error :class:`~hera_volcano.shared.findings.Finding` per refusal,
        the server's message in it (paths relative to the document); [] when it accepts them all. Raises
        ClusterError when the server gives no verdict (unreachable, credentials refused, failing).

        :param document: the object to check, as parsed YAML or JSON.
        """
        own = as_map(as_map(document).get("metadata")).get("namespace")
        namespace = self.namespace if self._explicit or not isinstance(own, str) or not own else own
        return self._dry_run.judge(document, namespace)

    def workflows(self) -> list[RunSummary]:
        """The namespace's Workflows, newest first (then by name)."""
        items = [RunSummary.of(w) for w in self._api.list(WORKFLOWS, self.namespace).get("items") or []]
        return sorted(sorted(items, key=lambda w: w.name), key=lambda w: w.created, reverse=True)

    def get(self, name: str) -> Run:
        """The run of an existing Workflow (ClusterError NotFound when there is none).

        :param name: the Workflow's name, as :meth:`workflows` lists it.
        """
        names.check("name", name, names.dns1123_subdomain)
        retrying(lambda: self._api.get(WORKFLOWS, self.namespace, name), self._patience)
        return Run(self._api, self.namespace, name, patience=self._patience)


class Run:
    """One submitted Workflow, by name: its result, its logs, why it does not start; stop or delete it.

    Reads are tried again while their failures may pass, for ``patience.grace``; changes (stop, delete) are not.
    A run comes from :meth:`Client.submit` or :meth:`Client.get`, not made directly.

    :param api: the client's connection to the API server.
    :param namespace: the Workflow's namespace.
    :param name: the Workflow's name.
    :param patience: how long reads that fail in a way that may pass are tried again (default: ``Patience()``).
    """

    def __init__(self, api: KubeApi, namespace: str, name: str, *, patience: Patience | None = None) -> None:
        self._api = api
        self.namespace = namespace
        self.name = name
        self._patience = patience or Patience()

    def __repr__(self) -> str:
        return f"Run(name={self.name!r}, namespace={self.namespace!r})"

    def _pods_selector(self, job: str | None = None) -> str:
        """The pods of the run's jobs and of their steps (not Argo's label: see hera_volcano.argo.labels)."""
        return JobIdentity(self.name, job or None).pods_selector()

    def _jobs_selector(self, job: str | None = None) -> str:
        return JobIdentity(self.name, job or None).jobs_selector()

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
        ``patience.grace``) or refuses a watch.

        :param timeout: seconds to wait at most (no limit by default).
        :param progress: where to write the run's progress (nothing by default).
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        view = _view(progress)
        store = Store(("workflow", "jobs"))
        transport = KubeTransport(self._api, self.namespace)
        watchers = [
            watcher(transport, WORKFLOW_KIND, "", store.sink("workflow"), self._patience, f"metadata.name={self.name}"),
            watcher(transport, JOB_KIND, self._jobs_selector(), store.sink("jobs"), self._patience),
        ]
        for each in watchers:
            each.start()
        try:
            while True:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    raise TimeoutError(f"workflow {self.name} has not finished after {timeout} s")
                store.changed.wait(left)
                store.changed.clear()
                failed = next((w.refused for w in watchers if w.refused is not None), None)
                if store.ready:  # what came before a watch gave up is shown first
                    workflow = self._only(store.objects("workflow"))
                    result = result_of(workflow, store.objects("jobs"), store.deleted("jobs"))
                    if view is not None and progress is not None:
                        _write(progress, view.update(result))
                    if workflow_finished(workflow):
                        return result
                if failed is not None:
                    raise cluster_error(failed)
        finally:
            for each in watchers:
                each.stop(0.5)

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
        ``patience.grace``. Without ``follow`` it gives what the newest pod's container has written so far.

        :param follow: follow the pod as it runs (else what it has written so far).
        :param task: the task whose pod to read (default: the newest job's lead task).
        :param job: the Volcano Jobs by their ``hera-volcano/job`` label (by default their job template's name), for
            a workflow with several.
        :param job_name: one Volcano Job by its name (one iteration or attempt).
        :param container: the container to read (default: the task's namesake).
        :param timeout: seconds after which following raises TimeoutError (no limit by default).
        """
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
            found = [p for p in found if labels_of(p).get(JOB_NAME_LABEL, name_of(job)) == name_of(job)]
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
            yield from tails(KubeTransport(self._api, self.namespace), state)

    def _follow(
        self, jobs: str, pods: str, task: str | None, container: str | None, timeout: float | None, job_name: str | None
    ) -> Iterator[str]:
        """The loop of the workflow's own follower (:class:`~hera_volcano.pods.run.FollowLogs`), through the
        ``kubernetes`` package; it also ends once the workflow has finished. No back-off of its own before
        reattaching: failures that may pass are tried again within the patience."""
        settings = Settings(jobs=jobs, pods=pods, task=task, container=container, tick=self._patience.wake)
        relay = Relay()
        follow = FollowLogs(
            KubeTransport(self._api, self.namespace), settings, relay.put, report=lambda message: None,
            announce=False, workflow=self.name, job_name=job_name, patience=self._patience.grace, backoff=0.0,
            retry=(self._patience.retry, self._patience.retry),
        )  # fmt: skip
        return relay.lines(follow, timeout, f"workflow {self.name}: still following its logs after {timeout} s")

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
