#!/usr/bin/env bash
# Installs the system packages the test suite needs when they are missing:
# headless Chromium renders the HTML benchmark report in a test.
set -euo pipefail
if command -v chromium >/dev/null 2>&1; then
	exit 0
fi
echo "install-deps: installing chromium (headless HTML report test)" >&2
if [ "$(id -u)" = 0 ]; then sudo=""; else sudo="sudo"; fi
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium >/dev/null
