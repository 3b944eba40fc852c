# shellcheck shell=bash
# Shared steps of the Go-module build scripts (tools/*/build.sh), sourced from each script with
#   source "$(dirname "${BASH_SOURCE[0]}")/../lib/build-lib.sh"
# The contract every script keeps: progress goes to stderr, and the output path is printed last,
# alone, on stdout (src/ and the Makefile read it); a cached output is reused without building.

# The prefix of every progress line, so interleaved output says which script wrote it.
BUILD_NAME=${BUILD_NAME:-build}
# Paths removed when the script exits (the unfinished outputs), so a failed build leaves none.
BUILD_CLEANUP=()
# When the build started, for the "built in N s" line.
BUILD_START=

# Names the script in its progress lines: build_init kwok.
build_init() { BUILD_NAME=$1; }

# Progress on stderr, because stdout carries only the output path.
build_log() { echo "$BUILD_NAME: $*" >&2; }

# One numbered step, "[1/2] go mod download", so a slow build shows where it is.
build_step() { build_log "[$1] ${*:2}"; }

# The cache directory outside the repository (XDG_CACHE_HOME honoured); the layout under it is
# the cache key src/ computes too, so it must not change: build_cache_root SUBDIR ("" for none).
build_cache_root() { echo "${XDG_CACHE_HOME:-$HOME/.cache}/metacontroller-ts${1:+/$1}"; }

# Ends the script on a cache hit: logs the message, prints the path, exits 0.
build_reuse() {
  build_log "$2"
  echo "$1"
  exit 0
}

# Reuses an executable output when it is already built, or returns so the build goes on.
build_reuse_if_executable() { if [[ -x "$1" ]]; then build_reuse "$@"; fi; }

# Fails early with a clear message, rather than a "command not found" halfway through.
build_require_go() {
  if ! command -v go >/dev/null 2>&1; then
    build_log "'go' (>= 1.26) is required to build $1; install Go and retry"
    exit 1
  fi
}

# Static, reproducible builds with the installed toolchain (no toolchain download, no VCS stamp).
build_go_env() {
  export CGO_ENABLED=0 GOTOOLCHAIN=${GOTOOLCHAIN:-local} GOFLAGS=${GOFLAGS:--buildvcs=false}
}

# Parallel jobs for `go build -p`: the given override, else one per CPU: build_jobs "$X_JOBS".
build_jobs() { echo "${1:-$(nproc 2>/dev/null || echo 2)}"; }

# Removes these paths at exit (unfinished outputs, scratch directories).
build_cleanup_on_exit() {
  BUILD_CLEANUP+=("$@")
  trap 'rm -rf "${BUILD_CLEANUP[@]}"' EXIT
}

# The unfinished output next to the final one ($OUT.partial.PID, removed at exit), which is moved
# into place only when complete, so an interrupted build never looks cached: build_partial OUT
# [dir]. Sets BUILD_PARTIAL; with "dir" it is created as a directory.
build_partial() {
  mkdir -p "$(dirname "$1")"
  BUILD_PARTIAL="$1.partial.$$"
  [[ ${2:-} != dir ]] || mkdir -p "$BUILD_PARTIAL"
  build_cleanup_on_exit "$BUILD_PARTIAL"
}

# Starts the clock for build_finish.
build_start() { BUILD_START=$(date +%s); }

# Logs how long the build took and prints the output path last on stdout, as callers expect.
build_finish() {
  build_log "built in $(($(date +%s) - BUILD_START)) s into $1"
  echo "$1"
}
