#!/usr/bin/env bash
# Builds upstream Metacontroller from its source at a release tag, for the side-by-side benchmark
# (bench/upstream-side-by-side.ts), into a per-version cache outside the repository. Upstream's
# module is named `metacontroller` (not its repository path), so it cannot be required from
# another module as kwok is: the tag's tree is cloned and built in place, its dependencies from
# its own go.sum. Idempotent: when the binary is cached, it does nothing.
#
#   tools/upstream/build.sh                        build or reuse; prints the binary's path last
#   UPSTREAM_SRC=/path/to/checkout build.sh         build from a checkout of the tag instead
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../lib/build-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/build-lib.sh"
build_init upstream

UPSTREAM_VERSION=v4.17.2
UPSTREAM_REPO=https://github.com/metacontroller/metacontroller
CACHE_ROOT=$(build_cache_root "")
OUT=$CACHE_ROOT/upstream-metacontroller-$UPSTREAM_VERSION/metacontroller

build_reuse_if_executable "$OUT" "reusing cached binary $OUT"
build_require_go Metacontroller
build_go_env
build_partial "$OUT"
TMP_OUT=$BUILD_PARTIAL
WORK=$(mktemp -d)
build_cleanup_on_exit "$WORK"

build_start
SRC=${UPSTREAM_SRC:-}
if [[ -z "$SRC" ]]; then
  build_step 1/2 "git clone $UPSTREAM_REPO at $UPSTREAM_VERSION"
  git clone --quiet --depth 1 --branch "$UPSTREAM_VERSION" "$UPSTREAM_REPO" "$WORK/src"
  SRC=$WORK/src
fi
build_step 2/2 "go build ./pkg/cmd/metacontroller (a cold build takes several minutes on 2 cores)"
(cd "$SRC" && go build -trimpath -ldflags '-s -w' -o "$TMP_OUT" ./pkg/cmd/metacontroller)

mv "$TMP_OUT" "$OUT"
build_finish "$OUT"
