#!/usr/bin/env bash
# Builds jsonnetd (main.go here: upstream's Jsonnet webhook server protocol, on google/go-jsonnet)
# into a per-version cache outside the repository. The e2e tier runs upstream's service-per-pod
# hooks through it. Idempotent: does nothing when the binary is cached.
#
#   tools/jsonnetd/build.sh              build or reuse; prints the binary's path last
#   JSONNETD_BIN=/path/jsonnetd build.sh  use another output path
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../lib/build-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/build-lib.sh"
cd "$(dirname "$0")"
build_init jsonnetd

GO_JSONNET_VERSION=v0.22.0
CACHE_ROOT=$(build_cache_root controlplane)
OUT=${JSONNETD_BIN:-$CACHE_ROOT/jsonnetd-1-go-jsonnet-$GO_JSONNET_VERSION/jsonnetd}

build_reuse_if_executable "$OUT" "reusing $OUT"
build_require_go jsonnetd
# Static (CGO_ENABLED=0), so the same binary also runs in an image with nothing else in it.
build_go_env
build_start
build_log "building jsonnetd (go-jsonnet $GO_JSONNET_VERSION)"
build_partial "$OUT"
go build -trimpath -ldflags "-s -w" -o "$BUILD_PARTIAL" .
mv "$BUILD_PARTIAL" "$OUT"
build_finish "$OUT"
