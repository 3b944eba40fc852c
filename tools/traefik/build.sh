#!/usr/bin/env bash
# Builds the Traefik ingress controller (`traefik`, the real node's ingress: docs/control-plane.md)
# from the Go module pinned in go.mod/go.sum, into a per-version cache outside the repository.
# Idempotent: when the binary is cached, it does nothing.
#
#   tools/traefik/build.sh                build or reuse; prints the binary's path last
#   TRAEFIK_BIN=/path/traefik build.sh    use another output path
set -euo pipefail
cd "$(dirname "$0")"

TRAEFIK_VERSION=v3.6.12
CACHE_ROOT=${XDG_CACHE_HOME:-$HOME/.cache}/metacontroller-ts/controlplane
OUT=${TRAEFIK_BIN:-$CACHE_ROOT/traefik-$TRAEFIK_VERSION/traefik}

if [[ -x "$OUT" ]]; then
  echo "traefik: reusing cached binary $OUT" >&2
  echo "$OUT"
  exit 0
fi

if ! command -v go >/dev/null 2>&1; then
  echo "traefik: 'go' (>= 1.26) is required to build traefik; install Go and retry" >&2
  exit 1
fi

export CGO_ENABLED=0 GOTOOLCHAIN=${GOTOOLCHAIN:-local} GOFLAGS=${GOFLAGS:--buildvcs=false}
JOBS=${CONTROLPLANE_BUILD_JOBS:-$(nproc 2>/dev/null || echo 2)}
mkdir -p "$(dirname "$OUT")"
TMP_OUT="$OUT.partial.$$"
trap 'rm -f "$TMP_OUT"' EXIT

start=$(date +%s)
echo "traefik: building traefik $TRAEFIK_VERSION (a cold build takes several minutes on 2 cores)" >&2

# Upstream's release builds stamp the version the same way (its Makefile's LDFLAGS).
V="-X github.com/traefik/traefik/v3/pkg/version.Version=$TRAEFIK_VERSION"

echo "traefik: [1/2] go mod download" >&2
go mod download
echo "traefik: [2/2] go build github.com/traefik/traefik/v3/cmd/traefik" >&2
go build -p "$JOBS" -trimpath -ldflags "-s -w $V" -o "$TMP_OUT" github.com/traefik/traefik/v3/cmd/traefik

"$TMP_OUT" version >&2 || true

mv "$TMP_OUT" "$OUT"
trap - EXIT
echo "traefik: built in $(( $(date +%s) - start )) s into $OUT" >&2
echo "$OUT"
