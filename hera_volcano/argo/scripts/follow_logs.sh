# shellcheck shell=bash
# The log follower (after kubectl_prelude.sh): streams the output of a Volcano Job's leading task into the
# workflow's logs, beside the job's step, and keeps the values rank 0 reports (hera-volcano:output NAME=VALUE).
#
# It waits on watches (the job; its step's pod; the pods of the job's lead task), never by polling, so a gang that
# waits hours to be scheduled costs no requests. It streams the newest pod of TASK (a new pod or a restarted container is
# streamed anew; a stream that drops while the container runs is resumed where it stopped, backing off when it
# ends at once), and stops:
#   - when the job is Completed, Failed, Terminated or Aborted: the stream gets DRAIN_SECONDS to end by itself;
#   - when a job it saw is gone;
#   - when the job's step has ended (its pod finished or went) and STEP_GRACE_SECONDS passed without the job
#     finishing: the step failed before creating a job, or gave up on it;
#   - when neither the step's pod nor a job appeared within GRACE_SECONDS, or after FOLLOW_SECONDS.
# Without OUTPUTS it always exits 0 (a log follower must not fail a workflow); with OUTPUTS it exits 1 when the job
# Completed but rank 0 did not report one of them, naming it.
#
# Everything variable arrives in environment variables (validated names and label selectors): no input reaches the
# shell as code. Pure bash plus kubectl and sleep.
: "${POD_SELECTOR:?}" "${JOB_SELECTOR:?}" "${FOLLOW_SECONDS:?}" "${GRACE_SECONDS:?}"
# TASK and CONTAINER may be empty: then the job's lead-task annotation names the task, and its container has the
# task's name (as in every builder's jobs).
LEAD_TASK=${TASK:-}
CONTAINER=${CONTAINER:-$LEAD_TASK}
export TZ=UTC LC_ALL=C
NS=${NAMESPACE:-}
[ -n "$NS" ] || read -r NS < "$SA_DIR/namespace"
TICK=${TICK_SECONDS:-1}
DRAIN=${DRAIN_SECONDS:-5}
STEP_GRACE=${STEP_GRACE_SECONDS:-15}
BACKOFF_MAX=${BACKOFF_MAX_SECONDS:-30}
OUTPUT_DIR=${OUTPUT_DIR:-/tmp/hera-volcano/outputs}
REPORT="hera-volcano:output "
MAX_LINE=4096
END=$(( SECONDS + FOLLOW_SECONDS ))

# What the watches print, one line per event: J|TYPE|NAME|CREATED|PHASE|LEAD-TASK for jobs, S|TYPE|NAME|CREATED|PHASE
# for the step's pod (the job's selector picks it among pods: the job's own pods do not carry Argo's label), and
# P|TYPE|NAME|CREATED|PHASE|CONTAINER-ID|RUNNING-SINCE|INIT-CONTAINERS|THEIR-RESTARTS for the lead task's pods. No
# `range`: kubectl's JSONPath keeps a range's state from one watched object to the next, and then fails.
JOB_FIELDS='J|{.type}|{.object.metadata.name}|{.object.metadata.creationTimestamp}|{.object.status.state.phase}'
JOB_FIELDS+='|{.object.metadata.annotations.hera-volcano/lead-task}{"\n"}'
STEP_FIELDS='S|{.type}|{.object.metadata.name}|{.object.metadata.creationTimestamp}|{.object.status.phase}{"\n"}'
# pod_fields: the lead task's pods' line, for CONTAINER.
pod_fields() {
  local c="?(@.name==\"$CONTAINER\")"
  POD_FIELDS='P|{.type}|{.object.metadata.name}|{.object.metadata.creationTimestamp}|{.object.status.phase}'
  POD_FIELDS+="|{.object.status.containerStatuses[$c].containerID}"
  POD_FIELDS+="|{.object.status.containerStatuses[$c].state.running.startedAt}"
  POD_FIELDS+='|{.object.status.initContainerStatuses[*].name}|{.object.status.initContainerStatuses[*].restartCount}'
  POD_FIELDS+='{"\n"}'
}

# watch NAME KUBECTL-COMMAND...: one kind's events, for as long as the follower runs. A watch the server ends is
# opened again at once (kubectl lists first, so nothing is missed); one that fails backs off, up to BACKOFF_MAX.
watch() {
  local started backoff=1 rc err="$WORK_DIR/watch-$1.err"
  shift
  trap 'kill "$WATCHING" $CHILD 2>/dev/null; wait; exit 0' TERM
  while :; do
    started=$SECONDS
    "$@" 2> "$err" &
    WATCHING=$!
    wait "$WATCHING"
    rc=$?
    if (( rc == 0 && SECONDS - started >= 5 )); then
      backoff=1
      continue
    fi
    (( rc == 0 )) || kubectl_error "$err"
    pause "$backoff"
    backoff=$(( backoff * 2 > BACKOFF_MAX ? BACKOFF_MAX : backoff * 2 ))
  done
}

declare -A JOB_PHASE JOB_CREATED JOB_LEAD POD_CREATED POD_TASK POD_PHASE POD_CONTAINERS POD_INITS INIT_SHOWN
JOB="" PHASE="" SEEN_JOB="" SEEN_STEP="" STEP_ENDED_AT="" POD="" SEEN_POD="" CID="" RUNNING=""
# A stream that ended quickly is tried again after BACKOFF seconds: 2 (at least one whole second of bash's clock)
# doubling up to BACKOFF_MAX.
STREAMED="" STREAM_PID="" STREAM_STARTED=0 NEXT_ATTACH=0 BACKOFF=2

on_event() {
  local kind type name created phase fifth sixth seventh eighth
  IFS='|' read -r kind type name created phase fifth sixth seventh eighth <<< "$1"
  [ -n "$name" ] || return 0
  if [ "$kind" = J ]; then
    if [ "$type" = DELETED ]; then
      unset "JOB_PHASE[$name]" "JOB_CREATED[$name]" "JOB_LEAD[$name]"
    else
      JOB_CREATED[$name]=$created
      JOB_PHASE[$name]=$phase
      JOB_LEAD[$name]=$fifth
    fi
  elif [ "$kind" = S ] || [ "$kind" = P ]; then
    if [ "$type" = DELETED ]; then
      unset "POD_CREATED[$name]" "POD_TASK[$name]" "POD_PHASE[$name]" "POD_CONTAINERS[$name]" "POD_INITS[$name]"
    else
      POD_CREATED[$name]=$created
      POD_PHASE[$name]=$phase
      if [ "$kind" = S ]; then
        POD_TASK[$name]=""
      else
        POD_TASK[$name]=$TASK
        POD_CONTAINERS[$name]="$CONTAINER=$fifth=$sixth"
        POD_INITS[$name]=$(inits "$seventh" "$eighth")
      fi
    fi
  fi
}

# inits NAMES COUNTS: "NAME:COUNT ..." from the two lists kubectl prints.
inits() {
  local names counts i out=""
  read -r -a names <<< "$1"
  read -r -a counts <<< "$2"
  for i in "${!names[@]}"; do out+="${names[$i]}:${counts[$i]:-0} "; done
  printf '%s' "$out"
}

# container_state POD: CID (empty until CONTAINER started) and RUNNING (since when, empty unless running) of POD.
container_state() {
  local entry
  CID="" RUNNING=""
  for entry in ${POD_CONTAINERS[$1]}; do
    if [ "${entry%%=*}" = "$CONTAINER" ]; then
      entry=${entry#*=}
      CID=${entry%%=*}
      RUNNING=${entry#*=}
    fi
  done
}

# newest VAR TASK: the newest pod of TASK ("" for the step's own pods), by creation time, then name.
newest() {
  local name best="" key best_key=""
  for name in "${!POD_CREATED[@]}"; do
    [ "${POD_TASK[$name]}" = "$2" ] || continue
    key="${POD_CREATED[$name]}|$name"
    if [[ -z "$best" || "$key" > "$best_key" ]]; then best=$name best_key=$key; fi
  done
  printf -v "$1" '%s' "$best"
}

newest_job() {
  local name key best_key=""
  JOB=""
  for name in "${!JOB_CREATED[@]}"; do
    key="${JOB_CREATED[$name]}|$name"
    if [[ -z "$JOB" || "$key" > "$best_key" ]]; then JOB=$name best_key=$key; fi
  done
  PHASE=${JOB:+${JOB_PHASE[$JOB]}}
  if [ -z "$LEAD_TASK" ] && [ -n "$JOB" ]; then
    TASK=${JOB_LEAD[$JOB]:-mpimaster}
    CONTAINER=${CONTAINER:-$TASK}
    LEAD_TASK=$TASK
    start_watches  # now with the lead task's pods
  fi
}

show_failed_inits() {
  # An init container that restarted has failed (say, the master's wait for its workers gave up): show why while
  # the pod, and the log of that attempt, still exist.
  local entry name count out
  for entry in ${POD_INITS[$POD]}; do
    name=${entry%%:*}
    count=${entry##*:}
    if (( count > ${INIT_SHOWN[$POD/$name]:-0} )); then
      INIT_SHOWN[$POD/$name]=$count
      echo "=== $POD: init container $name failed (restart $count); the end of its output:"
      call out kubectl -n "$NS" logs "$POD" -c "$name" --previous --tail=20 && printf '%s\n' "$out"
    fi
  done
}

# report LINE: keep the value of a report line of rank 0 (the last one of a name wins).
report() {
  local rest=${1#"$REPORT"} name value
  rest=${rest%$'\r'}
  name=${rest%%=*}
  value=${rest#*=}
  [ "$name" != "$rest" ] && (( ${#1} <= MAX_LINE )) || return 0
  [[ "$name" =~ ^[a-zA-Z0-9_-]{1,63}$ ]] || return 0
  case $name in job-name|job-phase) return 0 ;; esac
  mkdir -p "$OUTPUT_DIR" && printf '%s' "$value" > "$OUTPUT_DIR/$name"
}

# relay: print `TIMESTAMP TEXT` lines without their timestamps, skipping what an earlier stream of the same
# container already printed (a resumed stream starts at a whole second, before where the last one stopped).
relay() {
  local line text stamp seconds fraction key last="" at_last=0 skip_key="" skip=0
  [ -r "$WORK_DIR/cursor" ] && read -r skip_key skip < "$WORK_DIR/cursor"
  last=$skip_key
  at_last=$skip
  while IFS= read -r line; do
    stamp=${line%% *}
    text=${line#* }
    seconds=${stamp%Z}
    fraction=000000000
    if [[ "$seconds" == *.* ]]; then
      fraction=${seconds#*.}000000000
      fraction=${fraction:0:9}
      seconds=${seconds%%.*}
    fi
    key="$seconds.$fraction"
    if [ -n "$skip_key" ]; then
      [[ "$key" < "$skip_key" ]] && continue
      if [ "$key" = "$skip_key" ] && (( skip > 0 )); then
        skip=$(( skip - 1 ))
        continue
      fi
      skip_key=""
    fi
    if [ "$key" = "$last" ]; then at_last=$(( at_last + 1 )); else last=$key at_last=1; fi
    printf '%s\n' "$text"
    [[ "$text" == "$REPORT"* ]] && report "$text"
  done
  printf '%s %s\n' "$last" "$at_last" > "$WORK_DIR/cursor"
}

# stream ARGS...: `kubectl logs -f` of the container, relayed; on SIGTERM it ends with its kubectl.
stream() {
  local in logs
  exec {in}< <(exec kubectl logs -f --timestamps -n "$NS" -c "$CONTAINER" "$@" 2> "$WORK_DIR/stream.err")
  logs=$!
  trap 'kill "$logs" 2>/dev/null; wait; exit 0' TERM
  relay <&"$in"
  exec {in}<&-
  wait "$logs" || kubectl_error "$WORK_DIR/stream.err"
}

# finished: the newest job has ended (its pods' status can lag behind: a running container is not reattached then).
finished() { case $PHASE in Completed|Failed|Terminated|Aborted) return 0 ;; esac; return 1; }

stream_running() { [ -n "$STREAM_PID" ] && kill -0 "$STREAM_PID" 2>/dev/null; }

stop_stream() {
  if [ -n "$STREAM_PID" ]; then
    kill "$STREAM_PID" 2>/dev/null
    wait "$STREAM_PID" 2>/dev/null
    STREAM_PID=""
  fi
}

# stop_watches: end the watches and wait for them (left running, Argo's executor would reap them one a second).
stop_watches() {
  if [ -n "${WATCH_PID:-}" ]; then
    kill "$WATCH_PID" 2>/dev/null
    wait "$WATCH_PID" 2>/dev/null
    WATCH_PID=""
  fi
}

stop_background() {
  stop_stream
  stop_watches
  return 0
}

# Stream the newest pod of TASK when its container started and was not streamed yet (a new pod, or a restarted
# container), or again when the stream ended while the container still runs: at once the first time, then backing
# off while streams keep ending quickly (a log endpoint that fails, a forbidden pods/log).
follow_pod() {
  local run since=() cursor
  [ -n "$LEAD_TASK" ] || return 0
  newest POD "$TASK"
  [ -n "$POD" ] || return 0
  SEEN_POD=$POD
  container_state "$POD"
  [ -z "$CID" ] && show_failed_inits
  [ -n "$CID" ] || return 0
  run="$POD:$CID"
  if [ "$run" != "$STREAMED" ]; then
    stop_stream
    rm -f "$WORK_DIR/cursor"
    echo "=== logs of $POD (${POD_PHASE[$POD]})"
    BACKOFF=2
  elif [ -n "$RUNNING" ] && ! finished && ! stream_running && (( SECONDS >= NEXT_ATTACH )); then
    echo "=== reattaching to $POD"
    if [ -r "$WORK_DIR/cursor" ] && read -r cursor _ < "$WORK_DIR/cursor" && [ -n "$cursor" ]; then
      since=(--since-time="${cursor%.*}Z")
    fi
  else
    return 0
  fi
  STREAMED=$run
  STREAM_STARTED=$SECONDS
  stream "${since[@]}" "$POD" &
  STREAM_PID=$!
}

# When a stream has ended: the next attempt waits BACKOFF seconds if it lasted less than 5 s, else none.
reap_stream() {
  if [ -n "$STREAM_PID" ] && ! stream_running; then
    wait "$STREAM_PID" 2>/dev/null
    STREAM_PID=""
    if (( SECONDS - STREAM_STARTED < 5 )); then
      NEXT_ATTACH=$(( SECONDS + BACKOFF ))
      BACKOFF=$(( BACKOFF * 2 > BACKOFF_MAX ? BACKOFF_MAX : BACKOFF * 2 ))
    else
      NEXT_ATTACH=$SECONDS
      BACKOFF=2
    fi
  fi
}

# missing VAR: the names of OUTPUTS not reported yet.
missing() {
  local name found=()
  for name in ${OUTPUTS:-}; do [ -e "$OUTPUT_DIR/$name" ] || found+=("$name"); done
  printf -v "$1" '%s' "${found[*]}"
}

# The values rank 0 reported, if OUTPUTS names any: those the stream missed are looked for once more in the whole
# log of the last pod seen.
collect_outputs() {
  local absent out line
  missing absent
  if [ -n "$absent" ] && [ -n "$SEEN_POD" ] && call out kubectl -n "$NS" logs "$SEEN_POD" -c "$CONTAINER"; then
    while IFS= read -r line; do
      [[ "$line" == "$REPORT"* ]] && report "$line"
    done <<< "$out"
    missing absent
  fi
  if [ -n "$absent" ]; then
    echo "The job's rank 0 reported no value for: $absent (a line '${REPORT}NAME=VALUE' on its output, which a" \
      "function's returned dict prints)"
    return 1
  fi
}

# finish MESSAGE [PHASE]: stop (the stream gets DRAIN seconds to end by itself), say why, and with the job
# Completed, collect the outputs.
finish() {
  local waited=0 rc=0 out until=$(( SECONDS + DRAIN + 1 ))
  # Bounded in pauses and in bash's whole seconds: on a saturated node each short pause takes far longer than asked.
  while stream_running && (( waited < DRAIN * 5 && SECONDS < until )); do
    pause 0.2
    waited=$(( waited + 1 ))
  done
  stop_stream
  echo "$1"
  if [ -n "$SEEN_POD" ] && [ "${STREAMED%%:*}" != "$SEEN_POD" ]; then
    # The newest pod's container never started: show the end of its containers' logs, if it is still there (an
    # init container's failures were shown as they happened).
    echo "=== $CONTAINER never started in $SEEN_POD"
    call out kubectl -n "$NS" logs --all-containers --prefix --tail=20 "$SEEN_POD" && printf '%s\n' "$out"
  fi
  if [ "${2:-}" = Completed ]; then collect_outputs || rc=1; fi
  stop_background
  exit "$rc"
}

echo "Following ${TASK:-the leading task} of the job labelled $JOB_SELECTOR"
# One call before the watches, which start together: on an empty discovery cache each of them would pay for API
# discovery; after this one they find every group's resources cached (`api-versions` caches the groups alone, and
# then a custom resource's lookup discovers again). Its failure is reported; the watches retry on their own.
call out kubectl api-resources
# start_watches: every watch's lines, as they come, on one descriptor (the lead task's pods once it is known).
start_watches() {
  if [ -n "${WATCH_PID:-}" ]; then
    stop_watches
    exec {EVENTS}<&-
  fi
  PARTIAL=""
  WATCHED_AT=$SECONDS
  [ -n "$LEAD_TASK" ] && pod_fields
  exec {EVENTS}< <(
    # The jobs by resource, version and group: `jobs.batch.volcano.sh` reads first as version "batch" of a group
    # "volcano.sh", which no cache holds, so kubectl would discover the API again each time it opens the watch.
    watch jobs kubectl get jobs.v1alpha1.batch.volcano.sh -n "$NS" -l "$JOB_SELECTOR" --watch --output-watch-events -o "jsonpath=$JOB_FIELDS" &
    JOBS_WATCH=$!
    watch step kubectl get pods -n "$NS" -l "$JOB_SELECTOR" --watch --output-watch-events -o "jsonpath=$STEP_FIELDS" &
    STEP_WATCH=$!
    PODS_WATCH=""
    if [ -n "$LEAD_TASK" ]; then
      watch pods kubectl get pods -n "$NS" -l "$POD_SELECTOR,volcano.sh/task-spec=$TASK" --watch --output-watch-events -o "jsonpath=$POD_FIELDS" &
      PODS_WATCH=$!
    fi
    trap 'kill "$JOBS_WATCH" "$STEP_WATCH" $PODS_WATCH 2>/dev/null; wait; exit 0' TERM
    wait
  )
  WATCH_PID=$!
}
start_watches
# next_event TIMEOUT: the next whole line of the watches in LINE. A read that times out keeps what it read: under
# load the timeout can fire in the middle of a line.
next_event() {
  local rc
  IFS= read -r -t "$1" -u "$EVENTS" LINE
  rc=$?
  if (( rc == 0 )); then
    LINE=$PARTIAL$LINE
    PARTIAL=""
    return 0
  fi
  (( rc > 128 )) && PARTIAL+=$LINE
  return 1
}
STARTED=$SECONDS
while (( SECONDS < END )); do
  # Every event that is there (waiting up to TICK for the first), then decide.
  if next_event "$TICK"; then
    on_event "$LINE"
    while next_event 0.05; do on_event "$LINE"; done
  fi
  reap_stream
  newest_job
  # A container run not streamed yet is streamed even when the job has finished (it ran while the follower was
  # starting); the stream then ends by itself, or within DRAIN.
  follow_pod
  # A job that has finished ends the following, once the lead task's pods had a moment to be listed (their watch
  # may have just begun: a job that ran before the follower looked at it is still shown).
  finished && (( SECONDS - WATCHED_AT >= 2 )) && finish "Job $JOB is $PHASE" "$PHASE"
  [ -n "$JOB" ] && SEEN_JOB=$JOB
  [ -n "$SEEN_JOB" ] && [ -z "$JOB" ] && finish "Job $SEEN_JOB is gone"
  newest STEP ""
  if [ -n "$STEP" ]; then
    SEEN_STEP=$STEP
    case ${POD_PHASE[$STEP]} in
      Succeeded|Failed) STEP_ENDED_AT=${STEP_ENDED_AT:-$SECONDS} ;;
      *) STEP_ENDED_AT="" ;;
    esac
  elif [ -n "$SEEN_STEP" ]; then
    STEP_ENDED_AT=${STEP_ENDED_AT:-$SECONDS}  # its pod is gone
  fi
  if [ -n "$STEP_ENDED_AT" ] && (( SECONDS - STEP_ENDED_AT >= STEP_GRACE )); then
    if [ -n "$JOB" ]; then
      finish "The job's step has ended; job $JOB is ${PHASE:-Pending}"
    fi
    finish "The job's step has ended without creating a job"
  fi
  if [ -z "$SEEN_STEP$SEEN_JOB" ] && (( SECONDS - STARTED >= GRACE_SECONDS )); then
    finish "Neither the job's step nor a job labelled $JOB_SELECTOR appeared within $GRACE_SECONDS s"
  fi
done
finish "Stopped following after $FOLLOW_SECONDS s"
