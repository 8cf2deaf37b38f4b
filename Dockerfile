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

FROM python:3.11.11-slim-bookworm
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir --no-index --find-links /wheels workloadrun-fn \
    && rm -rf /wheels
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1
# The KRM functions spec: a function must be able to run as the non-root user nobody.
USER 65534:65534
ENTRYPOINT ["workloadrun-fn"]
