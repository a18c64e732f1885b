#!/usr/bin/env bash
# CI: the product on the one-node Kubernetes cluster of scripts/k8s.sh (decision 47). Runs on its own
# after `npm ci` and `npx tsc -b`, as root, inside the machine's heavy-work lock.
#
#   1. up          scripts/k8s.sh up: the cluster, its addons, the backing services and k8s/overlays/local
#   2. replicas    the read API's Deployment has at least two ready pods behind its Service
#   3. walkthrough the README's walkthrough through the NodePorts on 127.0.0.1: an authorization
#                  created on credentials, a score ingested, the score and the pillars read through the
#                  read API's Service and from each read-API pod itself, the authorization revoked and
#                  its key refused (401) through the Service and by each pod
#   4. policies    a pod outside the allowed set (its own namespace) cannot open Redis's port, while the
#                  read API's pods can: the NetworkPolicies are enforced (kube-router)
#   5. down        scripts/k8s.sh down; no process, mount or network namespace of the cluster left
#
# Prints the time of each step.
set -euo pipefail
cd "$(dirname "$0")/../.."

# The cluster's own kubectl (built by scripts/k8s.sh), with the KUBECONFIG its `env` exports.
kubectl() { "$PWD/.infra/k8s/bin/kubectl" "$@"; }
section() { printf '\n== k8s: %s\n' "$*"; }
fail() {
  printf 'FAIL: %s\n' "$*" >&2
  exit 1
}
now() { printf '%s' "${EPOCHREALTIME/,/.}"; }
seconds() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.0f", b - a }'; }
TIMINGS=()
timed() { TIMINGS+=("$(printf '%-34s %5s s' "$1" "$(seconds "$2")")"); }
cluster_up=false
finish() {
  local rc=$?
  if [[ "$cluster_up" == true ]]; then
    if ((rc != 0)); then
      kubectl get pods -A -o wide || true
      kubectl get events -A --sort-by=.lastTimestamp | tail -n 30 || true
    fi
    bash scripts/k8s.sh down || rc=1
  fi
  printf '\n== k8s: timings\n'
  printf '%s\n' "${TIMINGS[@]}"
  exit "$rc"
}
trap finish EXIT

# ---------------------------------------------------------------- 1. up

section "up"
t0="$(now)"
cluster_up=true
out="$(bash scripts/k8s.sh up)"
eval "$out"
printf '%s\n' "$out"
timed "up (cluster, addons, overlay ready)" "$t0"
kubectl get nodes -o wide
kubectl get pods -A -o wide

# ---------------------------------------------------------------- 2. replicas

section "the read API: at least two ready pods behind its Service"
ready="$(kubectl -n rsd get deployment rsd-read-api -o jsonpath='{.status.readyReplicas}')"
((ready >= 2)) || fail "the read API has ${ready:-0} ready pods, not at least 2"
mapfile -t READ_PODS < <(kubectl -n rsd get pods -l app.kubernetes.io/name=rsd-read-api \
  --field-selector=status.phase=Running -o jsonpath='{range .items[*]}{.status.podIP}{"\n"}{end}')
echo "read-API pods: ${READ_PODS[*]}"
((${#READ_PODS[@]} >= 2)) || fail "fewer than two read-API pod addresses"

# ---------------------------------------------------------------- 3. walkthrough

section "the walkthrough through the Services"
t0="$(now)"
JWT_HS256_SECRET="$(sed -n 's/^jwt-hs256-secret=//p' .infra/k8s/run/secrets.env)"
export JWT_HS256_SECRET
TOKEN="$(npx rsd token --org demo-org)"
created="$(curl -sS -f -X POST "$CRED_URL/organizations/demo-org/authorizations" \
  -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
  -d '{"recipientType":"auditor","scopes":["qr_score","pillar_breakdown"],"expiresAt":"2027-12-31"}')" ||
  fail "POST authorizations through the credentials Service"
CLIENT_ID="$(node -p 'JSON.parse(process.argv[1]).clientId' "$created")"
API_KEY="$(node -p 'JSON.parse(process.argv[1]).apiKey' "$created")"
echo "authorization $CLIENT_ID created"
curl -sS -f -o /dev/null -X POST "$INGEST_URL/scores" \
  -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
  -d '{"organizationId":"demo-org","scoreDate":"2026-11-22","score":74,"grade":"Strengthen",
       "pillarScores":{"structuralIntegrity":70,"failureResistance":77,"deviceHealth":70,"recoveryCapability":79}}' ||
  fail "POST scores through the score-ingest Service"
echo "score ingested"

# expect BASE PATH STATUS [JQ-LIKE CHECK]: waits up to 60 s for the status (the views are eventually
# consistent), then checks the body.
expect() {
  local base="$1" path="$2" want="$3" check="${4:-}" code body i
  for ((i = 0; i < 120; i++)); do
    body="$(curl -sS -m 5 -w '\n%{http_code}' "$base$path" -H "x-api-key: $API_KEY" || true)"
    code="${body##*$'\n'}"
    body="${body%$'\n'*}"
    [[ "$code" == "$want" ]] && break
    sleep 0.5
  done
  [[ "$code" == "$want" ]] || fail "GET $base$path answered $code, not $want: $body"
  if [[ -n "$check" ]]; then
    node -e "const b = JSON.parse(process.argv[1]); if (!($check)) { console.error(process.argv[1]); process.exit(1); }" "$body" ||
      fail "GET $base$path: the body fails $check"
  fi
  echo "GET $base$path -> $code"
}
expect "$READ_URL" "/customers/$CLIENT_ID/score" 200 "b.score === 74 && b.grade === 'Strengthen'"
expect "$READ_URL" "/customers/$CLIENT_ID/pillars" 200 "b.pillarScores.failureResistance === 77"
for ip in "${READ_PODS[@]}"; do
  expect "http://$ip:8080/v1" "/customers/$CLIENT_ID/score" 200 "b.score === 74"
done
curl -sS -f -o /dev/null -X POST "$CRED_URL/organizations/demo-org/authorizations/$CLIENT_ID/revoke" \
  -H "Authorization: Bearer $TOKEN" || fail "revoke through the credentials Service"
expect "$READ_URL" "/customers/$CLIENT_ID/score" 401 "b.code === 'CREDENTIAL_INACTIVE'"
for ip in "${READ_PODS[@]}"; do
  expect "http://$ip:8080/v1" "/customers/$CLIENT_ID/score" 401
done
timed "walkthrough" "$t0"

# ---------------------------------------------------------------- 4. policies

section "NetworkPolicies: Redis only from the read API and the notifier"
t0="$(now)"
REDIS_IP="$(kubectl -n rsd-infra get pods -l app.kubernetes.io/name=redis -o jsonpath='{.items[0].status.podIP}')"
# node: opens a TCP connection and exits 0 when it connects, 1 when it is refused or times out.
probe='const s = require("net").connect(6379, process.argv[1]); s.setTimeout(3000);
  s.on("connect", () => { console.log("connected"); process.exit(0); });
  s.on("timeout", () => { console.log("timed out"); process.exit(1); });
  s.on("error", (e) => { console.log(e.code); process.exit(1); });'
read_pod="$(kubectl -n rsd get pods -l app.kubernetes.io/name=rsd-read-api -o jsonpath='{.items[0].metadata.name}')"
kubectl -n rsd exec "$read_pod" -- node -e "$probe" "$REDIS_IP" ||
  fail "the read API's pod cannot reach Redis at $REDIS_IP"
kubectl create namespace rsd-probe --dry-run=client -o yaml | kubectl apply -f -
kubectl -n rsd-probe delete pod outsider --ignore-not-found --wait
kubectl -n rsd-probe run outsider --image=localhost/rsd:k8s --image-pull-policy=Never --restart=Never \
  --overrides='{"spec":{"automountServiceAccountToken":false}}' --command -- sleep 300
kubectl -n rsd-probe wait --for=condition=Ready pod/outsider --timeout=120s
if kubectl -n rsd-probe exec outsider -- node -e "$probe" "$REDIS_IP"; then
  fail "a pod outside the allowed set reached Redis at $REDIS_IP: the NetworkPolicies are not enforced"
fi
echo "a pod in rsd-probe cannot reach Redis; the read API's pod can"
kubectl delete namespace rsd-probe --wait=false
timed "policies" "$t0"

# ---------------------------------------------------------------- 5. down

section "down"
t0="$(now)"
cluster_up=false
bash scripts/k8s.sh down
timed "down" "$t0"
left="$(ip netns list | grep -c '^cni-' || true)"
((left == 0)) || fail "$left network namespaces of the cluster left"
echo "== k8s: passed"
