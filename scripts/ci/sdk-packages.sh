#!/usr/bin/env bash
# The two SDKs as users get them (decision 46): the npm tarball (`npm pack`), the Python wheel and sdist
# (PyPA's `build`, pinned in sdks/python/requirements-build.txt), each installed into a clean project or
# virtual environment under a mktemp directory outside the workspace, and the SDK's own tests run against
# the installed package and the running product (the embedded runtime, which the tests start from this
# checkout). Needs the product built (`npx tsc -b`, run here first: a no-op when it is), Node from the
# install, Python 3.10 or later as python3, and the npm registry and PyPI.
# Decision 57 adds: the tarball through publint and attw, the wheel and sdist through twine check, each carrying
# the LICENSE, its CHANGELOG and version; require() beside import; the API reference (npm run docs:api); and the CLI,
# @resilience-score/cli, from its tarball installed globally with no registry, logged in and run as the README has it.
# Prints one line per stage with its time.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"

WORK="$(mktemp -d "${TMPDIR:-/tmp}/rsd-sdk-packages.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
case "$WORK" in "$ROOT"/*) echo "sdk-packages: $WORK is inside the workspace" >&2; exit 1 ;; esac

started=$SECONDS
stage() { printf '[sdk-packages] %s (%ss)\n' "$*" "$((SECONDS - started))"; }

npx tsc -b

# -- TypeScript ------------------------------------------------------------------------------------
npm pack --workspace sdks/typescript --pack-destination "$WORK" --silent >/dev/null
tarballs=("$WORK"/resilience-score-client-*.tgz)
tarball="${tarballs[0]}"
stage "npm pack: $(basename "$tarball")"

# Decision 57: the tarball as a registry would serve it carries the repository's LICENSE, its CHANGELOG and its own
# version, and passes publint (package.json against what is packed) and Are the Types Wrong (its types and modules as
# every resolution mode finds them; ESM only, as its engines say: why in docs/decisions/0057-packages-users-install.md),
# both pinned in package.json.
# checked_tarball TARBALL: the tarball carries the repository's LICENSE and a CHANGELOG entry for its version, and passes
# publint; prints that version.
checked_tarball() {
  local unpacked
  unpacked="$(mktemp -d "$WORK/unpacked.XXXXXX")"
  tar -xzf "$1" -C "$unpacked" package/LICENSE package/CHANGELOG.md package/package.json
  cmp -s LICENSE "$unpacked/package/LICENSE" || { echo "sdk-packages: $(basename "$1")'s LICENSE is not the repository's" >&2; exit 1; }
  local version
  version="$(node -p "require('$unpacked/package/package.json').version")"
  grep -q "^## \[$version\]" "$unpacked/package/CHANGELOG.md" || {
    echo "sdk-packages: $(basename "$1")'s CHANGELOG has no entry for $version" >&2
    exit 1
  }
  npx --no-install publint run --strict "$1" >&2
  printf '%s\n' "$version"
}
ts_version="$(checked_tarball "$tarball")"
npx --no-install attw --profile esm-only --format table-flipped "$tarball"
stage "publint and attw passed; LICENSE, CHANGELOG and version $ts_version in the tarball"

project="$WORK/typescript-project"
mkdir -p "$project"
printf '{ "name": "sdk-user", "private": true, "type": "module" }\n' >"$project/package.json"
(cd "$project" && npm install --no-audit --no-fund --silent "$tarball")
package="$project/node_modules/@resilience-score/client"
[ -f "$package/dist/index.js" ] && [ -f "$package/dist/index.d.ts" ] || { echo "sdk-packages: the tarball has no dist/" >&2; exit 1; }
# As a user imports it: an ES module, from that project alone.
(cd "$project" && npm exec --offline -- node -e "
  const sdk = await import('@resilience-score/client');
  if (typeof sdk.Client !== 'function' || typeof sdk.Organization !== 'function') throw new Error('exports missing');
  console.log('[sdk-packages] imported ' + sdk.USER_AGENT + ' from ' + import.meta.resolve('@resilience-score/client'));
" --input-type=module)
# And as a CommonJS program requires it (require of an ES module: Node.js 20.19 and 22.12 onwards, as engines says).
(cd "$project" && npm exec --offline -- node --input-type=commonjs -e "
  const sdk = require('@resilience-score/client');
  if (typeof sdk.Client !== 'function' || typeof sdk.Organization !== 'function') throw new Error('exports missing');
  console.log('[sdk-packages] required ' + sdk.USER_AGENT + ' from ' + require.resolve('@resilience-score/client'));
")
stage "installed into $project"

RSD_TS_SDK_PACKAGE="$package" npx jest --config jest.unit.config.js sdks/typescript
RSD_TS_SDK_PACKAGE="$package" npx jest --config jest.e2e.config.js sdks/typescript
stage "TypeScript SDK tests passed against the installed tarball"

# -- The CLI ---------------------------------------------------------------------------------------
# Decision 57: @resilience-score/cli as a user installs it on a machine with no checkout: its tarball (npm pack bundles
# it: sdks/cli/build.mjs) through the same checks and publint, with no dependency to fetch; installed globally with no
# registry (a dead one, an empty cache, --offline), then the suite runs that `rsd` from a directory outside the
# workspace with a HOME and XDG_CONFIG_HOME of its own: rsd login with a profile against the embedded product (started
# from this checkout, as for the SDK's tests), the README's walkthrough, config.toml's mode, a usage error's exit 2.
(cd sdks/cli && npm pack --pack-destination "$WORK" --silent >/dev/null)
cli_tarballs=("$WORK"/resilience-score-cli-*.tgz)
cli_tarball="${cli_tarballs[0]}"
cli_version="$(checked_tarball "$cli_tarball")"
node -e "
  const { dependencies = {}, bin } = JSON.parse(require('node:child_process').execFileSync('tar', ['-xzOf', process.argv[1], 'package/package.json']));
  if (Object.keys(dependencies).length > 0) throw new Error('the CLI package depends on ' + Object.keys(dependencies).join(', '));
  if (bin?.rsd !== 'dist/rsd.js') throw new Error('the CLI package has no rsd bin');
" "$cli_tarball"
stage "npm pack: $(basename "$cli_tarball"), publint passed; LICENSE, CHANGELOG and version $cli_version; no dependencies"
mkdir -p "$WORK/cli-home"
(cd "$WORK/cli-home" && HOME="$WORK/cli-home" npm install --global --prefix "$WORK/cli-global" --offline --registry http://127.0.0.1:9/ \
  --cache "$WORK/cli-npm-cache" --no-audit --no-fund --silent "$cli_tarball")
[ -x "$WORK/cli-global/bin/rsd" ] || { echo "sdk-packages: the CLI's global install has no bin/rsd" >&2; exit 1; }
[ "$(HOME="$WORK/cli-home" "$WORK/cli-global/bin/rsd" --version)" = "$cli_version" ] || { echo "sdk-packages: rsd --version is not $cli_version" >&2; exit 1; }
stage "installed globally, offline, into $WORK/cli-global"
RSD_CLI_PACKAGE_BIN="$WORK/cli-global/bin/rsd" npx jest --config jest.e2e.config.js test/e2e/cli-package.e2e.test.ts
stage "the installed CLI logged in with a profile and ran the README's walkthrough"

# -- Python ----------------------------------------------------------------------------------------
python=""
for candidate in python3 python3.13 python3.12 python3.11 python3.10; do
  if command -v "$candidate" >/dev/null && "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 10))' 2>/dev/null; then
    python="$candidate" && break
  fi
done
[ -n "$python" ] || { echo "sdk-packages: Python 3.10 or later is needed (python3 on the PATH)" >&2; exit 1; }
pip_quiet=(-m pip --disable-pip-version-check --no-input --quiet)

"$python" -m venv "$WORK/build-env"
"$WORK/build-env/bin/python" "${pip_quiet[@]}" install -r sdks/python/requirements-build.txt
# The sdist from the source tree, then the wheel from that sdist: both as an index would serve them.
cp -r sdks/python "$WORK/python-source"
rm -rf "$WORK/python-source/tests/__pycache__" "$WORK/python-source/.pytest_cache"
"$WORK/build-env/bin/python" -m build --outdir "$WORK/dist" "$WORK/python-source" >"$WORK/build.log" 2>&1 || {
  cat "$WORK/build.log" >&2
  exit 1
}
wheels=("$WORK"/dist/resilience_score-*.whl)
sdists=("$WORK"/dist/resilience_score-*.tar.gz)
wheel="${wheels[0]}"
sdist="${sdists[0]}"
stage "built $(basename "$wheel") and $(basename "$sdist")"

# Decision 57: both pass `twine check --strict` (metadata, and a long description that renders), and carry the
# repository's LICENSE, the CHANGELOG (the wheel in its .dist-info) and the package's version.
"$WORK/build-env/bin/python" -m twine check --strict "$wheel" "$sdist"
"$WORK/build-env/bin/python" - "$wheel" "$sdist" LICENSE <<'PYTHON'
import re, sys, tarfile, zipfile
wheel, sdist, license_file = sys.argv[1:]
license_text = open(license_file, "rb").read()
version = re.search(r"-([0-9][^-]*?)(?:-py3-none-any\.whl)$", wheel).group(1)
with zipfile.ZipFile(wheel) as archive:
    info = f"resilience_score-{version}.dist-info"
    assert archive.read(f"{info}/licenses/LICENSE") == license_text, "the wheel's LICENSE is not the repository's"
    assert f"## [{version}]" in archive.read(f"{info}/extra_metadata/CHANGELOG.md").decode(), "the wheel's CHANGELOG has no entry for its version"
    assert f"\nVersion: {version}\n" in archive.read(f"{info}/METADATA").decode(), "the wheel's METADATA names another version"
with tarfile.open(sdist) as archive:
    top = f"resilience_score-{version}"
    assert archive.extractfile(f"{top}/LICENSE").read() == license_text, "the sdist's LICENSE is not the repository's"
    assert f"## [{version}]" in archive.extractfile(f"{top}/CHANGELOG.md").read().decode(), "the sdist's CHANGELOG has no entry for its version"
print(f"[sdk-packages] wheel and sdist {version}: LICENSE, CHANGELOG and version carried")
PYTHON
stage "twine check passed"

# The tests from a copy outside the workspace, so that nothing can import the sources beside them.
cp -r sdks/python/tests "$WORK/python-tests"
for artifact in "$wheel" "$sdist"; do
  kind="$([ "$artifact" = "$wheel" ] && echo wheel || echo sdist)"
  venv="$WORK/venv-$kind"
  "$python" -m venv "$venv"
  "$venv/bin/python" "${pip_quiet[@]}" install -r sdks/python/requirements-test.txt "$artifact"
  "$venv/bin/python" -c "import resilience_score, sys; print('[sdk-packages] imported', resilience_score.USER_AGENT, 'from', resilience_score.__file__)"
  # The embedded runtime only: `npm test` runs the product suites on the distributed runtime too.
  (cd "$WORK/python-tests" && RSD_REPO_ROOT="$ROOT" RSD_PYTHON_SDK_ARTIFACT="$(basename "$artifact")" RSD_SDK_RUNTIMES=embedded \
    "$venv/bin/python" -m pytest -q -p no:cacheprovider --rootdir "$WORK/python-tests" -c /dev/null .)
  stage "Python SDK tests passed against the installed $kind"
done

# -- The API reference -----------------------------------------------------------------------------
# Decision 57: `npm run docs:api` as a reader runs it, from the committed documents (their examples included).
npm run -s docs:api -- "$WORK/api-reference"
stage "API reference built (npm run docs:api)"
