#!/usr/bin/env bash
# Builds a Dockerfile, as `docker build` would, without Docker: buildah (tools/images/buildah.sh)
# with `--isolation chroot` (no daemon, no user namespaces, no systemd), its FROM images taken from
# the local store only (tools/images/base-images.sh assembles them; nothing is pulled), each
# instruction's layer cached for the next build. Writes the image as a docker-archive tarball,
# which the real node's containerd imports (`metactl cluster load`, `cluster up --image`).
#
#   tools/images/build.sh -t NAME:TAG -o OUT.tar [-f Dockerfile] [--build-arg K=V]… CONTEXT
#
# The last line printed is the archive's path. RUN steps reach the network as the host does:
# `npm ci` in a RUN step uses the host's npm registry and CA bundle (`npm config get registry`,
# `cafile`, or $NODE_EXTRA_CA_CERTS), mounted for the RUN steps only as the image's global npmrc;
# nothing of it is written into the image.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
log() { echo "images: $*" >&2; }
usage() {
  echo "usage: tools/images/build.sh -t NAME:TAG -o OUT.tar [-f Dockerfile] [--build-arg K=V]… CONTEXT" >&2
  exit 2
}

TAG='' OUT='' FILE='' CONTEXT=''
ARGS=()
while [[ $# -gt 0 ]]; do
  case $1 in
    -t) TAG=${2:-}; shift 2 || usage ;;
    -o) OUT=${2:-}; shift 2 || usage ;;
    -f) FILE=${2:-}; shift 2 || usage ;;
    --build-arg) ARGS+=(--build-arg "${2:-}"); shift 2 || usage ;;
    -*) usage ;;
    *) [[ -z "$CONTEXT" ]] || usage; CONTEXT=$1; shift ;;
  esac
done
[[ -n "$TAG" && -n "$OUT" && -n "$CONTEXT" ]] || usage
[[ -d "$CONTEXT" ]] || { log "build context $CONTEXT is not a directory"; exit 2; }
FILE=${FILE:-$CONTEXT/Dockerfile}
[[ -f "$FILE" ]] || { log "no Dockerfile at $FILE"; exit 2; }

# Docker's meaning of a short name (`hook:dev` is docker.io/library/hook:dev), where buildah would
# file it under localhost/: the name a Pod spec gives then finds the image.
first=${TAG%%/*}
if [[ $TAG != */* ]]; then
  TAG=docker.io/library/$TAG
elif [[ $first != *.* && $first != *:* && $first != localhost ]]; then
  TAG=docker.io/$TAG
fi

start=$(date +%s)
"$HERE/base-images.sh" >/dev/null
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# The host's npm registry and CA bundle for RUN steps (a TLS-inspecting proxy needs its CA), as
# the image's global npm configuration: a directory mounted over /usr/local/etc, which the base
# images have, so the built image keeps no trace of it.
MOUNTS=()
if command -v npm >/dev/null 2>&1; then
  mkdir -p "$TMP/etc"
  CA=$(npm config get cafile 2>/dev/null || true)
  [[ -f "$CA" ]] || CA=${NODE_EXTRA_CA_CERTS:-}
  echo "registry=$(npm config get registry)" >"$TMP/etc/npmrc"
  if [[ -f "$CA" ]]; then
    cp "$CA" "$TMP/etc/host-ca.crt"
    echo "cafile=/usr/local/etc/host-ca.crt" >>"$TMP/etc/npmrc"
  fi
  chmod -R a+rX "$TMP/etc"
  MOUNTS+=(-v "$TMP/etc:/usr/local/etc:ro")
fi
# Reproducible builds (docs/deploy.md, "Supply chain"): with SOURCE_DATE_EPOCH set (e.g. the
# commit's time, `git log -1 --format=%ct`), the image's dates and every file in its layers carry
# that time instead of the clock's, so one commit builds one digest. IMAGES_NO_CACHE=1 rebuilds
# every layer instead of reusing cached ones (the reproducibility test builds twice so).
REPRO=()
FORMAT=docker
if [[ -n "${SOURCE_DATE_EPOCH:-}" ]]; then
  # The docker format's config records each build container's random hostname and ID (and so
  # chains random parent IDs through the history); the OCI format records neither.
  REPRO+=(--timestamp "$SOURCE_DATE_EPOCH")
  FORMAT=oci
fi
[[ "${IMAGES_NO_CACHE:-}" != 1 ]] || REPRO+=(--no-cache)
log "building $FILE as $TAG (buildah bud, chroot isolation, cached layers) ${REPRO[*]}"
"$HERE/buildah.sh" bud --isolation chroot --pull-never --layers --force-rm --format "$FORMAT" \
  "${REPRO[@]}" "${MOUNTS[@]}" "${ARGS[@]}" -f "$FILE" -t "$TAG" "$CONTEXT" >&2
built=$(date +%s)
mkdir -p "$(dirname "$OUT")"
rm -f "$OUT.partial"
# Named inside the archive by the tag, as `docker save` does; containerd imports it under the
# name a Pod spec uses (a short name means docker.io/library/…, as for Docker).
"$HERE/buildah.sh" push --quiet "$TAG" "docker-archive:$OUT.partial:$TAG" >&2
mv "$OUT.partial" "$OUT"
log "built $TAG in $((built - start)) s, archive $(du -h "$OUT" | cut -f1) in $(($(date +%s) - built)) s: $OUT"
echo "$OUT"
