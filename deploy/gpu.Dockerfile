# facestream's detector for NVIDIA GPUs: the CPU image's layout on a CUDA 13 runtime with cuDNN,
# onnxruntime-gpu (TensorRT, then CUDA, then CPU), nvImageCodec for GPU JPEG decoding, and TensorRT's
# libraries. Engines are built into $FACESTREAM_HOME/engines, a named volume in the compose file, by
# its one-shot `build-engine` service before the detector starts. Build it with the compose file's gpu
# profile (docker compose --profile gpu build).
ARG CUDA_IMAGE=nvidia/cuda:13.0.2-cudnn-runtime-ubuntu24.04

FROM ${CUDA_IMAGE} AS build
RUN apt-get update -q && apt-get install -y -q --no-install-recommends python3 python3-venv ca-certificates \
 && rm -rf /var/lib/apt/lists/*
ENV VIRTUAL_ENV=/opt/facestream FACESTREAM_HOME=/var/lib/facestream PYTHONUNBUFFERED=1
ENV PATH=/opt/facestream/bin:$PATH
RUN python3 -m venv /opt/facestream
COPY deploy/requirements-gpu.txt /tmp/requirements.txt
RUN --mount=type=cache,target=/root/.cache/pip pip install -q -r /tmp/requirements.txt
COPY pyproject.toml README.md /src/
COPY schemas /src/schemas
COPY facestream /src/facestream
COPY producers /src/producers
COPY detector_service /src/detector_service
COPY alerting /src/alerting
COPY alert_store /src/alert_store
COPY notifier /src/notifier
COPY dashboard /src/dashboard
COPY tools /src/tools
RUN pip install -q --no-deps /src
ARG MODELS="yunet sface"
RUN facestream models fetch ${MODELS}

FROM ${CUDA_IMAGE}
RUN apt-get update -q && apt-get install -y -q --no-install-recommends python3 \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --uid 10001 --create-home facestream \
 && mkdir -p /var/lib/facestream/engines && chown facestream /var/lib/facestream /var/lib/facestream/engines
COPY --from=build /opt/facestream /opt/facestream
COPY --from=build --chown=facestream /var/lib/facestream /var/lib/facestream
ENV FACESTREAM_HOME=/var/lib/facestream PYTHONUNBUFFERED=1 PATH=/opt/facestream/bin:$PATH \
    LD_LIBRARY_PATH=/opt/facestream/lib/python3.12/site-packages/tensorrt_libs
USER facestream
ENTRYPOINT ["facestream"]
CMD ["detect", "--help"]
