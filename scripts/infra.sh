#!/usr/bin/env bash
# Local servers for the distributed runtime, without Docker and without internet
# (only package registries: Maven Central, the Go module proxy, Debian apt).
#
#   scripts/infra.sh up     [kafka|mongo|redis ...]  install (cached in .infra/) and start; idempotent
#   scripts/infra.sh down   [kafka|mongo|redis ...]  stop (TERM, wait, KILL) and delete data dirs
#   scripts/infra.sh stop   [kafka|mongo|redis ...]  stop but keep the data (an outage; `up` resumes it)
#   scripts/infra.sh status [kafka|mongo|redis ...]  show each; exit 1 if any is not running
#   scripts/infra.sh check  [kafka|mongo|redis ...]  real round trip to each (topic create/list/
#                                                    delete, insert/find/drop, SET/GET); exit 1 on failure
#   scripts/infra.sh env    [--plain]                print the connection variables
#   scripts/infra.sh cluster up [--plaintext]        three Kafka brokers (KRaft, kafka-1..kafka-3) and a
#   scripts/infra.sh cluster env|down|status         Redis Cluster (redis-1..redis-3 primaries, redis-4..6
#   scripts/infra.sh cluster stop|start NODE         their replicas) beside a MongoDB-wire server, on ports
#                                                    of their own (decision 48; see "cluster" below),
#                                                    secured by default (decision 53: TLS from a certificate
#                                                    authority of their own, SASL/SCRAM, an ACL user, a
#                                                    password); --plaintext: open, as before. env prints
#                                                    what the product needs (KAFKA_BROKERS, KAFKA_SSL_*,
#                                                    KAFKA_SASL_*, REDIS_CLUSTER_NODES, REDIS_TLS*,
#                                                    REDIS_USERNAME, MONGO_URL_FILE, the *_FILE of the
#                                                    passwords); stop/start one node for a fault, its data kept
#   scripts/infra.sh install [kafka|mongo|redis ...] only fetch or build what `up` would run (Kafka's
#                                                    jars, the FerretDB binary, Debian's redis-server);
#                                                    starts nothing (scripts/containers.sh copies them
#                                                    into its images)
#
# Servers (all on 127.0.0.1 only):
#   kafka  Apache Kafka 3.9.1, single-node KRaft (broker+controller), jars from Maven Central
#          via scripts/infra/kafka/pom.xml          KAFKA_PORT (19092), KAFKA_CONTROLLER_PORT (19093)
#   mongo  FerretDB v1.24 embedded (MongoDB wire protocol), built from scripts/infra/ferretdb
#          (Go module)                              MONGO_PORT (27018)
#          on its PostgreSQL backend: Debian's PostgreSQL (apt), one cluster per instance with no
#          TCP listener, only a Unix socket in $INFRA_DIR/postgres/run; run as the `postgres` user
#          when this script runs as root. `mongo` is both: up starts PostgreSQL then FerretDB, stop
#          and down stop FerretDB then PostgreSQL. scripts/infra/postgres/ferretdb-indexes.sql
#          gives FerretDB's indexes GIN twins, so its `_id` and equality lookups use an index;
#          scripts/infra/postgres/ferretdb-backend.conf holds the settings the rsd-ferretdb image shares.
#   redis  Debian's redis-server                    REDIS_PORT (16379)
#
# `up` and `env` print `export KAFKA_BROKERS=...` lines on stdout (progress goes to stderr), so:
#   out="$(scripts/infra.sh up)" && eval "$out"     (a bare eval "$(...)" would hide a failed up)
#   eval "$(scripts/infra.sh env)"
# `env --plain` prints KEY=VALUE lines (dotenv / node --env-file).
#
# State (configuration, data, pid files, logs) lives in INFRA_DIR (default .infra/), so a second
# instance with its own INFRA_DIR and ports (e.g. `npm run soak`) never touches the first one.
# Downloads and builds (Kafka's jars, the FerretDB binary) stay cached in .infra/ for every instance.
# Logs: $INFRA_DIR/kafka/kafka.log, $INFRA_DIR/ferretdb/ferretdb.log, $INFRA_DIR/postgres/postgres.log,
# $INFRA_DIR/redis/redis.log.
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$SCRIPT_DIR/.." && pwd)"
CACHE="$ROOT/.infra"
INFRA="$(realpath -m "${INFRA_DIR:-$CACHE}")"
SRC="$SCRIPT_DIR/infra"
HOST=127.0.0.1

KAFKA_PORT="${KAFKA_PORT:-19092}"
KAFKA_CONTROLLER_PORT="${KAFKA_CONTROLLER_PORT:-19093}"
MONGO_PORT="${MONGO_PORT:-27018}"
REDIS_PORT="${REDIS_PORT:-16379}"
KAFKA_HEAP="${KAFKA_HEAP:--Xms256m -Xmx512m}"
KAFKA_START_TIMEOUT="${KAFKA_START_TIMEOUT:-90}"
MONGO_START_TIMEOUT="${MONGO_START_TIMEOUT:-30}"
PG_START_TIMEOUT="${PG_START_TIMEOUT:-60}"
REDIS_START_TIMEOUT="${REDIS_START_TIMEOUT:-15}"
STOP_TIMEOUT="${STOP_TIMEOUT:-30}"

KAFKA_DIR="$INFRA/kafka"
KAFKA_LIBS="$CACHE/kafka/libs"
KAFKA_DATA="$KAFKA_DIR/data"
KAFKA_PID="$KAFKA_DIR/kafka.pid"
KAFKA_LOG="$KAFKA_DIR/kafka.log"
KAFKA_OUT="$KAFKA_DIR/kafka.out"
KAFKA_PROPS="$KAFKA_DIR/server.properties"
KAFKA_ADMIN_PROPS="$KAFKA_DIR/admin.properties"
KAFKA_TOOLS_LOG4J="$SRC/kafka/tools-log4j.properties" # shared with the rsd-kafka image

FDB_DIR="$INFRA/ferretdb"
FDB_PID="$FDB_DIR/ferretdb.pid"
FDB_LOG="$FDB_DIR/ferretdb.log"
FDB_BIN="$CACHE/bin/ferretdb-embedded"
# Both backends stay compiled in (-sqlite-dir still works for comparisons); part of the build stamp.
FDB_BUILD_FLAGS=(-trimpath -buildvcs=false)

PG_DIR="$INFRA/postgres"
PG_DATA="$PG_DIR/data"
PG_RUN="$PG_DIR/run" # the Unix socket (no TCP port: instances cannot clash)
PG_LOG="$PG_DIR/postgres.log"
PG_DB=ferretdb
PG_BINDIR="${PG_BINDIR:-}" # default: the newest /usr/lib/postgresql/<version>/bin

REDIS_DIR="$INFRA/redis"
REDIS_DATA="$REDIS_DIR/data"
REDIS_PID="$REDIS_DIR/redis.pid"
REDIS_LOG="$REDIS_DIR/redis.log"

ALL_SERVICES=(kafka mongo redis)

# ---------------------------------------------------------------- helpers

LOG_TAG=infra
# shellcheck source=scripts/lib/common.sh
source "$SCRIPT_DIR/lib/common.sh"
# shellcheck source=scripts/lib/engine-tls.sh
source "$SCRIPT_DIR/lib/engine-tls.sh"

port_open() { timeout 1 bash -c "exec 3<>/dev/tcp/$HOST/$1" 2>/dev/null; }

# running PID: the process exists and is not a zombie (orphaned servers are reaped by PID 1,
# which may take a moment; a zombie has already exited).
running() {
  local st
  kill -0 "$1" 2>/dev/null || return 1
  st="$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null || true)"
  [[ -n "$st" && "$st" != Z && "$st" != X ]]
}

# pid_alive PID MARKER: the process exists and its command line contains MARKER.
pid_alive() {
  local pid="$1" marker="$2" cmd
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  running "$pid" || return 1
  cmd="$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null || true)"
  [[ "$cmd" == *"$marker"* ]]
}

read_pid() { if [[ -f "$1" ]]; then tr -dc '0-9' <"$1"; fi; }

# Start a command detached (own session, no inherited stdio or lock fd: `$(scripts/infra.sh up)`
# must not wait for the servers) and record its pid (the exec'd process keeps the shell's pid).
spawn() {
  local pidfile="$1" logfile="$2" prog="$3"
  shift 2
  # 9>&-: the servers must not inherit the lock taken by with_lock
  # shellcheck disable=SC2016 # $$, $1 and $@ belong to the inner shell
  setsid bash -c 'echo $$ >"$1"; shift; exec "$@"' _ "$pidfile" "$@" </dev/null >>"$logfile" 2>&1 9>&- &
  local i
  for i in $(seq 1 50); do [[ -s "$pidfile" ]] && return 0; sleep 0.1; done
  die "could not start $prog (no pid written to $pidfile)"
}

# stop_pid NAME PID [SIGNAL]: SIGNAL (default TERM), wait up to STOP_TIMEOUT, then SIGKILL; an
# empty PID (the *_pid functions found none) only says that NAME is not running.
stop_pid() {
  local name="$1" pid="$2" sig="${3:-TERM}" t0 i
  if [[ -z "$pid" ]]; then log "$name: not running"; return 0; fi
  t0="$(now)"
  kill -"$sig" "$pid" 2>/dev/null || return 0
  for ((i = 0; i < STOP_TIMEOUT * 10; i++)); do
    running "$pid" || { log "$name: stopped (pid $pid) in $(elapsed "$t0")"; return 0; }
    sleep 0.1
  done
  log "$name: still running after ${STOP_TIMEOUT}s, sending SIGKILL to $pid"
  kill -KILL "$pid" 2>/dev/null || true
  for ((i = 0; i < 50; i++)); do running "$pid" || return 0; sleep 0.1; done
  die "$name: pid $pid survived SIGKILL"
}

log_tail() {
  if [[ -f "$1" ]]; then
    { echo "----- last lines of $1 -----"; tail -n "${2:-40}" "$1"; echo "-----"; } >&2
  fi
}

# Fail early if a foreign process holds a port we need.
require_free_port() {
  local name="$1" port="$2"
  if port_open "$port"; then
    die "$name: 127.0.0.1:$port is already in use by another process (not started by this script); stop it or set ${3} to a free port"
  fi
}

sha_of() { cat "$@" | sha256sum | cut -d' ' -f1; }

# ---------------------------------------------------------------- kafka

KAFKA_MARKER="$KAFKA_PROPS"
kafka_pid() { local p; p="$(read_pid "$KAFKA_PID")"; if pid_alive "$p" "$KAFKA_MARKER"; then echo "$p"; fi; }

kafka_install() {
  local stamp="$KAFKA_LIBS/.pom.sha256" want t0
  want="$(sha_of "$SRC/kafka/pom.xml")"
  if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" ]] && compgen -G "$KAFKA_LIBS/kafka_2.13-*.jar" >/dev/null; then
    log "kafka: jars cached in ${KAFKA_LIBS#"$ROOT"/}"
    return 0
  fi
  command -v java >/dev/null || die "kafka: java not found (Java 17 is required)"
  command -v mvn >/dev/null || die "kafka: mvn not found (Maven is required to fetch Kafka from Maven Central)"
  t0="$(now)"
  log "kafka: fetching Kafka 3.9.1 jars from Maven Central (mvn dependency:copy-dependencies)..."
  rm -rf "$KAFKA_LIBS.tmp"
  local out mrc=0
  out="$(mvn -q -B -Dstyle.color=never -f "$SRC/kafka/pom.xml" dependency:copy-dependencies \
    -DoutputDirectory="$KAFKA_LIBS.tmp" </dev/null 2>&1)" || mrc=$?
  out="$(printf '%s' "$out" | sed -e 's/\x1b\[[0-9;]*m//g')"
  [[ -z "${out//[[:space:]]/}" ]] || printf '%s\n' "$out" >&2
  ((mrc == 0)) || die "kafka: mvn dependency:copy-dependencies failed (exit $mrc)"
  rm -rf "$KAFKA_LIBS"
  mv "$KAFKA_LIBS.tmp" "$KAFKA_LIBS"
  echo "$want" >"$stamp"
  log "kafka: jars installed ($(find "$KAFKA_LIBS" -name '*.jar' | wc -l) jars) in $(elapsed "$t0")"
}

kafka_java() { java -cp "$KAFKA_LIBS/*" "$@"; }

# Short-lived Kafka CLI (TopicCommand, StorageTool): small heap, quick JIT, quiet logging.
kafka_tool() {
  java -Xmx256m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC \
    -Dlog4j.configuration="file:$KAFKA_TOOLS_LOG4J" \
    -cp "$KAFKA_LIBS/*" "$@" </dev/null
}

# The storage settings every broker here shares: small segments and indexes, a day's retention, one cleaner.
kafka_storage_settings() {
  cat <<'EOF'
num.recovery.threads.per.data.dir=1
log.segment.bytes=16777216
log.index.size.max.bytes=1048576
log.retention.hours=24
log.retention.check.interval.ms=300000
log.cleaner.threads=1
log.cleaner.dedupe.buffer.size=8388608
EOF
}

# Topics and replication, for a node of $1 brokers that acknowledge a write once $2 have it: every
# internal topic as replicated as the records, topics made only by the product (never on first use).
kafka_replication_settings() {
  local replicas="$1" min_isr="$2"
  cat <<EOF
num.partitions=1
default.replication.factor=$replicas
min.insync.replicas=$min_isr
offsets.topic.replication.factor=$replicas
offsets.topic.num.partitions=10
transaction.state.log.replication.factor=$replicas
transaction.state.log.min.isr=$min_isr
transaction.state.log.num.partitions=10
group.initial.rebalance.delay.ms=0
auto.create.topics.enable=false
delete.topic.enable=true
EOF
}

# The AdminClient settings of the TopicCommand probes: answer within seconds, retry little.
kafka_admin_settings() {
  cat <<'EOF'
# Generated by scripts/infra.sh -- AdminClient settings for TopicCommand probes
request.timeout.ms=5000
default.api.timeout.ms=10000
retries=2
EOF
}

# A broker's log4j appender: FILE, rolled at 20 MB, two kept. The callers add their loggers' levels.
kafka_log4j() {
  cat <<EOF
log4j.rootLogger=INFO, file
log4j.appender.file=org.apache.log4j.RollingFileAppender
log4j.appender.file.File=$1
log4j.appender.file.MaxFileSize=20MB
log4j.appender.file.MaxBackupIndex=2
log4j.appender.file.layout=org.apache.log4j.PatternLayout
log4j.appender.file.layout.ConversionPattern=[%d] %p %m (%c)%n
EOF
}

kafka_write_config() {
  mkdir -p "$KAFKA_DATA"
  cat >"$KAFKA_PROPS" <<EOF
# Generated by scripts/infra.sh -- single-node KRaft broker+controller for local dev/tests.
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@$HOST:$KAFKA_CONTROLLER_PORT
listeners=PLAINTEXT://$HOST:$KAFKA_PORT,CONTROLLER://$HOST:$KAFKA_CONTROLLER_PORT
advertised.listeners=PLAINTEXT://$HOST:$KAFKA_PORT
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=$KAFKA_DATA

# single node: every replication factor is 1
$(kafka_replication_settings 1 1)

# small footprint (2 cores)
num.network.threads=2
num.io.threads=4
background.threads=4
$(kafka_storage_settings)
EOF
  cat >"$KAFKA_DIR/log4j.properties" <<EOF
# Generated by scripts/infra.sh
$(kafka_log4j "$KAFKA_LOG")
log4j.logger.kafka=INFO
log4j.logger.org.apache.kafka=INFO
log4j.logger.kafka.request.logger=WARN
log4j.logger.state.change.logger=WARN
log4j.logger.kafka.log.LogCleaner=WARN
EOF
  kafka_admin_settings >"$KAFKA_ADMIN_PROPS"
}

kafka_format() {
  local id_file="$KAFKA_DIR/cluster.id" t0
  [[ -f "$KAFKA_DATA/meta.properties" ]] && return 0
  t0="$(now)"
  if [[ ! -s "$id_file" ]]; then
    kafka_tool kafka.tools.StorageTool random-uuid >"$id_file.tmp" || die "kafka: StorageTool random-uuid failed"
    mv "$id_file.tmp" "$id_file"
  fi
  kafka_tool kafka.tools.StorageTool format --ignore-formatted \
    -t "$(tr -d '[:space:]' <"$id_file")" -c "$KAFKA_PROPS" >&2 ||
    die "kafka: StorageTool format failed"
  log "kafka: storage formatted (cluster id $(cat "$id_file")) in $(elapsed "$t0")"
}

# Ask the broker for its topic list (real request through the AdminClient).
kafka_list_topics() {
  timeout 30 java -Xmx256m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC \
    -Dlog4j.configuration="file:$KAFKA_TOOLS_LOG4J" -cp "$KAFKA_LIBS/*" \
    org.apache.kafka.tools.TopicCommand --bootstrap-server "$HOST:$KAFKA_PORT" \
    --command-config "$KAFKA_ADMIN_PROPS" --list </dev/null
}

kafka_up() {
  local pid t0 deadline
  pid="$(kafka_pid)"
  if [[ -n "$pid" ]]; then log "kafka: already running (pid $pid) on $HOST:$KAFKA_PORT"; return 0; fi
  require_free_port kafka "$KAFKA_PORT" KAFKA_PORT
  require_free_port kafka-controller "$KAFKA_CONTROLLER_PORT" KAFKA_CONTROLLER_PORT
  with_install_lock kafka_install
  mkdir -p "$KAFKA_DIR"
  kafka_write_config
  kafka_format
  t0="$(now)"
  rm -f "$KAFKA_PID"
  : >"$KAFKA_OUT"
  : >"$KAFKA_LOG"
  # shellcheck disable=SC2086 # KAFKA_HEAP is a list of JVM flags
  spawn "$KAFKA_PID" "$KAFKA_OUT" java $KAFKA_HEAP \
    -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35 \
    -XX:+ExplicitGCInvokesConcurrent -Djava.awt.headless=true \
    -Dlog4j.configuration="file:$KAFKA_DIR/log4j.properties" -Dkafka.logs.dir="$KAFKA_DIR" \
    -cp "$KAFKA_LIBS/*" kafka.Kafka "$KAFKA_PROPS"
  pid="$(read_pid "$KAFKA_PID")"
  log "kafka: starting (pid $pid), waiting up to ${KAFKA_START_TIMEOUT}s for $HOST:$KAFKA_PORT..."
  deadline=$((SECONDS + KAFKA_START_TIMEOUT))
  while ! port_open "$KAFKA_PORT"; do
    if ! running "$pid"; then
      log_tail "$KAFKA_OUT" 20; log_tail "$KAFKA_LOG"; die "kafka: process exited during start-up"
    fi
    ((SECONDS < deadline)) || { log_tail "$KAFKA_LOG"; die "kafka: port $KAFKA_PORT not open after ${KAFKA_START_TIMEOUT}s"; }
    sleep 0.5
  done
  log "kafka: port open after $(elapsed "$t0"); checking the broker answers (TopicCommand --list)..."
  until kafka_list_topics >/dev/null 2>"$KAFKA_DIR/probe.err"; do
    if ! running "$pid"; then
      log_tail "$KAFKA_OUT" 20; log_tail "$KAFKA_LOG"; die "kafka: process exited during start-up"
    fi
    ((SECONDS < deadline)) || {
      log_tail "$KAFKA_DIR/probe.err" 10; log_tail "$KAFKA_LOG"
      die "kafka: broker did not answer within ${KAFKA_START_TIMEOUT}s"
    }
    sleep 1
  done
  log "kafka: ready on $HOST:$KAFKA_PORT (pid $pid) in $(elapsed "$t0")"
}

kafka_topics() {
  kafka_tool org.apache.kafka.tools.TopicCommand --bootstrap-server "$HOST:$KAFKA_PORT" \
    --command-config "$KAFKA_ADMIN_PROPS" "$@"
}

kafka_check() {
  local topic="infra-check-$$"
  if kafka_topics --create --topic "$topic" --partitions 1 --replication-factor 1 >/dev/null &&
    kafka_topics --list | grep -qx "$topic" &&
    kafka_topics --delete --topic "$topic" >/dev/null; then
    echo "created, listed and deleted topic $topic on $HOST:$KAFKA_PORT"
  else
    echo "topic create/list/delete on $HOST:$KAFKA_PORT"; return 1
  fi
}

kafka_down() {
  stop_pid kafka "$(kafka_pid)"
  rm -rf "$KAFKA_DATA" "$KAFKA_PID"
}

kafka_status() {
  local pid
  pid="$(kafka_pid)"
  if [[ -n "$pid" ]] && port_open "$KAFKA_PORT"; then
    echo "kafka  running  pid=$pid  $HOST:$KAFKA_PORT (controller :$KAFKA_CONTROLLER_PORT)  log=${KAFKA_LOG#"$ROOT"/}"
  elif [[ -n "$pid" ]]; then
    echo "kafka  starting pid=$pid  $HOST:$KAFKA_PORT not open yet"; return 1
  else
    echo "kafka  stopped"; return 1
  fi
}

# ---------------------------------------------------------------- postgres (FerretDB's backend)

# PostgreSQL refuses to run as root: as root, initdb and the server run as the `postgres` user that
# Debian's package creates, and $PG_DIR belongs to it; otherwise they run as the current user. That
# user is also the cluster's superuser, the one FerretDB connects as.
if ((EUID == 0)); then PG_OS_USER=postgres; else PG_OS_USER="$(id -un)"; fi

# Set by `cluster up` for its secured MongoDB-wire server (not for the single-node one): FerretDB
# listens on TLS only (FDB_TLS_CERT, FDB_TLS_KEY; FDB_TLS_CA for its probes), and its PostgreSQL's
# superuser is FDB_USER with the password in FDB_PASSWORD_FILE, asked of every connection (SCRAM on
# the socket). FerretDB v1 hands a client's user and password (MongoDB's PLAIN) to PostgreSQL, and
# connects without a password for a client that gives none: PostgreSQL refuses it.
FDB_TLS_CERT="${FDB_TLS_CERT:-}"
FDB_TLS_KEY="${FDB_TLS_KEY:-}"
FDB_TLS_CA="${FDB_TLS_CA:-}"
FDB_USER="${FDB_USER:-}"
FDB_PASSWORD_FILE="${FDB_PASSWORD_FILE:-}"
PG_ROLE="${FDB_USER:-$PG_OS_USER}"
as_pg() { if ((EUID == 0)); then runuser -u postgres -- "$@"; else "$@"; fi; }

# The newest /usr/lib/postgresql/<version>/bin with a server (or PG_BINDIR); empty if none.
pg_find_bindir() {
  local d
  if [[ -n "$PG_BINDIR" ]]; then
    if [[ -x "$PG_BINDIR/postgres" && -x "$PG_BINDIR/initdb" && -x "$PG_BINDIR/pg_ctl" ]]; then echo "$PG_BINDIR"; fi
    return 0
  fi
  for d in /usr/lib/postgresql/*/bin; do
    if [[ -x "$d/postgres" && -x "$d/initdb" && -x "$d/pg_ctl" && -x "$d/psql" ]]; then echo "$d"; fi
  done | sort -V | tail -n 1
}

pg_install() {
  local t0 dropin=/etc/postgresql-common/createcluster.d/90-scripts-infra-no-main.conf
  if [[ -n "$(pg_find_bindir)" ]]; then return 0; fi
  [[ -z "$PG_BINDIR" ]] || die "postgres: no postgres, initdb, pg_ctl in PG_BINDIR=$PG_BINDIR"
  t0="$(now)"
  log "postgres: installing Debian's PostgreSQL server (apt-get)..."
  (
    # On a first install Debian's package would also create and start a cluster `main` on port
    # 5432; this script runs its own, so it asks postgresql-common for none, for this install only.
    local made=''
    [[ -d "${dropin%/*}" ]] || made="${dropin%/*}"
    if mkdir -p "${dropin%/*}" 2>/dev/null &&
      echo "create_main_cluster = off  # scripts/infra.sh, removed after its apt-get install" 2>/dev/null >"$dropin"; then
      # shellcheck disable=SC2064 # expand now
      trap "rm -f '$dropin'; [[ -z '$made' ]] || rmdir '$made' 2>/dev/null || true" EXIT
    fi
    apt_install postgresql
  )
  [[ -n "$(pg_find_bindir)" ]] || die "postgres: no server under /usr/lib/postgresql/*/bin after apt-get install"
  log "postgres: installed $("$(pg_find_bindir)/postgres" --version) in $(elapsed "$t0")"
}

# The running postmaster of this instance: the pid in its lock file, if that process runs on our data dir.
pg_pid() {
  local p
  [[ -r "$PG_DATA/postmaster.pid" ]] || return 0
  p="$(head -n 1 "$PG_DATA/postmaster.pid" | tr -dc '0-9')"
  if pid_alive "$p" "-D $PG_DATA"; then echo "$p"; fi
}

# psql as the superuser over this instance's socket (no ~/.psqlrc), with its password if it has one.
pg_psql() {
  local password=''
  [[ -z "$FDB_PASSWORD_FILE" ]] || password="$(cat "$FDB_PASSWORD_FILE")"
  PGPASSWORD="$password" "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$PG_RUN" -U "$PG_ROLE" "$@" </dev/null
}

pg_write_config() {
  # Rewritten by every `up`, so changes here reach existing data dirs.
  cp "$SRC/postgres/ferretdb-backend.conf" "$PG_DATA/ferretdb-backend.conf"
  cat >"$PG_DATA/infra.conf" <<EOF
# Generated by scripts/infra.sh -- FerretDB's backend for local dev/tests (2 cores); rewritten by every up.
# No TCP listener: only a Unix socket in a directory of this instance, which only the server's user
# (and root) can enter. Authentication there is trust (pg_hba.conf from initdb --auth-local=trust):
# no password anywhere, acceptable for a loopback dev server that nobody else can reach.
listen_addresses = ''
unix_socket_directories = '$PG_RUN'
unix_socket_permissions = 0700
shared_buffers = ${PG_SHARED_BUFFERS:-128MB}
log_line_prefix = '%m [%p] %q%a '
log_min_duration_statement = ${PG_LOG_MIN_DURATION:--1}  # PG_LOG_MIN_DURATION=0: log every statement
# What it shares with the rsd-ferretdb image (a copy of scripts/infra/postgres/ferretdb-backend.conf).
include 'ferretdb-backend.conf'
EOF
  grep -qx "include 'infra.conf'" "$PG_DATA/postgresql.conf" || echo "include 'infra.conf'" >>"$PG_DATA/postgresql.conf"
  if ((EUID == 0)); then chown postgres: "$PG_DATA/infra.conf" "$PG_DATA/ferretdb-backend.conf" "$PG_DATA/postgresql.conf"; fi
}

pg_init() {
  local t0
  [[ -s "$PG_DATA/PG_VERSION" ]] && return 0
  t0="$(now)"
  rm -rf "$PG_DATA" # what an interrupted initdb left
  local auth=(--auth-local=trust) pwfile="$PG_DIR/initdb.pw"
  if [[ -n "$FDB_PASSWORD_FILE" ]]; then
    # initdb runs as the server's user, which may not read the secrets' directory: a copy of its own, removed after.
    (umask 077 && cp "$FDB_PASSWORD_FILE" "$pwfile")
    if ((EUID == 0)); then chown postgres: "$pwfile"; fi
    auth=(--auth-local=scram-sha-256 --pwfile="$pwfile")
  fi
  as_pg "$PG_BIN/initdb" -D "$PG_DATA" --username="$PG_ROLE" --encoding=UTF8 --locale=C \
    "${auth[@]}" --auth-host=reject </dev/null >"$PG_DIR/initdb.log" 2>&1 9>&- ||
    { rm -f "$pwfile"; log_tail "$PG_DIR/initdb.log"; die "postgres: initdb failed"; }
  rm -f "$pwfile"
  log "postgres: cluster initialised in ${PG_DATA#"$ROOT"/} in $(elapsed "$t0")"
}

# The database FerretDB keeps its MongoDB databases in (one schema each), and the GIN twins of its indexes.
pg_prepare_db() {
  if [[ "$(pg_psql -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = '$PG_DB'")" != 1 ]]; then
    pg_psql -d postgres -c "CREATE DATABASE $PG_DB" || die "postgres: CREATE DATABASE $PG_DB failed"
  fi
  pg_psql -d "$PG_DB" -f "$SRC/postgres/ferretdb-indexes.sql" ||
    die "postgres: applying scripts/infra/postgres/ferretdb-indexes.sql failed"
}

pg_up() {
  local pid t0
  pid="$(pg_pid)"
  if [[ -n "$pid" ]]; then log "postgres: already running (pid $pid) on ${PG_RUN#"$ROOT"/}"; return 0; fi
  with_install_lock pg_install
  PG_BIN="$(pg_find_bindir)"
  if ((EUID == 0)); then id -u postgres >/dev/null 2>&1 || die "postgres: running as root needs the 'postgres' user (Debian's package creates it)"; fi
  # the socket's path must fit in sun_path (107 bytes)
  ((${#PG_RUN} + 17 <= 107)) || die "postgres: socket directory $PG_RUN is too long for a Unix socket; use a shorter INFRA_DIR"
  mkdir -p "$PG_DIR" "$PG_RUN"
  chmod 700 "$PG_RUN"
  : >"$PG_LOG"
  if ((EUID == 0)); then chown postgres: "$PG_DIR" "$PG_RUN" "$PG_LOG"; fi
  as_pg test -w "$PG_DIR" -a -x "$PG_DIR" ||
    die "postgres: user $PG_OS_USER cannot write $PG_DIR (every parent directory needs o+x), or set INFRA_DIR elsewhere"
  pg_init
  pg_write_config
  t0="$(now)"
  as_pg "$PG_BIN/pg_ctl" start -D "$PG_DATA" -l "$PG_LOG" -w -t "$PG_START_TIMEOUT" -s </dev/null >&2 9>&- ||
    { log_tail "$PG_LOG"; die "postgres: did not start within ${PG_START_TIMEOUT}s"; }
  pg_prepare_db
  log "postgres: ready on ${PG_RUN#"$ROOT"/} (pid $(pg_pid), PostgreSQL $("$PG_BIN/postgres" --version | awk '{print $3}')) in $(elapsed "$t0")"
}

pg_stop() {
  # SIGINT: fast shutdown (disconnects clients, checkpoints); SIGTERM would wait for every client.
  stop_pid postgres "$(pg_pid)" INT
}

# ---------------------------------------------------------------- mongo (FerretDB on PostgreSQL)

# urlencode STRING: percent-encodes all but unreserved characters and '/'.
urlencode() {
  local LC_ALL=C s="$1" out="" c i
  for ((i = 0; i < ${#s}; i++)); do
    c="${s:i:1}"
    case "$c" in
      [A-Za-z0-9/._~-]) out+="$c" ;;
      *) printf -v c '%%%02X' "'$c"; out+="$c" ;;
    esac
  done
  printf '%s' "$out"
}

FDB_PG_URL="postgres:///$PG_DB?host=$(urlencode "$PG_RUN")&user=$(urlencode "$PG_ROLE")"
# The socket dir, not the binary: every instance runs the same binary.
FDB_MARKER="-postgresql-url $FDB_PG_URL"
fdb_pid() { local p; p="$(read_pid "$FDB_PID")"; if pid_alive "$p" "$FDB_MARKER"; then echo "$p"; fi; }

fdb_install() {
  local stamp="$FDB_BIN.sha256" want t0
  want="$( { sha_of "$SRC/ferretdb/go.mod" "$SRC/ferretdb/go.sum" "$SRC/ferretdb/main.go"; echo "${FDB_BUILD_FLAGS[*]}"; } | sha256sum | cut -d' ' -f1)"
  if [[ -x "$FDB_BIN" && -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
    log "mongo: ferretdb-embedded binary up to date in ${FDB_BIN#"$ROOT"/}"
    return 0
  fi
  command -v go >/dev/null || die "mongo: go not found (Go >= 1.24 is required to build FerretDB)"
  t0="$(now)"
  log "mongo: building FerretDB v1.24 (embedded, PostgreSQL and SQLite backends) -> ${FDB_BIN#"$ROOT"/} (first build takes a minute or two)..."
  mkdir -p "$CACHE/bin"
  (cd "$SRC/ferretdb" && CGO_ENABLED=0 go build "${FDB_BUILD_FLAGS[@]}" -o "$FDB_BIN.tmp" . </dev/null >&2) ||
    die "mongo: go build of scripts/infra/ferretdb failed"
  mv "$FDB_BIN.tmp" "$FDB_BIN"
  echo "$want" >"$stamp"
  log "mongo: built in $(elapsed "$t0")"
}

# fdb_ping [-smoke]: MongoDB `ping` (and insert/find/drop) through the Go driver in the binary;
# secured, over TLS as FDB_USER (the password in the environment, not on the command line).
fdb_ping() {
  if [[ -z "$FDB_TLS_CERT" ]]; then "$FDB_BIN" -ping "mongodb://$HOST:$MONGO_PORT/" "$@" </dev/null; return; fi
  FERRETDB_PING_PASSWORD="$(cat "$FDB_PASSWORD_FILE")" "$FDB_BIN" -ping "mongodb://$HOST:$MONGO_PORT/?tls=true&tlsCAFile=$(urlencode "$FDB_TLS_CA")" \
    -ping-user "$FDB_USER" "$@" </dev/null
}

fdb_up() {
  local pid t0 deadline
  pg_up
  pid="$(fdb_pid)"
  if [[ -n "$pid" ]]; then log "mongo: already running (pid $pid) on $HOST:$MONGO_PORT"; return 0; fi
  require_free_port mongo "$MONGO_PORT" MONGO_PORT
  with_install_lock fdb_install
  mkdir -p "$FDB_DIR"
  t0="$(now)"
  rm -f "$FDB_PID"
  : >"$FDB_LOG"
  local listen=(-listen "$HOST:$MONGO_PORT")
  [[ -z "$FDB_TLS_CERT" ]] || listen=(-listen '' -listen-tls "$HOST:$MONGO_PORT" -tls-cert-file "$FDB_TLS_CERT" -tls-key-file "$FDB_TLS_KEY")
  FERRETDB_TELEMETRY=disable DO_NOT_TRACK=1 spawn "$FDB_PID" "$FDB_LOG" "$FDB_BIN" \
    "${listen[@]}" -postgresql-url "$FDB_PG_URL" -log-level "${MONGO_LOG_LEVEL:-info}"
  pid="$(read_pid "$FDB_PID")"
  log "mongo: starting FerretDB (pid $pid), waiting up to ${MONGO_START_TIMEOUT}s..."
  deadline=$((SECONDS + MONGO_START_TIMEOUT))
  until port_open "$MONGO_PORT" && fdb_ping >/dev/null 2>"$FDB_DIR/probe.err"; do
    if ! running "$pid"; then log_tail "$FDB_LOG"; die "mongo: FerretDB exited during start-up"; fi
    ((SECONDS < deadline)) || { log_tail "$FDB_DIR/probe.err" 5; log_tail "$FDB_LOG"; die "mongo: FerretDB did not answer ping within ${MONGO_START_TIMEOUT}s"; }
    sleep 0.3
  done
  log "mongo: ready on $HOST:$MONGO_PORT (FerretDB/PostgreSQL, pid $pid, ping ok) in $(elapsed "$t0")"
}

fdb_check() { fdb_ping -smoke 2>&1; }

# Stops FerretDB, then PostgreSQL; the data stays.
fdb_stop() {
  stop_pid mongo "$(fdb_pid)"
  pg_stop
}

fdb_down() {
  fdb_stop
  # $FDB_DIR/data: the SQLite databases of an older version of this script
  rm -rf "$FDB_PID" "$FDB_DIR/data" "$PG_DATA" "$PG_RUN"
}

fdb_status() {
  local pid pg
  pid="$(fdb_pid)"
  pg="$(pg_pid)"
  pg="${pg:+postgres pid=$pg}"
  if [[ -z "$pid" ]]; then
    echo "mongo  stopped${pg:+ ($pg still running)}"; return 1
  elif [[ -z "$pg" ]]; then
    echo "mongo  running  pid=$pid  on $HOST:$MONGO_PORT but its PostgreSQL is stopped"; return 1
  elif fdb_ping >/dev/null 2>&1; then
    echo "mongo  running  pid=$pid  $HOST:$MONGO_PORT (FerretDB v1.24/PostgreSQL, $pg, ping ok)  log=${FDB_LOG#"$ROOT"/} ${PG_LOG#"$ROOT"/}"
  else
    echo "mongo  running  pid=$pid  but ping failed on $HOST:$MONGO_PORT ($pg)"; return 1
  fi
}

# ---------------------------------------------------------------- redis

redis_cli() { redis-cli -h "$HOST" -p "$REDIS_PORT" "$@" </dev/null; }
redis_pid() { local p; p="$(read_pid "$REDIS_PID")"; if pid_alive "$p" "redis-server $HOST:$REDIS_PORT"; then echo "$p"; fi; }

redis_install() {
  local t0
  if command -v redis-server >/dev/null && command -v redis-cli >/dev/null; then return 0; fi
  t0="$(now)"
  log "redis: installing Debian's redis-server (apt-get)..."
  apt_install redis-server redis-tools
  command -v redis-server >/dev/null || die "redis: redis-server still missing after apt-get install"
  log "redis: installed $(redis-server --version | awk '{print $3}') in $(elapsed "$t0")"
}

redis_up() {
  local pid t0 deadline
  pid="$(redis_pid)"
  if [[ -n "$pid" ]]; then log "redis: already running (pid $pid) on $HOST:$REDIS_PORT"; return 0; fi
  require_free_port redis "$REDIS_PORT" REDIS_PORT
  redis_install
  mkdir -p "$REDIS_DATA"
  t0="$(now)"
  rm -f "$REDIS_PID"
  : >"$REDIS_LOG"
  redis-server --bind "$HOST" --port "$REDIS_PORT" --protected-mode yes \
    --save '' --appendonly no --daemonize yes \
    --pidfile "$REDIS_PID" --logfile "$REDIS_LOG" --dir "$REDIS_DATA" \
    --maxmemory "${REDIS_MAXMEMORY:-512mb}" </dev/null >/dev/null 2>&1 9>&- ||
    { log_tail "$REDIS_LOG"; die "redis: redis-server failed to start"; }
  deadline=$((SECONDS + REDIS_START_TIMEOUT))
  until [[ "$(redis_cli ping 2>/dev/null)" == PONG ]]; do
    ((SECONDS < deadline)) || { log_tail "$REDIS_LOG"; die "redis: no PONG within ${REDIS_START_TIMEOUT}s"; }
    sleep 0.1
  done
  pid="$(redis_pid)"
  [[ -n "$pid" ]] || pid="$(redis_cli info server | tr -d '\r' | awk -F: '/^process_id:/ {print $2}')"
  log "redis: ready on $HOST:$REDIS_PORT (pid $pid, PONG) in $(elapsed "$t0")"
}

redis_check() {
  local key="infra-check-$$" rc=0
  [[ "$(redis_cli ping)" == PONG && "$(redis_cli set "$key" 1 EX 10)" == OK &&
    "$(redis_cli get "$key")" == 1 ]] && redis_cli del "$key" >/dev/null || rc=1
  echo "PING/SET/GET on $HOST:$REDIS_PORT"
  return "$rc"
}

redis_down() {
  local pid dir
  pid="$(redis_pid)"
  if [[ -z "$pid" ]] && command -v redis-cli >/dev/null && [[ "$(redis_cli ping 2>/dev/null)" == PONG ]]; then
    # pid file lost: only stop it if it is ours (its working dir is our data dir)
    dir="$(redis_cli config get dir 2>/dev/null | sed -n 2p)"
    if [[ "$dir" == "$REDIS_DATA" ]]; then
      pid="$(redis_cli info server | tr -d '\r' | awk -F: '/^process_id:/ {print $2}')"
    fi
  fi
  stop_pid redis "$pid"
  rm -rf "$REDIS_DATA" "$REDIS_PID"
}

redis_status() {
  local pid
  pid="$(redis_pid)"
  if [[ -n "$pid" ]] && [[ "$(redis_cli ping 2>/dev/null)" == PONG ]]; then
    echo "redis  running  pid=$pid  $HOST:$REDIS_PORT (PONG)  log=${REDIS_LOG#"$ROOT"/}"
  else
    echo "redis  stopped"; return 1
  fi
}

# ---------------------------------------------------------------- cluster (decision 48)

# Three Kafka brokers (each broker and controller: a KRaft quorum of three) and a Redis Cluster of
# three primaries with a replica each, beside a MongoDB-wire server of their own, all on loopback
# and on ports of their own, so the single-node servers (and the instances of `npm run soak` and
# `npm run test:start-order`) can run at the same time. Their state lives
# in CLUSTER_INFRA_DIR (default $INFRA_DIR/cluster); Kafka's jars and redis-server are the ones the
# single-node path installs. Every port is below the kernel's ephemeral range (32768–60999 here): a port in
# it can be taken at any moment by a client connection's own end, and a server then fails to bind it
# (a Redis node's bus once did, at 36394, in CI).
CLUSTER_DIR="$(realpath -m "${CLUSTER_INFRA_DIR:-$INFRA/cluster}")"
CLUSTER_KAFKA_PORT="${CLUSTER_KAFKA_PORT:-29291}"                       # kafka-N: CLUSTER_KAFKA_PORT + N - 1
CLUSTER_KAFKA_CONTROLLER_PORT="${CLUSTER_KAFKA_CONTROLLER_PORT:-29391}" # its controller: the same from here
CLUSTER_REDIS_PORT="${CLUSTER_REDIS_PORT:-26391}"                       # redis-N: CLUSTER_REDIS_PORT + N - 1
CLUSTER_REDIS_BUS_PORT="${CLUSTER_REDIS_BUS_PORT:-26491}"               # its cluster bus: the same from here
CLUSTER_KAFKA_INTERNAL_PORT="${CLUSTER_KAFKA_INTERNAL_PORT:-29191}"   # its inter-broker listener (secured)
CLUSTER_MONGO_PORT="${CLUSTER_MONGO_PORT:-27038}"
CLUSTER_KAFKA_HEAP="${CLUSTER_KAFKA_HEAP:--Xms128m -Xmx384m}"
# How long a silent Redis primary goes before its replica takes over.
CLUSTER_REDIS_NODE_TIMEOUT_MS="${CLUSTER_REDIS_NODE_TIMEOUT_MS:-2000}"
CLUSTER_KAFKA_NODES=(kafka-1 kafka-2 kafka-3)
CLUSTER_REDIS_NODES=(redis-1 redis-2 redis-3 redis-4 redis-5 redis-6)

# Secured (the default, decision 53): a certificate authority of the cluster's own signs one
# certificate for every engine (they all listen on 127.0.0.1, which it names, with localhost);
# the brokers take clients only as SASL over TLS with SCRAM-SHA-512 and talk to each other and to
# their controllers over TLS with that certificate required of the other end; the Redis nodes take
# only TLS (also between them) and the ACL user, the default user off; the MongoDB-wire server takes
# only TLS, its user and password checked by its PostgreSQL (FerretDB v1's PLAIN). One user,
# CLUSTER_USER, with a password per engine made once (openssl rand) into CLUSTER_DIR/secrets (0700).
# `cluster up --plaintext`: the engines as decision 48 ran them, open and unencrypted, for a
# comparison or a client that cannot do TLS; the mode holds until `cluster down`.
CLUSTER_TLS="$CLUSTER_DIR/tls"
CLUSTER_SECRETS="$CLUSTER_DIR/secrets"
CLUSTER_USER=rsd
CLUSTER_KAFKA_ADMIN_PROPS="$CLUSTER_DIR/admin.properties"
cluster_mode() { if [[ -f "$CLUSTER_DIR/mode" ]]; then cat "$CLUSTER_DIR/mode"; else echo secured; fi; }
cluster_secured() { [[ "$(cluster_mode)" == secured ]]; }

cnode_index() { echo "${1##*-}"; }
ckafka_port() { echo $((CLUSTER_KAFKA_PORT + $(cnode_index "$1") - 1)); }
ckafka_controller_port() { echo $((CLUSTER_KAFKA_CONTROLLER_PORT + $(cnode_index "$1") - 1)); }
ckafka_dir() { echo "$CLUSTER_DIR/$1"; }
ckafka_props() { echo "$(ckafka_dir "$1")/server.properties"; }
ckafka_pid() { local p; p="$(read_pid "$(ckafka_dir "$1")/kafka.pid")"; if pid_alive "$p" "$(ckafka_props "$1")"; then echo "$p"; fi; }
ckafka_bootstrap() {
  local n out=()
  for n in "${CLUSTER_KAFKA_NODES[@]}"; do out+=("$HOST:$(ckafka_port "$n")"); done
  (IFS=,; echo "${out[*]}")
}
credis_port() { echo $((CLUSTER_REDIS_PORT + $(cnode_index "$1") - 1)); }
credis_dir() { echo "$CLUSTER_DIR/$1"; }
ckafka_internal_port() { echo $((CLUSTER_KAFKA_INTERNAL_PORT + $(cnode_index "$1") - 1)); }
# redis-cli as the cluster's clients reach the nodes: secured, over TLS as the ACL user (its password
# in the environment, REDISCLI_AUTH, not on a command line).
credis_redis_cli() {
  if cluster_secured; then
    REDISCLI_AUTH="$(cat "$CLUSTER_SECRETS/redis-password")" redis-cli --tls --cacert "$CLUSTER_TLS/ca.crt" --user "$CLUSTER_USER" "$@" </dev/null
  else
    redis-cli "$@" </dev/null
  fi
}
credis_cli() { local port="$1"; shift; credis_redis_cli -h "$HOST" -p "$port" "$@"; }
credis_pid() { local p; p="$(read_pid "$(credis_dir "$1")/redis.pid")"; if pid_alive "$p" "redis-server $HOST:$(credis_port "$1")"; then echo "$p"; fi; }
credis_nodes() {
  local n out=()
  for n in "${CLUSTER_REDIS_NODES[@]}"; do out+=("$HOST:$(credis_port "$n")"); done
  (IFS=,; echo "${out[*]}")
}

cluster_node_kind() {
  case "$1" in
    kafka-[1-3]) echo kafka ;;
    redis-[1-6]) echo redis ;;
    *) die "cluster: unknown node '$1' (expected kafka-1..kafka-3 or redis-1..redis-6)" ;;
  esac
}

ckafka_write_config() {
  local node="$1" dir voters="" n
  dir="$(ckafka_dir "$node")"
  mkdir -p "$dir/data"
  for n in "${CLUSTER_KAFKA_NODES[@]}"; do voters+="${voters:+,}$(cnode_index "$n")@$HOST:$(ckafka_controller_port "$n")"; done
  cat >"$(ckafka_props "$node")" <<CONF
# Generated by scripts/infra.sh cluster -- one of three KRaft nodes (broker+controller) for local tests.
process.roles=broker,controller
node.id=$(cnode_index "$node")
controller.quorum.voters=$voters
controller.listener.names=CONTROLLER
$(ckafka_listeners "$node")
log.dirs=$dir/data

# three brokers: every record on all three, a write acknowledged once two have it
$(kafka_replication_settings 3 2)
unclean.leader.election.enable=false
# a broker that comes back takes its partitions' leadership back soon
leader.imbalance.check.interval.seconds=10
replica.lag.time.max.ms=10000

# small footprint (three of them on 2 cores)
num.network.threads=1
num.io.threads=2
background.threads=2
num.replica.fetchers=1
$(kafka_storage_settings)
CONF
  cat >"$dir/log4j.properties" <<CONF
# Generated by scripts/infra.sh cluster
$(kafka_log4j "$dir/kafka.log")
log4j.logger.kafka.request.logger=WARN
log4j.logger.state.change.logger=WARN
CONF
}

# The listeners of NODE. Secured: clients on SASL_SSL (SCRAM-SHA-512 only); the brokers between them
# (INTERNAL) and to the controllers (CONTROLLER) on TLS with a certificate of the cluster's authority
# required of the connecting end, so neither port takes an unauthenticated client either.
ckafka_listeners() {
  local node="$1"
  if ! cluster_secured; then
    cat <<CONF
listeners=PLAINTEXT://$HOST:$(ckafka_port "$node"),CONTROLLER://$HOST:$(ckafka_controller_port "$node")
advertised.listeners=PLAINTEXT://$HOST:$(ckafka_port "$node")
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
CONF
    return
  fi
  cat <<CONF
listeners=SASL_SSL://$HOST:$(ckafka_port "$node"),INTERNAL://$HOST:$(ckafka_internal_port "$node"),CONTROLLER://$HOST:$(ckafka_controller_port "$node")
advertised.listeners=SASL_SSL://$HOST:$(ckafka_port "$node"),INTERNAL://$HOST:$(ckafka_internal_port "$node")
inter.broker.listener.name=INTERNAL
listener.security.protocol.map=CONTROLLER:SSL,INTERNAL:SSL,SASL_SSL:SASL_SSL
sasl.enabled.mechanisms=SCRAM-SHA-512
# The server side of SCRAM: the credentials it checks are in the metadata log, none here.
listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.internal.ssl.client.auth=required
listener.name.controller.ssl.client.auth=required
# PEM files of the cluster's authority: the key and certificate in one file, the authority in another.
ssl.keystore.type=PEM
ssl.keystore.location=$CLUSTER_TLS/engines.pem
ssl.truststore.type=PEM
ssl.truststore.location=$CLUSTER_TLS/ca.crt
ssl.endpoint.identification.algorithm=https
CONF
}

# All three share one cluster id, formatted once per data dir; secured, with the clients' SCRAM user
# (KRaft keeps SCRAM credentials in its metadata log: they are written at format time). The password
# is on StorageTool's command line for the second it runs: the tool reads it from nowhere else.
ckafka_format() {
  local node="$1" dir id_file="$CLUSTER_DIR/kafka-cluster.id"
  dir="$(ckafka_dir "$node")"
  [[ -f "$dir/data/meta.properties" ]] && return 0
  if [[ ! -s "$id_file" ]]; then
    mkdir -p "$CLUSTER_DIR"
    kafka_tool kafka.tools.StorageTool random-uuid >"$id_file.tmp" || die "cluster: StorageTool random-uuid failed"
    mv "$id_file.tmp" "$id_file"
  fi
  local scram=()
  if cluster_secured; then scram=(--add-scram "SCRAM-SHA-512=[name=$CLUSTER_USER,password=$(cat "$CLUSTER_SECRETS/kafka-password")]"); fi
  kafka_tool kafka.tools.StorageTool format --ignore-formatted \
    -t "$(tr -d '[:space:]' <"$id_file")" -c "$(ckafka_props "$node")" "${scram[@]}" >/dev/null ||
    die "cluster: StorageTool format of $node failed"
}

ckafka_spawn() {
  local node="$1" dir pid
  dir="$(ckafka_dir "$node")"
  pid="$(ckafka_pid "$node")"
  if [[ -n "$pid" ]]; then log "cluster: $node already running (pid $pid)"; return 0; fi
  require_free_port "$node" "$(ckafka_port "$node")" CLUSTER_KAFKA_PORT
  require_free_port "$node-controller" "$(ckafka_controller_port "$node")" CLUSTER_KAFKA_CONTROLLER_PORT
  if cluster_secured; then require_free_port "$node-internal" "$(ckafka_internal_port "$node")" CLUSTER_KAFKA_INTERNAL_PORT; fi
  rm -f "$dir/kafka.pid"
  # shellcheck disable=SC2086 # CLUSTER_KAFKA_HEAP is a list of JVM flags
  spawn "$dir/kafka.pid" "$dir/kafka.out" java $CLUSTER_KAFKA_HEAP \
    -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:TieredStopAtLevel=1 -Djava.awt.headless=true \
    -Dlog4j.configuration="file:$dir/log4j.properties" -Dkafka.logs.dir="$dir" \
    -cp "$KAFKA_LIBS/*" kafka.Kafka "$(ckafka_props "$node")"
  log "cluster: $node starting (pid $(read_pid "$dir/kafka.pid")) on $HOST:$(ckafka_port "$node")"
}

# Waits until NODE's port is open and the cluster answers a topic list through it.
ckafka_wait() {
  local node="$1" dir pid deadline
  dir="$(ckafka_dir "$node")"
  pid="$(read_pid "$dir/kafka.pid")"
  deadline=$((SECONDS + KAFKA_START_TIMEOUT))
  until port_open "$(ckafka_port "$node")" &&
    timeout 30 java -Xmx256m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Dlog4j.configuration="file:$KAFKA_TOOLS_LOG4J" \
      -cp "$KAFKA_LIBS/*" org.apache.kafka.tools.TopicCommand --bootstrap-server "$HOST:$(ckafka_port "$node")" \
      --command-config "$CLUSTER_KAFKA_ADMIN_PROPS" --list </dev/null >/dev/null 2>"$dir/probe.err"; do
    if ! running "$pid"; then log_tail "$dir/kafka.out" 20; log_tail "$dir/kafka.log"; die "cluster: $node exited during start-up"; fi
    ((SECONDS < deadline)) || { log_tail "$dir/probe.err" 10; log_tail "$dir/kafka.log"; die "cluster: $node did not answer within ${KAFKA_START_TIMEOUT}s"; }
    sleep 1
  done
}

credis_spawn() {
  local node="$1" dir port bus_port
  dir="$(credis_dir "$node")"
  port="$(credis_port "$node")"
  if [[ -n "$(credis_pid "$node")" ]]; then log "cluster: $node already running"; return 0; fi
  require_free_port "$node" "$port" CLUSTER_REDIS_PORT
  bus_port=$((CLUSTER_REDIS_BUS_PORT + $(cnode_index "$node") - 1))
  require_free_port "$node-bus" "$bus_port" CLUSTER_REDIS_BUS_PORT
  mkdir -p "$dir"
  rm -f "$dir/redis.pid"
  # No persistence, as the single node: a restarted node comes back empty and, its nodes.conf kept,
  # rejoins as a replica of whoever took over its slots. Its settings in a file (0600): secured, they
  # hold the password a replica gives its primary.
  (
    umask 077
    cat >"$dir/redis.conf" <<CONF
# Generated by scripts/infra.sh cluster
bind $HOST
protected-mode yes
cluster-enabled yes
cluster-port $bus_port
cluster-config-file $dir/nodes.conf
cluster-node-timeout $CLUSTER_REDIS_NODE_TIMEOUT_MS
cluster-announce-ip $HOST
save ""
appendonly no
daemonize yes
pidfile $dir/redis.pid
logfile $dir/redis.log
dir $dir
maxmemory ${REDIS_MAXMEMORY:-256mb}
CONF
    if cluster_secured; then
      # TLS only (port 0: no plaintext port), between the nodes too; a client certificate is not
      # asked of clients (they authenticate as the ACL user) but the nodes present theirs.
      cat >>"$dir/redis.conf" <<CONF
port 0
tls-port $port
tls-cert-file $CLUSTER_TLS/engines.crt
tls-key-file $CLUSTER_TLS/engines.key
tls-ca-cert-file $CLUSTER_TLS/ca.crt
tls-auth-clients optional
tls-cluster yes
tls-replication yes
aclfile $CLUSTER_SECRETS/redis-users.acl
masteruser $CLUSTER_USER
masterauth $(cat "$CLUSTER_SECRETS/redis-password")
CONF
    else
      echo "port $port" >>"$dir/redis.conf"
    fi
  )
  redis-server "$dir/redis.conf" </dev/null >/dev/null 2>&1 9>&- ||
    { log_tail "$dir/redis.log"; die "cluster: redis-server $node failed to start"; }
  local deadline=$((SECONDS + REDIS_START_TIMEOUT))
  until [[ "$(credis_cli "$port" ping 2>/dev/null)" == PONG ]]; do
    ((SECONDS < deadline)) || { log_tail "$dir/redis.log"; die "cluster: $node: no PONG within ${REDIS_START_TIMEOUT}s"; }
    sleep 0.1
  done
  log "cluster: $node ready on $HOST:$port"
}

# cluster_state:ok as every running node sees it, all 16384 slots served.
credis_cluster_ok() {
  local n port info
  for n in "${CLUSTER_REDIS_NODES[@]}"; do
    [[ -n "$(credis_pid "$n")" ]] || continue
    port="$(credis_port "$n")"
    info="$(credis_cli "$port" cluster info 2>/dev/null | tr -d '\r')" || return 1
    grep -qx 'cluster_state:ok' <<<"$info" && grep -qx 'cluster_slots_ok:16384' <<<"$info" || return 1
  done
}

credis_wait_ok() {
  local deadline=$((SECONDS + ${1:-30}))
  until credis_cluster_ok; do
    ((SECONDS < deadline)) || die "cluster: the Redis Cluster is not ok after ${1:-30}s"
    sleep 0.2
  done
}

credis_create() {
  local first nodes=() n
  first="$(credis_port redis-1)"
  # Already made (a resumed `up` after `cluster stop`): its nodes.conf files hold it.
  if [[ "$(credis_cli "$first" cluster info 2>/dev/null | tr -d '\r' | awk -F: '/^cluster_known_nodes:/ {print $2}')" == "${#CLUSTER_REDIS_NODES[@]}" ]]; then
    return 0
  fi
  for n in "${CLUSTER_REDIS_NODES[@]}"; do nodes+=("$HOST:$(credis_port "$n")"); done
  # The first three given become the primaries, the others their replicas.
  credis_redis_cli --cluster create "${nodes[@]}" --cluster-replicas 1 --cluster-yes >"$CLUSTER_DIR/redis-create.log" 2>&1 ||
    { log_tail "$CLUSTER_DIR/redis-create.log"; die "cluster: redis-cli --cluster create failed"; }
}

# The cluster's certificate authority and the engines' certificate, made once per cluster (`down`
# deletes them), as scripts/lib/engine-tls.sh makes them for every secured engine.
cluster_tls_make() {
  engine_tls_make "$CLUSTER_TLS" rsd-infra-cluster "IP:$HOST,DNS:localhost"
  # Clients read the authority's certificate; the private keys stay the owner's (0600).
  chmod 755 "$CLUSTER_TLS"
}

# The engines' passwords (made once, 0600), and what is made of them: the Kafka tools' client
# settings, the Redis ACL file (the default user off, the password as its SHA-256) and MONGO_URL.
cluster_secrets_make() {
  local name kafka redis mongo
  mkdir -p "$CLUSTER_SECRETS"
  chmod 700 "$CLUSTER_SECRETS"
  for name in kafka-password redis-password mongo-password; do engine_password_make "$CLUSTER_SECRETS/$name"; done
  kafka="$(cat "$CLUSTER_SECRETS/kafka-password")"
  redis="$(cat "$CLUSTER_SECRETS/redis-password")"
  mongo="$(cat "$CLUSTER_SECRETS/mongo-password")"
  (
    umask 077
    cat >"$CLUSTER_KAFKA_ADMIN_PROPS" <<CONF
request.timeout.ms=5000
default.api.timeout.ms=10000
retries=2
security.protocol=SASL_SSL
sasl.mechanism=SCRAM-SHA-512
sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="$CLUSTER_USER" password="$kafka";
ssl.truststore.type=PEM
ssl.truststore.location=$CLUSTER_TLS/ca.crt
CONF
    engine_redis_acl "$CLUSTER_USER" "$redis" >"$CLUSTER_SECRETS/redis-users.acl"
    printf 'mongodb://%s:%s@%s:%s/?tls=true&authMechanism=PLAIN\n' "$CLUSTER_USER" "$mongo" "$HOST" "$CLUSTER_MONGO_PORT" \
      >"$CLUSTER_SECRETS/mongo-url"
  )
}

# cluster_mongo up|down|status: `scripts/infra.sh <that> mongo` on the cluster's own MongoDB-wire server;
# secured, FerretDB on TLS only and its PostgreSQL asking the user's password (FDB_* below).
cluster_mongo() {
  local secured=()
  if cluster_secured; then
    secured=(FDB_TLS_CERT="$CLUSTER_TLS/engines.crt" FDB_TLS_KEY="$CLUSTER_TLS/engines.key" FDB_TLS_CA="$CLUSTER_TLS/ca.crt"
      FDB_USER="$CLUSTER_USER" FDB_PASSWORD_FILE="$CLUSTER_SECRETS/mongo-password")
  fi
  env "${secured[@]}" INFRA_DIR="$CLUSTER_DIR/mongo" MONGO_PORT="$CLUSTER_MONGO_PORT" bash "${BASH_SOURCE[0]}" "$1" mongo
}

cluster_up() {
  local t0 n
  t0="$(now)"
  with_install_lock kafka_install
  redis_install
  mkdir -p "$CLUSTER_DIR"
  if cluster_secured; then
    cluster_tls_make
    cluster_secrets_make
  else
    kafka_admin_settings >"$CLUSTER_KAFKA_ADMIN_PROPS"
  fi
  # The MongoDB-wire server: FerretDB on PostgreSQL as `up mongo` runs it, in this cluster's dir.
  cluster_mongo up >/dev/null
  for n in "${CLUSTER_REDIS_NODES[@]}"; do credis_spawn "$n"; done
  credis_create
  for n in "${CLUSTER_KAFKA_NODES[@]}"; do ckafka_write_config "$n"; ckafka_format "$n"; done
  for n in "${CLUSTER_KAFKA_NODES[@]}"; do ckafka_spawn "$n"; done
  for n in "${CLUSTER_KAFKA_NODES[@]}"; do ckafka_wait "$n"; done
  credis_wait_ok 30
  log "cluster: up ($(cluster_mode)) in $(elapsed "$t0") (kafka $(ckafka_bootstrap); redis $(credis_nodes); mongo $HOST:$CLUSTER_MONGO_PORT)"
}

cluster_stop_node() {
  local node="$1"
  case "$(cluster_node_kind "$node")" in
    kafka) stop_pid "$node" "$(ckafka_pid "$node")" ;;
    redis) stop_pid "$node" "$(credis_pid "$node")" ;;
  esac
}

cluster_start_node() {
  local node="$1"
  case "$(cluster_node_kind "$node")" in
    kafka)
      [[ -f "$(ckafka_props "$node")" ]] || die "cluster: $node was never set up; run 'cluster up' first"
      ckafka_spawn "$node"
      ckafka_wait "$node"
      log "cluster: $node ready"
      ;;
    redis)
      [[ -f "$(credis_dir "$node")/nodes.conf" ]] || die "cluster: $node was never set up; run 'cluster up' first"
      credis_spawn "$node"
      credis_wait_ok 30
      ;;
  esac
}

cluster_down() {
  local n pid
  # All brokers at once: the last one left would otherwise wait for a quorum that is already gone.
  for n in "${CLUSTER_KAFKA_NODES[@]}"; do
    pid="$(ckafka_pid "$n")"
    [[ -z "$pid" ]] || kill -TERM "$pid" 2>/dev/null || true
  done
  for n in "${CLUSTER_KAFKA_NODES[@]}"; do stop_pid "$n" "$(ckafka_pid "$n")"; done
  for n in "${CLUSTER_REDIS_NODES[@]}"; do stop_pid "$n" "$(credis_pid "$n")"; done
  cluster_mongo down
  rm -rf "$CLUSTER_DIR"
}

cluster_status() {
  local n pid rc=0 role
  for n in "${CLUSTER_KAFKA_NODES[@]}"; do
    pid="$(ckafka_pid "$n")"
    if [[ -n "$pid" ]] && port_open "$(ckafka_port "$n")"; then
      echo "$n  running  pid=$pid  $HOST:$(ckafka_port "$n")"
    else echo "$n  stopped"; rc=1; fi
  done
  for n in "${CLUSTER_REDIS_NODES[@]}"; do
    pid="$(credis_pid "$n")"
    if [[ -n "$pid" ]]; then
      role="$(credis_cli "$(credis_port "$n")" role 2>/dev/null | head -n 1)"
      echo "$n  running  pid=$pid  $HOST:$(credis_port "$n") ($role)"
    else echo "$n  stopped"; rc=1; fi
  done
  cluster_mongo status || rc=1
  return "$rc"
}

# What the product needs to reach the cluster. Secured: the authority's certificate, the user, and
# the files that hold the passwords and MONGO_URL (never a secret itself). Every variable of the other
# mode is printed empty (the product reads an empty one as unset), so that a shell that had the
# single-node servers' variables, or the other mode's, does not mix them in.
print_cluster_env() {
  local prefix='export ' on='' mongo_url="mongodb://$HOST:$CLUSTER_MONGO_PORT/"
  [[ "${1:-}" == --plain ]] && prefix=''
  if cluster_secured; then on=1 mongo_url=''; fi
  echo "${prefix}KAFKA_BROKERS=$(ckafka_bootstrap)"
  echo "${prefix}REDIS_CLUSTER_NODES=$(credis_nodes)"
  echo "${prefix}REDIS_URL="
  echo "${prefix}MONGO_URL=$mongo_url"
  echo "${prefix}KAFKA_SSL=${on:+true}"
  echo "${prefix}KAFKA_SSL_CA_FILE=${on:+$CLUSTER_TLS/ca.crt}"
  echo "${prefix}KAFKA_SASL_MECHANISM=${on:+scram-sha-512}"
  echo "${prefix}KAFKA_SASL_USERNAME=${on:+$CLUSTER_USER}"
  echo "${prefix}KAFKA_SASL_PASSWORD_FILE=${on:+$CLUSTER_SECRETS/kafka-password}"
  echo "${prefix}REDIS_TLS=${on:+true}"
  echo "${prefix}REDIS_TLS_CA_FILE=${on:+$CLUSTER_TLS/ca.crt}"
  echo "${prefix}REDIS_USERNAME=${on:+$CLUSTER_USER}"
  echo "${prefix}REDIS_PASSWORD_FILE=${on:+$CLUSTER_SECRETS/redis-password}"
  echo "${prefix}MONGO_URL_FILE=${on:+$CLUSTER_SECRETS/mongo-url}"
  echo "${prefix}MONGO_TLS_CA_FILE=${on:+$CLUSTER_TLS/ca.crt}"
}

cluster_main() {
  local cmd="${1:-}"
  (($# > 0)) && shift
  case "$cmd" in
    up)
      local mode=secured
      case "${1:-}" in
        '') ;;
        --plaintext) mode=plaintext ;;
        *) die "usage: scripts/infra.sh cluster up [--plaintext]" ;;
      esac
      mkdir -p "$CLUSTER_DIR"
      exec 9>"$CLUSTER_DIR/.lock"
      flock -w 300 9 || die "another scripts/infra.sh cluster is still running"
      if [[ -f "$CLUSTER_DIR/mode" && "$(cluster_mode)" != "$mode" ]]; then
        die "cluster: it was set up $(cluster_mode); take it down first (scripts/infra.sh cluster down)"
      fi
      echo "$mode" >"$CLUSTER_DIR/mode"
      cluster_up
      print_cluster_env
      ;;
    down)
      [[ -d "$CLUSTER_DIR" ]] || { log "cluster: nothing to take down"; return 0; }
      exec 9>"$CLUSTER_DIR/.lock"
      flock -w 300 9 || die "another scripts/infra.sh cluster is still running"
      cluster_down
      ;;
    stop | start)
      (($# == 1)) || die "usage: scripts/infra.sh cluster $cmd NODE (kafka-1..kafka-3, redis-1..redis-6)"
      cluster_node_kind "$1" >/dev/null
      "cluster_${cmd}_node" "$1"
      ;;
    status) cluster_status ;;
    env) print_cluster_env "${1:-}" ;;
    *) usage ;;
  esac
}

# ---------------------------------------------------------------- commands

print_env() {
  local prefix='export '
  [[ "${1:-}" == --plain ]] && prefix=''
  echo "${prefix}KAFKA_BROKERS=$HOST:$KAFKA_PORT"
  echo "${prefix}MONGO_URL=mongodb://$HOST:$MONGO_PORT/"
  echo "${prefix}REDIS_URL=redis://$HOST:$REDIS_PORT"
}

services_from_args() {
  local s
  if (($# == 0)); then printf '%s\n' "${ALL_SERVICES[@]}"; return; fi
  for s in "$@"; do
    case "$s" in
      kafka | mongo | redis) echo "$s" ;;
      ferretdb) echo mongo ;;
      *) die "unknown service '$s' (expected kafka, mongo or redis)" ;;
    esac
  done
}

fn_of() { case "$1" in kafka) echo kafka ;; mongo) echo fdb ;; redis) echo redis ;; esac; }

# Stops a server and keeps its data, as an outage would.
stop_service() {
  local fn
  fn="$(fn_of "$1")"
  if declare -F "${fn}_stop" >/dev/null; then "${fn}_stop"; return; fi
  stop_pid "$1" "$("${fn}_pid")"
}

# The `check` line of a server: its <fn>_check round trip prints what it did (or tried) and fails
# with it; a server that is not running is not tried.
check_service() {
  local fn out
  fn="$(fn_of "$1")"
  [[ -n "$("${fn}_pid")" ]] || { echo "$1  FAIL not running"; return 1; }
  if out="$("${fn}_check")"; then echo "$1  ok   $out"; else echo "$1  FAIL $out"; return 1; fi
}

# Serialise concurrent up/down calls (e.g. parallel test runners).
with_lock() {
  mkdir -p "$INFRA"
  exec 9>"$INFRA/.lock"
  flock -w 300 9 || die "another scripts/infra.sh is still running (lock $INFRA/.lock)"
}

# Instances with different INFRA_DIRs share the download cache: one install at a time.
with_install_lock() {
  mkdir -p "$CACHE"
  (
    flock -w 600 8 || die "another scripts/infra.sh is still installing (lock $CACHE/.install.lock)"
    "$@"
  ) 8>"$CACHE/.install.lock"
}

usage() {
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}" >&2
  exit "${1:-2}"
}

main() {
  local cmd="${1:-}" t0 s rc=0
  (($# > 0)) && shift
  case "$cmd" in
    up)
      with_lock
      t0="$(now)"
      for s in $(services_from_args "$@"); do "$(fn_of "$s")_up"; done
      log "up: done in $(elapsed "$t0")"
      print_env
      ;;
    down)
      with_lock
      t0="$(now)"
      for s in $(services_from_args "$@"); do "$(fn_of "$s")_down"; done
      log "down: done in $(elapsed "$t0")"
      ;;
    stop)
      with_lock
      for s in $(services_from_args "$@"); do stop_service "$s"; done
      ;;
    status)
      for s in $(services_from_args "$@"); do "$(fn_of "$s")_status" || rc=1; done
      return "$rc"
      ;;
    check)
      for s in $(services_from_args "$@"); do check_service "$s" || rc=1; done
      return "$rc"
      ;;
    env) print_env "${1:-}" ;;
    cluster) cluster_main "$@" ;;
    install)
      for s in $(services_from_args "$@"); do
        case "$s" in
          kafka) with_install_lock kafka_install ;;
          mongo) with_install_lock fdb_install ;;
          redis) redis_install ;;
        esac
      done
      ;;
    -h | --help | help) usage 0 ;;
    *) usage ;;
  esac
}

main "$@"
