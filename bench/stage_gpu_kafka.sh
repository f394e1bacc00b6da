#!/usr/bin/env bash
# Pack what a Kafka broker needs on the GPU machine, which has no Java and no Maven:
# a jlink-trimmed Java runtime and the broker's jars, as two archives under .stage/ (git-ignored),
# each small enough for one device call's carry. bench/README.md says how to use them.
set -euo pipefail
cd "$(dirname "$0")/.."
home="${FACESTREAM_HOME:-$HOME/.facestream}"
[ -d "$home/kafka/lib" ] || { echo "run 'facestream kafka start' once here first (it fetches the jars)"; exit 1; }
mkdir -p .stage
rm -rf .stage/jre
jlink --add-modules java.base,java.logging,java.management,java.naming,java.security.jgss,java.security.sasl,java.sql,java.xml,jdk.unsupported,jdk.management,java.desktop,jdk.crypto.ec,java.net.http,java.scripting \
  --strip-debug --no-man-pages --no-header-files --compress=2 --output .stage/jre
tar cJf .stage/jre.tar.xz -C .stage jre && rm -rf .stage/jre
tar cJf .stage/kafka-lib.tar.xz -C "$home/kafka" lib
ls -la .stage
