#!/usr/bin/env bash
# Builds promtool from the Prometheus Go module pinned in go.mod/go.sum, into a per-version cache
# outside the repository. The alert rules' tests (test/integration/alert-rules.test.ts) run it:
# `promtool check rules` and `promtool test rules` on deploy/monitoring/.
# Idempotent: when the binary is cached, it does nothing.
#
#   tools/promtool/build.sh                 build or reuse; prints the binary's path last
#   PROMTOOL_BIN=/path/promtool build.sh    use another output path
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../lib/build-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/build-lib.sh"
cd "$(dirname "$0")"
build_init promtool

# The Prometheus module's version (v0.316.0 is Prometheus 3.16.0); keep equal to go.mod.
PROMETHEUS_VERSION=v0.316.0
CACHE_ROOT=$(build_cache_root promtool)
OUT=${PROMTOOL_BIN:-$CACHE_ROOT/$PROMETHEUS_VERSION/promtool}

build_reuse_if_executable "$OUT" "reusing cached binary $OUT"
build_require_go promtool
build_go_env
JOBS=$(build_jobs "${PROMTOOL_BUILD_JOBS:-}")
build_partial "$OUT"
TMP_OUT=$BUILD_PARTIAL

build_start
build_log "building promtool $PROMETHEUS_VERSION (a cold build takes about 5 min on 2 busy cores, 3.5 with its modules cached)"

# remove_all_sd leaves out the service-discovery plugins (cloud SDKs): checking and unit-testing
# rule files never discovers targets, and they are most of a full build's time and size. Only
# the modules of the packages built are downloaded (`go mod download` would fetch every module of
# the graph, cloud SDKs included: 1.8 GB).
TAGS=remove_all_sd
PKG=github.com/prometheus/prometheus/cmd/promtool
build_step 1/2 go list -deps "$PKG" "(downloads its modules)"
go list -deps -tags "$TAGS" "$PKG" >/dev/null
build_step 2/2 go build "$PKG"
# The version stamp upstream's release builds set (prometheus/common/version), minus the commit.
V="-X github.com/prometheus/common/version.Version=${PROMETHEUS_VERSION#v}"
V="$V -X github.com/prometheus/common/version.Branch=module"
go build -p "$JOBS" -trimpath -tags "$TAGS" -ldflags "-s -w $V" -o "$TMP_OUT" "$PKG"

"$TMP_OUT" --version 2>&1 | head -1 >&2

mv "$TMP_OUT" "$OUT"
build_finish "$OUT"
