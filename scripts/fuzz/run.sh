#!/usr/bin/env bash
# Fuzzes the four services with schemathesis against their own OpenAPI documents, on an embedded
# runtime this script starts (fresh data directory, ephemeral loopback ports) and always stops.
#
#   1. schemathesis from scripts/fuzz/requirements.txt (pinned, hashed, wheels only) into a venv under
#      .tools/, reused while the lockfile is unchanged.
#   2. The embedded runtime from services/embedded/dist (build first: `npm run fuzz` does).
#   3. Test data made through the real API: an authorization with every scope in one organization and
#      a score for it (the read API's and the notifier's credential) with one webhook, three
#      authorizations and one by claim link (decision 38) in another organization (the one the
#      credentials service's token administers, so its fuzzing never revokes the reader), two recipient
#      accounts (decision 42), four grants of that organization offered to the first account (decision
#      50), tokens minted by `rsd token` from the runtime's development secret.
#   4. schemathesis run against each service with scripts/fuzz/schemathesis.toml, the four at once,
#      with the hooks module cpython_ast_guard.py (it keeps a CPython 3.11 parser bug inside Hypothesis
#      from being reported as a failure of the product).
#
# The read API allows 120 requests a minute per credential, and 120 failed authentications a minute
# per address: on the product's defaults all but the first 120 requests of each minute would be 429s,
# and the fuzzing would test the limiter only. So the main pass runs with RATE_LIMIT_PER_MINUTE and
# FAILED_AUTH_LIMIT_PER_MINUTE raised to FUZZ_RATE_LIMIT (the documented configuration), and a short
# second pass fuzzes the read API again on a runtime with the defaults, where most answers are 429s,
# so those are checked against the document too.
#
# Fails when schemathesis reports any failure or error, or when fewer than FUZZ_MIN_REQUESTS requests
# were sent in all. Prints schemathesis' summary per service and the totals.
#
# The credentials service checks secret-scanning reports (decision 43) against a key list of the run's
# own, served on loopback, so the fuzzing never asks GitHub.
#
# Environment: FUZZ_MIN_REQUESTS (10000), FUZZ_RATE_LIMIT (1000000), FUZZ_SEED (random), FUZZ_WORKERS
# (2), FUZZ_MAX_EXAMPLES (per operation, instead of schemathesis.toml's), FUZZ_ONLY (comma list of the
# passes to run: read-api, credentials, score-ingest, notifier, read-api-at-120-per-min; default all),
# FUZZ_KEEP (set: keep the working directory with the reports and logs), PYTHON (python3).
# Non-interactive; exit 0 when everything passed, 1 otherwise.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
ROOT="$PWD"
FUZZ_DIR="$ROOT/scripts/fuzz"
MIN_REQUESTS="${FUZZ_MIN_REQUESTS:-10000}"
RATE_LIMIT="${FUZZ_RATE_LIMIT:-1000000}"
WORKERS="${FUZZ_WORKERS:-2}"
READ_ORG=fuzz-reader-org
ADMIN_ORG=fuzz-admin-org

LOG_TAG=fuzz
LOG_STDOUT=1
# shellcheck source=scripts/lib/common.sh
source "$ROOT/scripts/lib/common.sh"

# --- 1. schemathesis, from the lockfile --------------------------------------------------------------
lock_hash="$(sha256sum "$FUZZ_DIR/requirements.txt" | cut -c1-12)"
venv="$ROOT/.tools/fuzz-venv-$lock_hash"
if [ ! -f "$venv/.installed" ]; then
  log "installing schemathesis into ${venv#"$ROOT"/} (pinned, hashed)"
  rm -rf "$venv"
  mkdir -p "$ROOT/.tools"
  "${PYTHON:-python3}" -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --no-input --disable-pip-version-check \
    --require-hashes --no-deps --only-binary :all: -r "$FUZZ_DIR/requirements.txt"
  touch "$venv/.installed"
fi
schemathesis="$venv/bin/schemathesis"
log "$("$schemathesis" --version)"

[ -f "$ROOT/services/embedded/dist/main.js" ] || die "services/embedded/dist is missing: build first (npx tsc -b, or npm run fuzz)"

# --- 2. the embedded runtime -------------------------------------------------------------------------
work="$(mktemp -d "${TMPDIR:-/tmp}/rsd-fuzz.XXXXXX")"
runtime_pid=""
pass_pids=()
pass_labels=()
keys_pid=""

stop_runtime() {
  if [ -n "$runtime_pid" ] && kill -0 "$runtime_pid" 2>/dev/null; then
    kill -TERM "$runtime_pid" 2>/dev/null || true
    for _ in $(seq 1 150); do kill -0 "$runtime_pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$runtime_pid" 2>/dev/null || true
    wait "$runtime_pid" 2>/dev/null || true
  fi
  runtime_pid=""
}
cleanup() {
  local status=$?
  # Passes still running (the script was interrupted): schemathesis first, then its subshell.
  for pid_file in "$work"/*.pid; do
    [ -f "$pid_file" ] && kill -TERM "$(cat "$pid_file")" 2>/dev/null || true
  done
  for pid in "${pass_pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  stop_runtime
  if [ -n "$keys_pid" ]; then kill -TERM "$keys_pid" 2>/dev/null || true; wait "$keys_pid" 2>/dev/null || true; fi
  if [ -n "${FUZZ_KEEP:-}" ]; then log "kept $work"; else rm -rf "$work"; fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The secret-scanning key list (decision 43): one P-256 key, `fuzz`, in GitHub's format, on an ephemeral loopback port.
SECRET_SCANNING_KEY_ID=fuzz
node -e '
  const { generateKeyPairSync } = require("node:crypto");
  const { publicKey } = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
  const key = publicKey.export({ type: "spki", format: "pem" }).toString();
  const body = JSON.stringify({ public_keys: [{ key_identifier: process.argv[2], key, is_current: true }] });
  const server = require("node:http").createServer((_req, res) => res.writeHead(200, { "content-type": "application/json" }).end(body));
  server.listen(0, "127.0.0.1", () => require("node:fs").writeFileSync(process.argv[1], String(server.address().port)));
  process.on("SIGTERM", () => process.exit(0));' "$work/keys.port" "$SECRET_SCANNING_KEY_ID" &
keys_pid=$!
for _ in $(seq 1 100); do [ -s "$work/keys.port" ] && break; sleep 0.1; done
[ -s "$work/keys.port" ] || die "the secret-scanning key list did not start"
SECRET_SCANNING_KEYS_URL="http://127.0.0.1:$(cat "$work/keys.port")/meta/public_keys/secret_scanning"

# Ready when it logs `embedded runtime ready` with the three URLs (as test/support/embedded-process.ts waits).
ready_urls() {
  node -e '
    for (const line of require("fs").readFileSync(process.argv[1], "utf8").split("\n")) {
      if (!line.startsWith("{")) continue;
      try {
        const e = JSON.parse(line);
        if (e.msg === "embedded runtime ready") { console.log(e.readApi, e.credentials, e.scoreIngest, e.notifier); break; }
      } catch {}
    }' "$1"
}

# start_runtime NAME [VAR=value...]: a fresh data directory, then waits for readiness; sets the URLs.
start_runtime() {
  local name="$1"
  shift
  data_dir="$work/$name/data"
  runtime_log="$work/$name/embedded.log"
  mkdir -p "$work/$name"
  # Only the variables this run needs: no JWT secret or runtime selection from the caller's shell.
  env -u JWT_HS256_SECRET -u JWT_JWKS_URL -u RATE_LIMIT_PER_MINUTE -u FAILED_AUTH_LIMIT_PER_MINUTE \
    RUNTIME=embedded DATA_DIR="$data_dir" LOG_LEVEL=info SECRET_SCANNING_KEYS_URL="$SECRET_SCANNING_KEYS_URL" \
    READ_API_PORT=0 CREDENTIALS_PORT=0 SCORE_INGEST_PORT=0 NOTIFIER_PORT=0 CONSOLE_PORT=0 \
    READ_API_HOST=127.0.0.1 CREDENTIALS_HOST=127.0.0.1 SCORE_INGEST_HOST=127.0.0.1 NOTIFIER_HOST=127.0.0.1 CONSOLE_HOST=127.0.0.1 "$@" \
    node "$ROOT/services/embedded/dist/main.js" > "$runtime_log" 2>&1 < /dev/null &
  runtime_pid=$!
  local urls=""
  for _ in $(seq 1 600); do
    urls="$(ready_urls "$runtime_log")"
    [ -n "$urls" ] && break
    kill -0 "$runtime_pid" 2>/dev/null || { cat "$runtime_log" >&2; die "the embedded runtime exited before it was ready"; }
    sleep 0.1
  done
  [ -n "$urls" ] || { cat "$runtime_log" >&2; die "the embedded runtime was not ready within 60 s"; }
  read -r read_api_url credentials_url score_ingest_url notifier_url <<< "$urls"
  log "embedded runtime ($name) ready: read API $read_api_url, credentials $credentials_url, score ingest $score_ingest_url, notifier $notifier_url"
}

# --- 3. test data, through the real API --------------------------------------------------------------
rsd() {
  DATA_DIR="$data_dir" RSD_API_URL="$read_api_url" RSD_CREDENTIALS_URL="$credentials_url" RSD_INGEST_URL="$score_ingest_url" \
    RSD_NOTIFIER_URL="$notifier_url" \
    node "$ROOT/tools/cli/bin/rsd.js" "$@"
}
json_field() { node -e 'process.stdout.write(String(JSON.parse(require("fs").readFileSync(0, "utf8"))[process.argv[1]]))' "$1"; }

# open_account NAME: a grant of the reader's organization claimed into a new recipient account (decision
# 42); prints the account's id and key, separated by a space.
open_account() {
  local link opened
  link="$(rsd authorizations create --org "$READ_ORG" --recipient-type auditor --scopes qr_score,pillar_breakdown \
    --key-delivery claim-link --env | sed -n "s|^export RSD_CLAIM_URL='\(.*\)'$|\1|p")"
  # shellcheck disable=SC2016 # JavaScript in single quotes: its ${…} are the script's template literals
  opened="$(node -e '
    fetch(process.argv[1], { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ into: "account", accountName: process.argv[2] }) })
      .then(async (response) => {
        if (response.status !== 201) throw new Error(`claim into an account: ${response.status} ${await response.text()}`);
        const { accountId, accountKey } = await response.json();
        process.stdout.write(`${accountId} ${accountKey}`);
      });' "$link" "$1")"
  [ -n "$opened" ] || die "no recipient account was opened"
  printf '%s' "$opened"
}

# create_test_data NAME: the data above, and the configuration with its dictionaries in $st_dir.
create_test_data() {
  st_dir="$work/$1/schemathesis"
  mkdir -p "$st_dir"
  local reader reader_client_id reader_etags reader_webhook_id today
  reader="$(rsd authorizations create --org "$READ_ORG" --recipient-type auditor --recipient-name "Fuzz reader" \
    --scopes qr_score,pillar_breakdown,score_trend)"
  reader_client_id="$(json_field clientId <<< "$reader")"
  FUZZ_READER_API_KEY="$(json_field apiKey <<< "$reader")"
  today="$(date -u +%F)"
  printf '{"organizationId":"%s","scoreDate":"%s","score":72,"grade":"Strengthen","pillarScores":{"structuralIntegrity":70,"failureResistance":75,"deviceHealth":68,"recoveryCapability":77}}\n' \
    "$READ_ORG" "$today" > "$work/$1/score.json"
  rsd scores publish "$work/$1/score.json" > /dev/null
  # The current ETag of each resource, for conditional requests.
  # shellcheck disable=SC2016 # JavaScript in single quotes, as above
  reader_etags="$(READER_KEY="$FUZZ_READER_API_KEY" node -e '
    Promise.all(["score", "pillars", "score/history"].map(async (resource) => {
      const url = `${process.argv[1]}/v1/customers/${process.argv[2]}/${resource}`;
      const response = await fetch(url, { headers: { "x-api-key": process.env.READER_KEY } });
      if (response.status !== 200) throw new Error(`${resource}: ${response.status} ${await response.text()}`);
      return response.headers.get("etag");
    })).then((etags) => console.log(etags.join("\n")));' "$read_api_url" "$reader_client_id")"
  # A webhook of the reader's, to a public address literal (no name to resolve): deliveries would go
  # there only for a score of the reader's organization, which no fuzzed request posts.
  reader_webhook_id="$(RSD_API_KEY="$FUZZ_READER_API_KEY" rsd webhooks create --client-id "$reader_client_id" \
    --url https://93.184.216.34/fuzz --events score.updated | json_field id)"
  local admin_client_ids=()
  for recipient in insurance_provider regulatory_body partner; do
    admin_client_ids+=("$(rsd authorizations create --org "$ADMIN_ORG" --recipient-type "$recipient" --scopes qr_score | json_field clientId)")
  done
  # One whose key waits for its claim link (decision 38), so that new links are issued too, not only refused.
  admin_client_ids+=("$(rsd authorizations create --org "$ADMIN_ORG" --recipient-type auditor --scopes qr_score \
    --key-delivery claim-link | json_field clientId)")
  # A claim link of the reader's organization (decision 38), out of the admin token's reach: its GET is
  # answered 200 and its first POST 201, then 410; generated tokens get 404.
  local claim_token
  claim_token="$(rsd authorizations create --org "$READ_ORG" --recipient-type partner --scopes qr_score --key-delivery claim-link --env |
    sed -n "s|^export RSD_CLAIM_URL='.*/claim/\(.*\)'$|\1|p")"
  [ -n "$claim_token" ] || die "no claim link was issued"
  # Recipient accounts (decision 42), each holding a grant of the reader's organization: the portfolio's
  # pages and webhooks are fuzzed with one account's key, its key's rotation and releases (credentials
  # service) with the other's, since a rotation stops the old key at once and the passes run together.
  local account_id rotated_account_id offer_client_ids=()
  read -r account_id FUZZ_ACCOUNT_KEY <<< "$(open_account "Fuzz book")"
  read -r rotated_account_id FUZZ_ROTATED_ACCOUNT_KEY <<< "$(open_account "Fuzz rotated book")"
  export FUZZ_ACCOUNT_KEY FUZZ_ROTATED_ACCOUNT_KEY
  # Offers to the first account (decision 50), from the admin organization (which has no score, so accepting
  # one changes no page the read API's pass reads): their answers are fuzzed with that account's key, never
  # rotated, so they are accepted, declined and refused 409 as the run goes, not only refused 404.
  for _ in 1 2 3 4; do
    offer_client_ids+=("$(rsd authorizations create --org "$ADMIN_ORG" --recipient-type partner --scopes qr_score \
      --key-delivery account --account-id "$account_id" | json_field clientId)")
  done
  FUZZ_ADMIN_TOKEN="$(rsd token --org "$ADMIN_ORG" --scope authorizations:write --ttl 2h)"
  FUZZ_ENGINE_TOKEN="$(rsd token --scope scores:write --ttl 2h)"
  export FUZZ_READER_API_KEY FUZZ_ADMIN_TOKEN FUZZ_ENGINE_TOKEN

  # Values schemathesis draws for parameters: libFuzzer dictionary files beside the configuration.
  cp "$FUZZ_DIR/schemathesis.toml" "$st_dir/schemathesis.toml"
  printf '"%s"\n' "$reader_client_id" > "$st_dir/reader-client-id.dict"
  { printf '"*"\n'; sed 's/"/\\"/g; s/.*/"&"/' <<< "$reader_etags"; } > "$st_dir/reader-etags.dict"
  printf '"%s"\n' "$reader_webhook_id" > "$st_dir/reader-webhook-id.dict"
  # Webhook targets with no host name to resolve, so the fuzzing seldom asks DNS: a public address
  # (accepted), and loopback, private, link-local and plain-HTTP ones (refused by decision 28).
  printf '"%s"\n' https://93.184.216.34/hook https://127.0.0.1/hook https://10.0.0.8/hook \
    https://169.254.169.254/latest http://93.184.216.34/hook 'https://[::1]/hook' > "$st_dir/webhook-targets.dict"
  printf '"%s"\n' "$ADMIN_ORG" > "$st_dir/admin-organization.dict"
  printf '"%s"\n' "$claim_token" > "$st_dir/claim-token.dict"
  printf '"%s"\n' "$SECRET_SCANNING_KEY_ID" > "$st_dir/secret-scanning-key-id.dict"
  printf '"%s"\n' "${admin_client_ids[@]}" > "$st_dir/admin-client-ids.dict"
  printf '"%s"\n' "${offer_client_ids[@]}" > "$st_dir/offer-client-ids.dict"
  { date -u -d '1 day ago' +'"%F"'; printf '"%s"\n' "$today" 2024-02-29 2000-01-01; } > "$st_dir/past-dates.dict"
  log "test data: reader $reader_client_id in $READ_ORG with a score of $today and webhook $reader_webhook_id; ${#admin_client_ids[@]} authorizations in $ADMIN_ORG; accounts $account_id (${#offer_client_ids[@]} offers) and $rotated_account_id"
}

# --- 4. schemathesis ---------------------------------------------------------------------------------
common_args=(--workers "$WORKERS" --no-color)
[ -n "${FUZZ_SEED:-}" ] && common_args+=(--seed "$FUZZ_SEED")
failed=0
total_requests=0
total_cases=0
summary=()

# wanted LABEL: whether FUZZ_ONLY (a comma list; empty: everything) names this pass.
wanted() { [ -z "${FUZZ_ONLY:-}" ] || [[ ",$FUZZ_ONLY," == *",$1,"* ]]; }

# fuzz_start LABEL URL [schemathesis option...]: one pass in the background, its output and exit status in
# files; fuzz_report LABEL prints them once it has ended. The four services' passes run at once against
# one runtime: schemathesis spends about 45 ms of Python a request (one core at most, behind the GIL) and
# the runtime well under one, so one pass at a time left a core of the two idle (909 s for four passes
# on a fresh machine).
fuzz_start() {
  local label="$1" url="$2"
  shift 2
  wanted "$label" || return 0
  log "$label: schemathesis run $url/v1/openapi.json $*"
  (
    status=0
    begun=$SECONDS
    cd "$st_dir"
    PYTHONPATH="$FUZZ_DIR" SCHEMATHESIS_HOOKS=cpython_ast_guard "$schemathesis" --config-file "$st_dir/schemathesis.toml" run "$url/v1/openapi.json" \
      "${common_args[@]}" --report har,junit --report-dir "$work/reports/$label" "$@" > "$work/$label.out" 2>&1 &
    # Its pid, for the clean-up of an interrupted run.
    echo "$!" > "$work/$label.pid"
    wait "$!" || status=$?
    printf '%s %s\n' "$status" "$((SECONDS - begun))" > "$work/$label.status"
  ) &
  pass_pids+=("$!")
  pass_labels+=("$label")
}
fuzz_wait() {
  local index
  for index in "${!pass_pids[@]}"; do
    wait "${pass_pids[$index]}" || true
    fuzz_report "${pass_labels[$index]}"
  done
  pass_pids=()
  pass_labels=()
}
fuzz_report() {
  local label="$1" out="$work/$1.out" status seconds counts requests cases failures
  read -r status seconds < "$work/$label.status" 2>/dev/null || { status=1; seconds='?'; }
  log "$label: ended after $seconds s"
  # The failures and the summary; the progress lines before them say nothing a CI log needs.
  sed -n '/^=\+ \(FAILURES\|ERRORS\|WARNINGS\|SUMMARY\) =\+$/,$p' "$out"
  # No summary means schemathesis stopped early (a bad configuration, the schema did not load): show why.
  grep -q '^=\+ SUMMARY' "$out" || tail -40 "$out"
  counts="$(node "$FUZZ_DIR/count-reports.js" "$work/reports/$label" "$out")"
  read -r requests cases failures <<< "$counts"
  total_requests=$((total_requests + requests))
  total_cases=$((total_cases + cases))
  summary+=("$(printf '%-24s %7s requests %7s test cases %4s failures %5s s  (exit %s)' "$label" "$requests" "$cases" "$failures" "$seconds" "$status")")
  if [ "$status" -ne 0 ] || [ "$failures" -ne 0 ]; then failed=1; fi
}

started=$SECONDS
max_examples=()
[ -n "${FUZZ_MAX_EXAMPLES:-}" ] && max_examples=(--max-examples "$FUZZ_MAX_EXAMPLES")

start_runtime main RATE_LIMIT_PER_MINUTE="$RATE_LIMIT" FAILED_AUTH_LIMIT_PER_MINUTE="$RATE_LIMIT"
create_test_data main
fuzz_start read-api "$read_api_url" "${max_examples[@]}"
fuzz_start credentials "$credentials_url" "${max_examples[@]}"
fuzz_start score-ingest "$score_ingest_url" "${max_examples[@]}"
fuzz_start notifier "$notifier_url" "${max_examples[@]}"
fuzz_wait
stop_runtime

# The product's own limits (120 a minute each), so that many answers are 429s. ignored_auth expects 401
# or 403 without credentials, but an address over its failed-authentication limit gets 429 (decision 8).
if wanted read-api-at-120-per-min; then
  start_runtime rate-limited
  create_test_data rate-limited
  fuzz_start read-api-at-120-per-min "$read_api_url" --max-examples 150 --phases fuzzing --exclude-checks ignored_auth
  fuzz_wait
  stop_runtime
fi

printf '\n[fuzz] schemathesis totals (%s s)\n' "$((SECONDS - started))"
printf '  %s\n' "${summary[@]}"
printf '  %-24s %7s requests %7s test cases\n' total "$total_requests" "$total_cases"
if [ "$total_requests" -lt "$MIN_REQUESTS" ]; then
  log "only $total_requests requests, fewer than FUZZ_MIN_REQUESTS=$MIN_REQUESTS"
  failed=1
fi
if [ "$failed" -ne 0 ]; then
  FUZZ_KEEP=1
  log "FAILED: the reports, the configuration and the runtime's log are in $work"
  exit 1
fi
log "passed: $total_requests requests, 0 failures"
