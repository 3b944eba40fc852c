#!/usr/bin/env bash
# Builds the real node's components from Go modules into a per-version cache outside the
# repository: kubelet and kube-proxy (from tools/controlplane's module, so they reuse its k8s.io/*
# versions and compiled packages), containerd + ctr + containerd-shim-runc-v2, runc (with
# seccomp, against Debian's libseccomp-dev), the CNI plugins bridge, host-local, loopback and
# portmap, and oci-image (image archives without Docker, on go-containerregistry). It installs the
# Debian packages the node needs (iptables, conntrack; libseccomp-dev to build runc) when missing.
# Idempotent: when every binary is cached, it only checks the packages; when some are missing, it
# builds just those.
#
#   tools/node/build.sh            build or reuse; prints the bin dir last
#   NODE_BIN=/path build.sh        use another output directory
set -euo pipefail
cd "$(dirname "$0")"

KUBE_VERSION=v1.37.2
KUBE_MINOR=37
CONTAINERD_VERSION=v2.4.2
RUNC_VERSION=v1.5.3
CNI_VERSION=v1.10.0
GGCR_VERSION=v0.22.1
CACHE_ROOT=${XDG_CACHE_HOME:-$HOME/.cache}/metacontroller-ts/controlplane
OUT=${NODE_BIN:-$CACHE_ROOT/node-kube-$KUBE_VERSION-containerd-$CONTAINERD_VERSION-runc-$RUNC_VERSION-cni-$CNI_VERSION}

# name -> Go package; the CNI plugins go to cni/ (containerd's bin_dir for CNI).
declare -A PKG=(
  [kubelet]=k8s.io/kubernetes/cmd/kubelet
  [kube-proxy]=k8s.io/kubernetes/cmd/kube-proxy
  [containerd]=github.com/containerd/containerd/v2/cmd/containerd
  [ctr]=github.com/containerd/containerd/v2/cmd/ctr
  [containerd-shim-runc-v2]=github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2
  [runc]=github.com/opencontainers/runc
  [oci-image]=metacontroller-ts.invalid/node/oci-image
  [cni/bridge]=github.com/containernetworking/plugins/plugins/main/bridge
  [cni/host-local]=github.com/containernetworking/plugins/plugins/ipam/host-local
  [cni/loopback]=github.com/containernetworking/plugins/plugins/main/loopback
  [cni/portmap]=github.com/containernetworking/plugins/plugins/meta/portmap
)
KUBE_BINS=(kubelet kube-proxy)
RUNTIME_BINS=(containerd ctr containerd-shim-runc-v2 oci-image cni/bridge cni/host-local cni/loopback cni/portmap)

log() { echo "node: $*" >&2; }
missing() { for b in "$@"; do [[ -x "$OUT/$b" ]] || echo "$b"; done; }

# Debian packages: iptables and conntrack for kube-proxy, libseccomp-dev (+ pkg-config, gcc) to
# build runc with seccomp; without it every sandbox fails ("seccomp not supported").
ensure_packages() {
  local want=()
  command -v iptables >/dev/null 2>&1 || want+=(iptables)
  command -v conntrack >/dev/null 2>&1 || want+=(conntrack)
  if [[ ! -x "$OUT/runc" ]]; then
    [[ -f /usr/include/seccomp.h ]] || want+=(libseccomp-dev)
    command -v pkg-config >/dev/null 2>&1 || want+=(pkg-config)
    command -v gcc >/dev/null 2>&1 || want+=(gcc libc6-dev)
  fi
  [[ ${#want[@]} -gt 0 ]] || return 0
  log "installing Debian packages: ${want[*]}"
  if [[ $(id -u) -ne 0 ]] || ! command -v apt-get >/dev/null 2>&1; then
    log "cannot install ${want[*]}: this needs root and apt-get (Debian/Ubuntu); install them and retry"
    exit 1
  fi
  local aptlog
  aptlog=$(mktemp)
  if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${want[@]}"; } >"$aptlog" 2>&1; then
    tail -20 "$aptlog" >&2
    log "apt-get could not install ${want[*]}; install them by hand and retry"
    exit 1
  fi
  rm -f "$aptlog"
}

ensure_packages
MISSING_KUBE=($(missing "${KUBE_BINS[@]}"))
MISSING_RUNTIME=($(missing "${RUNTIME_BINS[@]}"))
NEED_RUNC=0
[[ -x "$OUT/runc" ]] || NEED_RUNC=1

if [[ ${#MISSING_KUBE[@]} -eq 0 && ${#MISSING_RUNTIME[@]} -eq 0 && $NEED_RUNC -eq 0 ]]; then
  log "reusing cached binaries in $OUT"
  echo "$OUT"
  exit 0
fi

if ! command -v go >/dev/null 2>&1; then
  log "'go' (>= 1.26.8) is required to build the node; install Go and retry"
  exit 1
fi

export GOTOOLCHAIN=${GOTOOLCHAIN:-local} GOFLAGS=${GOFLAGS:--buildvcs=false}
JOBS=${CONTROLPLANE_BUILD_JOBS:-$(nproc 2>/dev/null || echo 2)}
TMP_OUT="$OUT.partial.$$"
mkdir -p "$TMP_OUT/cni"
trap 'rm -rf "$TMP_OUT"' EXIT
start=$(date +%s)
log "building ${MISSING_RUNTIME[*]} $([[ $NEED_RUNC -eq 1 ]] && echo runc) ${MISSING_KUBE[*]} (cold builds take 10-20 min on 2 cores)"

# go build writes one binary per package into a directory; the CNI plugins go to their own.
build_into() {
  local dir=$1 cgo=$2 tags=$3 ldflags=$4
  shift 4
  local pkgs=()
  for b in "$@"; do pkgs+=("${PKG[$b]}"); done
  CGO_ENABLED=$cgo go build -p "$JOBS" -trimpath -tags "$tags" -ldflags "$ldflags" -o "$dir/" "${pkgs[@]}"
}

if [[ ${#MISSING_RUNTIME[@]} -gt 0 ]]; then
  log "[1/3] containerd $CONTAINERD_VERSION, ctr, shim, oci-image (go-containerregistry $GGCR_VERSION), CNI plugins $CNI_VERSION"
  go mod download
  C="-X github.com/containerd/containerd/v2/version.Version=$CONTAINERD_VERSION"
  top=() cni=()
  for b in "${MISSING_RUNTIME[@]}"; do [[ $b == cni/* ]] && cni+=("$b") || top+=("$b"); done
  [[ ${#top[@]} -eq 0 ]] || build_into "$TMP_OUT" 0 "" "-s -w $C" "${top[@]}"
  [[ ${#cni[@]} -eq 0 ]] || build_into "$TMP_OUT/cni" 0 "" "-s -w" "${cni[@]}"
fi
if [[ $NEED_RUNC -eq 1 ]]; then
  log "[2/3] runc $RUNC_VERSION (cgo, seccomp)"
  build_into "$TMP_OUT" 1 seccomp "-s -w -X main.version=${RUNC_VERSION#v}" runc
  grep -q 'libseccomp' <<<"$("$TMP_OUT/runc" --version)" || { log "runc was built without seccomp"; exit 1; }
fi
if [[ ${#MISSING_KUBE[@]} -gt 0 ]]; then
  log "[3/3] ${MISSING_KUBE[*]} (Kubernetes $KUBE_VERSION, tools/controlplane's module)"
  V=""
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    V="$V -X '$pkg.gitVersion=$KUBE_VERSION' -X '$pkg.gitMajor=1' -X '$pkg.gitMinor=$KUBE_MINOR'"
    V="$V -X '$pkg.gitTreeState=clean' -X '$pkg.buildDate=1970-01-01T00:00:00Z'"
  done
  # Same tags and flags as tools/controlplane/build.sh, so the packages they share come from the
  # build cache instead of being compiled twice.
  (cd ../controlplane && go mod download &&
    build_into "$TMP_OUT" 0 selinux,notest,grpcnotrace "-s -w $V" "${MISSING_KUBE[@]}")
  "$TMP_OUT/${MISSING_KUBE[0]}" --version >&2
fi

# Binaries move in only once all are built, so an interrupted build never leaves one that looks
# complete; the ones already cached stay.
mkdir -p "$OUT/cni"
for b in "${MISSING_RUNTIME[@]}" "${MISSING_KUBE[@]}" $([[ $NEED_RUNC -eq 1 ]] && echo runc); do
  mv "$TMP_OUT/$b" "$OUT/$b"
done
rm -rf "$TMP_OUT"
trap - EXIT
log "built in $(($(date +%s) - start)) s into $OUT"
echo "$OUT"
