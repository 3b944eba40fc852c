#!/usr/bin/env bash
# Builds etcd, kube-apiserver, kube-controller-manager and kube-scheduler from the
# Go modules pinned in go.mod/go.sum, into a per-version cache outside the repository.
# Idempotent: when all four binaries are cached, it does nothing; when only some are
# (a cache from before kube-scheduler was added), it builds just the missing ones.
#
#   tools/controlplane/build.sh          build or reuse; prints the bin dir last
#   CONTROLPLANE_BIN=/path build.sh      use another output directory
set -euo pipefail
cd "$(dirname "$0")"

KUBE_VERSION=v1.37.2
KUBE_MINOR=37
ETCD_VERSION=v3.7.3
CACHE_ROOT=${XDG_CACHE_HOME:-$HOME/.cache}/metacontroller-ts/controlplane
OUT=${CONTROLPLANE_BIN:-$CACHE_ROOT/kube-$KUBE_VERSION-etcd-$ETCD_VERSION}

KUBE_CMDS=(kube-apiserver kube-controller-manager kube-scheduler)
MISSING_KUBE=()
for cmd in "${KUBE_CMDS[@]}"; do
  [[ -x "$OUT/$cmd" ]] || MISSING_KUBE+=("$cmd")
done
NEED_ETCD=0
[[ -x "$OUT/etcd" ]] || NEED_ETCD=1

if [[ ${#MISSING_KUBE[@]} -eq 0 && $NEED_ETCD -eq 0 ]]; then
  echo "controlplane: reusing cached binaries in $OUT" >&2
  echo "$OUT"
  exit 0
fi

if ! command -v go >/dev/null 2>&1; then
  echo "controlplane: 'go' (>= 1.26) is required to build the control plane; install Go and retry" >&2
  exit 1
fi

export CGO_ENABLED=0 GOTOOLCHAIN=${GOTOOLCHAIN:-local} GOFLAGS=${GOFLAGS:--buildvcs=false}
JOBS=${CONTROLPLANE_BUILD_JOBS:-$(nproc 2>/dev/null || echo 2)}
TMP_OUT="$OUT.partial.$$"
mkdir -p "$TMP_OUT"
trap 'rm -rf "$TMP_OUT"' EXIT

start=$(date +%s)
MISSING=("${MISSING_KUBE[@]}")
[[ $NEED_ETCD -eq 0 ]] || MISSING+=(etcd)
echo "controlplane: building ${MISSING[*]} (Kubernetes $KUBE_VERSION, etcd $ETCD_VERSION; cold builds take 15-30 min on 2 cores)" >&2

V=""
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  V="$V -X '$pkg.gitVersion=$KUBE_VERSION' -X '$pkg.gitMajor=1' -X '$pkg.gitMinor=$KUBE_MINOR'"
  V="$V -X '$pkg.gitTreeState=clean' -X '$pkg.buildDate=1970-01-01T00:00:00Z'"
done

echo "controlplane: [1/3] go mod download" >&2
go mod download
if [[ ${#MISSING_KUBE[@]} -gt 0 ]]; then
  echo "controlplane: [2/3] ${MISSING_KUBE[*]}" >&2
  go build -p "$JOBS" -trimpath -tags selinux,notest,grpcnotrace -ldflags "-s -w $V" -o "$TMP_OUT/" \
    "${MISSING_KUBE[@]/#/k8s.io/kubernetes/cmd/}"
  "$TMP_OUT/${MISSING_KUBE[0]}" --version >&2
fi
if [[ $NEED_ETCD -eq 1 ]]; then
  echo "controlplane: [3/3] etcd" >&2
  go build -p "$JOBS" -trimpath -ldflags "-s -w" -o "$TMP_OUT/etcd" go.etcd.io/etcd/server/v3
  # sed reads the whole output: `head -1` exits early, and etcd dies of SIGPIPE under pipefail.
  "$TMP_OUT/etcd" --version | sed -n 1p >&2
fi

# Each binary is moved in only once all of them are built, so an interrupted build never leaves
# a binary that looks complete; the ones already cached stay where they are.
mkdir -p "$OUT"
for bin in "${MISSING[@]}"; do
  mv "$TMP_OUT/$bin" "$OUT/$bin"
done
rm -rf "$TMP_OUT"
trap - EXIT
echo "controlplane: built in $(( $(date +%s) - start )) s into $OUT" >&2
echo "$OUT"
