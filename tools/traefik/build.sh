#!/usr/bin/env bash
# Builds the Traefik ingress controller (`traefik`, the real node's ingress: docs/control-plane.md)
# from the Go module pinned in go.mod/go.sum, into a per-version cache outside the repository.
# Idempotent: when the binary is cached, it does nothing.
#
#   tools/traefik/build.sh                build or reuse; prints the binary's path last
#   TRAEFIK_BIN=/path/traefik build.sh    use another output path
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../lib/build-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/build-lib.sh"
cd "$(dirname "$0")"
build_init traefik

TRAEFIK_VERSION=v3.6.12
CACHE_ROOT=$(build_cache_root controlplane)
OUT=${TRAEFIK_BIN:-$CACHE_ROOT/traefik-$TRAEFIK_VERSION/traefik}

build_reuse_if_executable "$OUT" "reusing cached binary $OUT"
build_require_go traefik
build_go_env
JOBS=$(build_jobs "${CONTROLPLANE_BUILD_JOBS:-}")
build_partial "$OUT"
TMP_OUT=$BUILD_PARTIAL

build_start
build_log "building traefik $TRAEFIK_VERSION (a cold build takes several minutes on 2 cores)"

# Upstream's release builds stamp the version the same way (its Makefile's LDFLAGS).
V="-X github.com/traefik/traefik/v3/pkg/version.Version=$TRAEFIK_VERSION"

build_step 1/2 go mod download
go mod download
build_step 2/2 go build github.com/traefik/traefik/v3/cmd/traefik
go build -p "$JOBS" -trimpath -ldflags "-s -w $V" -o "$TMP_OUT" github.com/traefik/traefik/v3/cmd/traefik

"$TMP_OUT" version >&2 || true

mv "$TMP_OUT" "$OUT"
build_finish "$OUT"
