#!/usr/bin/env bash
# Decisions 35 and 36, as a newcomer meets the product: in a fresh clone of this commit,
# with the machine's own Node.js first on the PATH (20 on this kind of machine), the README's
#   npm install && npm start
# runs the product on the Node.js of .node-version, and the read API's /healthz answers. While it
# runs, its four served OpenAPI documents are checked by two validators nobody here wrote:
# openapi-spec-validator (PyPI) and Redocly's recommended rules (@redocly/cli, from the lockfile).
# Then the walkthrough of the README and the guides that go on from it, and the backups guide's backup
# and restore, run as written in the same clone (scripts/ci/readme.sh).
set -euo pipefail
# Any command that stops the script names itself: CI shows only part of a long log.
trap 'echo "front door: failed at line ${LINENO}: ${BASH_COMMAND}" >&2' ERR

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
OPENAPI_SPEC_VALIDATOR_VERSION=0.9.0
work="$(mktemp -d)"
product=""
cleanup() {
  if [ -n "$product" ]; then kill "$product" 2>/dev/null || true; wait "$product" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

for port in 8080 8081 8082 8083; do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    echo "front door: port $port is in use already; the README's npm start needs 8080-8083 free" >&2
    exit 1
  fi
done
# The Node.js this machine puts first on the PATH, before any install, beside the one .node-version pins.
machine_node="$(node --version 2>/dev/null || echo none)"
pinned_node="v$(tr -d '[:space:]' < "$ROOT/.node-version")"
echo "machine: node ${machine_node}, npm $(npm --version); .node-version: ${pinned_node}"
if [ "${machine_node%%.*}" != "${pinned_node%%.*}" ]; then
  echo "front door: the machine's Node.js is another major version than .node-version: npm install must bring ${pinned_node}"
else
  echo "front door: note: this machine's own Node.js already has the major version of .node-version; the check proves less here" >&2
fi
git clone --quiet --no-local "$ROOT" "$work/clone"
cd "$work/clone"

# As written, with the start in the background so this script can look at it.
(npm install --no-audit --no-fund && exec npm start) > "$work/start.log" 2>&1 &
product=$!
if ! curl -sf --retry 300 --retry-all-errors --retry-delay 1 -o /dev/null http://127.0.0.1:8080/healthz; then
  cat "$work/start.log" >&2
  echo "front door: the read API's /healthz never answered" >&2
  exit 1
fi
# The read API listens before the other three services: /healthz can answer before the runtime logs
# that all four are ready, so wait for that line too (a silent `grep` here once failed CI at random).
for _ in $(seq 1 60); do
  grep -q 'embedded runtime ready' "$work/start.log" && break
  sleep 1
done
if ! grep -q 'embedded runtime ready' "$work/start.log"; then
  cat "$work/start.log" >&2
  echo "front door: /healthz answered, but the runtime never logged 'embedded runtime ready' within 60 s" >&2
  exit 1
fi
# The Node.js of the process that serves :8080, the one `npm start` started, and the one npm scripts get.
server_pid="$(ss -ltnpH 'sport = :8080' | grep -o 'pid=[0-9]*' | head -n 1 | cut -d= -f2 || true)"
served_by="$(readlink "/proc/${server_pid:-none}/exe" || true)"
product_node="$([ -n "$served_by" ] && "$served_by" --version || echo unknown)"
npm_node="$(npm exec -- node --version)"
echo "front door: :8080 is served by ${served_by:-?} (pid ${server_pid:-?}), Node.js ${product_node}; npm exec node: ${npm_node}"
if [ "$product_node" != "$pinned_node" ] || [ "$npm_node" != "$pinned_node" ]; then
  echo "front door: npm start runs the product on Node.js ${product_node} (npm exec: ${npm_node}), not .node-version's ${pinned_node}" >&2
  exit 1
fi
echo "front door: npm install && npm start answered /healthz on ${product_node} ($(wc -l < "$work/start.log") lines of output)"

python3 -m venv "$work/venv"
"$work/venv/bin/pip" install --quiet --disable-pip-version-check "openapi-spec-validator==${OPENAPI_SPEC_VALIDATOR_VERSION}"
for port in 8080 8081 8082 8083; do
  curl -sf -o "$work/openapi-$port.json" "http://127.0.0.1:$port/v1/openapi.json"
  "$work/venv/bin/openapi-spec-validator" "$work/openapi-$port.json"
  npx redocly lint --extends=recommended --max-problems 50 "$work/openapi-$port.json"
done

kill "$product"
wait "$product" || true
product=""

bash "$ROOT/scripts/ci/readme.sh" walkthrough "$work/clone"

# The backups guide's backup and restore, as written, while the product serves the walkthrough's data.
(exec npm start) > "$work/start-again.log" 2>&1 &
product=$!
curl -sf --retry 60 --retry-all-errors --retry-delay 1 -o /dev/null http://127.0.0.1:8080/healthz
bash "$ROOT/scripts/ci/readme.sh" backup "$work/clone"
kill "$product"
wait "$product" || true
product=""
