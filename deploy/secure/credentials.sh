#!/bin/bash
# The secure stack's credentials, made once on its first start by a one-shot job in the Kafka image
# (it has Java's keytool) and kept in volumes: one volume per role, so that each service mounts only
# its own password. Runs as root to hand each file to the user that reads it (Kafka's uid 1000,
# facestream's 10001). A second start keeps what the first made.
#   /out/broker   kafka.p12 (TLS key), ca.pem, jaas.conf (every user's password), admin.properties
#   /out/ROLE     client.properties (SASL_SSL, PLAIN, the role's user and password), ca.pem
set -euo pipefail
ROLES="admin camera detector pose alerting alert-store notifier dashboard"
out=/out
if [ -e "$out/broker/jaas.conf" ]; then
  echo "credentials kept from the first start"
  exit 0
fi
: "${KEYSTORE_PASSWORD:?}"
password() { head -c 32 /dev/urandom | base64 | tr -dc 'A-Za-z0-9' | head -c 32; }

# One self-signed certificate for every Kafka node, under each name a client may dial; the clients
# trust it as their CA.
keytool -genkeypair -alias kafka -keyalg RSA -keysize 2048 -validity 3650 -dname CN=kafka \
  -ext SAN=dns:kafka,dns:kafka-2,dns:kafka-3,dns:localhost,ip:127.0.0.1 \
  -keystore "$out/broker/kafka.p12" -storetype PKCS12 -storepass "$KEYSTORE_PASSWORD" -keypass "$KEYSTORE_PASSWORD" \
  2>/dev/null
keytool -exportcert -rfc -alias kafka -keystore "$out/broker/kafka.p12" -storetype PKCS12 \
  -storepass "$KEYSTORE_PASSWORD" -file "$out/broker/ca.pem" 2>/dev/null

declare -A secret
for role in $ROLES; do secret[$role]=$(password); done

# The brokers check every user's password (SASL/PLAIN, over TLS only) and log in to each other, and
# to the controllers, as admin.
{
  echo "KafkaServer {"
  echo "  org.apache.kafka.common.security.plain.PlainLoginModule required"
  echo "  username=\"admin\" password=\"${secret[admin]}\""
  for role in $ROLES; do echo "  user_$role=\"${secret[$role]}\""; done
  echo "  ;"
  echo "};"
} > "$out/broker/jaas.conf"
# Kafka's own tools as admin (the healthcheck).
cat > "$out/broker/admin.properties" <<PROPERTIES
security.protocol=SASL_SSL
sasl.mechanism=PLAIN
sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="${secret[admin]}";
ssl.truststore.type=PEM
ssl.truststore.location=/etc/kafka/credentials/ca.pem
PROPERTIES
chown -R 1000 "$out/broker"
chmod 600 "$out/broker"/*

# Each role: the client settings of every facestream process it runs (FACESTREAM_KAFKA_CONFIG).
for role in $ROLES; do
  cp "$out/broker/ca.pem" "$out/$role/ca.pem"
  cat > "$out/$role/client.properties" <<PROPERTIES
security.protocol=SASL_SSL
sasl.mechanism=PLAIN
sasl.username=$role
sasl.password=${secret[$role]}
ssl.ca.location=/etc/facestream/kafka/ca.pem
PROPERTIES
  chown -R 10001 "$out/$role"
  chmod 600 "$out/$role/client.properties"
done
echo "credentials made: TLS for kafka, kafka-2, kafka-3 and localhost; users $ROLES"
