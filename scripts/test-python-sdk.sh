#!/usr/bin/env bash
# The Python SDK's tests: its environment from the project's own files (python-env.sh), then
# pytest against the real embedded runtime, which the tests start themselves with `npm start` on
# loopback. Assumes the product is built (`npm run build`, as the root test script does first).
# Arguments go to pytest (for example -k history).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$ROOT/scripts/python-env.sh"
cd "$ROOT/sdks/python"
exec "$ROOT/.tools/python/bin/python" -m pytest "$@"
