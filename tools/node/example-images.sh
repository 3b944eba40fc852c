#!/usr/bin/env bash
# Builds the images upstream Metacontroller's examples name, as image archives the real node
# imports (no Docker, no registry), for the e2e tests that run those examples unchanged:
#
#   nginx.tar    docker.io/library/nginx:1.26.2  Debian's nginx (the package's binary and
#                                                mime.types, its shared libraries from this
#                                                machine), serving /usr/share/nginx/html on port 80
#   busybox.tar  docker.io/library/busybox:latest Debian's static busybox as /bin/sh and
#                                                /bin/busybox
#   jsonnetd.tar docker.io/metacontroller/jsonnetd:0.1  tools/jsonnetd (upstream's protocol),
#                                                serving the working directory on port 8080
#
# The tags are the examples' own, so their manifests apply unchanged; the contents are not
# upstream's images (Debian's nginx is 1.22.1, not 1.26.2): see docs/control-plane.md.
# Needs tools/node/build.sh (oci-image) and tools/jsonnetd/build.sh. Idempotent.
#
#   tools/node/example-images.sh                 build or reuse; prints the image dir last
#   EXAMPLE_IMAGES=/path example-images.sh       use another output directory
set -euo pipefail
cd "$(dirname "$0")"

KEY=nginx-deb12-busybox-jsonnetd-1
CACHE_ROOT=${XDG_CACHE_HOME:-$HOME/.cache}/metacontroller-ts/controlplane
OUT=${EXAMPLE_IMAGES:-$CACHE_ROOT/example-images-$KEY}
ARCHIVES=(nginx.tar busybox.tar jsonnetd.tar)
log() { echo "example-images: $*" >&2; }

all=1
for a in "${ARCHIVES[@]}"; do [[ -f "$OUT/$a" ]] || all=0; done
if [[ $all -eq 1 ]]; then
  log "reusing image archives in $OUT"
  echo "$OUT"
  exit 0
fi

BIN=$(./build.sh)
JSONNETD=$(../jsonnetd/build.sh)
TMP="$OUT.partial.$$"
mkdir -p "$TMP"
trap 'rm -rf "$TMP"' EXIT
start=$(date +%s)

need_root() {
  if [[ $(id -u) -ne 0 ]] || ! command -v apt-get >/dev/null 2>&1; then
    log "$1 (needs root and apt-get); install it and retry"
    exit 1
  fi
}

log "[1/3] nginx:1.26.2 from Debian's nginx package"
# Downloaded and unpacked, not installed: installing would start an nginx on this machine.
mkdir -p "$TMP/deb" "$TMP/root"
if ! (cd "$TMP/deb" && apt-get download nginx nginx-common) >"$TMP/apt.log" 2>&1; then
  need_root "cannot download Debian's nginx package"
  { apt-get update -qq && (cd "$TMP/deb" && apt-get download nginx nginx-common); } >"$TMP/apt.log" 2>&1 ||
    { cat "$TMP/apt.log" >&2; log "apt-get could not download nginx"; exit 1; }
fi
for deb in "$TMP"/deb/*.deb; do dpkg-deb -x "$deb" "$TMP/root"; done
NGINX="$TMP/root/usr/sbin/nginx"
if grep -q 'not found' <<<"$(ldd "$NGINX")"; then
  ldd "$NGINX" >&2
  log "nginx needs libraries this machine lacks (above); install them and retry"
  exit 1
fi
# Its shared libraries and loader, at the paths the binary asks for.
libs=()
while read -r lib; do libs+=(-file "$lib=$lib"); done < <(ldd "$NGINX" | grep -o '/[^ ]*' | sort -u)
cat >"$TMP/nginx.conf" <<'CONF'
worker_processes 1;
error_log /dev/stderr;
pid /tmp/nginx.pid;
events { worker_connections 256; }
http {
  include /etc/nginx/mime.types;
  access_log /dev/stdout;
  client_body_temp_path /tmp/client_body;
  proxy_temp_path /tmp/proxy;
  fastcgi_temp_path /tmp/fastcgi;
  uwsgi_temp_path /tmp/uwsgi;
  scgi_temp_path /tmp/scgi;
  server {
    listen 80;
    root /usr/share/nginx/html;
  }
}
CONF
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' >"$TMP/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$TMP/group"
printf '<h1>nginx from Debian, in an image built by metacontroller-ts</h1>\n' >"$TMP/index.html"
"$BIN/oci-image" -tag docker.io/library/nginx:1.26.2 -o "$TMP/nginx.tar" \
  -file "$NGINX=/usr/sbin/nginx" "${libs[@]}" \
  -file "$TMP/root/etc/nginx/mime.types=/etc/nginx/mime.types" \
  -file "$TMP/nginx.conf=/etc/nginx/nginx.conf" \
  -file "$TMP/passwd=/etc/passwd" -file "$TMP/group=/etc/group" \
  -file "$TMP/index.html=/usr/share/nginx/html/index.html" \
  -dir /tmp -dir /var/log/nginx -dir /var/lib/nginx \
  -entrypoint /usr/sbin/nginx -cmd -g -cmd "daemon off;"

log "[2/3] busybox:latest from Debian's busybox-static"
if ! grep -q 'ok installed' <<<"$(dpkg-query -W -f '${Status}' busybox-static 2>/dev/null)"; then
  need_root "cannot install Debian's busybox-static"
  { apt-get update -qq && apt-get install -y -qq busybox-static; } >"$TMP/apt.log" 2>&1 ||
    { cat "$TMP/apt.log" >&2; log "apt-get could not install busybox-static"; exit 1; }
fi
# busybox picks the applet from argv[0], so a copy named sh is the shell.
"$BIN/oci-image" -tag docker.io/library/busybox:latest -o "$TMP/busybox.tar" \
  -file /bin/busybox=/bin/busybox -file /bin/busybox=/bin/sh -dir /tmp \
  -env PATH=/bin -cmd sh

log "[3/3] metacontroller/jsonnetd:0.1 from tools/jsonnetd"
"$BIN/oci-image" -tag docker.io/metacontroller/jsonnetd:0.1 -o "$TMP/jsonnetd.tar" \
  -file "$JSONNETD=/jsonnetd" -entrypoint /jsonnetd -entrypoint -addr -entrypoint :8080

mkdir -p "$OUT"
for a in "${ARCHIVES[@]}"; do mv "$TMP/$a" "$OUT/"; done
log "built in $(($(date +%s) - start)) s into $OUT"
echo "$OUT"
