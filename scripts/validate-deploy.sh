#!/usr/bin/env bash
# Offline validation of the deployment files, without a Docker engine or a cluster:
#
#   1. Dockerfile + .dockerignore  BuildKit's own front end and lint rules over every stage
#                                  (scripts/deploy-tools/dockerfile-check), every COPY source present
#                                  in the build context, and the project's image rules.
#   2. docker-compose.yml          `docker compose config -q` with the official Compose CLI plugin,
#                                  with and without the required secret, then the project's rules.
#   3. k8s/                        every kustomization (base and overlays) rendered with kustomize and
#                                  validated against the Kubernetes JSON schemas (kubernetes-validate
#                                  --strict, offline) for the oldest and newest versions we target,
#                                  then the project's rules (probes, security contexts, shutdown timing).
#                                  Custom resources (the production overlay's PrometheusRule), for which
#                                  those schemas have nothing, are checked by custom-resource-check
#                                  (scripts/deploy-tools/custom-resource-check: the Prometheus Operator's
#                                  own Go types, strictly) instead.
#
# Tools are built or installed on first use and cached in .infra/deploy-tools (git-ignored):
#   docker-compose    Compose CLI plugin built from its Go module (the Go module proxy)   ~2.5 min cold
#   kustomize         go install sigs.k8s.io/kustomize/kustomize/v5                       ~1 min cold
#   dockerfile-check  go build of scripts/deploy-tools/dockerfile-check (BuildKit)        ~30 s
#   custom-resource-check  go build of scripts/deploy-tools/custom-resource-check         ~30 s
#   venv              pip install kubernetes-validate (ships the schemas)                 ~10 s
# Needs: go >= 1.26 (the Prometheus Operator's API module), python3 with venv. The docker CLI is optional (the plugin also runs standalone).
#
# Usage: scripts/validate-deploy.sh        Exit 0 when everything passes, 1 on any problem, 2 when a
#                                          tool cannot be installed. Non-interactive (CI=true safe).
#        scripts/validate-deploy.sh --tools-only
#                                          Build and install the tools, check nothing (CI runs this in
#                                          the background from its start; the checks wait on its lock).
set -euo pipefail

TOOLS_ONLY=false
case "${1:-}" in
  "") ;;
  --tools-only) TOOLS_ONLY=true ;;
  *) printf 'usage: %s [--tools-only]\n' "$0" >&2; exit 2 ;;
esac

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$SCRIPT_DIR/.." && pwd)"
TOOLS="${DEPLOY_TOOLS_DIR:-$ROOT/.infra/deploy-tools}"
POLICY="$SCRIPT_DIR/deploy-tools/check-deploy-policy.py"

COMPOSE_VERSION=v2.40.3
KUSTOMIZE_VERSION=v5.8.1
KUBERNETES_VALIDATE_VERSION=1.37.0
# Oldest and newest Kubernetes versions the manifests must fit.
K8S_VERSIONS=(1.30.0 1.37.0)
# Stands in for the real secret so the compose file resolves; never a real value.
VALIDATION_JWT_SECRET=validation-only-not-a-secret-0123456789abcdef
# The notifier's sealing key (32 bytes, base64): the base64 of "validation-only-not-a-secret-012".
VALIDATION_WEBHOOK_SECRET_KEY=dmFsaWRhdGlvbi1vbmx5LW5vdC1hLXNlY3JldC0wMTI=
# The console's keys (decision 51): stand-ins that only let the compose file resolve.
VALIDATION_CONSOLE_KEYS=(CONSOLE_SIGNING_KEY=validation-only-not-a-key CONSOLE_SESSION_KEY=validation-only-not-a-key)

LOG_STDOUT=1
DIE_STATUS=2
# shellcheck source=scripts/lib/common.sh
source "$SCRIPT_DIR/lib/common.sh"

FAILURES=0
pass() { log "ok   $*"; }
flunk() { log "FAIL $*"; FAILURES=$((FAILURES + 1)); }
# run_check LABEL CMD...: runs CMD; on a non-zero exit shows its output and counts a failure.
run_check() {
  local label="$1" out rc=0
  shift
  out="$("$@" 2>&1)" || rc=$?
  if ((rc == 0)); then
    pass "$label"
  else
    [[ -z "$out" ]] || printf '%s\n' "$out" | sed 's/^/     /'
    flunk "$label (exit $rc)"
  fi
}
# quietly LOG CMD...: runs CMD with its output in LOG, shown only if it fails.
quietly() {
  local logfile="$1"
  shift
  "$@" >"$logfile" 2>&1 || { tail -n 40 "$logfile" | sed 's/^/     /' >&2; return 1; }
}

START="$(now)"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$TOOLS"

# One run at a time installs into the cache.
exec 9>"$TOOLS/.lock"
flock 9

# ---------------------------------------------------------------- tools

# Never fetch another Go toolchain; no VCS stamping (module copies have no .git).
export GOTOOLCHAIN=local GOFLAGS=-buildvcs=false

require_go() {
  command -v go >/dev/null || die "go not found (Go >= 1.26 builds the Compose plugin, kustomize, dockerfile-check and custom-resource-check)"
  local v
  v="$(go env GOVERSION)"
  [[ "$(printf '%s\n' go1.26 "$v" | sort -V | head -n1)" == go1.26 ]] || die "Go >= 1.26 is required, found $v"
}

# installed NAME STAMP: the cached tool is there and was built from STAMP.
installed() { [[ -x "$TOOLS/bin/$1" && -f "$TOOLS/bin/$1.stamp" && "$(cat "$TOOLS/bin/$1.stamp")" == "$2" ]]; }
mark_installed() { printf '%s' "$2" >"$TOOLS/bin/$1.stamp"; }

install_compose() {
  local stamp="compose $COMPOSE_VERSION" t0 dir src
  if ! installed docker-compose "$stamp"; then
    require_go
    t0="$(now)"
    log "...  building the Compose CLI plugin $COMPOSE_VERSION from its Go module (first run only, ~2-3 min)"
    # `go install module@version` refuses modules whose go.mod has exclude/replace directives, as
    # Compose's does: build it as the main module from a copy of its source.
    dir="$(go mod download -json "github.com/docker/compose/v2@$COMPOSE_VERSION" |
      python3 -c 'import json, sys; print(json.load(sys.stdin)["Dir"])')" ||
      die "could not download github.com/docker/compose/v2@$COMPOSE_VERSION from the Go module proxy"
  [[ -d "$dir" ]] || die "the Go module cache has no github.com/docker/compose/v2@$COMPOSE_VERSION"
    src="$WORK/compose-src"
    cp -R "$dir" "$src"
    chmod -R u+w "$src"
    mkdir -p "$TOOLS/bin"
    (cd "$src" && quietly "$WORK/compose-build.log" go build -trimpath \
      -ldflags "-s -w -X github.com/docker/compose/v2/internal.Version=$COMPOSE_VERSION" \
      -o "$TOOLS/bin/docker-compose.tmp" ./cmd) || die "building the Compose plugin failed"
    mv "$TOOLS/bin/docker-compose.tmp" "$TOOLS/bin/docker-compose"
    mark_installed docker-compose "$stamp"
    log "...  Compose plugin built in $(elapsed "$t0")"
  fi
  # Installed as a CLI plugin of a private docker config, so `docker compose` is the real command.
  mkdir -p "$TOOLS/docker/cli-plugins"
  ln -sf "$TOOLS/bin/docker-compose" "$TOOLS/docker/cli-plugins/docker-compose"
}

install_kustomize() {
  local stamp="kustomize $KUSTOMIZE_VERSION" t0
  installed kustomize "$stamp" && return 0
  require_go
  t0="$(now)"
  log "...  installing kustomize $KUSTOMIZE_VERSION (go install, first run only, ~1 min)"
  GOBIN="$TOOLS/bin" quietly "$WORK/kustomize-install.log" go install "sigs.k8s.io/kustomize/kustomize/v5@$KUSTOMIZE_VERSION" ||
    die "go install sigs.k8s.io/kustomize/kustomize/v5@$KUSTOMIZE_VERSION failed"
  mark_installed kustomize "$stamp"
  log "...  kustomize installed in $(elapsed "$t0")"
}

# install_deploy_tool NAME WHAT: go build of scripts/deploy-tools/NAME, rebuilt when its sources change.
install_deploy_tool() {
  local name="$1" what="$2" src="$SCRIPT_DIR/deploy-tools/$1" stamp t0
  stamp="$(cat "$src/go.mod" "$src/go.sum" "$src"/*.go | sha256sum | cut -d' ' -f1)"
  installed "$name" "$stamp" && return 0
  require_go
  t0="$(now)"
  log "...  building $name ($what)"
  (cd "$src" && quietly "$WORK/$name-build.log" go build -trimpath -o "$TOOLS/bin/$name.tmp" .) ||
    die "building $name failed"
  mv "$TOOLS/bin/$name.tmp" "$TOOLS/bin/$name"
  mark_installed "$name" "$stamp"
  log "...  $name built in $(elapsed "$t0")"
}

install_venv() {
  local venv="$TOOLS/venv" stamp="kubernetes-validate==$KUBERNETES_VALIDATE_VERSION" t0
  if [[ -x "$venv/bin/kubernetes-validate" && "$(cat "$venv/.stamp" 2>/dev/null)" == "$stamp" ]]; then
    return 0
  fi
  command -v python3 >/dev/null || die "python3 not found"
  t0="$(now)"
  log "...  installing $stamp into ${venv#"$ROOT"/}"
  rm -rf "$venv"
  python3 -m venv "$venv" || die "python3 -m venv failed (on Debian: apt-get install python3-venv)"
  "$venv/bin/pip" install --quiet --disable-pip-version-check --no-input "$stamp" </dev/null ||
    die "pip install $stamp failed"
  printf '%s' "$stamp" >"$venv/.stamp"
  log "...  installed in $(elapsed "$t0")"
}

log "== tools (cached in ${TOOLS#"$ROOT"/})"
T0="$(now)"
mkdir -p "$TOOLS/bin"
install_compose
install_kustomize
install_deploy_tool dockerfile-check "BuildKit's Dockerfile front end"
install_deploy_tool custom-resource-check "the Prometheus Operator's API types"
install_venv
PY="$TOOLS/venv/bin/python"
pass "tools ready in $(elapsed "$T0"): compose $COMPOSE_VERSION, kustomize $KUSTOMIZE_VERSION, kubernetes-validate $KUBERNETES_VALIDATE_VERSION"
$TOOLS_ONLY && exit 0

# ---------------------------------------------------------------- Dockerfile

log "== Dockerfile and .dockerignore"
run_check "Dockerfile: BuildKit front end, lint rules, build context" "$TOOLS/bin/dockerfile-check" -context "$ROOT" -file Dockerfile
run_check "Dockerfile: project rules" "$PY" "$POLICY" dockerfile "$ROOT"

# ---------------------------------------------------------------- docker compose

log "== docker-compose.yml"
# A clean environment: nothing from the caller's shell (RSD_IMAGE, a real JWT_HS256_SECRET, ...)
# changes what is checked, and no .env file is read.
# compose [VAR=value ...] -- ARGS: docker compose ARGS on docker-compose.yml, only VARs set.
compose() {
  local vars=() cmd=(docker compose)
  while (($# > 0)) && [[ "$1" != -- ]]; do vars+=("$1"); shift; done
  shift
  command -v docker >/dev/null || cmd=("$TOOLS/bin/docker-compose")
  env -i PATH="$PATH" HOME="$HOME" DOCKER_CONFIG="$TOOLS/docker" "${vars[@]}" \
    "${cmd[@]}" --project-directory "$ROOT" -f "$ROOT/docker-compose.yml" --env-file /dev/null "$@"
}
compose_config() {
  compose JWT_HS256_SECRET="$VALIDATION_JWT_SECRET" RESPONSE_SIGNING_KEYS='[]' WEBHOOK_SECRET_KEY="$VALIDATION_WEBHOOK_SECRET_KEY" "${VALIDATION_CONSOLE_KEYS[@]}" -- config "$@"
}
run_check "docker compose config -q" compose_config -q

missing_secret_out="$(compose RESPONSE_SIGNING_KEYS='[]' WEBHOOK_SECRET_KEY="$VALIDATION_WEBHOOK_SECRET_KEY" "${VALIDATION_CONSOLE_KEYS[@]}" -- config -q 2>&1)" && missing_secret_rc=0 || missing_secret_rc=$?
if ((missing_secret_rc != 0)) && grep -q "JWT_HS256_SECRET" <<<"$missing_secret_out"; then
  pass "docker compose config refuses to resolve without JWT_HS256_SECRET (no committed default)"
else
  flunk "docker compose config must fail without JWT_HS256_SECRET, got exit $missing_secret_rc: $missing_secret_out"
fi
missing_keys_out="$(compose JWT_HS256_SECRET="$VALIDATION_JWT_SECRET" WEBHOOK_SECRET_KEY="$VALIDATION_WEBHOOK_SECRET_KEY" "${VALIDATION_CONSOLE_KEYS[@]}" -- config -q 2>&1)" && missing_keys_rc=0 || missing_keys_rc=$?
if ((missing_keys_rc != 0)) && grep -q "RESPONSE_SIGNING_KEYS" <<<"$missing_keys_out"; then
  pass "docker compose config refuses to resolve without RESPONSE_SIGNING_KEYS (no committed signing key)"
else
  flunk "docker compose config must fail without RESPONSE_SIGNING_KEYS, got exit $missing_keys_rc: $missing_keys_out"
fi
missing_webhook_out="$(compose JWT_HS256_SECRET="$VALIDATION_JWT_SECRET" RESPONSE_SIGNING_KEYS='[]' "${VALIDATION_CONSOLE_KEYS[@]}" -- config -q 2>&1)" && missing_webhook_rc=0 || missing_webhook_rc=$?
if ((missing_webhook_rc != 0)) && grep -q "WEBHOOK_SECRET_KEY" <<<"$missing_webhook_out"; then
  pass "docker compose config refuses to resolve without WEBHOOK_SECRET_KEY (no committed sealing key)"
else
  flunk "docker compose config must fail without WEBHOOK_SECRET_KEY, got exit $missing_webhook_rc: $missing_webhook_out"
fi

if compose_config --format json >"$WORK/compose.json" 2>"$WORK/compose.err"; then
  run_check "docker-compose.yml: project rules" "$PY" "$POLICY" compose "$ROOT" "$WORK/compose.json"
else
  flunk "docker compose config --format json: $(cat "$WORK/compose.err")"
fi

# ---------------------------------------------------------------- Kubernetes

log "== k8s (kustomize $KUSTOMIZE_VERSION, schemas for Kubernetes ${K8S_VERSIONS[*]})"
validate_args=(--strict --quiet)
for version in "${K8S_VERSIONS[@]}"; do validate_args+=(-k "$version"); done

k8s_dirs=("$ROOT/k8s/base")
for overlay in "$ROOT"/k8s/overlays/*/; do
  [[ -f "$overlay/kustomization.yaml" ]] && k8s_dirs+=("${overlay%/}")
done

for dir in "${k8s_dirs[@]}"; do
  name="${dir#"$ROOT"/k8s/}"
  rendered="$WORK/${name//\//-}.yaml"
  if ! "$TOOLS/bin/kustomize" build "$dir" >"$rendered" 2>"$WORK/kustomize.err"; then
    flunk "$name: kustomize build: $(cat "$WORK/kustomize.err")"
    continue
  fi
  pass "$name: kustomize build ($(grep -c '^kind:' "$rendered") resources)"
  # Custom resources are checked here and left out of what kubernetes-validate sees ($builtin).
  builtin="${rendered%.yaml}.builtin.yaml"
  out="$("$TOOLS/bin/custom-resource-check" -rest "$builtin" "$rendered" 2>&1)" && rc=0 || rc=$?
  if ((rc == 0)); then
    [[ -z "$out" ]] || pass "$name: custom resources valid against their operators' own types: $out"
  else
    printf '%s\n' "$out" | sed 's/^/     /'
    flunk "$name: custom resources (exit $rc)"
  fi
  # kubernetes-validate only warns for a kind or apiVersion it has no schema for: that fails here.
  out="$("$TOOLS/venv/bin/kubernetes-validate" "${validate_args[@]}" "$builtin" 2>&1)" && rc=0 || rc=$?
  if ((rc == 0)) && ! grep -qE '^(ERROR|WARN|FATAL)' <<<"$out"; then
    pass "$name: every resource valid against the strict schemas"
  else
    printf '%s\n' "$out" | grep -E '^(ERROR|WARN|FATAL)|could not|Couldn' | sed "s#$builtin#$name#; s/^/     /" || true
    flunk "$name: schema validation (exit $rc)"
  fi
  run_check "$name: project rules" "$PY" "$POLICY" k8s "$ROOT" "$rendered" "$name"
done

# ---------------------------------------------------------------- summary

if ((FAILURES > 0)); then
  log "== FAILED: $FAILURES problem(s) in the deployment files ($(elapsed "$START"))"
  exit 1
fi
log "== deployment files valid ($(elapsed "$START"))"
