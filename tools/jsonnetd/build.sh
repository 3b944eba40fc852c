#!/usr/bin/env bash
# Builds jsonnetd (main.go here: upstream's Jsonnet webhook server protocol, on google/go-jsonnet)
# into a per-version cache outside the repository. The e2e tier runs upstream's service-per-pod
# hooks through it. Idempotent: does nothing when the binary is cached.
#
#   tools/jsonnetd/build.sh              build or reuse; prints the binary's path last
#   JSONNETD_BIN=/path/jsonnetd build.sh  use another output path
set -euo pipefail
cd "$(dirname "$0")"

GO_JSONNET_VERSION=v0.22.0
CACHE_ROOT=${XDG_CACHE_HOME:-$HOME/.cache}/metacontroller-ts/controlplane
OUT=${JSONNETD_BIN:-$CACHE_ROOT/jsonnetd-1-go-jsonnet-$GO_JSONNET_VERSION/jsonnetd}
log() { echo "jsonnetd: $*" >&2; }

if [[ -x "$OUT" ]]; then
  log "reusing $OUT"
  echo "$OUT"
  exit 0
fi
if ! command -v go >/dev/null 2>&1; then
  log "'go' (>= 1.26) is required to build jsonnetd; install Go and retry"
  exit 1
fi
export GOTOOLCHAIN=${GOTOOLCHAIN:-local} GOFLAGS=${GOFLAGS:--buildvcs=false}
start=$(date +%s)
log "building jsonnetd (go-jsonnet $GO_JSONNET_VERSION)"
mkdir -p "$(dirname "$OUT")"
# Static, so the same binary also runs in an image with nothing else in it.
CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$OUT.partial.$$" .
mv "$OUT.partial.$$" "$OUT"
log "built in $(($(date +%s) - start)) s into $OUT"
echo "$OUT"
