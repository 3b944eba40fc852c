#!/usr/bin/env bash
# Builds the hook images upstream's examples name, with the builder of tools/images/build.sh
# (buildah, no Docker, nothing pulled), as image archives the real node imports under exactly
# those names (its image mirror also serves them to the hooks' `imagePullPolicy: Always`):
#
#   nodejs-server.tar     metacontroller/nodejs-server:0.1  tools/images/nodejs-server/Dockerfile:
#                         upstream's server.js on node:24-bookworm-slim
#   jsonnetd.tar          metacontroller/jsonnetd:0.1       tools/images/jsonnetd/Dockerfile:
#                         tools/jsonnetd's binary on debian:bookworm-slim
#   python-3.11.tar       python:3.11                       the base images of
#   python-3.11-slim.tar  python:3.11-slim                  tools/images/base-images.sh, exported
#
# Cached by a key (the sha256 of this script, both Dockerfiles, server.js, the jsonnetd binary and
# the base images' key): when the key's archives exist it does nothing.
#
#   tools/images/example-hook-images.sh      build or reuse; prints the archives' directory last
set -euo pipefail
SELF=$(readlink -f "$0")
HERE=$(dirname "$SELF")
REPO=$(cd "$HERE/../.." && pwd)
SERVER_DIR=$REPO/test/fixtures/upstream-examples/nodejs
ARCHIVES=(nodejs-server.tar jsonnetd.tar python-3.11.tar python-3.11-slim.tar)
log() { echo "images: $*" >&2; }

BASE_RECORD=$("$HERE/base-images.sh")
JSONNETD=$("$REPO/tools/jsonnetd/build.sh")
KEY=$(cat "$SELF" "$HERE/nodejs-server/Dockerfile" "$HERE/jsonnetd/Dockerfile" \
  "$SERVER_DIR/server.js" "$JSONNETD" <(basename "$BASE_RECORD") | sha256sum | cut -c1-12)
OUT=${XDG_CACHE_HOME:-$HOME/.cache}/metacontroller-ts/images/example-hooks-$KEY

all=1
for a in "${ARCHIVES[@]}"; do [[ -f "$OUT/$a" ]] || all=0; done
if [[ $all -eq 1 ]]; then
  log "example hook images: reusing key $KEY in $OUT"
  echo "$OUT"
  exit 0
fi
start=$(date +%s)
TMP="$OUT.partial.$$"
mkdir -p "$TMP/jsonnetd"
trap 'rm -rf "$TMP"' EXIT

log "[1/4] metacontroller/nodejs-server:0.1 from upstream's server.js on node:24-bookworm-slim"
"$HERE/build.sh" -t metacontroller/nodejs-server:0.1 -o "$TMP/nodejs-server.tar" \
  -f "$HERE/nodejs-server/Dockerfile" "$SERVER_DIR" >/dev/null

log "[2/4] metacontroller/jsonnetd:0.1 from tools/jsonnetd on debian:bookworm-slim"
cp "$JSONNETD" "$TMP/jsonnetd/jsonnetd"
"$HERE/build.sh" -t metacontroller/jsonnetd:0.1 -o "$TMP/jsonnetd.tar" \
  -f "$HERE/jsonnetd/Dockerfile" "$TMP/jsonnetd" >/dev/null

# The base images as they are: named inside each archive as `docker save` names them.
step=3
for tag in 3.11 3.11-slim; do
  log "[$step/4] python:$tag, exported from the builder's store"
  "$HERE/buildah.sh" push --quiet "docker.io/library/python:$tag" \
    "docker-archive:$TMP/python-$tag.tar:docker.io/library/python:$tag" >&2
  step=$((step + 1))
done

mkdir -p "$OUT"
for a in "${ARCHIVES[@]}"; do mv "$TMP/$a" "$OUT/"; done
# Archives of older keys are stale (a changed Dockerfile or base image): 600 MB each.
for old in "${OUT%-*}"-*; do
  [[ "$old" == "$OUT" || "$old" == *.partial.* ]] || rm -rf "$old"
done
log "example hook images built in $(($(date +%s) - start)) s: $(du -sh "$OUT" | cut -f1) in $OUT"
echo "$OUT"
