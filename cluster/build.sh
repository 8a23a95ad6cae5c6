#!/usr/bin/env bash
# Builds the control plane used by tests/cluster and resolves the CRDs it installs.
#
#   cluster/build.sh            build kube-apiserver and etcd, resolve the CRDs
#   cluster/build.sh --crds     resolve the CRDs only
#
# Output (under the repo root, or $HERA_VOLCANO_CLUSTER_CACHE):
#   .cache/cluster/bin/kube-apiserver   k8s.io/kubernetes/cmd/kube-apiserver (version pinned in go.mod)
#   .cache/cluster/bin/etcd             go.etcd.io/etcd/server/v3 (the upstream etcd main, pinned in go.mod)
#   .cache/cluster/crds.list            absolute paths of the CRD files to install, one per line
#
# Both binaries come from the Go module proxy through cluster/go.mod and go.sum; nothing is vendored.
# A second run is a fast no-op: `go build -o` leaves an up-to-date binary alone, and compiled packages
# come from the Go build cache. The CRDs are read from pinned Go modules in the module cache
# (`go mod download -json MODULE@VERSION`), checked against the hashes below, never copied into the repo.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$here")
out=${HERA_VOLCANO_CLUSTER_CACHE:-$repo/.cache/cluster}

# Kubernetes version: keep in step with the k8s.io/kubernetes requirement and the
# staging replaces (v0.N.M for v1.N.M) in go.mod.
KUBE_VERSION=v1.37.2

# CRD sources. Argo: the 4.1 line, at v4.1.4 (the module proxy refuses v4.1.2 and v4.1.3).
ARGO_MODULE=github.com/argoproj/argo-workflows/v4
ARGO_VERSION=v4.1.4
ARGO_SUM=h1:/+7ZnKumIwBmS6z+3zeWvTnhW8c6nun0dLrtcBBRz0A=
ARGO_CRD_DIR=manifests/base/crds/full
VOLCANO_MODULE=volcano.sh/volcano
VOLCANO_VERSION=v1.15.1
VOLCANO_SUM=h1:M0iGzhy1dvod2GFy1QiyWdv1jmmNfHW4+2WoRU7CIAk=
VOLCANO_CRD_DIR=config/crd/volcano/bases
VOLCANO_CRDS="batch.volcano.sh_jobs.yaml scheduling.volcano.sh_queues.yaml scheduling.volcano.sh_podgroups.yaml"

die() { echo "cluster/build.sh: $*" >&2; exit 1; }

command -v go >/dev/null || die "go is not on PATH (Go >= 1.26 is needed to build the control plane)"

mkdir -p "$out/bin"
# One build at a time (parallel pytest sessions, make -j).
exec 9>"$out/.lock"
if command -v flock >/dev/null; then flock 9; fi

export GOWORK=off
export GOTOOLCHAIN=${GOTOOLCHAIN:-local}

# module_dir MODULE VERSION SUM -> prints the module's directory in the module cache.
module_dir() {
    local json dir sum tmp
    tmp=$(mktemp -d)
    # Outside any module, so cluster/go.mod and go.sum are left alone.
    json=$(cd "$tmp" && GOFLAGS= go mod download -json "$1@$2") || { rm -rf "$tmp"; die "go mod download $1@$2 failed: $json"; }
    rm -rf "$tmp"
    dir=$(printf '%s\n' "$json" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
    sum=$(printf '%s\n' "$json" | sed -n 's/^[[:space:]]*"Sum": "\(.*\)",$/\1/p')
    [ -n "$dir" ] && [ -d "$dir" ] || die "no directory for $1@$2: $json"
    [ "$sum" = "$3" ] || die "$1@$2 has hash $sum, expected $3"
    printf '%s\n' "$dir"
}

resolve_crds() {
    local argo volcano f list
    argo=$(module_dir "$ARGO_MODULE" "$ARGO_VERSION" "$ARGO_SUM")
    volcano=$(module_dir "$VOLCANO_MODULE" "$VOLCANO_VERSION" "$VOLCANO_SUM")
    list=$(mktemp "$out/crds.list.XXXXXX")
    for f in "$argo/$ARGO_CRD_DIR"/argoproj.io_*.yaml; do
        [ -f "$f" ] || die "no Argo CRDs in $argo/$ARGO_CRD_DIR"
        echo "$f" >>"$list"
    done
    for f in $VOLCANO_CRDS; do
        [ -f "$volcano/$VOLCANO_CRD_DIR/$f" ] || die "missing $VOLCANO_CRD_DIR/$f in $VOLCANO_MODULE@$VOLCANO_VERSION"
        echo "$volcano/$VOLCANO_CRD_DIR/$f" >>"$list"
    done
    mv "$list" "$out/crds.list"
}

build() {
    local ldflags
    cd "$here"
    # -s -w: no symbol table or DWARF (stack traces still work); about half the size.
    ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$KUBE_VERSION"
    ldflags+=" -X k8s.io/component-base/version.gitMajor=$(echo "$KUBE_VERSION" | cut -d. -f1 | tr -d v)"
    ldflags+=" -X k8s.io/component-base/version.gitMinor=$(echo "$KUBE_VERSION" | cut -d. -f2)"
    ldflags+=" -X k8s.io/component-base/version.gitTreeState=clean"
    # Sequential on purpose: the second build reuses the packages the first compiled.
    go build -mod=readonly -ldflags "$ldflags" -o "$out/bin/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver
    go build -mod=readonly -ldflags "-s -w" -o "$out/bin/etcd" go.etcd.io/etcd/server/v3
}

case "${1:-}" in
    --crds) resolve_crds ;;
    "") build; resolve_crds ;;
    *) die "usage: $0 [--crds]" ;;
esac
