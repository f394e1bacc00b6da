#!/usr/bin/env bash
# Helm v4, built from its Go module (the Go module proxy) into a folder of its own: what the chart's
# tests lint and render with. Nothing happens when that Helm is there already.
#
#   deploy/helm/install-helm.sh [BIN]     # default BIN: .venv/bin
set -euo pipefail
VERSION=v4.3.2
bin="${1:-.venv/bin}"
# (a Helm built by go install says only its minor version: v4.3)
if [ -x "$bin/helm" ] && "$bin/helm" version --template '{{.Version}}' 2>/dev/null | grep -q "^${VERSION%.*}"; then
  exit 0
fi
command -v go >/dev/null || { echo "go missing: Helm is built from its Go module (install Go 1.24+)" >&2; exit 1; }
echo "building Helm $VERSION (once; a few minutes) into $bin"
mkdir -p "$bin"
GOBIN="$(cd "$bin" && pwd)" GOFLAGS=-mod=mod go install "helm.sh/helm/v4/cmd/helm@$VERSION"
