#!/usr/bin/env bash
# A local OTLP receiver for the traces of decision 39: Jaeger v2 with its traces in memory, on loopback.
#
#   scripts/otlp-receiver.sh install   build Jaeger into .infra/bin/jaeger (skipped when it is there)
#   scripts/otlp-receiver.sh up        install, then start it; idempotent; prints the variables below
#   scripts/otlp-receiver.sh down      stop it (TERM, wait, KILL); the traces, in memory, go with it
#   scripts/otlp-receiver.sh status    exit 1 when it is not running
#   scripts/otlp-receiver.sh env       print the variables: the services' OTEL_EXPORTER_OTLP_ENDPOINT,
#                                      and JAEGER_QUERY_URL (the UI and the query API)
#
# `up` and `env` print `export ...` lines on stdout (progress goes to stderr), so:
#   out="$(scripts/otlp-receiver.sh up)" && eval "$out" && npm start
#
# Ports (all on 127.0.0.1): OTLP_HTTP_PORT (4318), OTLP_GRPC_PORT (4317), JAEGER_QUERY_PORT (16686,
# the UI at http://127.0.0.1:16686 and /api/traces/{id}), JAEGER_QUERY_GRPC_PORT (16685).
# Configuration: scripts/infra/jaeger/config.yaml. State (pid, log): OTLP_RECEIVER_DIR (.infra/jaeger).
#
# Jaeger v2.13.0 is the Go module github.com/jaegertracing/jaeger@v1.76.0. `go install …@v1.76.0`
# refuses it (its go.mod has replace directives), so scripts/infra/jaeger/go.mod holds it as a tool
# (`go get -tool`) with every dependency pinned in go.sum, and `go build` makes the binary through the
# Go module proxy: about 5 min on 2 cores the first time, at low priority; a stamp of go.mod and go.sum
# beside the binary says when it must be built again. Needs: go >= 1.24.6 (its go.mod).
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$SCRIPT_DIR/.." && pwd)"
CACHE="$ROOT/.infra"
SRC="$SCRIPT_DIR/infra/jaeger"
DIR="$(realpath -m "${OTLP_RECEIVER_DIR:-$CACHE/jaeger}")"
HOST=127.0.0.1
JAEGER_VERSION=2.13.0
JAEGER_MODULE_VERSION=v1.76.0

export OTLP_HTTP_PORT="${OTLP_HTTP_PORT:-4318}"
export OTLP_GRPC_PORT="${OTLP_GRPC_PORT:-4317}"
export JAEGER_QUERY_PORT="${JAEGER_QUERY_PORT:-16686}"
export JAEGER_QUERY_GRPC_PORT="${JAEGER_QUERY_GRPC_PORT:-16685}"
START_TIMEOUT="${JAEGER_START_TIMEOUT:-30}"
STOP_TIMEOUT="${STOP_TIMEOUT:-15}"

BIN="$CACHE/bin/jaeger"
PID="$DIR/jaeger.pid"
LOG="$DIR/jaeger.log"
CONFIG="$SRC/config.yaml"

LOG_TAG=otlp-receiver
# shellcheck source=scripts/lib/common.sh
source "$SCRIPT_DIR/lib/common.sh"

port_open() { timeout 1 bash -c "exec 3<>/dev/tcp/$HOST/$1" 2>/dev/null; }
running() { kill -0 "$1" 2>/dev/null && [[ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" != Z ]]; }

# The pid of the receiver this script started, if it still runs (its command line names our config).
receiver_pid() {
  local pid
  [[ -f "$PID" ]] || return 0
  pid="$(tr -dc '0-9' <"$PID")"
  [[ -n "$pid" ]] && running "$pid" && [[ "$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)" == *"$CONFIG"* ]] && echo "$pid"
  return 0
}

install() {
  local want t0=$SECONDS
  want="$(cat "$SRC/go.mod" "$SRC/go.sum" | sha256sum | cut -d' ' -f1)"
  if [[ -x "$BIN" && "$(cat "$BIN.stamp" 2>/dev/null)" == "$want" ]]; then
    log "jaeger $JAEGER_VERSION up to date in ${BIN#"$ROOT"/}"
    return 0
  fi
  command -v go >/dev/null || die "go not found (Go >= 1.24.6 builds Jaeger)"
  log "building Jaeger $JAEGER_VERSION (module $JAEGER_MODULE_VERSION) -> ${BIN#"$ROOT"/} (first build only, ~5 min)"
  mkdir -p "$CACHE/bin"
  # Never another Go toolchain; no VCS stamping (module copies have no .git); the version stamped as
  # Jaeger's own release builds stamp it.
  if ! (cd "$SRC" && GOTOOLCHAIN=local GOFLAGS=-buildvcs=false nice -n 10 go build -trimpath \
    -ldflags "-s -w -X github.com/jaegertracing/jaeger/internal/version.latestVersion=v$JAEGER_VERSION" \
    -o "$BIN.tmp" github.com/jaegertracing/jaeger/cmd/jaeger) </dev/null >"$CACHE/bin/jaeger-build.log" 2>&1; then
    tail -n 40 "$CACHE/bin/jaeger-build.log" | sed 's/^/     /' >&2
    die "go build of github.com/jaegertracing/jaeger/cmd/jaeger@$JAEGER_MODULE_VERSION failed"
  fi
  mv "$BIN.tmp" "$BIN"
  printf '%s' "$want" >"$BIN.stamp"
  log "built in $((SECONDS - t0)) s"
}

# One install at a time (CI, parallel test runs); scripts/infra.sh's lock file, shared.
locked_install() {
  mkdir -p "$CACHE"
  (
    flock -w 900 8 || die "another install is still running (lock $CACHE/.install.lock)"
    install
  ) 8>"$CACHE/.install.lock"
}

print_env() {
  echo "export OTEL_EXPORTER_OTLP_ENDPOINT=http://$HOST:$OTLP_HTTP_PORT"
  echo "export JAEGER_QUERY_URL=http://$HOST:$JAEGER_QUERY_PORT"
}

up() {
  local pid port deadline
  pid="$(receiver_pid)"
  if [[ -n "$pid" ]]; then
    log "already running (pid $pid): OTLP on $HOST:$OTLP_HTTP_PORT (HTTP) and $HOST:$OTLP_GRPC_PORT (gRPC), query on $HOST:$JAEGER_QUERY_PORT"
    return 0
  fi
  for port in OTLP_HTTP_PORT OTLP_GRPC_PORT JAEGER_QUERY_PORT JAEGER_QUERY_GRPC_PORT; do
    port_open "${!port}" && die "$HOST:${!port} is in use by another process; set $port to a free port"
  done
  locked_install
  mkdir -p "$DIR"
  : >"$LOG"
  # Its own session, no inherited stdio: `$(scripts/otlp-receiver.sh up)` must not wait for it.
  # shellcheck disable=SC2016 # $$, $1 and $@ belong to the inner shell
  setsid bash -c 'echo $$ >"$1"; shift; exec "$@"' _ "$PID" "$BIN" --config "$CONFIG" </dev/null >>"$LOG" 2>&1 8>&- &
  deadline=$((SECONDS + START_TIMEOUT))
  until [[ -s "$PID" ]] && port_open "$OTLP_HTTP_PORT" && curl -fsS "http://$HOST:$JAEGER_QUERY_PORT/api/services" >/dev/null 2>&1; do
    pid="$(if [[ -s "$PID" ]]; then tr -dc '0-9' <"$PID"; fi)"
    if [[ -n "$pid" ]] && ! running "$pid"; then tail -n 30 "$LOG" >&2; die "Jaeger exited during start-up (log: $LOG)"; fi
    ((SECONDS < deadline)) || { tail -n 30 "$LOG" >&2; die "Jaeger did not answer within ${START_TIMEOUT}s (log: $LOG)"; }
    sleep 0.2
  done
  log "ready (pid $(receiver_pid)): OTLP on $HOST:$OTLP_HTTP_PORT (HTTP) and $HOST:$OTLP_GRPC_PORT (gRPC), UI and query API on http://$HOST:$JAEGER_QUERY_PORT"
}

down() {
  local pid i
  pid="$(receiver_pid)"
  if [[ -z "$pid" ]]; then log "not running"; return 0; fi
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < STOP_TIMEOUT * 10; i++)); do
    running "$pid" || { rm -f "$PID"; log "stopped (pid $pid)"; return 0; }
    sleep 0.1
  done
  log "still running after ${STOP_TIMEOUT}s: SIGKILL to $pid"
  kill -KILL "$pid" 2>/dev/null || true
  rm -f "$PID"
}

status() {
  local pid
  pid="$(receiver_pid)"
  if [[ -z "$pid" ]]; then echo "jaeger  stopped"; return 1; fi
  echo "jaeger  running  pid=$pid  OTLP http://$HOST:$OTLP_HTTP_PORT (gRPC $HOST:$OTLP_GRPC_PORT)  query http://$HOST:$JAEGER_QUERY_PORT  log=${LOG#"$ROOT"/}"
}

usage() {
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}" >&2
  exit "${1:-2}"
}

case "${1:-}" in
  install) locked_install ;;
  up) up && print_env ;;
  down) down ;;
  status) status ;;
  env) print_env ;;
  -h | --help | help) usage 0 ;;
  *) usage ;;
esac
