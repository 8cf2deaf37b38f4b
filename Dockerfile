# workloadrun-fn as a containerized KRM function (kpt / kustomize `container:` functions).
# Built from the project's wheel; runs as nobody; needs no network at run time.
#   docker build -t workloadrun-fn:0.1.0 .
#   NGC_API_KEY=example-api-key docker run -i --rm --network none -e NGC_API_KEY \
#     workloadrun-fn:0.1.0 < fixtures/krm/resourcelist.yaml
FROM python:3.11.11-slim-bookworm AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY krm_fn ./krm_fn
RUN pip install --no-cache-dir build==1.2.2.post1 \
    && python -m build --wheel --outdir /wheels . \
    && pip wheel --no-cache-dir --wheel-dir /wheels /wheels/workloadrun_fn-*.whl

# The kustomize binary of the official image (kubernetes-sigs/kustomize), pinned by version:
# v5.5.0 is the kustomize kubectl 1.32 embeds, the one the tests run.
FROM registry.k8s.io/kustomize/kustomize:v5.5.0 AS kustomize

# Target `cmp`: the Argo CD Config Management Plugin sidecar (deploy/argocd). Holds exactly
# what the plugin's discover and generate commands call: sh and coreutils/findutils/sed
# (Debian base), workloadrun-fn, kustomize. Runs as Argo CD's user 999.
#   docker build --target cmp -t workloadrun-fn-cmp:0.1.0 .
FROM python:3.11.11-slim-bookworm AS cmp
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir --no-index --find-links /wheels workloadrun-fn \
    && rm -rf /wheels
COPY --from=kustomize /app/kustomize /usr/local/bin/kustomize
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1
USER 999:999

# Default target: the KRM function image.
FROM python:3.11.11-slim-bookworm
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir --no-index --find-links /wheels workloadrun-fn \
    && rm -rf /wheels
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1
# The KRM functions spec: a function must be able to run as the non-root user nobody.
USER 65534:65534
ENTRYPOINT ["workloadrun-fn"]
