#!/usr/bin/env bash
# Runs the command blocks of one group of the docs as written, in order, in one shell (every command in
# the README and the guides runs as written). A block belongs to a group when the line
# `<!-- readme-run: GROUP -->` comes right before its fence, in README.md or any Markdown file of the
# repository listed in FILES below: the group's blocks are run file by file in that order (the README's
# walkthrough first, then the guides that go on from it), each file's in order. A Markdown file with a
# marker that FILES misses fails the run, so that no block is left out. Fails on the first command that
# fails, and, before each block after the first, when a command a block started in the background
# (`… &`) has exited by itself since (a service that died at start: the shell would not say); what the
# blocks' own `kill` stopped is not counted. Whatever the blocks left running is stopped at the end.
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

# The files whose blocks run, in the order they run: the walkthrough goes on from the README through the
# guides in this order (each relies on what the one before it left: the product running, CLIENT_ID,
# RSD_API_KEY, TOKEN; the webhooks guide restarts the product for the alerts after it; the HTTP API's
# `curl` block revokes the walkthrough's grant, so it comes last of those; the recipients' start, which claims a
# grant of its own from an empty directory, after it).
FILES=(
  README.md
  docs/organizations/grants.md
  docs/recipients/portfolios.md
  docs/recipients/webhooks.md
  docs/organizations/alerts.md
  docs/recipients/sdks.md
  docs/recipients/api.md
  docs/recipients/start.md
  docs/operators/deploy.md
  docs/operators/backups.md
)
marker_pattern='^<!-- readme-run: [A-Za-z0-9_-]* -->$'
unlisted=""
while IFS= read -r file; do
  [[ " ${FILES[*]} " == *" $file "* ]] || unlisted+=" $file"
done < <(cd "$ROOT" && git ls-files --cached --others --exclude-standard -- '*.md' | while IFS= read -r md; do
  [ -f "$md" ] && grep -q "$marker_pattern" "$md" && printf '%s\n' "$md"
done)
if [ -n "$unlisted" ]; then
  echo "readme.sh: blocks marked readme-run in Markdown files that scripts/ci/readme.sh does not list:$unlisted" >&2
  exit 1
fi

# The fenced block after each marker of the group, fences and marker left out; when run, each block
# after the first starts with the check that everything started in the background still runs.
check=readme_background_alive
if $print; then check=""; fi
paths=()
for file in "${FILES[@]}"; do paths+=("$ROOT/$file"); done
script="$(awk -v marker="<!-- readme-run: ${group} -->" -v check="$check" -v root="$ROOT/" '
  FNR == 1 { armed = 0; inside = 0; named = 0 }
  $0 == marker { armed = 1; next }
  armed && /^```/ && !inside {
    inside = 1
    if (blocks++ && check != "") print check
    if (!named++) { file = FILENAME; sub("^" root, "", file); print "# " file }
    next
  }
  inside && /^```/ { inside = 0; armed = 0; print ""; next }
  inside { print }
' "${paths[@]}")"
[ -n "$script" ] || { echo "readme.sh: no block marked readme-run: ${group} in ${FILES[*]}" >&2; exit 1; }

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
# What the blocks start in the background ($! as each next command begins) and what their `kill` is
# given (a function in front of the builtin: the blocks' kill runs as written) are kept, so that
# readme_background_alive tells a service that exited by itself from one the blocks stopped.
# shellcheck disable=SC2016 # for the inner shell
background='readme_started=" "
readme_stopped=" "
readme_track() { if [ -n "${!:-}" ] && [[ "$readme_started" != *" $! "* ]]; then readme_started+="$! "; fi; }
kill() {
  local arg
  for arg in "$@"; do
    case "$arg" in
      %*) readme_stopped+="$(jobs -p "$arg" 2>/dev/null) " ;;
      -*) ;;
      *) readme_stopped+="$arg " ;;
    esac
  done
  builtin kill "$@"
}
readme_background_alive() {
  local pid status=0
  for pid in $readme_started; do
    [[ "$readme_stopped" == *" $pid "* ]] && continue
    builtin kill -0 "$pid" 2>/dev/null && continue
    wait "$pid" || status=$?
    echo "readme.sh: a command started in the background (pid $pid) exited by itself, status $status, before the next block" >&2
    false # -e: the run fails here, named after this check
  done
}'
# shellcheck disable=SC2016 # $BASH_COMMAND is for the inner shell to expand
bash -e -o pipefail -c "$(printf '%s\ntrap %q EXIT\ntrap %q DEBUG\n%s\n' "$background" "$on_exit" 'last=$BASH_COMMAND; readme_track' "$script")"
echo "readme.sh: every block of '${group}' ran"
