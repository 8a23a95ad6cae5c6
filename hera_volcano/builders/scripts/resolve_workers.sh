# shellcheck shell=sh
# In the MPI master's container (POSIX sh), before mpiexec: a Ready worker's name resolves only once the headless
# Service's endpoints reach DNS, a moment later; wait for that (up to a minute, 60 lookups a second apart) rather
# than spend one of the master's retries on the race. HOSTS is `host:slots,...`. Images without getent skip it.
for host in $(printf '%s' "$HOSTS" | tr ',' ' '); do
  host=${host%:*}
  tries=0
  while command -v getent >/dev/null && ! getent hosts "$host" >/dev/null; do
    tries=$((tries + 1))
    [ "$tries" -lt 60 ] || { echo "Worker $host does not resolve after 60 attempts" >&2; exit 1; }
    sleep 1
  done
done
