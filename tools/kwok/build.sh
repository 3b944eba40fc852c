#!/usr/bin/env bash
# Builds the KWOK controller (`kwok`, simulated nodes and Pod lifecycle) from the Go module pinned
# in go.mod/go.sum, into a per-version cache outside the repository. The local control plane starts
# it when it has nodes (startControlPlane({ nodes }), `metactl cluster up --nodes N`).
# Idempotent: when the binary is cached, it does nothing.
#
#   tools/kwok/build.sh             build or reuse; prints the binary's path last
#   KWOK_BIN=/path/kwok build.sh    use another output path
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../lib/build-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/build-lib.sh"
cd "$(dirname "$0")"
build_init kwok

KWOK_VERSION=v0.8.0
CACHE_ROOT=$(build_cache_root controlplane)
OUT=${KWOK_BIN:-$CACHE_ROOT/kwok-$KWOK_VERSION/kwok}

build_reuse_if_executable "$OUT" "reusing cached binary $OUT"
build_require_go kwok
build_go_env
JOBS=$(build_jobs "${CONTROLPLANE_BUILD_JOBS:-}")
build_partial "$OUT"
TMP_OUT=$BUILD_PARTIAL

build_start
build_log "building kwok $KWOK_VERSION (a cold build takes several minutes on 2 cores)"

# Upstream's release builds stamp the version the same way (hack/releases.sh); without it the
# binary reports a development version.
V="-X sigs.k8s.io/kwok/pkg/consts.Version=${KWOK_VERSION#v}"

build_step 1/2 go mod download
go mod download
build_step 2/2 go build sigs.k8s.io/kwok/cmd/kwok
go build -p "$JOBS" -trimpath -ldflags "-s -w $V" -o "$TMP_OUT" sigs.k8s.io/kwok/cmd/kwok

"$TMP_OUT" --version >&2 || true

mv "$TMP_OUT" "$OUT"
build_finish "$OUT"
