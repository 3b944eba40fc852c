#!/usr/bin/env bash
# Builds the images the real node's walkthrough installs (`make demo-real`), as image archives
# `ctr images import` loads, without Docker and without a registry, with tools/node/oci-image:
#
#   engine.tar           ghcr.io/metacontroller-ts/metacontroller-ts:VERSION   the engine, as the
#                        Dockerfile's runtime stage lays it out: /app/{package.json, dist, bin,
#                        deploy/crds, node_modules (production only)}, /usr/bin/metacontroller,
#                        ENTRYPOINT node bin/metactl.js, CMD run, user 1000:1000
#   podservice-hook.tar  podservice-hook:dev   examples/podservice/Dockerfile's runtime stage:
#                        /app/{examples/podservice/*.js, node_modules/metacontroller-ts}, CMD node
#                        examples/podservice/server.js, HOST=0.0.0.0 PORT=8080, user 1000:1000
#   traefik-VERSION.tar  metactl.local/traefik:VERSION   tools/traefik's static binary
#
# Both Node.js images carry this machine's `node` binary (no Node.js base image can be pulled
# here) and the shared libraries `ldd` lists for it and for /usr/bin/env (bin/metacontroller.js's
# shebang), at the same paths. The engine and hook images are built from the working tree (src/
# compiled into the image's own directory), so they always match the checkout: they go to
# .tmp/images/ in the repository, rebuilt when missing or older than a source file; the Traefik
# archive is cached per version.
#
#   tools/node/app-images.sh           build or reuse; prints the image dir last
#   tools/node/app-images.sh traefik   only the Traefik archive (the integration tests' ingress)
#
# ENGINE_SOURCE=<dir> builds the engine from another checkout's src/, bin/, package.json and
# deploy/crds (with this checkout's production node_modules, which must be the same packages;
# <dir> needs a node_modules link for the compiler), tagged ENGINE_TAG: the upgrade tests' previous
# release (test/support/upgrade-previous-release.ts). Give it its own APP_IMAGES.
set -euo pipefail
cd "$(dirname "$0")"
REPO=$(cd ../.. && pwd)
OUT=${APP_IMAGES:-$REPO/.tmp/images}
VERSION=$(node -p "require('$REPO/package.json').version")
ENGINE_TAG=${ENGINE_TAG:-ghcr.io/metacontroller-ts/metacontroller-ts:$VERSION}
SRC=${ENGINE_SOURCE:-$REPO}
HOOK_TAG=podservice-hook:dev
log() { echo "app-images: $*" >&2; }
start=$(date +%s)

# oci-image with -tree (newer than the one an older node cache holds): built from tools/node.
OCI=${OCI_IMAGE:-$REPO/.tmp/bin/oci-image}
if [[ ! -x "$OCI" || oci-image/main.go -nt "$OCI" ]]; then
  log "[1/4] oci-image (go-containerregistry)"
  mkdir -p "$(dirname "$OCI")"
  GOTOOLCHAIN=${GOTOOLCHAIN:-local} GOFLAGS=-buildvcs=false CGO_ENABLED=0 \
    go build -trimpath -ldflags "-s -w" -o "$OCI" ./oci-image
else
  log "[1/4] oci-image: reusing $OCI"
fi
mkdir -p "$OUT"
TMP=$(mktemp -d "$OUT/.partial.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

# The node binary and every library it and env load, each at its own path.
NODE=$(readlink -f "$(command -v node)")
runtime_files() {
  echo "-file=$NODE=/usr/local/bin/node"
  echo "-file=/usr/bin/env=/usr/bin/env"
  { ldd "$NODE"; ldd /usr/bin/env; } | grep -o '/[^ ]*' | sort -u | while read -r lib; do
    echo "-file=$lib=$lib"
  done
}
mapfile -t RUNTIME < <(runtime_files)
RUNTIME_ENV=(-env PATH=/usr/local/bin:/usr/bin:/bin -env NODE_ENV=production)

newest_source() {
  find "$SRC/src" "$SRC/bin" "$REPO/examples/podservice" "$SRC/package-lock.json" "$SRC/deploy/crds" \
    -newer "$1" -print -quit 2>/dev/null
}

if [[ ${1:-} == traefik ]]; then
  log "[2/4] engine and hook images: not asked for"
elif [[ -f "$OUT/engine.tar" && -f "$OUT/podservice-hook.tar" && -z "$(newest_source "$OUT/engine.tar")" ]]; then
  log "[2/4] engine and hook images: reusing $OUT (no source newer)"
else
  log "[2/4] engine image $ENGINE_TAG (src/ compiled, production node_modules, node $(node --version))"
  # Compiled into the image's own directory: the checkout's dist/ is left alone (tests may use it).
  APP=$TMP/engine-app
  (cd "$REPO" && npx tsc -p "$SRC/tsconfig.build.json" --outDir "$APP/dist")
  mkdir -p "$APP/deploy"
  cp "$SRC/package.json" "$SRC/package-lock.json" "$APP/"
  cp -r "$SRC/bin" "$APP/"
  cp -r "$SRC/deploy/crds" "$APP/deploy/"
  # The production dependency tree (npm ci --omit=dev would download it; the checkout has it).
  (cd "$REPO" && npm ls --omit=dev --parseable --all 2>/dev/null) | tail -n +2 | while read -r dep; do
    rel=${dep#"$REPO"/}
    mkdir -p "$APP/$(dirname "$rel")"
    cp -r "$dep" "$APP/$rel"
  done
  "$OCI" -tag "$ENGINE_TAG" -o "$TMP/engine.tar" "${RUNTIME[@]}" -tree "$APP=/app" -dir /tmp \
    -symlink /usr/bin/metacontroller=/app/bin/metacontroller.js -workdir /app -user 1000:1000 \
    "${RUNTIME_ENV[@]}" -entrypoint node -entrypoint bin/metactl.js -cmd run

  log "[3/4] PodService hook image $HOOK_TAG"
  HOOK=$TMP/hook-app
  # Emitted without a type check (npm run typecheck checks the example against src/), so the
  # package need not be built in the checkout; its runtime is the dist/ compiled just above.
  (cd "$REPO" && npx tsc -p examples/podservice/tsconfig.image.json --outDir "$HOOK" --noCheck)
  echo '{ "type": "module" }' >"$HOOK/package.json"
  mkdir -p "$HOOK/node_modules/metacontroller-ts"
  cp -r "$REPO/package.json" "$APP/dist" "$HOOK/node_modules/metacontroller-ts/"
  "$OCI" -tag "$HOOK_TAG" -o "$TMP/podservice-hook.tar" "${RUNTIME[@]}" -tree "$HOOK=/app" \
    -workdir /app -user 1000:1000 "${RUNTIME_ENV[@]}" -env HOST=0.0.0.0 -env PORT=8080 \
    -cmd node -cmd examples/podservice/server.js
  mv "$TMP/engine.tar" "$TMP/podservice-hook.tar" "$OUT/"
fi

log "[4/4] ingress image (Traefik)"
TRAEFIK=$(../traefik/build.sh)
TRAEFIK_VERSION=$(basename "$(dirname "$TRAEFIK")")
TRAEFIK_VERSION=${TRAEFIK_VERSION#traefik-}
if [[ ! -f "$OUT/traefik-$TRAEFIK_VERSION.tar" ]]; then
  "$OCI" -tag "metactl.local/traefik:$TRAEFIK_VERSION" -o "$TMP/traefik.tar" \
    -file "$TRAEFIK=/usr/local/bin/traefik" -dir /tmp -user 65532:65532 \
    -entrypoint /usr/local/bin/traefik
  mv "$TMP/traefik.tar" "$OUT/traefik-$TRAEFIK_VERSION.tar"
fi
log "done in $(($(date +%s) - start)) s: $OUT"
echo "$OUT"
