#!/usr/bin/env bash
# Installs Ollama v0.6.5 into the build cache ($TOOLHARNESS_CACHE/ollama/bin, by
# default ~/.cache/toolharness, so that a fresh clone on the same machine reuses it)
# when it is missing. Newer tags do not build from the module proxy (missing vendored header).
set -euo pipefail
cd "$(dirname "$0")/.."
version="${OLLAMA_VERSION:-v0.6.5}"
dest="${TOOLHARNESS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/toolharness}/ollama/bin"
if [ -x "$dest/ollama" ] && [ "$(cat "$dest/.version" 2>/dev/null)" = "$version" ]; then
	exit 0
fi
need=""
for h in /usr/include/nlohmann/json.hpp /usr/include/stb/stb_image.h; do
	[ -e "$h" ] || need=1
done
if [ -n "$need" ]; then
	echo "install-ollama: installing build headers (nlohmann-json3-dev, libstb-dev)" >&2
	if [ "$(id -u)" = 0 ]; then sudo=""; else sudo="sudo"; fi
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq nlohmann-json3-dev libstb-dev >/dev/null
fi
echo "install-ollama: building ollama $version (3-4 minutes on 2 cores)" >&2
mkdir -p "$dest"
# Ollama v0.6.5 is built with the machine's own Go (the verified path), not the
# project's toolchain.
(cd "$(mktemp -d)" && GOTOOLCHAIN=local GOBIN="$dest" GOFLAGS=-mod=mod go install "github.com/ollama/ollama@$version")
echo "$version" >"$dest/.version"
echo "install-ollama: $dest/ollama" >&2
