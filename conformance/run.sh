#!/usr/bin/env bash
# Check rendered YAML with Argo's own validators (see conformance/README.md).
#
#   conformance/run.sh FILE_OR_DIR...   build both validators, run both on the paths
#   conformance/run.sh --build          build only
#   conformance/run.sh --test           go test the three modules
#
# This script takes paths only: rendering the project's workflows into a folder
# to check is the caller's job (hook: render first, then pass the folder here).
# Binaries go to .cache/conformance/bin/ under the repo root; Go's build cache
# makes a rebuild after the first one take seconds.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "$here")
bin="$root/.cache/conformance/bin"
modules=(argo37 argo4) # one Go module per Argo line: they pin different libraries

if ! command -v go >/dev/null; then
	echo "conformance: needs Go (1.26.5 or later) on PATH" >&2
	exit 2
fi
# go.mod and go.sum are committed: never resolve or download anything beyond
# them (-mod=readonly), and do not stamp VCS data (fresh clones, CI). The
# caller's GOFLAGS (say -p=1) are kept; ours come last and win.
export GOFLAGS="${GOFLAGS:-} -mod=readonly -buildvcs=false"
# One build at a time (pytest -n runs the tests that build the validators on every core).
mkdir -p "$bin"
exec 9>"$bin/.lock"
if command -v flock >/dev/null; then flock 9; fi

case "${1:-}" in
"")
	echo "usage: conformance/run.sh FILE_OR_DIR... | --build | --test" >&2
	exit 2
	;;
--test)
	for m in common "${modules[@]}"; do
		(cd "$here/$m" && go test ./...)
	done
	exit 0
	;;
esac

mkdir -p "$bin"
for m in "${modules[@]}"; do
	(cd "$here/$m" && go build -o "$bin/$m-validate" .)
done
[ "$1" = --build ] && exit 0

status=0
summary=()
for m in "${modules[@]}"; do
	out=$(mktemp)
	rc=0
	"$bin/$m-validate" "$@" | tee "$out" || rc=$?
	if [ "$rc" -ne 0 ]; then
		status=1
	fi
	last=$(tail -n 1 "$out")
	rm -f "$out"
	case "$last" in
	argo*": "*" documents, "*" failed") summary+=("$last") ;;
	*) summary+=("$m-validate exited with status $rc") ;;
	esac
done

echo "conformance summary:"
printf '  %s\n' "${summary[@]}"
if [ "$status" -ne 0 ]; then
	echo "conformance: FAILED"
else
	echo "conformance: OK"
fi
exit "$status"
