#!/usr/bin/env bash
# Instructions one benchmark op costs, counted by valgrind (cachegrind):
# deterministic where this shared machine's timings vary by ±30%, so that a
# change to a hot path can be judged run to run. It runs the benchmark for 3
# and for 5 ops (each after the testing package's one-op first run) and
# prints the difference over 2.
#
#   scripts/instructions.sh TESTBINARY BENCH [PKGDIR [FUNCS]]
#   cd parse && go test -c -o /tmp/parse.test . && cd .. &&
#     scripts/instructions.sh /tmp/parse.test 'VsOllama/ours/hermes/dense/chunk4$' parse
#
# With FUNCS (an awk regular expression over function names, such as
# 'toolharness/parse\.|memmove'), only the instructions of the functions it
# matches are counted: the runtime's page allocator and zeroing move the
# whole count by about ±0.5 M from one run to the next, the parser's own
# functions by a few hundred.
#
# Needs valgrind (apt-get install valgrind). GC is off and one P runs, so
# that only the parser's work is counted. GODEBUG=cpu.rdtscp=off: valgrind
# does not emulate RDTSCP, which the runtime uses where the CPU has it.
set -euo pipefail
bin=$1 bench=$2 dir=${3:-.} funcs=${4:-}
command -v valgrind >/dev/null || { echo "instructions: valgrind not found (apt-get install valgrind)" >&2; exit 1; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
count() {
	(cd "$dir" && GODEBUG=cpu.rdtscp=off GOGC=off GOMAXPROCS=1 valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file="$out/$1" \
		"$bin" -test.run '^$' -test.bench "$bench" -test.benchtime "$1" >/dev/null 2>&1)
	if [ -z "$funcs" ]; then
		cg_annotate --auto=no "$out/$1" | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}'
	else
		cg_annotate --auto=no --threshold=0 "$out/$1" |
			awk -v re="$funcs" '/file:function/ {f = 1; next} f && NF >= 3 && $NF ~ re {gsub(",", "", $1); s += $1} END {print s + 0}'
	fi
}
three=$(count 3x)
five=$(count 5x)
echo "$bench: $(( (five - three) / 2 )) instructions/op${funcs:+ in $funcs}"
