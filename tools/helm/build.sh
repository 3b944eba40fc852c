#!/usr/bin/env bash
# Builds the Helm CLI from the Go module pinned in go.mod/go.sum, into a per-version cache outside
# the repository. Only the e2e test of the Helm chart (test/e2e/deploy-manifests.test.ts) uses it.
# Idempotent: when the binary is cached, it does nothing.
#
#   tools/helm/build.sh             build or reuse; prints the binary's path last
#   HELM_BIN=/path/helm build.sh    use another output path
set -euo pipefail
cd "$(dirname "$0")"

HELM_VERSION=v4.3.2
CACHE_ROOT=${XDG_CACHE_HOME:-$HOME/.cache}/metacontroller-ts/helm
OUT=${HELM_BIN:-$CACHE_ROOT/$HELM_VERSION/helm}

if [[ -x "$OUT" ]]; then
  echo "helm: reusing cached binary $OUT" >&2
  echo "$OUT"
  exit 0
fi

if ! command -v go >/dev/null 2>&1; then
  echo "helm: 'go' (>= 1.26) is required to build helm; install Go and retry" >&2
  exit 1
fi

export CGO_ENABLED=0 GOTOOLCHAIN=${GOTOOLCHAIN:-local} GOFLAGS=${GOFLAGS:--buildvcs=false}
JOBS=${HELM_BUILD_JOBS:-$(nproc 2>/dev/null || echo 2)}
mkdir -p "$(dirname "$OUT")"
TMP_OUT="$OUT.partial.$$"
trap 'rm -f "$TMP_OUT"' EXIT

start=$(date +%s)
echo "helm: building helm $HELM_VERSION (a cold build takes 6-8 min on 2 cores)" >&2

# The same version stamp as upstream's release builds (Makefile LDFLAGS), minus the git commit.
V="-X helm.sh/helm/v4/internal/version.version=$HELM_VERSION"
V="$V -X helm.sh/helm/v4/internal/version.metadata= -X helm.sh/helm/v4/internal/version.gitTreeState=clean"

echo "helm: [1/2] go mod download" >&2
go mod download
echo "helm: [2/2] go build helm.sh/helm/v4/cmd/helm" >&2
go build -p "$JOBS" -trimpath -ldflags "-s -w $V" -o "$TMP_OUT" helm.sh/helm/v4/cmd/helm

"$TMP_OUT" version --short >&2

mv "$TMP_OUT" "$OUT"
trap - EXIT
echo "helm: built in $(( $(date +%s) - start )) s into $OUT" >&2
echo "$OUT"
