#!/usr/bin/env bash
# Decision 40: the alerting rules checked and unit-tested by Prometheus's own promtool.
#
#   1. promtool check rules   deploy/monitoring/alerts.rules.yml, and the spec of the production
#                             overlay's PrometheusRule (k8s/overlays/production/prometheus-rules.yaml),
#                             which must be what scripts/monitoring/prometheus-rule.mjs makes of it
#   2. promtool test rules    deploy/monitoring/alerts.test.yml: every alert fires on the series that
#                             should fire it and stays silent on a healthy one
#   3. the dashboard's PromQL deploy/monitoring/grafana-dashboard.json: every panel's query parses, checked
#                             by promtool as a recording rule (Grafana's $__rate_interval as 5m)
#
# promtool is the Go module of Prometheus, built on first use with `go install` through the Go module
# proxy (about 6 min on 2 cores, at low priority; CI builds it in the background from its start) and
# cached in .infra/bin (git-ignored) with a stamp of its version; later runs take a second or two.
# Needs: go >= 1.26, node (any the repository runs on) after `npm ci`.
#
# Usage: scripts/ci/alerts.sh         Exit 0 when everything passes, 1 on a failed check or test, 2 when
#                                     promtool cannot be installed. Non-interactive (CI=true safe).
#        scripts/ci/alerts.sh build   Only build promtool (what .ci/run starts in the background at its
#                                     beginning; a check started meanwhile waits for it on the lock).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BIN="${ALERTS_TOOLS_DIR:-$ROOT/.infra/bin}"
# Prometheus 3.16.0: the Go module of Prometheus 3.x.y is versioned v0.3xx.y.
PROMETHEUS_MODULE_VERSION=v0.316.0
PROMETHEUS_VERSION=3.16.0
RULES=deploy/monitoring/alerts.rules.yml
TESTS=deploy/monitoring/alerts.test.yml
PROMETHEUS_RULE=k8s/overlays/production/prometheus-rules.yaml
DASHBOARD=deploy/monitoring/grafana-dashboard.json

LOG_STDOUT=1
DIE_STATUS=2
# shellcheck source=scripts/lib/common.sh
source "$ROOT/scripts/lib/common.sh"

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$BIN"
cd "$ROOT"

# ---------------------------------------------------------------- promtool

PROMTOOL="$BIN/promtool"
# remove_all_sd: without Prometheus's service-discovery plugins (the clouds' SDKs, Kubernetes, Consul,
# …), which `check rules` and `test rules` never use: about a fifth fewer packages to compile on a
# fresh machine (Prometheus's own build tag for slimmer binaries).
PROMTOOL_TAGS=remove_all_sd
STAMP="promtool $PROMETHEUS_MODULE_VERSION $PROMTOOL_TAGS"
install_promtool() {
  [[ -x "$PROMTOOL" && "$(cat "$PROMTOOL.stamp" 2>/dev/null)" == "$STAMP" ]] && return 0
  command -v go >/dev/null || die "go not found (Go >= 1.26 builds promtool)"
  local v t0=$SECONDS
  v="$(go env GOVERSION)"
  [[ "$(printf '%s\n' go1.26 "$v" | sort -V | head -n1)" == go1.26 ]] || die "Go >= 1.26 is required, found $v"
  log "...  building promtool $PROMETHEUS_VERSION (go install github.com/prometheus/prometheus/cmd/promtool@$PROMETHEUS_MODULE_VERSION, first run only, ~6 min)"
  # Never fetch another Go toolchain; no VCS stamping (module copies have no .git); the version stamped
  # as Prometheus's own release builds stamp it.
  if ! GOTOOLCHAIN=local GOFLAGS=-buildvcs=false GOBIN="$WORK/bin" nice -n 10 go install -trimpath -tags "$PROMTOOL_TAGS" \
    -ldflags "-s -w -X github.com/prometheus/common/version.Version=$PROMETHEUS_VERSION" \
    "github.com/prometheus/prometheus/cmd/promtool@$PROMETHEUS_MODULE_VERSION" >"$WORK/install.log" 2>&1; then
    tail -n 40 "$WORK/install.log" | sed 's/^/     /' >&2
    die "go install github.com/prometheus/prometheus/cmd/promtool@$PROMETHEUS_MODULE_VERSION failed"
  fi
  mv "$WORK/bin/promtool" "$PROMTOOL.tmp"
  mv "$PROMTOOL.tmp" "$PROMTOOL"
  printf '%s' "$STAMP" >"$PROMTOOL.stamp"
  log "...  promtool built in $((SECONDS - t0)) s"
}

# One run at a time installs into the cache.
exec 9>"$BIN/.promtool.lock"
flock 9
install_promtool
flock -u 9
[[ "${1:-}" == build ]] && exit 0
log "== $("$PROMTOOL" --version 2>&1 | head -n1) (module $PROMETHEUS_MODULE_VERSION)"

# ---------------------------------------------------------------- checks

FAILURES=0
# run_check LABEL CMD...: runs CMD and shows its output; a non-zero exit counts a failure.
run_check() {
  local label="$1" rc=0
  shift
  log "== $label"
  "$@" 2>&1 | sed 's/^/     /' || rc=${PIPESTATUS[0]}
  if ((rc == 0)); then
    log "ok   $label"
  else
    log "FAIL $label (exit $rc)"
    FAILURES=$((FAILURES + 1))
  fi
}

# The PrometheusRule's spec is a rule file: the same groups, checked as such.
node -e '
  const YAML = require("yaml");
  const fs = require("fs");
  fs.writeFileSync(process.argv[2], YAML.stringify(YAML.parse(fs.readFileSync(process.argv[1], "utf8")).spec));
' "$PROMETHEUS_RULE" "$WORK/prometheus-rule-spec.yml" || die "could not read the spec of $PROMETHEUS_RULE"

# The dashboard's queries as recording rules, so promtool parses each (the $ are JavaScript's).
# shellcheck disable=SC2016
node -e '
  const fs = require("fs");
  const YAML = require("yaml");
  const board = JSON.parse(fs.readFileSync(process.argv[1], "utf8"));
  const panels = board.panels.flatMap((panel) => [panel, ...(panel.panels ?? [])]);
  const rules = panels.flatMap((panel) => (panel.targets ?? []).map((target, i) => ({
    record: `rsd_dashboard:panel_${panel.id}_${i}`,
    expr: target.expr.replace(/\$__rate_interval|\$__interval/g, "5m").replace(/\$__range/g, "1h"),
  })));
  fs.writeFileSync(process.argv[2], YAML.stringify({ groups: [{ name: "dashboard", rules }] }));
' "$DASHBOARD" "$WORK/dashboard-queries.yml" || die "could not read the queries of $DASHBOARD"

run_check "promtool check rules $RULES" "$PROMTOOL" check rules --lint=all --lint-fatal "$RULES"
run_check "promtool check rules (spec of $PROMETHEUS_RULE)" "$PROMTOOL" check rules --lint=all --lint-fatal "$WORK/prometheus-rule-spec.yml"
run_check "$PROMETHEUS_RULE is generated from $RULES" node scripts/monitoring/prometheus-rule.mjs --check
run_check "promtool test rules $TESTS" "$PROMTOOL" test rules "$TESTS"
run_check "every query of $DASHBOARD parses (promtool)" "$PROMTOOL" check rules --lint=none "$WORK/dashboard-queries.yml"

if ((FAILURES > 0)); then
  log "== FAILED: $FAILURES check(s) of the alerting rules"
  exit 1
fi
log "== alerting rules valid, their tests pass, the dashboard's queries parse"
