#!/usr/bin/env bash
# The secured engines' certificates and passwords for the Compose stack and the local Kubernetes
# overlay (decision 53), made on this machine and never committed: a certificate authority of their
# own (scripts/lib/engine-tls.sh, as `scripts/infra.sh cluster` makes its own), one user `rsd` and a
# password per engine (openssl rand).
#
#   scripts/engine-secrets.sh compose [DIR]   the files docker-compose.yml's `secrets` name, in DIR
#                                             (default .secrets/compose, or RSD_ENGINE_SECRETS); made
#                                             once, kept by later runs (delete DIR for new ones)
#   scripts/engine-secrets.sh compose-env [DIR]  prints what a process on this machine needs to reach
#                                             the stack's Kafka and MongoDB-wire server where
#                                             test/distributed/docker-compose.test.yml publishes them
#                                             (KAFKA_BROKERS, KAFKA_SSL*, KAFKA_SASL_*, MONGO_URL read
#                                             from its file where the output is eval'ed)
#
# DIR holds, for every engine and service of the stack (Compose mounts each file it names, read-only,
# at /run/secrets/<name>):
#   ca.crt                       the authority's certificate, which every client trusts
#   engines.pem                  the engines' key and certificate in one file (Kafka's PEM key store,
#                                mongod's --tlsCertificateKeyFile); engines.crt, engines.key apart (Redis)
#                                the certificate names kafka, mongo, redis, localhost and 127.0.0.1
#   kafka-password, redis-password, mongo-password   the user rsd's password on each engine
#   redis-users.acl              Redis's users: the default user off, rsd with its password's SHA-256
#   mongo-url                    the services' MONGO_URL for the mongo image (SCRAM, authSource=admin)
#   mongo-url-ferretdb           the same for the local FerretDB image (PLAIN: FerretDB v1 hands the
#                                password to its PostgreSQL), which docker-compose.local.yml mounts instead
#   mongo-url-host               MONGO_URL from this machine to the published port (the test overlay),
#                                the authority in it (tlsCAFile)
# DIR is the owner's alone (0700); its files are 0644, because Compose bind-mounts them as they are
# and each engine reads them as its own user (Kafka 1000, Redis, MongoDB, PostgreSQL), not as root.
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$SCRIPT_DIR/.." && pwd)"
LOG_TAG=engine-secrets
# shellcheck source=scripts/lib/common.sh
source "$SCRIPT_DIR/lib/common.sh"
# shellcheck source=scripts/lib/engine-tls.sh
source "$SCRIPT_DIR/lib/engine-tls.sh"

ENGINE_USER=rsd
# Where test/distributed/docker-compose.test.yml publishes the MongoDB-wire server.
HOST_MONGO_PORT=27047
HOST_KAFKA_PORT=29492

compose_dir() { realpath -m "${1:-${RSD_ENGINE_SECRETS:-$ROOT/.secrets/compose}}"; }

compose_make() {
  local dir name mongo
  dir="$(compose_dir "${1:-}")"
  engine_tls_make "$dir" rsd-compose-engines "DNS:kafka,DNS:mongo,DNS:redis,DNS:localhost,IP:127.0.0.1"
  for name in kafka-password redis-password mongo-password; do engine_password_make "$dir/$name"; done
  mongo="$(cat "$dir/mongo-password")"
  engine_redis_acl "$ENGINE_USER" "$(cat "$dir/redis-password")" >"$dir/redis-users.acl"
  printf 'mongodb://%s:%s@mongo:27017/?tls=true&authSource=admin\n' "$ENGINE_USER" "$mongo" >"$dir/mongo-url"
  printf 'mongodb://%s:%s@mongo:27017/?tls=true&authMechanism=PLAIN\n' "$ENGINE_USER" "$mongo" >"$dir/mongo-url-ferretdb"
  printf 'mongodb://%s:%s@127.0.0.1:%s/?tls=true&authMechanism=PLAIN&tlsCAFile=%s\n' "$ENGINE_USER" "$mongo" "$HOST_MONGO_PORT" "$dir/ca.crt" >"$dir/mongo-url-host"
  rm -f "$dir/engines.csr" "$dir/engines.ext" "$dir/ca.srl"
  chmod 700 "$dir"
  chmod 644 "$dir"/*
  # The authority's key signs nothing more: it need not be readable by any engine.
  chmod 600 "$dir/ca.key"
  log "secured engines' certificates and passwords in $dir"
}

compose_env() {
  local dir
  dir="$(compose_dir "${1:-}")"
  [[ -s "$dir/mongo-url-host" ]] || die "nothing in $dir: run scripts/engine-secrets.sh compose first"
  echo "export KAFKA_BROKERS=127.0.0.1:$HOST_KAFKA_PORT"
  echo "export KAFKA_SSL=true"
  echo "export KAFKA_SSL_CA_FILE=$dir/ca.crt"
  echo "export KAFKA_SASL_MECHANISM=scram-sha-512"
  echo "export KAFKA_SASL_USERNAME=$ENGINE_USER"
  echo "export KAFKA_SASL_PASSWORD_FILE=$dir/kafka-password"
  # The suites read MONGO_URL itself (their own MongoDB clients): expanded where this is eval'ed, so
  # the password is never printed.
  echo "export MONGO_URL=\"\$(cat '$dir/mongo-url-host')\""
}

case "${1:-}" in
  compose) compose_make "${2:-}" ;;
  compose-env) compose_env "${2:-}" ;;
  *)
    awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}" >&2
    exit 2
    ;;
esac
