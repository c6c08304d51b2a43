#!/usr/bin/env bash
# Instructions one benchmark op costs, counted by valgrind (cachegrind):
# deterministic where this shared machine's timings vary by ±30%, so that a
# change to a hot path can be judged run to run. It runs the benchmark for 3
# and for 5 ops (each after the testing package's one-op first run) and
# prints the difference over 2.
#
#   scripts/instructions.sh TESTBINARY BENCH [PKGDIR]
#   cd parse && go test -c -o /tmp/parse.test . && cd .. &&
#     scripts/instructions.sh /tmp/parse.test 'VsOllama/ours/hermes/dense/chunk4$' parse
#
# Needs valgrind (apt-get install valgrind). GC is off and one P runs, so
# that only the parser's work is counted.
set -euo pipefail
bin=$1 bench=$2 dir=${3:-.}
command -v valgrind >/dev/null || { echo "instructions: valgrind not found (apt-get install valgrind)" >&2; exit 1; }
count() {
	(cd "$dir" && GOGC=off GOMAXPROCS=1 valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
		"$bin" -test.run '^$' -test.bench "$bench" -test.benchtime "$1" 2>&1 >/dev/null) |
		awk '/I *refs/ {gsub(",", "", $NF); print $NF}'
}
three=$(count 3x)
five=$(count 5x)
echo "$bench: $(( (five - three) / 2 )) instructions/op"
