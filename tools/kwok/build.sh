#!/usr/bin/env bash
# Builds the KWOK controller (`kwok`, simulated nodes and Pod lifecycle) from the Go module pinned
# in go.mod/go.sum, into a per-version cache outside the repository. The local control plane starts
# it when it has nodes (startControlPlane({ nodes }), `metactl cluster up --nodes N`).
# Idempotent: when the binary is cached, it does nothing.
#
#   tools/kwok/build.sh             build or reuse; prints the binary's path last
#   KWOK_BIN=/path/kwok build.sh    use another output path
set -euo pipefail
cd "$(dirname "$0")"

KWOK_VERSION=v0.8.0
CACHE_ROOT=${XDG_CACHE_HOME:-$HOME/.cache}/metacontroller-ts/controlplane
OUT=${KWOK_BIN:-$CACHE_ROOT/kwok-$KWOK_VERSION/kwok}

if [[ -x "$OUT" ]]; then
  echo "kwok: reusing cached binary $OUT" >&2
  echo "$OUT"
  exit 0
fi

if ! command -v go >/dev/null 2>&1; then
  echo "kwok: 'go' (>= 1.26) is required to build kwok; install Go and retry" >&2
  exit 1
fi

export CGO_ENABLED=0 GOTOOLCHAIN=${GOTOOLCHAIN:-local} GOFLAGS=${GOFLAGS:--buildvcs=false}
JOBS=${CONTROLPLANE_BUILD_JOBS:-$(nproc 2>/dev/null || echo 2)}
mkdir -p "$(dirname "$OUT")"
TMP_OUT="$OUT.partial.$$"
trap 'rm -f "$TMP_OUT"' EXIT

start=$(date +%s)
echo "kwok: building kwok $KWOK_VERSION (a cold build takes several minutes on 2 cores)" >&2

# Upstream's release builds stamp the version the same way (hack/releases.sh); without it the
# binary reports a development version.
V="-X sigs.k8s.io/kwok/pkg/consts.Version=${KWOK_VERSION#v}"

echo "kwok: [1/2] go mod download" >&2
go mod download
echo "kwok: [2/2] go build sigs.k8s.io/kwok/cmd/kwok" >&2
go build -p "$JOBS" -trimpath -ldflags "-s -w $V" -o "$TMP_OUT" sigs.k8s.io/kwok/cmd/kwok

"$TMP_OUT" --version >&2 || true

mv "$TMP_OUT" "$OUT"
trap - EXIT
echo "kwok: built in $(( $(date +%s) - start )) s into $OUT" >&2
echo "$OUT"
