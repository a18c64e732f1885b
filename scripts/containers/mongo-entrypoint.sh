#!/bin/bash
# PID 1 of the MongoDB-wire container: PostgreSQL first, then FerretDB in front of it; on SIGTERM
# (docker stop) FerretDB stops first, then PostgreSQL with a fast shutdown, so no write is lost.
set -euo pipefail

PGDATA=/data/db/postgres
PGRUN=/var/run/postgresql
bins=(/usr/lib/postgresql/*/bin)
PGBIN="${bins[-1]}" # one major version in the image
DB=ferretdb

log() { printf '[mongo-entrypoint] %s\n' "$*" >&2; }

if [[ ! -s "$PGDATA/PG_VERSION" ]]; then
  rm -rf "$PGDATA"
  "$PGBIN/initdb" -D "$PGDATA" --username=postgres --encoding=UTF8 --locale=C \
    --auth-local=trust --auth-host=reject >/dev/null
fi
# Rewritten at every start; the settings shared with scripts/infra.sh are in ferretdb-backend.conf.
cat >"$PGDATA/container.conf" <<CONF
listen_addresses = ''
unix_socket_directories = '$PGRUN'
shared_buffers = ${PG_SHARED_BUFFERS:-128MB}
include '/usr/local/share/rsd/ferretdb-backend.conf'
CONF
grep -qx "include 'container.conf'" "$PGDATA/postgresql.conf" || echo "include 'container.conf'" >>"$PGDATA/postgresql.conf"

"$PGBIN/pg_ctl" start -D "$PGDATA" -w -t 60 -s 
psql() { "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$PGRUN" -U postgres "$@" </dev/null; }
if [[ "$(psql -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = '$DB'")" != 1 ]]; then
  psql -d postgres -c "CREATE DATABASE $DB"
fi
psql -d "$DB" -f /usr/local/share/rsd/ferretdb-indexes.sql

FERRETDB_TELEMETRY=disable DO_NOT_TRACK=1 /usr/local/bin/ferretdb-embedded -listen 0.0.0.0:27017 \
  -postgresql-url "postgres:///$DB?host=${PGRUN//\//%2F}&user=postgres" -log-level "${MONGO_LOG_LEVEL:-info}" &
fdb=$!

# shellcheck disable=SC2317 # called by the trap
stop() {
  log "stopping FerretDB (pid $fdb), then PostgreSQL"
  kill -TERM "$fdb" 2>/dev/null || true
  wait "$fdb" 2>/dev/null || true
  "$PGBIN/pg_ctl" stop -D "$PGDATA" -m fast -w -s || true
  exit 0
}
trap stop TERM INT

until /usr/local/bin/ferretdb-embedded -ping mongodb://127.0.0.1:27017/ >/dev/null 2>&1; do
  kill -0 "$fdb" 2>/dev/null || break
  sleep 0.2
done
log "MongoDB-wire server ready on :27017 (FerretDB on PostgreSQL $("$PGBIN/postgres" --version | awk '{print $3}'))"

rc=0
wait "$fdb" || rc=$?
# FerretDB ended by itself (not through stop): PostgreSQL goes too, and the exit code tells why.
log "FerretDB exited with $rc"
"$PGBIN/pg_ctl" stop -D "$PGDATA" -m fast -w -s || true
exit "$rc"
