#!/usr/bin/env bash
# Render WorkloadRuns in CI for Flux, which never runs plugins or executables itself.
#
#   render-in-ci.sh SOURCE_DIR OUTPUT_DIR
#
# SOURCE_DIR is a kustomization (built with the legacy exec plugin and `kubectl kustomize`) or a
# plain directory of WorkloadRun / compact Node inventory files (`workloadrun-fn render`; hidden
# files are not read). OUTPUT_DIR receives (see docs/gitops.md "Flux"):
#   dependencies/   every object that is not a TrainJob (Secret/ExternalSecret, ConfigMap,
#                   TrainingRuntime, ...)
#   wave-<k>/       the TrainJobs of wave k, none suspended
#   flux/kustomizations.yaml
#                   one Flux Kustomization per directory: the waves dependsOn the dependencies
#                   and the previous wave, wait, and count a TrainJob healthy only once it
#                   completed, so Flux applies wave k+1 after wave k finished.
# OUTPUT_DIR is replaced only when the render succeeded and produced at least one TrainJob, so
# Flux never prunes a cluster because of an empty or failed render. No registry password is
# ever written (docs/gitops.md "Registry credentials in GitOps").
#
# Environment: WORKLOADRUN_FN (the command, default workloadrun-fn), FLUX_NAME (Kustomization
# name prefix, default: basename of OUTPUT_DIR), FLUX_SOURCE (KIND/NAME of the Flux source,
# default GitRepository/flux-system), FLUX_PATH (OUTPUT_DIR inside that source, default
# ./OUTPUT_DIR, or . when FLUX_OCI_URL is set), FLUX_OCI_URL (push OUTPUT_DIR as an OCI
# artifact with `flux push artifact` for an OCIRepository), WORKLOADRUN_FN_<OPTION> (function
# options, README "FunctionConfig").
set -euo pipefail

src=${1:?usage: render-in-ci.sh SOURCE_DIR OUTPUT_DIR}
out=${2:?usage: render-in-ci.sh SOURCE_DIR OUTPUT_DIR}
out=${out%/}
fn=${WORKLOADRUN_FN:-workloadrun-fn}
name=${FLUX_NAME:-$(basename "$out")}
if [ -n "${FLUX_OCI_URL:-}" ]; then path=${FLUX_PATH:-.}; else path=${FLUX_PATH:-./$out}; fi
export WORKLOADRUN_FN_WAVE_RELEASE=engine WORKLOADRUN_FN_GITOPS=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if [ -f "$src/kustomization.yaml" ] || [ -f "$src/kustomization.yml" ] || [ -f "$src/Kustomization" ]; then
  "$fn" install-kustomize-plugin --plugin-home "$work/plugins" >&2
  TMPDIR="$work" KUSTOMIZE_PLUGIN_HOME="$work/plugins" \
    kubectl kustomize --enable-alpha-plugins "$src" > "$work/rendered.yaml"
else
  find "$src" -maxdepth 1 -type f ! -name '.*' \( -name '*.yaml' -o -name '*.yml' -o -name '*.json' \) \
    -exec "$fn" render {} + > "$work/rendered.yaml"
fi

# its "wrote ... in $work/out" line names a directory about to be moved: the line below says it
{ "$fn" flux-layout "$work/rendered.yaml" "$work/out" --name "$name" --path-prefix "$path" \
  --source "${FLUX_SOURCE:-GitRepository/flux-system}" 2>&1 >&3 \
  | sed '/^flux-layout: dependencies + /d' >&2; } 3>&1
mkdir -p "$(dirname "$out")"
rm -rf "$out"
mv "$work/out" "$out"
# one stream of every wave (grep -c on one file would print no file name to sum over)
echo "render-in-ci: wrote $out ($(cat "$out"/wave-*/resources.yaml | grep -c '^kind: TrainJob$') TrainJob(s))" >&2

if [ -n "${FLUX_OCI_URL:-}" ]; then
  flux push artifact "$FLUX_OCI_URL:$(git rev-parse --short HEAD)" \
    --path="$out" \
    --source="$(git config --get remote.origin.url)" \
    --revision="$(git rev-parse --abbrev-ref HEAD)@sha1:$(git rev-parse HEAD)"
fi
