#!/usr/bin/env bash
# The PDF tools for the certificate tests (decision 55: test/e2e/certificates.e2e.test.ts and
# test/distributed/certificates.distributed.test.ts read a certificate's PDF with them): Debian's
# poppler-utils, whose pdftotext extracts the page's text and pdfinfo its metadata. Installs them with
# apt-get when they are missing, then prints pdftotext's version.
set -euo pipefail
LOG_TAG=pdf-tools
# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

command -v pdftotext >/dev/null && command -v pdfinfo >/dev/null || apt_install poppler-utils
version="$(pdftotext -v 2>&1)"
echo "${version%%$'\n'*}"
