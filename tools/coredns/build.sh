#!/usr/bin/env bash
# Builds CoreDNS (`coredns`, the real node's cluster DNS: docs/control-plane.md) from the Go module
# pinned in go.mod/go.sum, linked with only the plugins main.go names, and its container image
# (an archive `ctr images import` loads), into a cache directory outside the repository.
# Idempotent: when the binary and the image are cached, it does nothing.
#
#   coredns/coredns     the binary
#   coredns/coredns.tar metactl.local/coredns:VERSION, the binary alone, user 65532:65532
#
# The cache key is the version and a hash of main.go, go.mod and go.sum, so a changed plugin set
# or dependency builds into a new directory (src/cluster/real-node/cluster-dns-image.ts computes
# the same key to find it).
#
#   tools/coredns/build.sh                   build or reuse; prints the directory last
#   COREDNS_DIR=/path tools/coredns/build.sh use another output directory
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../lib/build-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/build-lib.sh"
cd "$(dirname "$0")"
build_init coredns

COREDNS_VERSION=v1.15.0
TAG=metactl.local/coredns:$COREDNS_VERSION
KEY=$(cat main.go go.mod go.sum | sha256sum | cut -c1-12)
CACHE_ROOT=$(build_cache_root controlplane)
OUT=${COREDNS_DIR:-$CACHE_ROOT/coredns-$COREDNS_VERSION-$KEY}

if [[ -x "$OUT/coredns" && -f "$OUT/coredns.tar" ]]; then
  build_reuse "$OUT" "reusing cached binary and image in $OUT"
fi
build_require_go coredns
build_go_env
JOBS=$(build_jobs "${CONTROLPLANE_BUILD_JOBS:-}")
build_partial "$OUT" dir
TMP=$BUILD_PARTIAL

build_start
build_log "building coredns $COREDNS_VERSION (a cold build takes a few minutes on 2 cores)"

# Upstream's Makefile stamps the commit the same way; a module build has no git checkout.
V="-X github.com/coredns/coredns/coremain.GitCommit=$COREDNS_VERSION"

build_step 1/3 go mod download
go mod download
build_step 2/3 "go build (plugins: $(grep -o 'plugin/[a-z0-9_]*' main.go | cut -d/ -f2 | tr '\n' ' '))"
go build -p "$JOBS" -trimpath -ldflags "-s -w $V" -o "$TMP/coredns" .
"$TMP/coredns" -version >&2

# oci-image comes with the node's binaries (tools/node/build.sh), as for the node's other images.
build_step 3/3 "image $TAG"
OCI=${OCI_IMAGE:-$(../node/build.sh)/oci-image}
"$OCI" -tag "$TAG" -o "$TMP/coredns.tar" -file "$TMP/coredns=/coredns" \
  -user 65532:65532 -entrypoint /coredns

mkdir -p "$OUT"
mv "$TMP/coredns" "$TMP/coredns.tar" "$OUT/"
build_finish "$OUT"
