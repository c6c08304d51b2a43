#!/usr/bin/env bash
# Runs every fuzz target of the module for $FUZZTIME each.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime="${FUZZTIME:-20s}"
for pkg in $(go list ./...); do
	for target in $(go test -list '^Fuzz' "$pkg" | grep '^Fuzz' || true); do
		echo "fuzz: $pkg $target ($fuzztime)"
		go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "$pkg"
	done
done
