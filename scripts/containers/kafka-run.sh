#!/bin/bash
# Starts a single-node KRaft broker+controller the way the apache/kafka image does: every KAFKA_*
# variable is a server property (KAFKA_LOG_DIRS -> log.dirs; `___` stands for `-`, `__` for `_`),
# over defaults that make a working single node; KAFKA_HEAP_OPTS and KAFKA_OPTS are JVM flags;
# CLUSTER_ID formats the storage on first start. Logs go to stdout.
# SCRAM_USERNAME with SCRAM_PASSWORD_FILE (a mounted secret): a SCRAM-SHA-512 user written into the
# metadata log when the storage is formatted, for a SASL listener (KRaft keeps SCRAM credentials there,
# and a broker with only SASL listeners has no way in to add one later). The password is on
# StorageTool's command line for the second it runs: the tool reads it from nowhere else.
# The Compose file mounts this script into the official apache/kafka image too (its `configs`), so
# both images start the same way.
set -euo pipefail

CONFIG=/opt/kafka/config
PROPS="$CONFIG/server.properties"

# shellcheck disable=SC2054 # commas inside values, not between elements
declare -A props=(
  [node.id]=1
  [process.roles]=broker,controller
  [listeners]=PLAINTEXT://:9092,CONTROLLER://:9093
  [advertised.listeners]=PLAINTEXT://localhost:9092
  [controller.listener.names]=CONTROLLER
  [controller.quorum.voters]=1@localhost:9093
  [listener.security.protocol.map]=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
  [log.dirs]=/var/lib/kafka/data
  [num.partitions]=1
  [offsets.topic.replication.factor]=1
  [transaction.state.log.replication.factor]=1
  [transaction.state.log.min.isr]=1
  [group.initial.rebalance.delay.ms]=0
  # two cores at most on the machines this image is for
  [num.network.threads]=2
  [num.io.threads]=4
  [background.threads]=4
  [log.cleaner.threads]=1
  [log.cleaner.dedupe.buffer.size]=8388608
)
while IFS='=' read -r -d '' name value; do
  case "$name" in
    KAFKA_HEAP_OPTS | KAFKA_OPTS | KAFKA_JVM_PERFORMANCE_OPTS | KAFKA_LOG4J_OPTS) continue ;;
    KAFKA_*)
      key="${name#KAFKA_}"
      key="${key,,}"
      key="${key//___/-}"
      key="${key//__/@}"
      key="${key//_/.}"
      props["${key//@/_}"]="$value"
      ;;
  esac
done < <(env -0)

{
  echo '# Generated at start by /opt/kafka/run from the KAFKA_* environment.'
  for key in "${!props[@]}"; do printf '%s=%s\n' "$key" "${props[$key]}"; done | sort
} >"$PROPS"

cat >"$CONFIG/log4j.properties" <<'LOG4J'
log4j.rootLogger=INFO, stdout
log4j.appender.stdout=org.apache.log4j.ConsoleAppender
log4j.appender.stdout.layout=org.apache.log4j.PatternLayout
log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.kafka.request.logger=WARN
log4j.logger.state.change.logger=WARN
log4j.logger.kafka.log.LogCleaner=WARN
LOG4J

if [[ ! -f "${props[log.dirs]%%,*}/meta.properties" ]]; then
  scram=()
  if [[ -n "${SCRAM_USERNAME:-}" ]]; then
    [[ -s "${SCRAM_PASSWORD_FILE:-}" ]] || { echo "kafka-run: SCRAM_USERNAME needs SCRAM_PASSWORD_FILE, a readable file" >&2; exit 1; }
    scram=(--add-scram "SCRAM-SHA-512=[name=$SCRAM_USERNAME,password=$(tr -d '\n' <"$SCRAM_PASSWORD_FILE")]")
  fi
  java -Xmx256m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC \
    -Dlog4j.configuration="file:$CONFIG/tools-log4j.properties" -cp '/opt/kafka/libs/*' \
    kafka.tools.StorageTool format --ignore-formatted -t "${CLUSTER_ID:-5L6g3nShT-eMCtK--X86sw}" -c "$PROPS" "${scram[@]}"
fi

# shellcheck disable=SC2086 # the *_OPTS variables are lists of JVM flags
exec java ${KAFKA_HEAP_OPTS:--Xms256m -Xmx512m} \
  ${KAFKA_JVM_PERFORMANCE_OPTS:--XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35 -XX:+ExplicitGCInvokesConcurrent} \
  -Djava.awt.headless=true -Dlog4j.configuration="file:$CONFIG/log4j.properties" ${KAFKA_OPTS:-} \
  -cp '/opt/kafka/libs/*' kafka.Kafka "$PROPS"
