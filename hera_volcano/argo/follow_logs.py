"""The log follower: a container that streams one task's pod logs into the workflow's, beside the job's step.

This module imports ``hera.workflows`` (slow); ``import hera_volcano`` reaches it only when it is used.
"""

from __future__ import annotations

from hera.workflows import Container, Env, Parameter
from hera.workflows.models import ContinueOn

from hera_volcano.argo.conditions import DEFAULT_DEADLINE
from hera_volcano.argo.labels import JOB_LABEL, TASK_LABEL, WORKFLOW_LABEL
from hera_volcano.kube import names
from hera_volcano.kube.images import KUBECTL_IMAGE, check_image
from hera_volcano.kube.kubectl_in_pod import KUBECTL_PRELUDE
from hera_volcano.shared import checks
from hera_volcano.shared.errors import ValidationError
from hera_volcano.shared.placeholders import Placeholder, expressions

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
C="?(@.name==\\"$CONTAINER\\")"
# Of the newest pod, in one call: NAME|PHASE|CONTAINER-ID|RUNNING-SINCE|INIT-CONTAINER:RESTARTS ...
FIELDS="{.metadata.name}|{.status.phase}|{.status.containerStatuses[$C].containerID}"
FIELDS+="|{.status.containerStatuses[$C].state.running.startedAt}"
FIELDS+="|{range .status.initContainerStatuses[*]}{.name}:{.restartCount} {end}"
declare -A INIT_SHOWN
last() { local line out=""; while IFS= read -r line; do [ -n "$line" ] && out=$line; done; printf '%s' "$out"; }
newest_pod() {
  POD=""
  call OUT kubectl -n "$NS" get pods -l "$SELECTOR" --sort-by=.metadata.creationTimestamp \\
    -o jsonpath="{range .items[*]}$FIELDS{\\"\\n\\"}{end}" || return 1
  IFS='|' read -r POD PHASE CID RUNNING INITS <<< "$(printf '%s\\n' "$OUT" | last)"
}
show_failed_inits() {
  # An init container that restarted has failed (say, the master's wait for its workers gave up): show why while
  # the pod, and the log of that attempt, still exist.
  local entry name count
  for entry in $INITS; do
    name=${entry%%:*}
    count=${entry##*:}
    if (( count > ${INIT_SHOWN[$POD/$name]:-0} )); then
      INIT_SHOWN[$POD/$name]=$count
      echo "=== $POD: init container $name failed (restart $count); the end of its output:"
      call LOG kubectl -n "$NS" logs "$POD" -c "$name" --previous --tail=20 && printf '%s\\n' "$LOG"
    fi
  done
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
    [ -z "$CID" ] && show_failed_inits
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
        # The newest pod's container never started: show the end of its containers' logs, if it is still there
        # (an init container's failures were shown as they happened).
        echo "=== $CONTAINER never started in $SEEN_POD"
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
