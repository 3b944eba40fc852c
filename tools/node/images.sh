#!/usr/bin/env bash
# Builds the container images the real node runs, as image archives that `ctr images import`
# loads, without Docker and without a registry (the kubelet never pulls):
#
#   pause.tar  registry.k8s.io/pause:3.10.2   pause compiled from build/pause/linux/pause.c of the
#                                             k8s.io/kubernetes module, as upstream's image is
#   web.tar    metactl.local/web:1            Debian's static busybox; its httpd serves a page
#                                             naming the Pod (its hostname) on port 8080
#   web-2.tar  metactl.local/web:2            the same, its page saying "(web:2)": a second
#                                             version to change a Pod's image to
#
# The web server's shell traps SIGTERM, so a Pod stops at once (PID 1 has no default action for
# it: a bare httpd would wait out the grace period). The set changed once (web:2, the trap), so
# its directory name ends in web-2; the older directory stays valid for older checkouts.
#
# Needs tools/node/build.sh first (for oci-image). Idempotent: reuses archives already built.
#
#   tools/node/images.sh            build or reuse; prints the image dir last
set -euo pipefail
cd "$(dirname "$0")"

PAUSE_VERSION=3.10.2
WEB_TAG=metactl.local/web:1
CACHE_ROOT=${XDG_CACHE_HOME:-$HOME/.cache}/metacontroller-ts/controlplane
OUT=${NODE_IMAGES:-$CACHE_ROOT/images-pause-$PAUSE_VERSION-web-2}
log() { echo "images: $*" >&2; }

if [[ -f "$OUT/pause.tar" && -f "$OUT/web.tar" && -f "$OUT/web-2.tar" ]]; then
  log "reusing image archives in $OUT"
  echo "$OUT"
  exit 0
fi

BIN=$(./build.sh)
TMP="$OUT.partial.$$"
mkdir -p "$TMP"
trap 'rm -rf "$TMP"' EXIT
start=$(date +%s)

# The pause image upstream publishes is this file compiled statically (build/pause/Makefile).
KUBE_DIR=$(cd ../controlplane && GOFLAGS=-mod=mod go list -m -f '{{.Dir}}' k8s.io/kubernetes)
log "[1/3] pause $PAUSE_VERSION from $KUBE_DIR/build/pause/linux/pause.c"
gcc -Os -Wall -Werror -static -DVERSION="v$PAUSE_VERSION-metactl" -o "$TMP/pause" \
  "$KUBE_DIR/build/pause/linux/pause.c"
"$BIN/oci-image" -tag "registry.k8s.io/pause:$PAUSE_VERSION" -o "$TMP/pause.tar" \
  -file "$TMP/pause=/pause" -user 65535:65535 -entrypoint /pause

log "[2/3] web server image $WEB_TAG (busybox httpd from Debian's busybox-static)"
if ! grep -q 'ok installed' <<<"$(dpkg-query -W -f '${Status}' busybox-static 2>/dev/null)"; then
  if [[ $(id -u) -ne 0 ]] || ! { apt-get update -qq && apt-get install -y -qq busybox-static; } >"$TMP/apt.log" 2>&1; then
    log "cannot install Debian's busybox-static (needs root and apt-get); install it and retry"
    cat "$TMP/apt.log" >&2 2>/dev/null || true
    exit 1
  fi
fi
# The page names the Pod: a Pod's hostname is its name.
B=/bin/busybox
web_image() {
  local tag=$1 out=$2 suffix=$3
  "$BIN/oci-image" -tag "$tag" -o "$out" -file "$B=$B" -dir /www -dir /tmp \
    -entrypoint "$B" -entrypoint sh -entrypoint -c \
    -entrypoint "echo \"<h1>Hello from \$($B hostname)$suffix</h1>\" > /www/index.html; trap 'exit 0' TERM; $B httpd -f -v -p 8080 -h /www & wait"
}
web_image "$WEB_TAG" "$TMP/web.tar" ""
log "[3/3] web server image metactl.local/web:2"
web_image metactl.local/web:2 "$TMP/web-2.tar" " (web:2)"

mkdir -p "$OUT"
mv "$TMP/pause.tar" "$TMP/web.tar" "$TMP/web-2.tar" "$OUT/"
log "built in $(($(date +%s) - start)) s into $OUT"
echo "$OUT"
