#!/bin/bash
# What the apache/kafka image's script of this name runs; a short-lived JVM (small heap, quick JIT)
# since the health check starts one every few seconds.
set -euo pipefail
exec java -Xmx128m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xshare:auto \
  -Dlog4j.configuration=file:/opt/kafka/config/tools-log4j.properties \
  -cp '/opt/kafka/libs/*' kafka.admin.BrokerApiVersionsCommand "$@"
