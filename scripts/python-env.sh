#!/usr/bin/env bash
# The Python SDK's environment: a virtual environment at .tools/python holding ./sdks/python
# and the exact test requirements of sdks/python/requirements-test.txt, from PyPI. Idempotent and quiet:
# when nothing it installs from has changed since the last run it returns at once; it prints only when
# something fails (then pip's own output). Needs Python 3.10 or later as python3 (or python3.1x).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.tools/python"
SDK="$ROOT/sdks/python"
STAMP="$VENV/.installed-from"

# One run at a time: test suites running side by side (the certificate suites, the SDK's) may all ask for it.
mkdir -p "$ROOT/.tools"
exec 9>"$ROOT/.tools/python-env.lock"
flock 9

is_recent() { "$1" -c 'import sys; sys.exit(sys.version_info < (3, 10))' 2>/dev/null; }

if is_recent "$VENV/bin/python"; then
  python="$VENV/bin/python"
else
  python=""
  for candidate in python3 python3.13 python3.12 python3.11 python3.10; do
    if command -v "$candidate" >/dev/null && is_recent "$candidate"; then python="$candidate" && break; fi
  done
  [ -n "$python" ] || { echo "python-env: Python 3.10 or later is needed (python3 on the PATH)" >&2; exit 1; }
fi

# What the environment is made from: the SDK's files and the pins. Unchanged, nothing to do.
fingerprint="$("$python" - "$SDK" <<'PY'
import hashlib, pathlib, sys
root = pathlib.Path(sys.argv[1])
files = [root / "pyproject.toml", root / "requirements-test.txt", root / "README.md"]
files += sorted(p for p in (root / "src").rglob("*") if p.is_file() and "__pycache__" not in p.parts)
digest = hashlib.sha256(sys.version.encode())
for path in files:
    digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
print(digest.hexdigest())
PY
)"
if [ -x "$VENV/bin/python" ] && [ "$(cat "$STAMP" 2>/dev/null)" = "$fingerprint" ]; then exit 0; fi

log="$(mktemp)"
trap 'rm -f "$log"' EXIT
fail() { cat "$log" >&2; echo "python-env: $1" >&2; exit 1; }

if [ "$python" != "$VENV/bin/python" ]; then
  rm -rf "$VENV"
  "$python" -m venv "$VENV" >"$log" 2>&1 || fail "could not create the virtual environment at $VENV"
fi
rm -f "$STAMP"
pip=("$VENV/bin/python" -m pip --disable-pip-version-check --no-input --quiet)
"${pip[@]}" install -r "$SDK/requirements-test.txt" "$SDK" >"$log" 2>&1 || fail "installing the Python SDK and its test requirements failed"
# The same version number with changed sources: pip would keep the copy it has.
"${pip[@]}" install --no-deps --force-reinstall "$SDK" >"$log" 2>&1 || fail "installing the Python SDK failed"
echo "$fingerprint" >"$STAMP"
