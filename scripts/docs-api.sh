#!/usr/bin/env bash
# `npm run docs:api` (decision 57): the API reference, one HTML page per service built by Redoc
# (`@redocly/cli build-docs`, pinned in package.json) from the committed OpenAPI documents
# (openapi/<service>.json, with their examples), and an index of them, into docs/api/ (or DIR).
# Each page is one file that works offline (Redoc's script is inlined), about 2.5 MB: built, not committed
# (docs/api/README.md says so; .gitignore leaves out the HTML). CI builds it in scripts/ci/sdk-packages.sh.
#
#   scripts/docs-api.sh [DIR]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${1:-$ROOT/docs/api}"
mkdir -p "$out"
cd "$ROOT"

# In the order the README lists the services; a document missing from the list fails the build.
services=(read-api credentials score-ingest notifier console)
for document in openapi/*.json; do
  [[ " ${services[*]} " == *" $(basename "$document" .json) "* ]] || { echo "docs:api: $document is not in the list" >&2; exit 1; }
done
for service in "${services[@]}"; do
  document="openapi/$service.json"
  # --inlineBundle: Redoc's script inside the page, which then loads nothing from elsewhere and works offline.
  REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true \
    npx --no-install redocly build-docs "$document" --output "$out/$service.html" --inlineBundle >"$out/.build.log" 2>&1 ||
    { cat "$out/.build.log" >&2; exit 1; }
  [ -s "$out/$service.html" ] || { echo "docs:api: Redoc wrote no $out/$service.html" >&2; exit 1; }
  printf 'docs:api: %s (%s bytes)\n' "$out/$service.html" "$(wc -c <"$out/$service.html")"
done

{
  printf '<!doctype html>\n<html lang="en">\n<head><meta charset="utf-8"><title>Resilience Score Data API reference</title></head>\n<body>\n'
  printf '<h1>Resilience Score Data API reference</h1>\n<p>Version %s. Built from openapi/*.json by Redoc.</p>\n<ul>\n' \
    "$(node -p "require('./package.json').version")"
  for service in "${services[@]}"; do
    title="$(node -p "require('./openapi/$service.json').info.title")"
    printf '<li><a href="%s.html">%s</a> (<a href="%s">OpenAPI</a>)</li>\n' "$service" "$title" "$(realpath --relative-to="$out" "openapi/$service.json")"
  done
  printf '</ul>\n</body>\n</html>\n'
} >"$out/index.html"
rm -f "$out/.build.log"
echo "docs:api: $out/index.html (${#services[@]} services)"
