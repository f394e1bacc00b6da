#!/usr/bin/env bash
# Build, on this machine, the registry images the compose file starts from, for hosts that reach no
# image registry (this project's CI): each is tagged with the official name, so docker-compose.yml
# runs unchanged. With a registry, skip this: the real images are pulled.
#   debian:bookworm-slim  a Debian 12 root file system from debootstrap, imported
#   python:3.11-slim      that, with Debian's Python 3.11 and venv
#   apache/kafka:4.1.1    that, with Java 17 and Kafka's jars from Maven Central (deploy/kafka)
#   postgres:15           that, with Debian's PostgreSQL 15 (deploy/postgres)
#   eclipse-mosquitto:2   that, with Debian's Mosquitto 2 (deploy/mosquitto)
# Images already present are kept (FORCE=1 rebuilds). Needs root, debootstrap and podman.
set -euo pipefail
cd "$(dirname "$0")/.."
export CONTAINERS_CONF="${CONTAINERS_CONF:-$PWD/deploy/podman/containers.conf}"
MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

have() { [ -z "${FORCE:-}" ] && podman image exists "$1"; }
step() { printf '\n== %s (%s)\n' "$1" "$(date +%T)"; }

if ! have docker.io/library/debian:bookworm-slim; then
  step "debian:bookworm-slim from debootstrap"
  debootstrap --variant=minbase --include=ca-certificates bookworm "$work/rootfs" "$MIRROR" > "$work/debootstrap.log" \
    || { tail -20 "$work/debootstrap.log"; exit 1; }
  # Trust what this host trusts (e.g. a TLS-inspecting proxy's authority), so builds reach PyPI from here.
  cp /usr/local/share/ca-certificates/*.crt "$work/rootfs/usr/local/share/ca-certificates/" 2>/dev/null || true
  chroot "$work/rootfs" update-ca-certificates > /dev/null
  rm -rf "$work/rootfs/var/cache/apt/archives/"*.deb "$work/rootfs/var/lib/apt/lists/"*
  tar -C "$work/rootfs" -c . | podman import \
    --change 'ENV PIP_CERT=/etc/ssl/certs/ca-certificates.crt' --change 'CMD ["bash"]' \
    - docker.io/library/debian:bookworm-slim
fi

if ! have docker.io/library/python:3.11-slim; then
  step "python:3.11-slim from Debian's python3"
  podman build -q -t docker.io/library/python:3.11-slim -f - "$work" <<'CONTAINERFILE'
FROM docker.io/library/debian:bookworm-slim
RUN apt-get update -q && apt-get install -y -q --no-install-recommends python3 python3-venv \
 && rm -rf /var/lib/apt/lists/* && ln -s /usr/bin/python3 /usr/local/bin/python
CONTAINERFILE
fi

# Kafka's is rebuilt whenever deploy/kafka or the broker's logging changes (a label keeps their digest).
kafka_digest="$(cat deploy/kafka/* facestream/broker/log4j2.xml | sha256sum | cut -c1-16)"
kafka_built="$(podman image inspect --format '{{index .Labels "facestream.context"}}' docker.io/apache/kafka:4.1.1 2>/dev/null || true)"
if [ -n "${FORCE:-}" ] || [ "$kafka_built" != "$kafka_digest" ]; then
  step "apache/kafka:4.1.1 from Maven Central's jars"
  python3 -c 'from facestream.broker import LocalBroker; LocalBroker().install_jars(); print(LocalBroker().lib)' \
    > "$work/lib-path" || { echo "needs facestream installed (make setup) for Kafka's jars"; exit 1; }
  cp -r deploy/kafka "$work/kafka"
  cp -r "$(cat "$work/lib-path")" "$work/kafka/lib"
  cp facestream/broker/log4j2.xml "$work/kafka/"
  podman build -q --label "facestream.context=$kafka_digest" -t docker.io/apache/kafka:4.1.1 "$work/kafka"
fi
# These two are rebuilt whenever their folder changes (a label keeps the folder's digest).
for pair in postgres:15=deploy/postgres eclipse-mosquitto:2=deploy/mosquitto; do
  image="docker.io/library/${pair%%=*}" context="${pair#*=}"
  digest="$(find "$context" -type f -print0 | sort -z | xargs -0 sha256sum | sha256sum | cut -c1-16)"
  built="$(podman image inspect --format '{{index .Labels "facestream.context"}}' "$image" 2>/dev/null || true)"
  if [ -n "${FORCE:-}" ] || [ "$built" != "$digest" ]; then
    step "${pair%%=*} from Debian's packages"
    podman build -q --label "facestream.context=$digest" -t "$image" "$context" | tail -1
  fi
done
step "done"
podman images --format '{{.Repository}}:{{.Tag}} {{.Size}}' | grep -E 'debian|python|kafka|postgres|mosquitto'
