#!/bin/sh
# Run one of Kafka's classes on the jars in /opt/kafka/libs (what the distribution's kafka-run-class.sh
# does, KAFKA_OPTS included: e.g. the JAAS file of a SASL listener).
exec java ${KAFKA_HEAP_OPTS:--Xms256m -Xmx1g} -Dlog4j2.configurationFile=/opt/kafka/config/log4j2.xml \
  ${KAFKA_OPTS:-} -cp '/opt/kafka/libs/*' "$@"
