#!/usr/bin/env bash
# Builds image-mirror (main.go here: image archives served read-only over the registry API, on
# go-containerregistry) into a per-version cache outside the repository. A real node started
# with extra image archives runs it inside its network namespace, so that Pods whose images are
# pulled `Always` (no tag, or `latest`) get the imported image. Idempotent.
#
#   tools/image-mirror/build.sh                    build or reuse; prints the binary's path last
#   IMAGE_MIRROR_BIN=/path/image-mirror build.sh   use another output path
set -euo pipefail
cd "$(dirname "$0")"

GGCR_VERSION=v0.22.1
CACHE_ROOT=${XDG_CACHE_HOME:-$HOME/.cache}/metacontroller-ts/controlplane
OUT=${IMAGE_MIRROR_BIN:-$CACHE_ROOT/image-mirror-1-ggcr-$GGCR_VERSION/image-mirror}
log() { echo "image-mirror: $*" >&2; }

if [[ -x "$OUT" ]]; then
  log "reusing $OUT"
  echo "$OUT"
  exit 0
fi
if ! command -v go >/dev/null 2>&1; then
  log "'go' (>= 1.26) is required to build image-mirror; install Go and retry"
  exit 1
fi
export GOTOOLCHAIN=${GOTOOLCHAIN:-local} GOFLAGS=${GOFLAGS:--buildvcs=false}
start=$(date +%s)
log "building image-mirror (go-containerregistry $GGCR_VERSION)"
mkdir -p "$(dirname "$OUT")"
CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$OUT.partial.$$" .
mv "$OUT.partial.$$" "$OUT"
log "built in $(($(date +%s) - start)) s into $OUT"
echo "$OUT"
