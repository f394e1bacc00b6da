#!/usr/bin/env bash
# What the chart's tests run, built from Go modules (the Go module proxy) into BIN: Helm v4, which
# lints and renders the chart, and validate/ (k8s-validate), which decodes the rendered manifests
# strictly into the Kubernetes API's own Go types (k8s.io/api). Each is built once; Go keeps its build
# cache, so a fresh clone on the same machine links them in seconds.
#
#   deploy/helm/tools.sh [BIN]     # default BIN: .venv/bin
set -euo pipefail
cd "$(dirname "$0")"
HELM=v4.3.2
bin="$(mkdir -p "${1:-../../.venv/bin}" && cd "${1:-../../.venv/bin}" && pwd)"
command -v go >/dev/null || { echo "go missing: Helm and the validator are built from Go modules (Go 1.24+)" >&2; exit 1; }
# (a Helm built by go install says only its minor version: v4.3)
if ! { [ -x "$bin/helm" ] && "$bin/helm" version --template '{{.Version}}' 2>/dev/null | grep -q "^${HELM%.*}"; }; then
  echo "building Helm $HELM into $bin (once; a few minutes)"
  GOBIN="$bin" GOFLAGS=-mod=mod go install "helm.sh/helm/v4/cmd/helm@$HELM"
fi
(cd validate && go build -o "$bin/k8s-validate" .)
