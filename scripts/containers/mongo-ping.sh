#!/bin/sh
# The health check: a MongoDB `ping` over the wire (the image has no mongosh). --tls CA: over TLS,
# the server's certificate verified with the authority in CA, as MONGO_INITDB_ROOT_USERNAME with the
# password in MONGO_INITDB_ROOT_PASSWORD_FILE (handed over in the environment, not on a command line).
if [ "${1:-}" = --tls ]; then
  ca="${2:?--tls needs the certificate of the authority}"
  shift 2
  FERRETDB_PING_PASSWORD="$(cat "$MONGO_INITDB_ROOT_PASSWORD_FILE")" exec /usr/local/bin/ferretdb-embedded \
    -ping "mongodb://127.0.0.1:27017/?tls=true&tlsCAFile=$ca" -ping-user "$MONGO_INITDB_ROOT_USERNAME" "$@"
fi
exec /usr/local/bin/ferretdb-embedded -ping mongodb://127.0.0.1:27017/ "$@"
