#!/usr/bin/env bash
# Builds image-mirror (main.go here: image archives served read-only over the registry API, on
# go-containerregistry) into a per-version cache outside the repository. A real node started
# with extra image archives runs it inside its network namespace, so that Pods whose images are
# pulled `Always` (no tag, or `latest`) get the imported image. Idempotent.
#
#   tools/image-mirror/build.sh                    build or reuse; prints the binary's path last
#   IMAGE_MIRROR_BIN=/path/image-mirror build.sh   use another output path
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../lib/build-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/build-lib.sh"
cd "$(dirname "$0")"
build_init image-mirror

GGCR_VERSION=v0.22.1
CACHE_ROOT=$(build_cache_root controlplane)
OUT=${IMAGE_MIRROR_BIN:-$CACHE_ROOT/image-mirror-1-ggcr-$GGCR_VERSION/image-mirror}

build_reuse_if_executable "$OUT" "reusing $OUT"
build_require_go image-mirror
build_go_env
build_start
build_log "building image-mirror (go-containerregistry $GGCR_VERSION)"
build_partial "$OUT"
go build -trimpath -ldflags "-s -w" -o "$BUILD_PARTIAL" .
mv "$BUILD_PARTIAL" "$OUT"
build_finish "$OUT"
