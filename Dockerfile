# facestream's services, CPU build: one image, the compose file picks the command.
# The build stage installs the pinned packages and fetches the models and sample footage (each file
# verified by sha256; the pose model converted and checked there, TensorFlow staying behind); the
# runtime stage holds only the virtual environment and that data, and runs as a non-root user.
# No PyTorch, no benchmarks. The GPU build is deploy/gpu.Dockerfile.
ARG PYTHON_IMAGE=python:3.11-slim

FROM ${PYTHON_IMAGE} AS build
ENV VIRTUAL_ENV=/opt/facestream FACESTREAM_HOME=/var/lib/facestream PYTHONUNBUFFERED=1
ENV PATH=/opt/facestream/bin:$PATH
RUN python3 -m venv /opt/facestream
COPY deploy/requirements.txt /tmp/requirements.txt
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
ARG MODELS="yunet sface movenet"
RUN --mount=type=cache,target=/root/.cache/pip facestream models fetch ${MODELS} \
 && facestream samples fetch \
 && facestream samples fall-footage --fps 3 /var/lib/facestream/samples/corridor \
 && rm -rf /var/lib/facestream/converters

FROM ${PYTHON_IMAGE}
RUN useradd --uid 10001 --create-home facestream \
 && mkdir -p /var/lib/facestream/engines && chown facestream /var/lib/facestream /var/lib/facestream/engines
COPY --from=build /opt/facestream /opt/facestream
COPY --from=build --chown=facestream /var/lib/facestream /var/lib/facestream
ENV FACESTREAM_HOME=/var/lib/facestream PYTHONUNBUFFERED=1 PATH=/opt/facestream/bin:$PATH
USER facestream
ENTRYPOINT ["facestream"]
CMD ["--help"]
