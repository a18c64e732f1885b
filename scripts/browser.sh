#!/usr/bin/env bash
# The browser for the console's browser tests (test/e2e/console.e2e.test.ts): Debian's Chromium,
# driven by playwright-core, which downloads nothing. Installs it with apt-get when it is missing,
# then prints its version. CHROMIUM_PATH names another build.
set -euo pipefail
LOG_TAG=browser
# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

chromium="${CHROMIUM_PATH:-/usr/bin/chromium}"
[[ -x "$chromium" ]] || apt_install chromium
"$chromium" --version
