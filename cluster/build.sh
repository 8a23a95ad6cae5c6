#!/usr/bin/env bash
# Builds what the cluster tests run, from pinned sources (cluster/pins.sh, go.mod, go.sum, images/*.lock).
#
#   cluster/build.sh control-plane   kube-apiserver and etcd, and the CRD list (tests/cluster)
#   cluster/build.sh crds            the CRD lists only
#   cluster/build.sh node            everything the single-node cluster of tests/e2e needs:
#                                    host packages, Kubernetes, CoreDNS, Argo (both lines), Volcano, images
#   cluster/build.sh host|kube|coredns|argo|volcano|kwok|images   one part of `node`
#
# Output, under $HERA_VOLCANO_CLUSTER_CACHE (default .cache/cluster at the repo root):
#   bin/                  kube-*, kubelet, kubectl, etcd, coredns, vc-scheduler, vc-controller-manager,
#                         vc-webhook-manager
#   argo/VERSION/         workflow-controller, argoexec, argo (the CLI), one folder per Argo line
#   crds/                 *.list: absolute paths of CRD files in the Go module cache (hash-checked, not copied)
#   volcano/              the Volcano release's scheduler configuration and webhook template
#   images/NAME.tar       OCI image archives (see images/build.py), imported by the node at start
# A second run is a fast no-op: `go build -o` leaves an up-to-date binary alone, compiled packages come from
# Go's build cache, module copies and images are rebuilt only when their inputs change.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$here")
out=${HERA_VOLCANO_CLUSTER_CACHE:-$repo/.cache/cluster}
# shellcheck source=pins.sh
. "$here/pins.sh"

die() { echo "cluster/build.sh: $*" >&2; exit 1; }
step() { echo "cluster/build.sh: $*" >&2; }

command -v go >/dev/null || die "go is not on PATH (Go >= 1.26 is needed to build the cluster)"

mkdir -p "$out/bin" "$out/crds"
# One build at a time (parallel pytest sessions, make -j).
exec 9>"$out/.lock"
if command -v flock >/dev/null; then flock 9; fi

export GOWORK=off
export GOTOOLCHAIN=${GOTOOLCHAIN:-local}
# Static binaries: argoexec and kubectl are copied into images.
export CGO_ENABLED=0
# Module copies are built with their own go.mod and go.sum; do not stamp VCS data.
export GOFLAGS=-buildvcs=false

# module_dir MODULE VERSION SUM -> prints the module's directory in the module cache, after checking its hash.
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

# writable_copy MODULE VERSION SUM NAME -> a writable copy of the module under $out/src/NAME (made once; the
# module cache is read-only and some modules need fixes before they build). Prints its path.
writable_copy() {
    local src dst
    src=$(module_dir "$1" "$2" "$3")
    dst="$out/src/$4"
    if [ ! -f "$dst/.hera-volcano-copied" ] || [ "$(cat "$dst/.hera-volcano-copied")" != "$3" ]; then
        rm -rf "$dst"
        mkdir -p "$dst"
        cp -R "$src/." "$dst/"
        chmod -R u+w "$dst"
        printf '%s' "$3" >"$dst/.hera-volcano-copied.tmp"
    fi
    printf '%s\n' "$dst"
}

# mark_copied DIR: the fixes are applied; the copy is complete.
mark_copied() { [ -f "$1/.hera-volcano-copied.tmp" ] && mv "$1/.hera-volcano-copied.tmp" "$1/.hera-volcano-copied"; return 0; }

kube_ldflags() {
    local f="-s -w -X k8s.io/component-base/version.gitVersion=$KUBE_VERSION"
    f+=" -X k8s.io/component-base/version.gitMajor=$(echo "$KUBE_VERSION" | cut -d. -f1 | tr -d v)"
    f+=" -X k8s.io/component-base/version.gitMinor=$(echo "$KUBE_VERSION" | cut -d. -f2)"
    f+=" -X k8s.io/component-base/version.gitTreeState=clean"
    printf '%s' "$f"
}

# Kubernetes commands from cluster/go.mod (`tool` lines), and etcd.
build_kube() {
    local c
    for c in "$@"; do
        step "building $c"
        if [ "$c" = etcd ]; then
            (cd "$here" && go build -mod=readonly -ldflags "-s -w" -o "$out/bin/etcd" go.etcd.io/etcd/server/v3)
        else
            (cd "$here" && go build -mod=readonly -ldflags "$(kube_ldflags)" -o "$out/bin/$c" "k8s.io/kubernetes/cmd/$c")
        fi
    done
}

resolve_crds() {
    local argo volcano f line list
    for line in "$ARGO3_MODULE $ARGO3_VERSION $ARGO3_SUM" "$ARGO4_MODULE $ARGO4_VERSION $ARGO4_SUM"; do
        set -- $line
        argo=$(module_dir "$1" "$2" "$3")
        list=$(mktemp "$out/crds/list.XXXXXX")
        for f in "$argo/$ARGO_CRD_DIR"/argoproj.io_*.yaml; do
            [ -f "$f" ] || die "no Argo CRDs in $argo/$ARGO_CRD_DIR"
            echo "$f" >>"$list"
        done
        mv "$list" "$out/crds/argo-$2.list"
    done
    volcano=$(module_dir "$VOLCANO_MODULE" "$VOLCANO_VERSION" "$VOLCANO_SUM")
    list=$(mktemp "$out/crds/list.XXXXXX")
    # The controller manager waits for informers of every Volcano kind, JobFlows included.
    for f in "$volcano/$VOLCANO_CRD_DIR"/*.yaml "$volcano/$VOLCANO_JOBFLOW_CRD_DIR"/*.yaml; do echo "$f" >>"$list"; done
    mv "$list" "$out/crds/volcano.list"
    # tests/cluster: the Argo 4.1 CRDs and Volcano's Job, Queue and PodGroup.
    list=$(mktemp "$out/crds/list.XXXXXX")
    cat "$out/crds/argo-$ARGO4_VERSION.list" >>"$list"
    for f in batch.volcano.sh_jobs.yaml scheduling.volcano.sh_queues.yaml scheduling.volcano.sh_podgroups.yaml; do
        [ -f "$volcano/$VOLCANO_CRD_DIR/$f" ] || die "missing $VOLCANO_CRD_DIR/$f in $VOLCANO_MODULE@$VOLCANO_VERSION"
        echo "$volcano/$VOLCANO_CRD_DIR/$f" >>"$list"
    done
    mv "$list" "$out/crds/control-plane.list"
}

build_coredns() {
    local dir
    dir=$(writable_copy "$COREDNS_MODULE" "$COREDNS_VERSION" "$COREDNS_SUM" "coredns@$COREDNS_VERSION")
    mark_copied "$dir"
    step "building coredns $COREDNS_VERSION"
    (cd "$dir" && go build -mod=readonly -ldflags "-s -w" -o "$out/bin/coredns" .)
}

# kwok, and the list of its Stage files (absolute paths in the module cache, hash-checked, not copied).
build_kwok() {
    local dir src list f
    dir=$(writable_copy "$KWOK_MODULE" "$KWOK_VERSION" "$KWOK_SUM" "kwok@$KWOK_VERSION")
    mark_copied "$dir"
    step "building kwok $KWOK_VERSION"
    (cd "$dir" && go build -mod=readonly -ldflags "-s -w" -o "$out/bin/kwok" ./cmd/kwok)
    src=$(module_dir "$KWOK_MODULE" "$KWOK_VERSION" "$KWOK_SUM")
    mkdir -p "$out/kwok"
    list=$(mktemp "$out/kwok/list.XXXXXX")
    for f in $KWOK_STAGES; do
        [ -f "$src/$f" ] || die "no $f in $KWOK_MODULE@$KWOK_VERSION"
        echo "$src/$f" >>"$list"
    done
    mv "$list" "$out/kwok/stages.list"
}

# build_argo MODULE VERSION SUM: workflow-controller, argoexec and the argo CLI of one Argo line.
build_argo() {
    local dir dest ldflags c
    dir=$(writable_copy "$1" "$2" "$3" "argo@$2")
    # Module zips drop symlinks: upstream's signal_linux.go is a git symlink to signal_darwin.go.
    [ -f "$dir/workflow/executor/osspecific/signal_linux.go" ] ||
        cp "$dir/workflow/executor/osspecific/signal_darwin.go" "$dir/workflow/executor/osspecific/signal_linux.go"
    # The CLI embeds the UI from ui/dist/app, which is not in the module; without it only `argo server` lacks a UI
    # (what Argo's own Makefile does when the UI is not built).
    mkdir -p "$dir/ui/dist/app"
    [ -f "$dir/ui/dist/app/index.html" ] || echo "Argo UI not built" >"$dir/ui/dist/app/index.html"
    mark_copied "$dir"
    dest="$out/argo/$2"
    mkdir -p "$dest"
    ldflags="-s -w -X $1.version=$2 -X $1.gitTreeState=clean -X $1.gitTag=$2"
    for c in workflow-controller argoexec argo; do
        step "building $c $2"
        (cd "$dir" && go build -mod=mod -ldflags "$ldflags" -o "$dest/$c" "./cmd/$c")
    done
}

build_volcano() {
    local dir apis dest ldflags c
    dir=$(writable_copy "$VOLCANO_MODULE" "$VOLCANO_VERSION" "$VOLCANO_SUM" "volcano@$VOLCANO_VERSION")
    if [ ! -d "$dir/staging/src/volcano.sh/apis" ]; then
        apis=$(module_dir "$VOLCANO_APIS_MODULE" "$VOLCANO_APIS_VERSION" "$VOLCANO_APIS_SUM")
        mkdir -p "$dir/staging/src/volcano.sh"
        cp -R "$apis" "$dir/staging/src/volcano.sh/apis"
        chmod -R u+w "$dir/staging/src/volcano.sh/apis"
        # The one name v1.15's apis added that v1.14.0 lacks (the rest of pkg/apis is the same).
        cat >"$dir/staging/src/volcano.sh/apis/pkg/apis/scheduling/v1beta1/hera_volcano_v115.go" <<'EOF'
package v1beta1

// QueueAllocationGateKey is the scheduling gate Volcano v1.15 puts on pods until their queue admits them.
const QueueAllocationGateKey = GroupName + "/queue-allocation-gate"
EOF
    fi
    mark_copied "$dir"
    dest="$out/bin"
    ldflags="-s -w -X volcano.sh/volcano/pkg/version.Version=$VOLCANO_VERSION"
    for c in scheduler controller-manager webhook-manager; do
        step "building vc-$c $VOLCANO_VERSION"
        (cd "$dir" && go build -mod=mod -ldflags "$ldflags" -o "$dest/vc-$c" "./cmd/$c")
    done
    mkdir -p "$out/volcano"
    cp "$dir/installer/helm/chart/volcano/config/volcano-scheduler.conf" "$out/volcano/scheduler.conf"
    cp "$dir/installer/helm/chart/volcano/templates/webhooks.yaml" "$out/volcano/webhooks.yaml.tmpl"
    cp "$dir/installer/helm/chart/volcano/values.yaml" "$out/volcano/values.yaml"
}

# Debian's container runtime and the firewall tools, at the pinned versions, each .deb checked against its hash.
install_host_packages() {
    local name version sum i
    local -a want=() sums=() debs=()
    while read -r name version sum; do
        [ -n "$name" ] || continue
        [ "$(dpkg-query -W -f '${Version}' "$name" 2>/dev/null || true)" = "$version" ] && continue
        want+=("$name=$version")
        sums+=("$sum")
    done <<<"$HOST_DEBS"
    [ ${#want[@]} -gt 0 ] || return 0
    [ "$(id -u)" = 0 ] || die "installing ${want[*]} needs root"
    command -v apt-get >/dev/null || die "installing ${want[*]} needs apt-get (Debian 12)"
    step "installing host packages ${want[*]}"
    mkdir -p "$out/debs/host"
    if ! (cd "$out/debs/host" && apt-get download -qq "${want[@]}" 2>/dev/null); then
        apt-get update -qq
        (cd "$out/debs/host" && apt-get download -qq "${want[@]}") || die "apt-get download ${want[*]} failed"
    fi
    for i in "${!want[@]}"; do
        name=${want[i]%%=*}
        version=${want[i]#*=}
        debs+=("$(ls "$out/debs/host/${name}_${version//:/%3a}_"*.deb | head -n 1)")
        echo "${sums[i]}  ${debs[i]}" | sha256sum -c --quiet - || die "${debs[i]} does not have the pinned SHA-256"
    done
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${debs[@]}" >/dev/null ||
        die "apt-get install ${want[*]} failed"
}

build_images() {
    step "building images"
    python3 "$here/images/build.py" --out "$out/images" --debs "$out/debs" --bin "$out/bin" --argo "$out/argo" \
        --kube-source "$(module_dir k8s.io/kubernetes "$KUBE_VERSION" "$(kube_sum)")"
}

# The k8s.io/kubernetes hash pinned in go.sum (the pause image is built from its source).
kube_sum() { awk -v v="$KUBE_VERSION" '$1 == "k8s.io/kubernetes" && $2 == v { print $3 }' "$here/go.sum"; }

[ $# -gt 0 ] || die "usage: $0 control-plane|crds|node|host|kube|coredns|argo|volcano|kwok|images..."
for target in "$@"; do
    case "$target" in
        control-plane) build_kube kube-apiserver etcd; resolve_crds ;;
        crds) resolve_crds ;;
        host) install_host_packages ;;
        kube) build_kube kube-apiserver etcd kubelet kube-controller-manager kube-scheduler kube-proxy kubectl ;;
        coredns) build_coredns ;;
        argo)
            build_argo "$ARGO3_MODULE" "$ARGO3_VERSION" "$ARGO3_SUM"
            build_argo "$ARGO4_MODULE" "$ARGO4_VERSION" "$ARGO4_SUM"
            ;;
        volcano) build_volcano ;;
        kwok) build_kwok ;;
        images) build_images ;;
        node)
            install_host_packages
            build_kube kube-apiserver etcd kubelet kube-controller-manager kube-scheduler kube-proxy kubectl
            build_coredns
            build_argo "$ARGO3_MODULE" "$ARGO3_VERSION" "$ARGO3_SUM"
            build_argo "$ARGO4_MODULE" "$ARGO4_VERSION" "$ARGO4_SUM"
            build_volcano
            build_kwok
            resolve_crds
            build_images
            ;;
        *) die "unknown target $target" ;;
    esac
done
