# shellcheck shell=bash
# The MPI master's wait for its workers (after kubectl_prelude.sh), in an init container: until WORKERS pods of the
# job's worker task are Ready (their sshd accepts connections), at most WAIT_SECONDS. Once every worker pod exists
# it waits on a watch (`kubectl wait`) rather than polling; every call and pause runs in the background, so a
# SIGTERM (the job deleted, `argo stop`) ends it at once. Exits 1 when the time is up, so the kubelet retries the
# pod within the master's retries. Variable values arrive as environment variables; the text is constant.
: "${JOB_NAME:?}" "${NAMESPACE:?}" "${WORKER_TASK:?}" "${WORKERS:?}" "${WAIT_SECONDS:?}"
END=$(( SECONDS + WAIT_SECONDS ))
SELECTOR="volcano.sh/job-name=$JOB_NAME,volcano.sh/task-spec=$WORKER_TASK"
echo "Waiting for $WORKERS Ready pods labelled $SELECTOR"
while true; do
  READY=0
  PODS=0
  call STATUSES kubectl get pods -n "$NAMESPACE" -l "$SELECTOR" \
    -o jsonpath='{range .items[*]}{.metadata.name}={.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}'
  while IFS= read -r STATUS; do
    [ -n "$STATUS" ] || continue
    PODS=$(( PODS + 1 ))
    [ "${STATUS#*=}" = True ] && READY=$(( READY + 1 ))
  done <<< "$STATUSES"
  if (( READY >= WORKERS )); then
    echo "$READY workers Ready"
    exit 0
  fi
  LEFT=$(( END - SECONDS ))
  if (( LEFT <= 0 )); then
    echo "Only $READY of $WORKERS workers Ready after $WAIT_SECONDS s"
    exit 1
  fi
  if (( PODS >= WORKERS )); then
    background kubectl wait pods -n "$NAMESPACE" -l "$SELECTOR" --for=condition=Ready --timeout="${LEFT}s" \
      --request-timeout="$(( LEFT + 30 ))s" > /dev/null 2> "$KUBECTL_ERR" && continue
    kubectl_error "$KUBECTL_ERR"
  fi
  pause 2
done
