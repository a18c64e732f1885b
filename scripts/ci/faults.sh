#!/usr/bin/env bash
# Decision 48's fault suite: the clustered engines (scripts/infra.sh cluster: three Kafka brokers, a
# Redis Cluster of three primaries with a replica each, a MongoDB-wire server) brought up on ports of
# their own, the distributed runtime on them under load while a broker and a Redis primary stop and
# start (test/faults), then the engines taken down again. Prints the suite's figures per fault.
# Needs the build (`tsc -b`): the suite starts the services from their dist/.
set -euo pipefail
cd "$(dirname "$0")/../.."

started="$(date +%s)"
trap 'bash scripts/infra.sh cluster down >/dev/null 2>&1 || true' EXIT
cluster_env="$(bash scripts/infra.sh cluster up)"
eval "$cluster_env"
printf '%s\n' "$cluster_env"
echo "faults: clustered engines up in $(($(date +%s) - started)) s"

suite="$(date +%s)"
REQUIRE_INFRA=true npx jest --config jest.faults.config.js --runInBand
echo "faults: suite in $(($(date +%s) - suite)) s, $(($(date +%s) - started)) s in all"
