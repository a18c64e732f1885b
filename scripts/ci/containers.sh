#!/usr/bin/env bash
# CI: the containers for real, on the local engine (scripts/containers.sh). Called by .ci/run
# after `npm test` (dependencies installed and built: npx runs the Node.js of .node-version); runs on its own too.
#
#   1. engine      scripts/containers.sh setup: Podman, its Docker API socket, the local images
#   2. image       the Dockerfile built on the local Node base; its OCI labels and its SBOM (kept in
#                  .infra/artifacts/); its container answers /healthz as uid 1000 with a read-only root
#                  filesystem and no capabilities, as k8s/ runs it
#   3. compose     docker-compose.yml + docker-compose.local.yml (+ test/distributed/docker-compose.test.yml)
#                  up --build --wait; the distributed end-to-end suite against the stack
#                  (RSD_DISTRIBUTED_STACK=compose); down, and no container of it may be left
#   4. testcontainers  the *.infra.test.ts suites with no server in the environment: each starts
#                  Kafka, the MongoDB-wire server or Redis from the local images; a skipped suite or a
#                  container left behind fails the run
#
# Prints the time of each step. About 6-8 min with the images cached, 12-15 min on a fresh machine.
set -euo pipefail
cd "$(dirname "$0")/../.."

IMAGE=rsd:local
CHECK_CONTAINER=rsd-image-check
CHECK_PORT=18980
# Where this step leaves the image's SBOM (CycloneDX) for CI to keep.
SBOM_ARTIFACT="${RSD_ARTIFACTS:-.infra/artifacts}/rsd-image.sbom.cdx.json"
STACK_FILES=(-f test/distributed/docker-compose.test.yml)
# As in .ci/run: a suite that finds no server fails instead of being skipped.
export REQUIRE_INFRA=true

section() { printf '\n== containers: %s\n' "$*"; }
now() { printf '%s' "${EPOCHREALTIME/,/.}"; }
seconds() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.0f", b - a }'; }
TIMINGS=()
# timed LABEL START: records how long the step took.
timed() { TIMINGS+=("$(printf '%-44s %5ss' "$1" "$(seconds "$2")")"); }
fail() { printf 'CI containers: %s\n' "$*" >&2; exit 1; }

START="$(now)"
stack_up=false
cleanup() {
  local rc=$?
  set +e
  if command -v podman >/dev/null; then
    podman rm --force --volumes "$CHECK_CONTAINER" >/dev/null 2>&1
    podman volume rm --force rsd-image-check-data >/dev/null 2>&1
    if $stack_up; then bash scripts/containers.sh down >/dev/null 2>&1; fi
    # Ryuk is off: a suite that died before its afterAll leaves its container; never the next run's problem.
    podman ps --all --quiet --filter label=org.testcontainers=true | xargs --no-run-if-empty podman rm --force --volumes >/dev/null 2>&1
  fi
  if ((${#TIMINGS[@]} > 0)); then
    printf '\n== containers: timings\n'
    printf '  %s\n' "${TIMINGS[@]}"
    printf '  %-44s %5ss\n' total "$(seconds "$START")"
  fi
  exit "$rc"
}
trap cleanup EXIT

# ---------------------------------------------------------------- 1. engine

section "engine and local images (scripts/containers.sh setup)"
t0="$(now)"
bash scripts/containers.sh setup
container_env="$(bash scripts/containers.sh env)"
eval "$container_env"
printf '%s\n' "$container_env"
docker version --format 'docker client {{.Client.Version}}, engine {{.Server.Version}} (API {{.Server.APIVersion}})'
docker compose version
timed "setup (engine, images)" "$t0"

# ---------------------------------------------------------------- 2. the image

section "the Dockerfile on the local Node base, run as k8s/ runs it"
t0="$(now)"
# The same tag Compose uses, so its --build below finds every layer built.
# REVISION: the commit, in the image's org.opencontainers.image.revision label (decision 57). Also given as
# --label: Podman's layer cache does not count a build argument, so a LABEL layer cached at an earlier commit
# would keep that commit's revision (seen in CI); --label is applied to the final image on every build.
revision="$(git rev-parse HEAD)"
nice -n 10 podman build --format docker --build-arg NODE_IMAGE=localhost/rsd-node:bookworm \
  --build-arg REVISION="$revision" --label "org.opencontainers.image.revision=$revision" \
  --target runtime -t "$IMAGE" . >/tmp/rsd-image-build.log 2>&1 ||
  { tail -n 40 /tmp/rsd-image-build.log; fail "the image did not build from the Dockerfile"; }
timed "image build (Dockerfile)" "$t0"
docker image inspect --format 'image {{.Id}}: user {{.Config.User}}, {{.Size}} bytes' "$IMAGE"
# The image's own user, not one the run below imposes: k8s/ sets runAsNonRoot, which a kubelet
# enforces against the image's USER, and a `docker run` without --user gets root from an image without one.
image_user="$(docker image inspect --format '{{.Config.User}}' "$IMAGE")"
[[ "$image_user" == 1000:1000 ]] || fail "the image's configured user is '${image_user}', not 1000:1000 (USER in the Dockerfile)"

# Decision 57: the OCI labels (the version is package.json's, the revision this commit) and the SBOM the image
# ships at /app/sbom.cdx.json (CycloneDX, `npm sbom` at build), kept as this step's artifact in $SBOM_ARTIFACT.
docker image inspect --format '{{json .Config.Labels}}' "$IMAGE" |
  REVISION="$revision" node scripts/ci/image-labels.mjs ||
  fail "the image's OCI labels are not as the Dockerfile and package.json say (above)"
mkdir -p "$(dirname "$SBOM_ARTIFACT")"
docker run --rm --entrypoint cat "$IMAGE" /app/sbom.cdx.json >"$SBOM_ARTIFACT" || fail "the image has no /app/sbom.cdx.json"
node scripts/ci/image-labels.mjs --sbom "$SBOM_ARTIFACT" || fail "the image's SBOM is not a CycloneDX document of this product (above)"

t0="$(now)"
# The Pods' securityContext (k8s/base): uid and gid 1000, read-only root filesystem, no capability,
# no privilege escalation, /tmp writable; /data is where the embedded runtime (the default command) keeps its state.
# No --user: the uid and gid checked inside are the image's own (its USER), as asserted above.
docker run --detach --name "$CHECK_CONTAINER" --read-only --tmpfs /tmp \
  --cap-drop ALL --security-opt no-new-privileges -v rsd-image-check-data:/data \
  -p "127.0.0.1:$CHECK_PORT:8080" "$IMAGE" >/dev/null
healthz=""
for _ in $(seq 1 120); do
  healthz="$(curl -fsS "http://127.0.0.1:$CHECK_PORT/healthz" 2>/dev/null)" && break
  [[ "$(docker inspect --format '{{.State.Running}}' "$CHECK_CONTAINER")" == true ]] ||
    { docker logs "$CHECK_CONTAINER" 2>&1 | tail -n 30; fail "the container exited"; }
  sleep 0.5
done
[[ -n "$healthz" ]] || { docker logs "$CHECK_CONTAINER" 2>&1 | tail -n 30; fail "no /healthz answer within 60 s"; }
# shellcheck disable=SC2016 # expanded in the container
facts="$(docker exec "$CHECK_CONTAINER" sh -c 'id -u; id -g; touch /app/probe 2>/dev/null && echo root-writable || echo root-read-only; touch /tmp/probe && echo tmp-writable; grep -E "^(CapEff|NoNewPrivs)" /proc/1/status | tr -s "\t" " "')"
printf '%s\n' "$facts" | sed 's/^/  /'
expected=$'1000\n1000\nroot-read-only\ntmp-writable\nCapEff: 0000000000000000\nNoNewPrivs: 1'
[[ "$facts" == "$expected" ]] || fail "the container does not run as k8s/ runs it (expected: $expected)"
echo "GET /healthz -> $healthz (uid 1000, read-only root filesystem, no capabilities)"
docker rm --force --volumes "$CHECK_CONTAINER" >/dev/null
docker volume rm rsd-image-check-data >/dev/null
timed "image run (/healthz, non-root, read-only)" "$t0"

# ---------------------------------------------------------------- 3. the Compose stack

section "the Compose stack, up --build --wait"
JWT_HS256_SECRET="$(openssl rand -hex 32)"
WEBHOOK_SECRET_KEY="$(openssl rand -base64 32)"
SUBJECT_KEYS_MASTER_KEY="$(openssl rand -base64 32)"
RESPONSE_SIGNING_KEYS="$(npx rsd signing-key --kid ci-containers)"
# The console's keys (decision 51), made as docker-compose.yml's header says: its token key and its sessions' key.
CONSOLE_SIGNING_KEY="$(openssl genpkey -algorithm ed25519 -outform DER | openssl base64 -A | tr '+/' '-_' | tr -d =)"
CONSOLE_SESSION_KEY="$(openssl rand 32 | openssl base64 -A | tr '+/' '-_' | tr -d =)"
export JWT_HS256_SECRET WEBHOOK_SECRET_KEY SUBJECT_KEYS_MASTER_KEY RESPONSE_SIGNING_KEYS CONSOLE_SIGNING_KEY CONSOLE_SESSION_KEY
t0="$(now)"
stack_up=true
# From nothing: whatever a stopped run left of the project goes first.
bash scripts/containers.sh down >/dev/null 2>&1 || true
# The engines' certificate authority and passwords (decision 53), as a user makes them.
bash scripts/engine-secrets.sh compose
bash scripts/containers.sh compose "${STACK_FILES[@]}" up --build --wait >/tmp/rsd-compose-up.log 2>&1 ||
  {
    tail -n 60 /tmp/rsd-compose-up.log
    bash scripts/containers.sh compose ps --all || true
    # What each service said: the reason an unhealthy one gave is in its own log.
    bash scripts/containers.sh compose logs --no-color --tail 25 || true
    fail "the stack did not come up healthy"
  }
timed "compose up --build --wait (healthy)" "$t0"
bash scripts/containers.sh compose ps --format 'table {{.Service}}\t{{.Status}}\t{{.Ports}}'

section "the distributed end-to-end suite against the stack"
t0="$(now)"
log="$(mktemp)"
(
  # The stack's servers as test/distributed/docker-compose.test.yml publishes them, secured (TLS and
  # the user's passwords from .secrets/compose); no Redis: the suites reach it only through the services.
  unset REDIS_URL
  secured_env="$(bash scripts/engine-secrets.sh compose-env)"
  eval "$secured_env"
  export RSD_DISTRIBUTED_STACK=compose
  export COMPOSE_FILE=docker-compose.yml:docker-compose.local.yml:test/distributed/docker-compose.test.yml
  # The SDKs' suites start processes of their own on whatever servers they are given: on the stack they
  # would run again what `npm test` ran, four minutes for nothing the stack adds.
  npx jest --config jest.distributed.config.js --runInBand --testPathIgnorePatterns /node_modules/ /dist/ sdks-distributed
) 2>&1 | tee "$log"
if grep -q '^\[infra\] skipping' "$log"; then fail "a distributed suite was skipped"; fi
distributed="$(grep -oE '^Tests: .*' "$log" | tail -n 1 | sed 's/^Tests: *//')"
timed "distributed suite on the stack" "$t0"

section "down"
t0="$(now)"
bash scripts/containers.sh down
stack_up=false
timed "compose down (no container left)" "$t0"

# ---------------------------------------------------------------- 4. Testcontainers

section "infrastructure suites through Testcontainers (local images, Ryuk off)"
t0="$(now)"
log="$(mktemp)"
(
  # No server from the environment (.ci/run exports scripts/infra.sh's): every suite starts its own.
  unset KAFKA_BROKERS MONGO_URL REDIS_URL
  npx jest --config jest.infra.config.js
) 2>&1 | tee "$log"
if grep -q '^\[infra\] skipping' "$log"; then fail "an infrastructure suite was skipped"; fi
for kind in kafka mongo redis; do
  grep -q "^\[infra\] testcontainers: $kind from localhost/" "$log" || fail "no $kind container was started through Testcontainers"
done
started="$(grep -c '^\[infra\] testcontainers: ' "$log")"
left="$(podman ps --all --quiet --filter label=org.testcontainers=true | wc -l)"
((left == 0)) || fail "$left Testcontainers container(s) left behind"
infra="$(grep -oE '^Tests: .*' "$log" | tail -n 1 | sed 's/^Tests: *//')"
timed "infra suites through Testcontainers" "$t0"

section "summary"
echo "distributed suite on the Compose stack: $distributed"
echo "infra suites through Testcontainers ($started containers started, none left): $infra"
echo "the image's SBOM: $SBOM_ARTIFACT"
