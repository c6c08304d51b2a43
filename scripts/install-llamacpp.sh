#!/usr/bin/env bash
# Builds llama.cpp's llama-server for the CPU into the build cache
# ($TOOLHARNESS_CACHE/llamacpp, by default ~/.cache/toolharness, so that a fresh
# clone on the same machine reuses it) when it is missing. The source is the git bundle that the npm
# package node-llama-cpp ships (llama/gitRelease.bundle), pinned here, so the build
# needs only the npm registry and Debian's cmake and g++ (15-25 minutes on 2 cores,
# once). The same checkout holds llama.cpp's real tokenizer vocabularies
# (models/ggml-vocab-*.gguf) that the test models are built from.
set -euo pipefail
cd "$(dirname "$0")/.."
pkg="node-llama-cpp@${NODE_LLAMA_CPP_VERSION:-3.21.1}"
root="${TOOLHARNESS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/toolharness}/llamacpp"
stamp="$root/.version"
if [ -x "$root/bin/llama-server" ] && [ -d "$root/src/models" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$pkg" ]; then
	exit 0
fi
fail() { echo "install-llamacpp: $*" >&2; exit 1; }
missing=""
for tool in cmake g++ npm git; do
	command -v "$tool" >/dev/null 2>&1 || missing="$missing $tool"
done
if [ -n "$missing" ]; then
	echo "install-llamacpp: installing build tools:$missing" >&2
	if [ "$(id -u)" = 0 ]; then sudo=""; else sudo="sudo"; fi
	$sudo apt-get update -qq || fail "apt-get update failed"
	# Only what is missing: a machine whose node and npm come from elsewhere
	# (NodeSource) cannot take Debian's npm beside them.
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $missing >/dev/null ||
		fail "cannot install$missing with apt-get"
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
echo "install-llamacpp: fetching $pkg" >&2
(cd "$work" && npm pack --silent "$pkg" >/dev/null) || fail "npm pack $pkg failed"
tar -xzf "$work"/node-llama-cpp-*.tgz -C "$work" || fail "cannot unpack $pkg"
bundle="$work/package/llama/gitRelease.bundle"
[ -f "$bundle" ] || fail "$pkg has no llama/gitRelease.bundle"
rm -rf "$root/src" "$root/bin"
mkdir -p "$root/bin"
git clone --quiet "$bundle" "$root/src" || fail "cannot clone $bundle"
echo "install-llamacpp: building llama-server (15-25 minutes on 2 cores, once)" >&2
cmake -S "$root/src" -B "$root/build" -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=OFF -DLLAMA_CURL=OFF \
	-DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DBUILD_SHARED_LIBS=OFF >"$root/cmake.log" 2>&1 ||
	fail "cmake configure failed; see $root/cmake.log"
cmake --build "$root/build" --target llama-server -j"$(nproc)" >>"$root/cmake.log" 2>&1 ||
	fail "cmake build failed; see $root/cmake.log"
cp "$root/build/bin/llama-server" "$root/bin/llama-server"
rm -rf "$root/build"
echo "$pkg" >"$stamp"
echo "install-llamacpp: $root/bin/llama-server" >&2
