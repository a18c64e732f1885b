#!/usr/bin/env bash
# The Python SDK's tests: its environment from the project's own files (python-env.sh), then
# pytest against the real embedded runtime, which the tests start themselves with `npm start` on
# loopback; the product suites (test_portfolio.py, test_organization.py) again on the distributed
# runtime, its four services started by the tests on the servers KAFKA_BROKERS, MONGO_URL and
# REDIS_URL name (skipped without them, a failure under REQUIRE_INFRA; RSD_SDK_RUNTIMES=embedded
# leaves them out). Assumes the product is built (`npm run build`, as the root test script does
# first). Arguments go to pytest (for example -k history).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$ROOT/scripts/python-env.sh"
cd "$ROOT/sdks/python"
exec "$ROOT/.tools/python/bin/python" -m pytest "$@"
