#!/usr/bin/env bash
# Render WorkloadRuns in CI for Flux, which never runs plugins or executables itself.
#
#   deploy/flux/render-in-ci.sh SOURCE_DIR OUTPUT_FILE
#
# SOURCE_DIR is a kustomization (built with the legacy exec plugin) or a plain directory of
# WorkloadRun/Node files (rendered with `workloadrun-fn render`). The rendered manifests are
# written to OUTPUT_FILE only if the render succeeded and produced at least one TrainJob, so
# Flux never prunes a cluster because of an empty or failed render. When FLUX_OCI_URL is set
# (e.g. oci://ghcr.io/org/gpu-validation), the output directory is pushed with
# `flux push artifact` for an OCIRepository to consume; otherwise commit OUTPUT_FILE to the
# branch Flux watches.
set -euo pipefail

src=${1:?usage: render-in-ci.sh SOURCE_DIR OUTPUT_FILE}
out=${2:?usage: render-in-ci.sh SOURCE_DIR OUTPUT_FILE}
fn=${WORKLOADRUN_FN:-workloadrun-fn}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if [ -f "$src/kustomization.yaml" ] || [ -f "$src/kustomization.yml" ]; then
  "$fn" install-kustomize-plugin --plugin-home "$work/plugins" >&2
  KUSTOMIZE_PLUGIN_HOME="$work/plugins" kubectl kustomize --enable-alpha-plugins "$src" > "$work/rendered.yaml"
else
  "$fn" render "$src" > "$work/rendered.yaml"
fi

if ! grep -q '^kind: TrainJob$' "$work/rendered.yaml"; then
  echo "render-in-ci: the render produced no TrainJob; refusing to publish it" >&2
  exit 1
fi
mkdir -p "$(dirname "$out")"
mv "$work/rendered.yaml" "$out"
echo "render-in-ci: wrote $out ($(grep -c '^kind: TrainJob$' "$out") TrainJob(s))" >&2

if [ -n "${FLUX_OCI_URL:-}" ]; then
  flux push artifact "$FLUX_OCI_URL:$(git rev-parse --short HEAD)" \
    --path="$(dirname "$out")" \
    --source="$(git config --get remote.origin.url)" \
    --revision="$(git rev-parse --abbrev-ref HEAD)@sha1:$(git rev-parse HEAD)"
fi
