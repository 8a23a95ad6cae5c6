# shellcheck shell=bash
# The prelude of every script we run in a pod that calls kubectl (the MPI master's wait for its workers).
#
# kubectl inside a pod ignores its in-cluster configuration as soon as a client flag such as --request-timeout is
# given, and dials localhost:8080 instead (kubernetes/kubernetes#93474): write the in-cluster configuration out as
# a kubeconfig (server from KUBERNETES_SERVICE_*, the mounted CA, and the token *file*, re-read as it rotates).
# kubectl's discovery cache goes to a writable folder, so only its first call pays for API discovery.
#
# `call VAR kubectl ARGS...` runs `kubectl --request-timeout=30s ARGS` with its output in VAR (the command stays
# spelled out, so RBAC derivation reads what it does). A failure is never silent: kubectl's last error line goes to
# stderr, the same message at most once every 30 s, and `call` returns kubectl's status. Every kubectl call and
# every pause runs in the background while the script waits on it, so a SIGTERM ends the script at once (bash runs
# a trap only after a foreground command ends; as PID 1 it would otherwise ignore the signal altogether).
# Pure bash: a kubectl image need not have mktemp, date or grep. No `$$` and no `$(NAME)`: Kubernetes expands them
# in a container's command and arguments (BASHPID is the shell's PID here).
SA_DIR=${SA_DIR:-/var/run/secrets/kubernetes.io/serviceaccount}
WORK_DIR="${TMPDIR:-/tmp}/hera-volcano-$BASHPID"
mkdir -p "$WORK_DIR" 2>/dev/null || WORK_DIR="${TMPDIR:-/tmp}"
KUBECTL_ERR="$WORK_DIR/kubectl.err"
export KUBECACHEDIR="$WORK_DIR/kube-cache"
if [ -z "${KUBECONFIG:-}" ] && [ -n "${KUBERNETES_SERVICE_HOST:-}" ] && [ -r "$SA_DIR/token" ]; then
  API_HOST=$KUBERNETES_SERVICE_HOST
  case $API_HOST in *:*) API_HOST="[$API_HOST]" ;; esac
  export KUBECONFIG="$WORK_DIR/kubeconfig"
  if ! printf '%s\n' 'apiVersion: v1' 'kind: Config' 'current-context: in-cluster' \
    'clusters:' '- name: in-cluster' '  cluster:' "    server: https://$API_HOST:${KUBERNETES_SERVICE_PORT:-443}" \
    "    certificate-authority: $SA_DIR/ca.crt" 'users:' '- name: in-cluster' '  user:' \
    "    tokenFile: $SA_DIR/token" 'contexts:' '- name: in-cluster' '  context:' '    cluster: in-cluster' \
    '    user: in-cluster' > "$KUBECONFIG"; then
    echo "Cannot write $KUBECONFIG: kubectl calls will fail" >&2
  fi
fi
CHILD=""
# On SIGTERM: stop what runs in the background for us, then exit (143, as a process killed by SIGTERM).
# shellcheck disable=SC2317  # run by the trap
on_term() {
  if [ -n "$CHILD" ]; then
    kill "$CHILD" 2>/dev/null
    wait "$CHILD"
  fi
  stop_background
  exit 143
}
# Overridden by scripts that keep more processes in the background.
# shellcheck disable=SC2317  # run by on_term
stop_background() { :; }
trap on_term TERM INT
# background CMD...: run CMD in the background and wait for it (a trap interrupts the wait, not the command).
background() {
  local rc
  "$@" &
  CHILD=$!
  wait "$CHILD"
  rc=$?
  CHILD=""
  return $rc
}
pause() { background sleep "$1"; }
# kubectl_error FILE: report the last line kubectl wrote to FILE (its stderr); the same message at most once every
# 30 s, whichever of the script's processes reports it.
kubectl_error() {
  local line msg="" file=$1 last="" at=-1000
  [ -r "$file" ] && while IFS= read -r line; do [ -n "$line" ] && msg=$line; done < "$file"
  msg=${msg:-kubectl failed without a message}
  [ -r "$WORK_DIR/last-error" ] && { read -r at; IFS= read -r last; } < "$WORK_DIR/last-error"
  if [ "$msg" != "$last" ] || (( SECONDS - at >= 30 )); then
    echo "kubectl: $msg" >&2
    printf '%s\n%s\n' "$SECONDS" "$msg" > "$WORK_DIR/last-error"
  fi
}
call() {
  local call_var=$1 call_cmd=$2 call_out="" call_rc
  shift 2
  background "$call_cmd" --request-timeout=30s "$@" > "$WORK_DIR/call.out" 2> "$KUBECTL_ERR"
  call_rc=$?
  if (( call_rc == 0 )); then
    IFS= read -r -d '' call_out < "$WORK_DIR/call.out"
    call_out=${call_out%$'\n'}
    printf -v "$call_var" '%s' "$call_out"
    return 0
  fi
  printf -v "$call_var" '%s' ""
  kubectl_error "$KUBECTL_ERR"
  return $call_rc
}
