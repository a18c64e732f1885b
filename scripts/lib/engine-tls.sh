# shellcheck shell=bash
# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
# Sourced by the scripts that run secured engines (it uses common.sh's log, die and apt_install). The certificates and
# passwords of secured engines (decision 53), made the same way for every place that runs them:
# scripts/infra.sh cluster, the Compose stack (scripts/engine-secrets.sh compose) and the local
# Kubernetes overlay (scripts/engine-secrets.sh k8s).

# engine_tls_make DIR CA_NAME SUBJECT_ALT_NAMES: a certificate authority of its own in DIR (ca.crt,
# ca.key) and one certificate it signs for every engine (engines.crt, engines.key, and engines.pem:
# the key then the certificate, Kafka's PEM key store and mongod's --tlsCertificateKeyFile), a P-256
# key each, valid a year, for server and client use (Kafka's brokers present it to each other).
# SUBJECT_ALT_NAMES: the names clients use, e.g. "IP:127.0.0.1,DNS:localhost". Made once: an existing
# engines.pem is kept (delete DIR to make new ones). DIR is the owner's (0700), the private keys 0600,
# ca.crt 0644 (it is no secret).
engine_tls_make() {
  local dir="$1" ca_name="$2" names="$3" ec=(-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes)
  [[ -s "$dir/engines.pem" ]] && return 0
  command -v openssl >/dev/null || apt_install openssl
  mkdir -p "$dir"
  chmod 700 "$dir"
  (
    umask 077
    openssl req -x509 "${ec[@]}" -keyout "$dir/ca.key" -out "$dir/ca.crt" -subj "/CN=$ca_name-ca" -days 365 \
      -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign 2>/dev/null &&
      printf '%s\n' basicConstraints=CA:FALSE "subjectAltName=$names" extendedKeyUsage=serverAuth,clientAuth >"$dir/engines.ext" &&
      openssl req "${ec[@]}" -keyout "$dir/engines.key" -out "$dir/engines.csr" -subj "/CN=$ca_name" 2>/dev/null &&
      openssl x509 -req -in "$dir/engines.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" -CAcreateserial -days 365 -sha256 \
        -extfile "$dir/engines.ext" -out "$dir/engines.crt" 2>/dev/null &&
      cat "$dir/engines.key" "$dir/engines.crt" >"$dir/engines.pem"
  ) || die "openssl could not make the certificate authority in $dir"
  chmod 644 "$dir/ca.crt"
}

# engine_password_make FILE: a random password (openssl rand, 48 hex characters) in FILE (0600),
# made once: an existing one is kept.
engine_password_make() {
  [[ -s "$1" ]] || (umask 077 && openssl rand -hex 24 >"$1") || die "openssl could not make a password in $1"
}

# engine_redis_acl USER PASSWORD: a Redis ACL file's lines: the default user off, USER with every
# command and key, its password given as its SHA-256 (the file never holds the password itself).
engine_redis_acl() {
  printf 'user default off\nuser %s on #%s ~* &* +@all\n' "$1" "$(printf '%s' "$2" | sha256sum | cut -d' ' -f1)"
}
