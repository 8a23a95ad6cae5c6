# Every version the cluster is built from, with the hash it must have. Sourced by build.sh; read by the tests.
#
# Go modules: the module proxy's h1 hash of the module zip (`go mod download -json MODULE@VERSION` prints it);
# their own go.sum pins every dependency. Kubernetes and etcd come from cluster/go.mod and go.sum.
# Debian packages: exact version and SHA-256 of the .deb (`apt-cache show PKG=VERSION`).

# Kubernetes: keep in step with the k8s.io/kubernetes requirement and the staging replaces in go.mod.
KUBE_VERSION=v1.37.2

# Argo Workflows, both supported lines. The conformance validators link the same releases (tests/test_pins.py).
ARGO3_MODULE=github.com/argoproj/argo-workflows/v3
ARGO3_VERSION=v3.7.18
ARGO3_SUM=h1:B8v2GIBCqUATiqrI3NaLGDplT2Id18bIruebwSXkFZI=
ARGO4_MODULE=github.com/argoproj/argo-workflows/v4
ARGO4_VERSION=v4.1.4
ARGO4_SUM=h1:/+7ZnKumIwBmS6z+3zeWvTnhW8c6nun0dLrtcBBRz0A=
# The CRDs of tests/cluster (a control plane without controllers) come from the 4.1 line.
ARGO_CRD_DIR=manifests/base/crds/full

# Volcano. Its go.mod replaces volcano.sh/apis with a staging folder the module zip leaves out, and the proxy does
# not serve volcano.sh/apis v1.15.x: build.sh puts v1.14.0 there (plus the one constant v1.15 added).
VOLCANO_MODULE=volcano.sh/volcano
VOLCANO_VERSION=v1.15.1
VOLCANO_SUM=h1:M0iGzhy1dvod2GFy1QiyWdv1jmmNfHW4+2WoRU7CIAk=
VOLCANO_APIS_MODULE=volcano.sh/apis
VOLCANO_APIS_VERSION=v1.14.0
VOLCANO_APIS_SUM=h1:Rf8wzGFmgzbyg85GO0CxapDDEk/VM3D7QbjbI/sH+OQ=
VOLCANO_CRD_DIR=config/crd/volcano/bases
VOLCANO_JOBFLOW_CRD_DIR=config/crd/jobflow/bases

# CoreDNS: its own module graph.
COREDNS_MODULE=github.com/coredns/coredns
COREDNS_VERSION=v1.15.0
COREDNS_SUM=h1:OBT+OEyHVdUiVxPhrNlC5XZVq3RkSxzQXfZQ76gm5ck=

# kwok: fake nodes beside the real one (the scale scenarios), and the Stages that move their pods along, read from
# the module (a pod completes after the delay its pod-complete.stage.kwok.x-k8s.io/delay annotation gives).
KWOK_MODULE=sigs.k8s.io/kwok
KWOK_VERSION=v0.8.0
KWOK_SUM=h1:OTIOTwgROqPMovcTwxICx2eYQ4AwLpSx5EpjbDKF4SQ=
KWOK_STAGES="
kustomize/stage/node/fast/node-initialize.yaml
kustomize/stage/node/heartbeat/node-heartbeat.yaml
kustomize/stage/pod/general/pod-create.yaml
kustomize/stage/pod/general/pod-init-container-running.yaml
kustomize/stage/pod/general/pod-init-container-completed.yaml
kustomize/stage/pod/general/pod-ready.yaml
kustomize/stage/pod/general/pod-complete.yaml
kustomize/stage/pod/general/pod-delete.yaml
"

# Debian bookworm packages installed on the host: the container runtime and the tools kube-proxy and the CNI
# plugins call. NAME VERSION SHA256, one per line.
HOST_DEBS="
containerd 1.6.20~ds1-1+deb12u3 8669d264eeb0fcdb4a0b1ba436ab88ec5dafde4a66e1278ec279d830db4c2216
runc 1.1.5+ds1-1+deb12u1 a00351f8c0318de0b424ecf5cd0fdb69880a89f3511cae4f6fff7de3e57881c5
containernetworking-plugins 1.1.1+ds1-3+b5 4cac8143474d1249b19f7b0e80b8d0daaa6dfdaa8bd514bc468d38d4a108099f
iptables 1.8.9-2 2928d3ca6ca8a3dc3f423f6752822b1f3614a5ba609ff7806bcba4449ffe90e1
nftables 1.0.6-2+deb12u2 966ff20ce58c17163a771c02ddbca264291408f94c512bd85dd18da0ebdbe88c
conntrack 1:1.4.7-1+b2 9827d60b60c1b5673e97f34db48d9db79e9f9ef807ee998320f6dafc80711e82
"
