# facestream's detector for NVIDIA GPUs: the CPU image's layout on a CUDA 13 runtime with cuDNN,
# onnxruntime-gpu (TensorRT, then CUDA, then CPU), nvImageCodec for GPU JPEG decoding, and TensorRT's
# libraries. Engines are built into $FACESTREAM_HOME/engines, a named volume in the compose file, by
# its one-shot `build-engine` service before the detector starts. Build it with the compose file's gpu
# profile (docker compose --profile gpu build). With --build-arg TORCH=true it also carries PyTorch
# (deploy/requirements-gpu-torch.txt) and the C++ compiler and Python headers Inductor and Triton
# compile with, for MogFace's torch engine: docker build -f deploy/gpu.Dockerfile --build-arg
# TORCH=true -t facestream:0.1.0-gpu-torch . (docs/mogface.md).
ARG CUDA_IMAGE=nvidia/cuda:13.0.2-cudnn-runtime-ubuntu24.04

# Stages as the CPU Dockerfile's: `deps` (CUDA, Python, the pinned packages) changes only with
# its requirements file, so a change of code rebuilds only the wheel and the layers after it.
FROM ${CUDA_IMAGE} AS deps
ARG TORCH=false
RUN apt-get update -q && apt-get install -y -q --no-install-recommends python3 python3-venv ca-certificates \
    $([ "$TORCH" = true ] && echo g++ python3-dev) \
 && rm -rf /var/lib/apt/lists/*
ENV VIRTUAL_ENV=/opt/facestream PYTHONUNBUFFERED=1 PATH=/opt/facestream/bin:$PATH
RUN python3 -m venv /opt/facestream
COPY deploy/requirements-gpu.txt deploy/requirements-gpu-torch.txt /tmp/
RUN --mount=type=cache,target=/root/.cache/pip \
    pip install -q -r /tmp/requirements-gpu$([ "$TORCH" = true ] && echo -torch).txt

FROM deps AS build
ENV FACESTREAM_HOME=/var/lib/facestream
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
RUN --mount=type=cache,target=/root/.cache/pip pip wheel -q --no-deps -w /wheels /src \
 && pip install -q --no-deps /wheels/*.whl
ARG MODELS="yunet sface"
RUN --mount=type=cache,target=/var/cache/facestream FACESTREAM_HOME=/var/cache/facestream facestream models fetch ${MODELS} \
 && mkdir -p /var/lib/facestream && cp -a /var/cache/facestream/models /var/lib/facestream/
# The native batch decoder (--gpu-decoder hw/native, the default) is compiled here, where a C compiler
# may be installed, into $FACESTREAM_HOME/native: the runtime image has none and would fall back.
RUN apt-get update -q && apt-get install -y -q --no-install-recommends gcc libc6-dev && rm -rf /var/lib/apt/lists/* \
 && python3 -c "from facestream.detector_service.decoding import native_decoder; print(native_decoder.build())"

FROM deps
RUN useradd --uid 10001 --create-home facestream \
 && mkdir -p /var/lib/facestream/engines && chown facestream /var/lib/facestream /var/lib/facestream/engines
COPY --from=build /wheels /tmp/wheels
RUN pip install -q --no-deps /tmp/wheels/*.whl && rm -rf /tmp/wheels
COPY --from=build --chown=facestream /var/lib/facestream /var/lib/facestream
ENV FACESTREAM_HOME=/var/lib/facestream \
    LD_LIBRARY_PATH=/opt/facestream/lib/python3.12/site-packages/tensorrt_libs
USER facestream
ENTRYPOINT ["facestream"]
CMD ["detect", "--help"]
