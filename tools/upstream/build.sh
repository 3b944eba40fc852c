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

UPSTREAM_VERSION=v4.17.2
UPSTREAM_REPO=https://github.com/metacontroller/metacontroller
CACHE_ROOT=${XDG_CACHE_HOME:-$HOME/.cache}/metacontroller-ts
OUT=$CACHE_ROOT/upstream-metacontroller-$UPSTREAM_VERSION/metacontroller

if [[ -x "$OUT" ]]; then
  echo "upstream: reusing cached binary $OUT" >&2
  echo "$OUT"
  exit 0
fi

if ! command -v go >/dev/null 2>&1; then
  echo "upstream: 'go' (>= 1.26) is required to build Metacontroller; install Go and retry" >&2
  exit 1
fi

export CGO_ENABLED=0 GOTOOLCHAIN=${GOTOOLCHAIN:-local} GOFLAGS=${GOFLAGS:--buildvcs=false}
mkdir -p "$(dirname "$OUT")"
TMP_OUT="$OUT.partial.$$"
WORK=$(mktemp -d)
trap 'rm -rf "$TMP_OUT" "$WORK"' EXIT

start=$(date +%s)
SRC=${UPSTREAM_SRC:-}
if [[ -z "$SRC" ]]; then
  echo "upstream: [1/2] git clone $UPSTREAM_REPO at $UPSTREAM_VERSION" >&2
  git clone --quiet --depth 1 --branch "$UPSTREAM_VERSION" "$UPSTREAM_REPO" "$WORK/src"
  SRC=$WORK/src
fi
echo "upstream: [2/2] go build ./pkg/cmd/metacontroller (a cold build takes several minutes on 2 cores)" >&2
(cd "$SRC" && go build -trimpath -ldflags '-s -w' -o "$TMP_OUT" ./pkg/cmd/metacontroller)

mv "$TMP_OUT" "$OUT"
trap 'rm -rf "$WORK"' EXIT
echo "upstream: built in $(( $(date +%s) - start )) s into $OUT" >&2
echo "$OUT"
