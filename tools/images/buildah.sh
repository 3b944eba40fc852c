#!/usr/bin/env bash
# Runs buildah (Debian's package, 1.28) on this repository's image store, installing it when
# missing: the store lives outside the repository under
# ${XDG_CACHE_HOME:-~/.cache}/metacontroller-ts/images/store (overlay driver, or vfs where overlay
# cannot mount), so base images and build layers survive between runs. No daemon, no Docker, no
# systemd: builds run with `--isolation chroot` (tools/images/build.sh), which needs only root.
#
# Short image names (`FROM node:24-bookworm-slim`) resolve to docker.io/library/… as Docker does;
# nothing is pulled (builds use --pull=never), so a FROM resolves only to an image in the store,
# such as the base images of tools/images/base-images.sh.
#
#   tools/images/buildah.sh images          any buildah command on the store
#   IMAGES_STORE=/path buildah.sh …         another store
set -euo pipefail

CACHE_ROOT=${XDG_CACHE_HOME:-$HOME/.cache}/metacontroller-ts/images
STORE=${IMAGES_STORE:-$CACHE_ROOT/store}
log() { echo "images: $*" >&2; }

ensure_packages() {
  local want=()
  command -v buildah >/dev/null 2>&1 || want+=(buildah)
  command -v debootstrap >/dev/null 2>&1 || want+=(debootstrap)
  [[ ${#want[@]} -gt 0 ]] || return 0
  if [[ $(id -u) -ne 0 ]] || ! command -v apt-get >/dev/null 2>&1; then
    log "cannot install ${want[*]}: this needs root and apt-get (Debian/Ubuntu); install them and retry"
    exit 1
  fi
  log "installing Debian packages: ${want[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${want[@]}" >&2 ||
    { apt-get update >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${want[@]}" >&2; }
}

# overlay when the store's file system can hold it (ext4, xfs), else vfs (slower: a full copy per
# layer). Decided once per store and remembered.
storage_driver() {
  if [[ ! -f "$STORE/driver" ]]; then
    local probe driver=vfs
    probe=$(mktemp -d "$STORE/.probe.XXXXXX")
    mkdir -p "$probe"/{lower,upper,work,merged}
    if mount -t overlay overlay -o "lowerdir=$probe/lower,upperdir=$probe/upper,workdir=$probe/work" \
      "$probe/merged" 2>/dev/null; then
      umount "$probe/merged"
      driver=overlay
    fi
    rm -rf "$probe"
    echo "$driver" >"$STORE/driver"
  fi
  cat "$STORE/driver"
}

ensure_packages
mkdir -p "$STORE"
if [[ ! -f "$STORE/registries.conf" ]]; then
  # Docker's rule for short names, and no prompt: buildah runs without a terminal.
  printf '%s\n' 'unqualified-search-registries = ["docker.io"]' 'short-name-mode = "permissive"' \
    >"$STORE/registries.conf"
fi
export CONTAINERS_REGISTRIES_CONF=$STORE/registries.conf
exec buildah --root "$STORE/root" --runroot "$STORE/run" --storage-driver "$(storage_driver)" "$@"
