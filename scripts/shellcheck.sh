#!/usr/bin/env bash
# ShellCheck over every shell script in the repository (.shellcheckrc holds the one check turned off
# and why); installs Debian's shellcheck when it is missing. Exit 1 on any finding, notes included.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
LOG_TAG=shellcheck
# shellcheck source=scripts/lib/common.sh
source scripts/lib/common.sh

command -v shellcheck >/dev/null || apt_install shellcheck
mapfile -t files < <(git ls-files '*.sh' .ci/run)
log "$(shellcheck --version | sed -n 's/^version: //p'), ${#files[@]} scripts"
shellcheck --external-sources --format gcc "${files[@]}"
