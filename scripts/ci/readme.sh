#!/usr/bin/env bash
# Runs the README's command blocks of one group as written, in order, in one shell (decision 36:
# every command in the README runs as written). A block belongs to a group when the line
# `<!-- readme-run: GROUP -->` comes right before its fence. Fails on the first command that fails;
# whatever the blocks left running in the background is stopped at the end.
#
#   scripts/ci/readme.sh GROUP [DIR]     DIR: where to run them (default: the repository), e.g. a fresh clone
#   scripts/ci/readme.sh --print GROUP   print the script instead
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
print=false
if [ "${1:-}" = --print ]; then
  print=true
  shift
fi
group="${1:?usage: scripts/ci/readme.sh [--print] GROUP [DIR]}"
dir="${2:-$ROOT}"

# The fenced block after each marker of the group, fences and marker left out.
script="$(awk -v marker="<!-- readme-run: ${group} -->" '
  $0 == marker { armed = 1; next }
  armed && /^```/ && !inside { inside = 1; next }
  inside && /^```/ { inside = 0; armed = 0; print ""; next }
  inside { print }
' "$ROOT/README.md")"
[ -n "$script" ] || { echo "readme.sh: no block marked readme-run: ${group} in README.md" >&2; exit 1; }

if $print; then
  printf '%s\n' "$script"
  exit 0
fi

cd "$dir"
# -e: a command that fails fails the run, as a reader would see it fail. Whatever is still running in
# the background at the end (a product started with `npm start &`) is stopped like Ctrl-C would.
# No `set -x`: the blocks handle keys and tokens, and a trace would print every one of them; the
# command that failed is named instead.
# shellcheck disable=SC2016 # expanded by the inner shell, at its exit
on_exit='status=$?; [ "$status" -eq 0 ] || echo "readme.sh: exit $status at: $last" >&2; jobs -p | xargs -r kill 2>/dev/null; wait'
# shellcheck disable=SC2016 # $BASH_COMMAND is for the inner shell to expand
bash -e -o pipefail -c "$(printf 'trap %q EXIT\ntrap %q DEBUG\n%s\n' "$on_exit" 'last=$BASH_COMMAND' "$script")"
echo "readme.sh: every block of '${group}' ran"
