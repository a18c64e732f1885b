#!/bin/bash
# PID 1 of the MongoDB-wire container: PostgreSQL first, then FerretDB in front of it; on SIGTERM
# (docker stop) FerretDB stops first, then PostgreSQL with a fast shutdown, so no write is lost.
#
# Secured as the official mongo image is configured (decision 53), so one Compose file drives both:
#   MONGO_INITDB_ROOT_USERNAME, MONGO_INITDB_ROOT_PASSWORD_FILE   the user and its password, set when
#       the data directory is made: PostgreSQL's superuser, asking that password of every connection
#       (SCRAM on its socket); FerretDB v1 hands a client's user and password (MongoDB's PLAIN) to it,
#       so a client without them, or with another password, is refused.
#   mongod --tlsMode requireTLS --tlsCertificateKeyFile PEM --tlsCAFile CA ...   the arguments:
#       FerretDB listens on TLS only, with PEM's key and certificate (one file; its certificate names
#       127.0.0.1, which the readiness ping verifies with CA); the others are mongod's and have no
#       use here.
set -euo pipefail

PGDATA=/data/db/postgres
PGRUN=/var/run/postgresql
bins=(/usr/lib/postgresql/*/bin)
PGBIN="${bins[-1]}" # one major version in the image
DB=ferretdb

log() { printf '[mongo-entrypoint] %s\n' "$*" >&2; }

tls_pem='' tls_ca=''
if [[ "${1:-}" == mongod ]]; then
  shift
  while (($# > 0)); do
    case "$1" in
      --tlsCertificateKeyFile) tls_pem="${2:?--tlsCertificateKeyFile needs a file}"; shift 2 ;;
      --tlsCAFile) tls_ca="${2:?--tlsCAFile needs a file}"; shift 2 ;;
      *) shift ;;
    esac
  done
fi
user="${MONGO_INITDB_ROOT_USERNAME:-postgres}"

if [[ ! -s "$PGDATA/PG_VERSION" ]]; then
  rm -rf "$PGDATA"
  auth=(--auth-local=trust)
  if [[ -n "${MONGO_INITDB_ROOT_USERNAME:-}" ]]; then
    [[ -s "${MONGO_INITDB_ROOT_PASSWORD_FILE:-}" ]] || { log "MONGO_INITDB_ROOT_USERNAME needs MONGO_INITDB_ROOT_PASSWORD_FILE"; exit 1; }
    auth=(--auth-local=scram-sha-256 "--pwfile=$MONGO_INITDB_ROOT_PASSWORD_FILE")
  fi
  "$PGBIN/initdb" -D "$PGDATA" --username="$user" --encoding=UTF8 --locale=C \
    "${auth[@]}" --auth-host=reject >/dev/null
fi
export PGPASSWORD=''
[[ -z "${MONGO_INITDB_ROOT_PASSWORD_FILE:-}" ]] || PGPASSWORD="$(tr -d '\n' <"$MONGO_INITDB_ROOT_PASSWORD_FILE")"

# Rewritten at every start; the settings shared with scripts/infra.sh are in ferretdb-backend.conf.
cat >"$PGDATA/container.conf" <<CONF
listen_addresses = ''
unix_socket_directories = '$PGRUN'
shared_buffers = ${PG_SHARED_BUFFERS:-128MB}
include '/usr/local/share/rsd/ferretdb-backend.conf'
CONF
grep -qx "include 'container.conf'" "$PGDATA/postgresql.conf" || echo "include 'container.conf'" >>"$PGDATA/postgresql.conf"

"$PGBIN/pg_ctl" start -D "$PGDATA" -w -t 60 -s 
psql() { "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$PGRUN" -U "$user" "$@" </dev/null; }
if [[ "$(psql -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = '$DB'")" != 1 ]]; then
  psql -d postgres -c "CREATE DATABASE $DB"
fi
psql -d "$DB" -f /usr/local/share/rsd/ferretdb-indexes.sql

listen=(-listen 0.0.0.0:27017)
ping=()
if [[ -n "$tls_pem" ]]; then
  # Go reads the certificate and the key out of the one PEM file, each skipping the other's block.
  listen=(-listen '' -listen-tls 0.0.0.0:27017 -tls-cert-file "$tls_pem" -tls-key-file "$tls_pem")
  ping=(--tls "${tls_ca:?--tlsCertificateKeyFile needs --tlsCAFile (the readiness ping verifies the certificate)}")
fi
# FerretDB's own connection carries no password: PostgreSQL gets a client's, or refuses it.
unset PGPASSWORD
FERRETDB_TELEMETRY=disable DO_NOT_TRACK=1 /usr/local/bin/ferretdb-embedded "${listen[@]}" \
  -postgresql-url "postgres:///$DB?host=${PGRUN//\//%2F}&user=$user" -log-level "${MONGO_LOG_LEVEL:-info}" &
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

until /usr/local/bin/mongo-ping "${ping[@]}" >/dev/null 2>&1; do
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
