# The MPI master's wait for its workers runs under this, as its container's PID 1: Python as PID 1 ignores SIGTERM
# until it has set a handler, and starting it can take seconds on a busy node, so a job deleted meanwhile would keep
# its master for the pod's whole grace period. sh sets its trap first; on SIGTERM it ends the container at once (the
# kernel ends the rest). Otherwise it exits as its command does.
trap 'exit 143' TERM INT
"$@" &
wait $!
