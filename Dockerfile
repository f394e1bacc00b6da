# facestream's services, CPU build: one image, the compose file picks the command; and `--target
# producer`, the edge producer's light image (only `pip install facestream`'s packages: no ONNX
# Runtime, OpenCV or database drivers; docs/deploy.md, "A light producer install").
# Three stages, so that changing the code rebuilds seconds of layers, not minutes: `deps` holds the
# virtual environment with the pinned packages (rebuilt only when deploy/requirements.txt changes);
# `build` makes facestream's wheel and fetches the models and sample footage into a build cache (each
# file verified by sha256 once; the pose model converted and checked there, TensorFlow staying
# behind); the runtime stage is `deps` with that wheel and that data, run as a non-root user.
# No PyTorch, no benchmarks. The GPU build is deploy/gpu.Dockerfile.
ARG PYTHON_IMAGE=python:3.11-slim

FROM ${PYTHON_IMAGE} AS deps
ENV VIRTUAL_ENV=/opt/facestream PYTHONUNBUFFERED=1 PATH=/opt/facestream/bin:$PATH
RUN python3 -m venv /opt/facestream
COPY deploy/requirements.txt /tmp/requirements.txt
RUN --mount=type=cache,target=/root/.cache/pip pip install -q -r /tmp/requirements.txt

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
ARG MODELS="yunet sface movenet"
# Fetched into the cache (kept between builds: a file already there and intact is not fetched or
# converted again), then copied out of it into the image's data folder.
RUN --mount=type=cache,target=/var/cache/facestream --mount=type=cache,target=/root/.cache/pip \
    FACESTREAM_HOME=/var/cache/facestream facestream models fetch ${MODELS} \
 && FACESTREAM_HOME=/var/cache/facestream facestream samples fetch \
 && mkdir -p /var/lib/facestream \
 && cp -a /var/cache/facestream/models /var/cache/facestream/samples /var/lib/facestream/ \
 && facestream samples fall-footage --fps 3 /var/lib/facestream/samples/corridor

# The producer's image: its own pinned packages, the same wheel, the sample footage its demo cameras stream.
FROM ${PYTHON_IMAGE} AS producer
ENV VIRTUAL_ENV=/opt/facestream PYTHONUNBUFFERED=1 PATH=/opt/facestream/bin:$PATH
RUN python3 -m venv /opt/facestream
COPY deploy/requirements-producer.txt /tmp/requirements.txt
RUN --mount=type=cache,target=/root/.cache/pip pip install -q -r /tmp/requirements.txt \
 && useradd --uid 10001 --create-home facestream
COPY --from=build /wheels /tmp/wheels
RUN pip install -q --no-deps /tmp/wheels/*.whl && rm -rf /tmp/wheels
COPY --from=build --chown=facestream /var/lib/facestream/samples /var/lib/facestream/samples
ENV FACESTREAM_HOME=/var/lib/facestream
USER facestream
ENTRYPOINT ["facestream"]
CMD ["produce", "--help"]

# The services' image (the default target: the last stage).
FROM deps
RUN useradd --uid 10001 --create-home facestream \
 && mkdir -p /var/lib/facestream/engines && chown facestream /var/lib/facestream /var/lib/facestream/engines
COPY --from=build /wheels /tmp/wheels
RUN pip install -q --no-deps /tmp/wheels/*.whl && rm -rf /tmp/wheels
COPY --from=build --chown=facestream /var/lib/facestream /var/lib/facestream
ENV FACESTREAM_HOME=/var/lib/facestream
USER facestream
ENTRYPOINT ["facestream"]
CMD ["--help"]
