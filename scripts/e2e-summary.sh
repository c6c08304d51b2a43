#!/usr/bin/env bash
# Filters verbose `go test` output of the end-to-end tests down to test
# results, test logs and package lines, and fails when a TestE2E was
# skipped or none ran: a missing prerequisite must never pass silently.
# Test logs are kept whole, with their continuation lines (a failure's
# diff), and from any file: a helper's too, such as the Ollama log tail
# that ollamatest.Start prints when a test fails.
set -uo pipefail
log=$(mktemp)
trap 'rm -f "$log"' EXIT
tee "$log" | awk '
	/^(--- (PASS|FAIL|SKIP)|PASS|FAIL|ok |panic:)/ { print; inlog = 0; next }
	/^[ \t]+[^ \t]+\.go:[0-9]+:/ { print; inlog = 1; next }
	inlog && /^        / { print; next }
	{ inlog = 0 }
'
status=0
if grep -qE -- '^(--- FAIL|FAIL|panic:)' "$log"; then
	status=1
fi
if grep -q -- '--- SKIP: TestE2E' "$log"; then
	echo "e2e: a TestE2E test was skipped; end-to-end tests must run (see the SKIP lines above)" >&2
	exit 1
fi
if ! grep -q -- '--- PASS: TestE2E' "$log"; then
	echo "e2e: no TestE2E test passed" >&2
	exit 1
fi
passed=$(grep -c -- '--- PASS: TestE2E' "$log")
failed=$(grep -c -- '--- FAIL: TestE2E' "$log")
echo "e2e: $passed passed, $failed failed"
exit "$status"
