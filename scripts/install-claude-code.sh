#!/usr/bin/env bash
# Installs Claude Code (the npm package @anthropic-ai/claude-code, pinned) into the
# build cache ($TOOLHARNESS_CACHE/claude-code, by default ~/.cache/toolharness) when it
# is missing, for serve's end-to-end test (TestE2EClaudeCode). About 370 MB.
set -euo pipefail
version="${CLAUDE_CODE_VERSION:-2.1.332}"
dest="${TOOLHARNESS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/toolharness}/claude-code"
if [ -x "$dest/node_modules/.bin/claude" ] && [ "$(cat "$dest/.version" 2>/dev/null)" = "$version" ]; then
	exit 0
fi
command -v npm >/dev/null || { echo "install-claude-code: npm is missing (install Node.js 18 or later)" >&2; exit 1; }
echo "install-claude-code: installing @anthropic-ai/claude-code@$version into $dest" >&2
mkdir -p "$dest"
npm install --prefix "$dest" --no-audit --no-fund --loglevel=error "@anthropic-ai/claude-code@$version" >&2
"$dest/node_modules/.bin/claude" --version >/dev/null
echo "$version" >"$dest/.version"
echo "install-claude-code: $dest/node_modules/.bin/claude" >&2
