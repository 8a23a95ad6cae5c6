"""Argo templates around a Volcano Job: the resource step that creates and watches it, and the log follower.

This module imports ``hera.workflows`` (slow); ``import hera_volcano`` reaches it only when these are used.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from hera.workflows import Container, Env, Parameter, Resource, RetryStrategy, Step, Steps
from hera.workflows.models import ContinueOn

from hera_volcano import checks, names
from hera_volcano.conditions import DEFAULT_DEADLINE, FAILURE_PHASES, SUCCESS_PHASES, conditions, watched_ttl_problem
from hera_volcano.emit import dump_manifest
from hera_volcano.errors import ValidationError
from hera_volcano.images import KUBECTL_IMAGE, check_image
from hera_volcano.job import VolcanoJob, check, pod_template_to_dict
from hera_volcano.kubectl_in_pod import KUBECTL_PRELUDE
from hera_volcano.placeholders import Placeholder, collect, expressions

WORKFLOW_LABEL = "workflows.argoproj.io/workflow"
#: Our label on every pod of a job, so a follower finds the job's pods without knowing its generated name.
JOB_LABEL = "hera-volcano/job"
TASK_LABEL = "volcano.sh/task-spec"

#: The exit handler that deletes a workflow's Volcano Jobs when it did not succeed, and the step doing it.
CLEANUP = "cleanup-volcano-jobs"
DELETE_JOBS = "delete-volcano-jobs"

#: How long a follower waits for the Volcano Job to appear before it concludes the job was never created.
DEFAULT_GRACE = 120

# Runs with constant text; everything variable arrives in environment variables, so no input reaches the shell as
# code. Pure bash plus kubectl, cat and sleep (what a kubectl image has). It never fails (a log follower must not
# turn a successful job into a failed workflow) and bounds itself: every kubectl call has a request timeout, the
# log stream ends at FOLLOW_SECONDS, and it stops as soon as the Volcano Job is finished (or was never created), so
# no Argo deadline is needed (one would fail the step when it fires). kubectl's errors are shown, rate-limited.
_FOLLOW_SCRIPT = (
    KUBECTL_PRELUDE
    + """\
export TZ=UTC
NS=$(cat "$SA_DIR/namespace")
END=$(( SECONDS + FOLLOW_SECONDS ))
last() { local line out=""; while IFS= read -r line; do [ -n "$line" ] && out=$line; done; printf '%s' "$out"; }
newest_pod() {
  call OUT kubectl -n "$NS" get pods -l "$SELECTOR" --sort-by=.metadata.creationTimestamp \\
    -o jsonpath='{range .items[*]}{.metadata.name}{"\\n"}{end}'
  POD=$(printf '%s\\n' "$OUT" | last)
}
pod_state() {
  local c="?(@.name==\\"$CONTAINER\\")"
  call OUT kubectl -n "$NS" get pod "$1" -o jsonpath="{.status.phase}|\\
{.status.containerStatuses[$c].containerID}|{.status.containerStatuses[$c].state.running.startedAt}"
}
newest_job() {
  call OUT kubectl -n "$NS" get jobs.batch.volcano.sh -l "$JOB_SELECTOR" --sort-by=.metadata.creationTimestamp \\
    -o jsonpath='{range .items[*]}{.metadata.name}={.status.state.phase}{"\\n"}{end}' || return 1
  JOB=$(printf '%s\\n' "$OUT" | last)
}
echo "Following container $CONTAINER of the pods labelled $SELECTOR"
STREAMED=""
SEEN_JOB=""
SEEN_POD=""
FAILING_SINCE=""
while (( SECONDS < END )); do
  newest_pod
  if [ -n "$POD" ]; then
    SEEN_POD=$POD
    pod_state "$POD"
    IFS='|' read -r PHASE CID RUNNING <<< "$OUT"
    if [ -n "$CID" ] && { [ "$POD:$CID" != "$STREAMED" ] || [ -n "$RUNNING" ]; }; then
      SINCE=()
      if [ "$POD:$CID" = "$STREAMED" ]; then
        SINCE=(--since-time="$LAST")
        echo "=== reattaching to $POD"
      else
        echo "=== logs of $POD ($PHASE)"
      fi
      STREAMED="$POD:$CID"
      LEFT=$(( END - SECONDS ))
      if (( LEFT > 0 )); then
        kubectl logs -f --request-timeout="${LEFT}s" -n "$NS" -c "$CONTAINER" "${SINCE[@]}" "$POD" \\
          2>"$KUBECTL_ERR" || kubectl_error
      fi
      printf -v LAST '%(%Y-%m-%dT%H:%M:%SZ)T' -1
      sleep 1
      continue
    fi
  fi
  if ! newest_job; then
    # One failed API call is not the end of the job: retry, and give up only after a grace period of failures.
    FAILING_SINCE=${FAILING_SINCE:-$SECONDS}
    if (( SECONDS - FAILING_SINCE > GRACE_SECONDS )); then
      echo "Cannot list the Volcano Jobs labelled $JOB_SELECTOR for $GRACE_SECONDS s; stopping"
      exit 0
    fi
    sleep 3
    continue
  fi
  FAILING_SINCE=""
  case "${JOB#*=}" in
    Completed|Failed|Terminated|Aborted)
      echo "Job ${JOB%%=*} is ${JOB#*=}"
      if [ -n "$SEEN_POD" ] && [ "${STREAMED%%:*}" != "$SEEN_POD" ]; then
        # The newest pod's container never started (say, an init container gave up): show why.
        echo "=== $CONTAINER never started in $SEEN_POD; the end of its containers' logs:"
        call OUT kubectl -n "$NS" logs --all-containers --prefix --tail=20 "$SEEN_POD" && printf '%s\\n' "$OUT"
      fi
      exit 0 ;;
  esac
  [ -n "$JOB" ] && SEEN_JOB=1
  if [ -z "$JOB" ] && { [ -n "$SEEN_JOB" ] || (( SECONDS > GRACE_SECONDS )); }; then
    echo "No Volcano Job labelled $JOB_SELECTOR"
    exit 0
  fi
  sleep 3
done
echo "Stopped following after $FOLLOW_SECONDS s"
exit 0
"""
)


def _deadline(value: int | str | None, field: str) -> int | str | None:
    if value is None or (isinstance(value, str) and value.startswith("{{") and value.endswith("}}")):
        return value
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= checks.INT32_MAX:
        raise ValidationError(field, f"must be a number of seconds from 1 to {checks.INT32_MAX}, or an Argo expression")
    return value


def _attach(job: VolcanoJob, labels: Mapping[str, str], pod_deadline: int | None) -> VolcanoJob:
    """The job tied to its step: ``labels`` on the job and every pod template (user labels win), and each pod's
    ``activeDeadlineSeconds`` (unless set) to the step's deadline, so pods do not outlive a step that timed out."""
    tasks = []
    for i, task in enumerate(job.tasks):
        template = pod_template_to_dict(task.template)
        metadata, own = template.get("metadata") or {}, None
        if isinstance(metadata, Mapping):
            own = metadata.get("labels") or {}
        if not isinstance(own, Mapping):  # also when metadata itself is not a mapping
            raise ValidationError(f"spec.tasks[{i}].template.metadata", "must be a mapping whose labels are a mapping")
        metadata = {**metadata, "labels": {**labels, **own}}
        rest = {k: v for k, v in template.items() if k != "metadata"}
        spec = rest.get("spec")
        if pod_deadline is not None and isinstance(spec, Mapping) and "activeDeadlineSeconds" not in spec:
            rest["spec"] = {**spec, "activeDeadlineSeconds": pod_deadline}
        tasks.append(replace(task, template={"metadata": metadata, **rest}))
    return replace(job, tasks=tasks, labels={**labels, **dict(job.labels)})


def _inputs(manifest: str, defaults: Mapping[str, int | str]) -> list[Parameter]:
    """Input parameters for every ``{{inputs.parameters.X}}`` the manifest uses, in order of first use."""
    wanted: dict[str, None] = {}
    for expr in expressions(manifest):
        if expr.startswith("inputs.parameters."):
            wanted[expr.removeprefix("inputs.parameters.")] = None
    unknown = sorted(set(defaults) - set(wanted))
    if unknown:
        raise ValidationError("defaults", f"names parameters the job does not use: {', '.join(unknown)}")
    return [Parameter(name=n, default=str(defaults[n])) if n in defaults else Parameter(name=n) for n in wanted]


def job_template(
    job: VolcanoJob,
    *,
    name: str,
    job_label: str | Placeholder | None = None,
    success_phases: Sequence[str] = SUCCESS_PHASES,
    failure_phases: Sequence[str] = FAILURE_PHASES,
    deadline: int | str | None = DEFAULT_DEADLINE,
    owned: bool = True,
    service_account_name: str | None = None,
    retry_strategy: RetryStrategy | None = None,
    defaults: Mapping[str, int | str] | None = None,
) -> Resource:
    """A resource template that creates ``job`` and succeeds or fails with it.

    The job is owned by the Workflow (deleted with it); it and its pods carry the workflow label (so ``argo logs``
    and the UI show the pods) and ``hera-volcano/job: JOB_LABEL`` (default: the template name) for log followers.
    The step waits at most ``deadline`` seconds, and each pod runs at most as long from its own start
    (``activeDeadlineSeconds``, unless the pod template sets one or the deadline is an Argo expression): a step that
    times out does not leave its pods holding the gang's resources for long. Input
    parameters are declared for every ``{{inputs.parameters.X}}`` the job uses; ``defaults`` gives some of them
    default values.
    """
    if not isinstance(job, VolcanoJob):
        raise ValidationError("job", "must be a VolcanoJob (see mpi_job and VolcanoJob)")
    if defaults is not None and not isinstance(defaults, Mapping):
        raise ValidationError("defaults", "must be a mapping of input names to default values")
    if retry_strategy is not None and not isinstance(retry_strategy, RetryStrategy):
        raise ValidationError("retry_strategy", "must be a hera.workflows.RetryStrategy")
    names.check("name", name, names.argo_name)
    label = name if job_label is None else job_label
    if isinstance(label, str):
        names.check("job_label", label, names.label_value)
    if service_account_name is not None:
        names.check("service_account_name", service_account_name, names.dns1123_subdomain)
    success, failure = conditions(success_phases, failure_phases)
    if retry_strategy is not None and _fixed_name(job):
        raise ValidationError(
            "retry_strategy",
            "an Argo retry creates the job again, so the job needs generate_name (a fixed name collides); "
            "or retry inside the job with Volcano's max_retry and policies",
        )
    ttl_problem = watched_ttl_problem(job.ttl_seconds_after_finished)
    if ttl_problem is not None:
        raise ValidationError("ttl_seconds_after_finished", ttl_problem)
    if owned and job.namespace is not None:
        raise ValidationError(
            "namespace", "an owned job lives in the Workflow's namespace; leave it unset or pass owned=False"
        )
    # A label is a string: a placeholder goes in as quoted text, so a value such as `y` cannot turn into a boolean.
    step_deadline = _deadline(deadline, "deadline")
    labels = {WORKFLOW_LABEL: "{{workflow.name}}", JOB_LABEL: str(label)}
    pod_deadline = step_deadline if isinstance(step_deadline, int) else None
    data = _attach(job, labels, pod_deadline)._data()
    samples = {**collect(data), **{f"inputs.parameters.{k}": v for k, v in (defaults or {}).items()}}
    check(data, samples)
    manifest = dump_manifest(data)
    return Resource(
        name=name,
        action="create",
        manifest=manifest,
        set_owner_reference=owned or None,
        success_condition=success,
        failure_condition=failure,
        active_deadline_seconds=step_deadline,
        service_account_name=service_account_name,
        retry_strategy=retry_strategy,
        inputs=_inputs(manifest, defaults or {}) or None,
    )


def _fixed_name(job: VolcanoJob) -> bool:
    """Whether creating the job twice collides: a literal name, or a parametrised one without generateName."""
    if job.generate_name is not None:
        return isinstance(job.name, str) and job.name != "" and "{{" not in job.name
    return True


def follow_logs_template(
    *,
    name: str = "follow-master-logs",
    job_label: str | Placeholder,
    task: str = "mpimaster",
    container: str | None = None,
    image: str = KUBECTL_IMAGE,
    timeout: int = DEFAULT_DEADLINE + 60,
    grace: int = DEFAULT_GRACE,
    service_account_name: str | None = None,
) -> Container:
    """A container that streams the logs of one task's pod (``kubectl logs -f``), following it across restarts.

    It finds the pod and its Volcano Job by labels (the job's name may be generated), streams each new pod or
    restarted container, reattaches to a dropped stream, and stops when the job is Completed, Failed, Terminated or
    Aborted, when no job appears within ``grace`` seconds (or one it saw is gone), or after ``timeout`` seconds;
    it always exits 0. Run it beside the job step, without a dependency; where the DAG allows it (no ``depends``),
    also give the task :func:`follower_continue_on`.
    """
    names.check("name", name, names.argo_name)
    names.check("task", task, names.dns1123_label)
    container = container or task
    names.check("container", container, names.dns1123_label)
    if not isinstance(job_label, str | Placeholder):
        raise ValidationError("job_label", "must be a label value or a Placeholder")
    if isinstance(job_label, str):
        names.check("job_label", job_label, names.label_value)
    check_image(image, "image")
    checks.integer("timeout", timeout, minimum=1)
    checks.integer("grace", grace, minimum=1)
    if service_account_name is not None:
        names.check("service_account_name", service_account_name, names.dns1123_subdomain)
    job_selector = f"{WORKFLOW_LABEL}={{{{workflow.name}}}},{JOB_LABEL}={job_label}"
    selector = f"{job_selector},{TASK_LABEL}={task}"
    prefix = "inputs.parameters."
    inputs = [Parameter(name=e.removeprefix(prefix)) for e in expressions(selector) if e.startswith(prefix)]
    return Container(
        name=name,
        image=image,
        command=["bash", "-c"],
        args=[_FOLLOW_SCRIPT],
        env=[
            Env(name="SELECTOR", value=selector),
            Env(name="JOB_SELECTOR", value=job_selector),
            Env(name="CONTAINER", value=container),
            Env(name="FOLLOW_SECONDS", value=str(timeout)),
            Env(name="GRACE_SECONDS", value=str(grace)),
        ],
        service_account_name=service_account_name,
        inputs=inputs or None,
    )


def follower_continue_on() -> ContinueOn:
    """For the follower's step or task: even a follower whose pod is killed must not fail the workflow.

    Argo accepts ``continueOn`` in Steps and in DAGs that use ``dependencies``, not in DAGs that use ``depends``."""
    return ContinueOn(failed=True, error=True)


def cleanup_on_failure(*, name: str = CLEANUP, delete_name: str = DELETE_JOBS) -> Steps:
    """An exit handler (``Workflow(on_exit=...)``): unless the workflow Succeeded, delete its Volcano Jobs.

    A workflow that is stopped (``argo stop``), fails or errors leaves jobs behind that may still run or wait for a
    gang: the job outlives its step, owned by the Workflow until that is deleted. This deletes every Volcano Job
    carrying the workflow's label (all jobs ``job_template`` makes do), without waiting, so their pods and
    PodGroups go and give back what they hold. Jobs of a workflow that Succeeded are kept for inspection. Needs
    ``delete`` and ``list`` on ``jobs.batch.volcano.sh`` (``rbac_for`` grants them). ``argo terminate`` runs no exit
    handler: deleting the Workflow removes its jobs in any case (owner references).
    """
    names.check("name", name, names.argo_name)
    names.check("delete_name", delete_name, names.argo_name)
    if name == delete_name:
        raise ValidationError("delete_name", "must differ from name (both are templates of one workflow)")
    delete = Resource(
        name=delete_name,
        action="delete",
        flags=["jobs.batch.volcano.sh", "--selector", f"{WORKFLOW_LABEL}={{{{workflow.name}}}}", "--wait=false"],
    )
    with Steps(name=name) as steps:
        Step(name=delete_name, template=delete, when="{{workflow.status}} != Succeeded")
    return steps
