#!/usr/bin/env bash
# Installs the system packages the test suite needs when they are missing:
# headless Chromium renders the HTML benchmark report in a test, and
# bubblewrap (bwrap) is the sandbox builtin:bash runs in.
set -euo pipefail
missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v bwrap >/dev/null 2>&1 || missing+=(bubblewrap)
if [ ${#missing[@]} -eq 0 ]; then
	exit 0
fi
echo "install-deps: installing ${missing[*]}" >&2
if [ "$(id -u)" = 0 ]; then sudo=""; else sudo="sudo"; fi
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
