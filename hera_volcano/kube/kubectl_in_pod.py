"""The bash prelude of every script we run in a pod that calls kubectl (the log follower, the master's wait).

kubectl inside a pod ignores its in-cluster configuration as soon as a client flag such as ``--request-timeout``
is given, and dials ``localhost:8080`` instead (kubernetes/kubernetes#93474, #49343). Every call here is bounded
by that flag, so the prelude writes the in-cluster configuration out as a kubeconfig (server from the
``KUBERNETES_SERVICE_*`` variables, the mounted CA, and the token *file*, which kubectl re-reads as it rotates).

``call VAR kubectl ARGS...`` runs ``kubectl --request-timeout=30s ARGS`` with its output in ``VAR`` (the command
stays spelled out, so RBAC derivation reads what it does). A failure is never silent: kubectl's last error line
goes to stderr, the same message at most once every 30 s (a loop that polls every few seconds would otherwise
repeat it), and ``call`` returns kubectl's status. ``kubectl_error`` does the same
for a call made directly (``kubectl logs -f``, whose output streams). Pure bash: a kubectl image need not have
``mktemp``, ``date`` or ``grep``.
"""

from __future__ import annotations

KUBECTL_PRELUDE = """\
SA_DIR=/var/run/secrets/kubernetes.io/serviceaccount
KUBECTL_ERR="${TMPDIR:-/tmp}/hera-volcano-kubectl-$$.err"
if [ -z "${KUBECONFIG:-}" ] && [ -n "${KUBERNETES_SERVICE_HOST:-}" ] && [ -r "$SA_DIR/token" ]; then
  API_HOST=$KUBERNETES_SERVICE_HOST
  case $API_HOST in *:*) API_HOST="[$API_HOST]" ;; esac
  export KUBECONFIG="${TMPDIR:-/tmp}/hera-volcano-kubeconfig-$$"
  if ! printf '%s\\n' 'apiVersion: v1' 'kind: Config' 'current-context: in-cluster' \\
    'clusters:' '- name: in-cluster' '  cluster:' "    server: https://$API_HOST:${KUBERNETES_SERVICE_PORT:-443}" \\
    "    certificate-authority: $SA_DIR/ca.crt" 'users:' '- name: in-cluster' '  user:' \\
    "    tokenFile: $SA_DIR/token" 'contexts:' '- name: in-cluster' '  context:' '    cluster: in-cluster' \\
    '    user: in-cluster' > "$KUBECONFIG"; then
    echo "Cannot write $KUBECONFIG: kubectl calls will fail" >&2
  fi
fi
LAST_ERROR=""
LAST_ERROR_AT=-1000
kubectl_error() {
  local line msg=""
  while IFS= read -r line; do [ -n "$line" ] && msg=$line; done < "$KUBECTL_ERR"
  msg=${msg:-kubectl failed without a message}
  if [ "$msg" != "$LAST_ERROR" ] || (( SECONDS - LAST_ERROR_AT >= 30 )); then
    echo "kubectl: $msg" >&2
    LAST_ERROR=$msg
    LAST_ERROR_AT=$SECONDS
  fi
}
call() {
  local call_var=$1 call_cmd=$2 call_out call_rc
  shift 2
  if call_out=$("$call_cmd" --request-timeout=30s "$@" 2>"$KUBECTL_ERR"); then
    printf -v "$call_var" '%s' "$call_out"
    return 0
  else
    call_rc=$?
  fi
  printf -v "$call_var" '%s' ""
  kubectl_error
  return $call_rc
}
"""
