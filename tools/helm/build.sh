#!/usr/bin/env bash
# Builds the Helm CLI from the Go module pinned in go.mod/go.sum, into a per-version cache outside
# the repository. Only the e2e test of the Helm chart (test/e2e/deploy-manifests.test.ts) uses it.
# Idempotent: when the binary is cached, it does nothing.
#
#   tools/helm/build.sh             build or reuse; prints the binary's path last
#   HELM_BIN=/path/helm build.sh    use another output path
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../lib/build-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/build-lib.sh"
cd "$(dirname "$0")"
build_init helm

HELM_VERSION=v4.3.2
CACHE_ROOT=$(build_cache_root helm)
OUT=${HELM_BIN:-$CACHE_ROOT/$HELM_VERSION/helm}

build_reuse_if_executable "$OUT" "reusing cached binary $OUT"
build_require_go helm
build_go_env
JOBS=$(build_jobs "${HELM_BUILD_JOBS:-}")
build_partial "$OUT"
TMP_OUT=$BUILD_PARTIAL

build_start
build_log "building helm $HELM_VERSION (a cold build takes 6-8 min on 2 cores)"

# The same version stamp as upstream's release builds (Makefile LDFLAGS), minus the git commit.
V="-X helm.sh/helm/v4/internal/version.version=$HELM_VERSION"
V="$V -X helm.sh/helm/v4/internal/version.metadata= -X helm.sh/helm/v4/internal/version.gitTreeState=clean"

build_step 1/2 go mod download
go mod download
build_step 2/2 go build helm.sh/helm/v4/cmd/helm
go build -p "$JOBS" -trimpath -ldflags "-s -w $V" -o "$TMP_OUT" helm.sh/helm/v4/cmd/helm

"$TMP_OUT" version --short >&2

mv "$TMP_OUT" "$OUT"
build_finish "$OUT"
