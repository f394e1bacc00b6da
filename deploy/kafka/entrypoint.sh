#!/bin/bash
# Start a KRaft broker configured the way the official apache/kafka image is: every KAFKA_<NAME>
# variable is the property <name> (lower case; "_" -> ".", "__" -> "_", "___" -> "-"), CLUSTER_ID names
# the cluster, and storage is formatted on first start.
set -euo pipefail
props=/opt/kafka/config/server.properties
: > "$props"
if [ -z "${KAFKA_PROCESS_ROLES:-}" ]; then
  # No configuration given: one node on localhost, as the official image's default.
  cat >> "$props" <<'DEFAULTS'
node.id=1
process.roles=broker,controller
listeners=PLAINTEXT://:9092,CONTROLLER://:9093
advertised.listeners=PLAINTEXT://localhost:9092
controller.listener.names=CONTROLLER
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
controller.quorum.voters=1@localhost:9093
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
DEFAULTS
fi
echo "log.dirs=${KAFKA_LOG_DIRS:-/var/lib/kafka/data}" >> "$props"
while IFS='=' read -r name value; do
  case "$name" in
    KAFKA_HEAP_OPTS|KAFKA_LOG_DIRS|KAFKA_OPTS) continue ;;
    KAFKA_*) ;;
    *) continue ;;
  esac
  key=$(printf '%s' "${name#KAFKA_}" | tr '[:upper:]' '[:lower:]' | sed -e 's/___/-/g' -e 's/__/@/g' -e 's/_/./g' -e 's/@/_/g')
  echo "$key=$value" >> "$props"
done < <(env)
if [ ! -e "${KAFKA_LOG_DIRS:-/var/lib/kafka/data}/meta.properties" ]; then
  /opt/kafka/bin/run-class.sh kafka.tools.StorageTool format --ignore-formatted --feature transaction.version=2 \
    -t "${CLUSTER_ID:-5L6g3nShT-eMCtK--X86sw}" -c "$props" >/dev/null
fi
exec /opt/kafka/bin/run-class.sh kafka.Kafka "$props"
