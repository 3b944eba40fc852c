#!/usr/bin/env bash
# Builds etcd, kube-apiserver, kube-controller-manager and kube-scheduler from the
# Go modules pinned in go.mod/go.sum, into a per-version cache outside the repository.
# Idempotent: when all four binaries are cached, it does nothing; when only some are
# (a cache from before kube-scheduler was added), it builds just the missing ones.
#
#   tools/controlplane/build.sh          build or reuse; prints the bin dir last
#   CONTROLPLANE_BIN=/path build.sh      use another output directory
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../lib/build-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/build-lib.sh"
cd "$(dirname "$0")"
build_init controlplane

KUBE_VERSION=v1.37.2
KUBE_MINOR=37
ETCD_VERSION=v3.7.3
CACHE_ROOT=$(build_cache_root controlplane)
OUT=${CONTROLPLANE_BIN:-$CACHE_ROOT/kube-$KUBE_VERSION-etcd-$ETCD_VERSION}

KUBE_CMDS=(kube-apiserver kube-controller-manager kube-scheduler)
MISSING_KUBE=()
for cmd in "${KUBE_CMDS[@]}"; do
  [[ -x "$OUT/$cmd" ]] || MISSING_KUBE+=("$cmd")
done
NEED_ETCD=0
[[ -x "$OUT/etcd" ]] || NEED_ETCD=1

if [[ ${#MISSING_KUBE[@]} -eq 0 && $NEED_ETCD -eq 0 ]]; then
  build_reuse "$OUT" "reusing cached binaries in $OUT"
fi
build_require_go "the control plane"
build_go_env
JOBS=$(build_jobs "${CONTROLPLANE_BUILD_JOBS:-}")
build_partial "$OUT" dir
TMP_OUT=$BUILD_PARTIAL

build_start
MISSING=("${MISSING_KUBE[@]}")
[[ $NEED_ETCD -eq 0 ]] || MISSING+=(etcd)
build_log "building ${MISSING[*]} (Kubernetes $KUBE_VERSION, etcd $ETCD_VERSION; cold builds take 15-30 min on 2 cores)"

V=""
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  V="$V -X '$pkg.gitVersion=$KUBE_VERSION' -X '$pkg.gitMajor=1' -X '$pkg.gitMinor=$KUBE_MINOR'"
  V="$V -X '$pkg.gitTreeState=clean' -X '$pkg.buildDate=1970-01-01T00:00:00Z'"
done

build_step 1/3 go mod download
go mod download
if [[ ${#MISSING_KUBE[@]} -gt 0 ]]; then
  build_step 2/3 "${MISSING_KUBE[*]}"
  go build -p "$JOBS" -trimpath -tags selinux,notest,grpcnotrace -ldflags "-s -w $V" -o "$TMP_OUT/" \
    "${MISSING_KUBE[@]/#/k8s.io/kubernetes/cmd/}"
  "$TMP_OUT/${MISSING_KUBE[0]}" --version >&2
fi
if [[ $NEED_ETCD -eq 1 ]]; then
  build_step 3/3 etcd
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
build_finish "$OUT"
