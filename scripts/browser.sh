#!/usr/bin/env bash
# The browser for the console's browser tests (test/e2e/console.e2e.test.ts): Debian's Chromium,
# driven by playwright-core, which downloads nothing. Installs it with apt-get when it is missing
# (one `apt-get update` and a retry), then prints its version. CHROMIUM_PATH names another build.
set -euo pipefail

chromium="${CHROMIUM_PATH:-/usr/bin/chromium}"
if [ ! -x "$chromium" ]; then
  command -v apt-get >/dev/null || { echo "browser: apt-get not found; install Chromium and set CHROMIUM_PATH" >&2; exit 1; }
  sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  echo "browser: installing Debian's chromium (apt-get)..." >&2
  if ! $sudo apt-get install -y -q --no-install-recommends chromium </dev/null >&2; then
    echo "browser: apt-get install failed, running apt-get update once and retrying" >&2
    $sudo apt-get update -q </dev/null >&2
    $sudo apt-get install -y -q --no-install-recommends chromium </dev/null >&2
  fi
fi
"$chromium" --version
