# shellcheck shell=bash
# Sourced by the project's scripts, so that their log lines, fatal errors, timings and Debian installs have one shape.
#   LOG_TAG      prefixes every line with "[tag] " (none: no prefix)
#   LOG_STDOUT   1: log lines go to stdout, for the CI steps whose log is their output (default: stderr)
#   DIE_STATUS   die's exit status (default 1; the CI checks use 2, a usage-like failure)
# die always writes to stderr.

log() {
  if [[ "${LOG_STDOUT:-0}" == 1 ]]; then
    printf '%s%s\n' "${LOG_TAG:+[$LOG_TAG] }" "$*"
  else
    printf '%s%s\n' "${LOG_TAG:+[$LOG_TAG] }" "$*" >&2
  fi
}

die() {
  printf '%sERROR: %s\n' "${LOG_TAG:+[$LOG_TAG] }" "$*" >&2
  exit "${DIE_STATUS:-1}"
}

# now: the wall clock in seconds with microseconds; elapsed START: "12.3s" since START.
now() { printf '%s' "${EPOCHREALTIME/,/.}"; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1fs", b - a }'; }

# apt_install PACKAGE...: those of Debian's packages not installed yet, non-interactive (through sudo
# when not root). An old or missing package list is the usual failure on a fresh machine: one
# `apt-get update`, then one retry.
apt_install() {
  local missing=() package sudo=""
  for package in "$@"; do
    dpkg-query -W -f '${Status}' "$package" 2>/dev/null | grep -q 'install ok installed' || missing+=("$package")
  done
  ((${#missing[@]} == 0)) && return 0
  command -v apt-get >/dev/null || die "apt-get not found; install ${missing[*]} yourself"
  [[ "$(id -u)" == 0 ]] || sudo=sudo
  log "apt-get install ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  if ! $sudo apt-get install -y -q --no-install-recommends "${missing[@]}" </dev/null >&2; then
    log "apt-get install failed, running apt-get update once and retrying"
    $sudo apt-get update -q </dev/null >&2 || die "apt-get update failed"
    $sudo apt-get install -y -q --no-install-recommends "${missing[@]}" </dev/null >&2 || die "apt-get install ${missing[*]} failed"
  fi
}
