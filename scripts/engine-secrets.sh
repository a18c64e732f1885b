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
#   scripts/engine-secrets.sh k8s [DIR]       the same files for the engines of scripts/k8s.sh's
#                                             cluster (default .secrets/k8s): the certificate names
#                                             their Services (<engine>.rsd-infra.svc.cluster.local);
#                                             scripts/k8s.sh makes Secrets of them
#   scripts/engine-secrets.sh k8s-env [DIR]   as compose-env, at the cluster's NodePorts (30092, 30017)
#
# DIR holds, for every engine and service of the stack (Compose mounts each file it names, read-only,
# at /run/secrets/<name>):
#   ca.crt                       the authority's certificate, which every client trusts
#   engines.pem                  the engines' key and certificate in one file (Kafka's PEM key store,
#                                mongod's --tlsCertificateKeyFile); engines.crt, engines.key apart (Redis)
#                                the certificate names kafka, mongo, redis, localhost and 127.0.0.1
#   kafka-password, redis-password, mongo-password   the user rsd's password on each engine
#   redis-users.acl              Redis's users: the default user off, rsd with its password's SHA-256
#   mongo-url                    the services' MONGO_URL for the mongo image (SCRAM, authSource=admin;
#                                compose only)
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

# target_* TARGET: where each target's engines are, for its certificate and its URLs.
target_dir() { realpath -m "${2:-${RSD_ENGINE_SECRETS:-$ROOT/.secrets/$1}}"; }
target_host() { case "$1" in compose) echo "$2" ;; k8s) echo "$2.rsd-infra.svc.cluster.local" ;; esac; }
# Where test/distributed/docker-compose.test.yml and the cluster's NodePorts publish Kafka and the
# MongoDB-wire server on this machine.
target_host_kafka_port() { case "$1" in compose) echo 29492 ;; k8s) echo 30092 ;; esac; }
target_host_mongo_port() { case "$1" in compose) echo 27047 ;; k8s) echo 30017 ;; esac; }

secrets_make() {
  local target="$1" dir name mongo host names=''
  dir="$(target_dir "$target" "${2:-}")"
  for name in kafka mongo redis; do names+="DNS:$(target_host "$target" "$name"),"; done
  engine_tls_make "$dir" "rsd-$target-engines" "${names}DNS:localhost,IP:127.0.0.1"
  for name in kafka-password redis-password mongo-password; do engine_password_make "$dir/$name"; done
  mongo="$(cat "$dir/mongo-password")"
  host="$(target_host "$target" mongo)"
  engine_redis_acl "$ENGINE_USER" "$(cat "$dir/redis-password")" >"$dir/redis-users.acl"
  if [[ "$target" == compose ]]; then
    printf 'mongodb://%s:%s@%s:27017/?tls=true&authSource=admin\n' "$ENGINE_USER" "$mongo" "$host" >"$dir/mongo-url"
  fi
  printf 'mongodb://%s:%s@%s:27017/?tls=true&authMechanism=PLAIN\n' "$ENGINE_USER" "$mongo" "$host" >"$dir/mongo-url-ferretdb"
  printf 'mongodb://%s:%s@127.0.0.1:%s/?tls=true&authMechanism=PLAIN&tlsCAFile=%s\n' "$ENGINE_USER" "$mongo" \
    "$(target_host_mongo_port "$target")" "$dir/ca.crt" >"$dir/mongo-url-host"
  rm -f "$dir/engines.csr" "$dir/engines.ext" "$dir/ca.srl"
  chmod 700 "$dir"
  chmod 644 "$dir"/*
  # The authority's key signs nothing more: it need not be readable by any engine.
  chmod 600 "$dir/ca.key"
  log "secured engines' certificates and passwords in $dir"
}

secrets_env() {
  local target="$1" dir
  dir="$(target_dir "$target" "${2:-}")"
  [[ -s "$dir/mongo-url-host" ]] || die "nothing in $dir: run scripts/engine-secrets.sh $target first"
  echo "export KAFKA_BROKERS=127.0.0.1:$(target_host_kafka_port "$target")"
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
  compose | k8s) secrets_make "$1" "${2:-}" ;;
  compose-env | k8s-env) secrets_env "${1%-env}" "${2:-}" ;;
  *)
    awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}" >&2
    exit 2
    ;;
esac
