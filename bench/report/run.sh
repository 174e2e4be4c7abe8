#!/usr/bin/env bash
# Times `perfscope report --source-dir CHECKOUT RUN` — the report of a saved
# run with the compiler's reasons in its findings — against
# `go tool pprof -top RUN/cpu.pb.gz`, the peer a user would otherwise run on
# the same profile. Both take turns, the order swapping every round, and
# each pair gives one ratio (perfscope / pprof) of wall time and of CPU time
# (user + system of the process and its children: perfscope starts the go
# command, `go tool` starts pprof); the medians of the ratios are the
# result. Pairing keeps a ratio meaningful when the machine's speed drifts.
#
# The cache of compiler diagnostics lives in a temporary PERFSCOPE_CACHE.
# One report before the rounds fills it ("cold": the build the cache saves,
# timed once and not in the ratios), one warm-up of each command follows,
# and the rounds then measure the warm cache: unchanged source, as on every
# report after the first. The Go build cache is the user's, warm as well.
#
# Usage: bench/report/run.sh [ROUNDS]        (from anywhere in the checkout)
#   ROUNDS   rounds (default 9)
# Environment:
#   RUN=internal/findings/testdata/runs/leftpad-naive   the saved run
#   SOURCE=<the checkout>                               its source
#   PERFSCOPE=<binary>   time this perfscope instead of one built from the
#                        checkout (an older build, to compare)
set -euo pipefail

rounds=${1:-9}
root=$(cd "$(dirname "$0")/../.." && pwd)
run=${RUN:-$root/internal/findings/testdata/runs/leftpad-naive}
src=${SOURCE:-$root}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export PERFSCOPE_CACHE=$tmp/cache

bin=${PERFSCOPE:-}
if [[ -z $bin ]]; then
	echo "building..." >&2
	(cd "$root" && go build -o "$tmp/perfscope" ./cmd/perfscope)
	bin=$tmp/perfscope
fi
go tool -n pprof >/dev/null # the first `go tool pprof` may build it

perfscope=("$bin" report --source-dir "$src" "$run")
pprof=(go tool pprof -top "$run/cpu.pb.gz")

# timed NAME CMD... runs CMD with its output in $tmp/NAME.out and prints
# "wall_seconds cpu_seconds".
timed() {
	local name=$1 t
	shift
	t=$({ TIMEFORMAT='%3R %3U %3S'; time "$@" >"$tmp/$name.out" 2>&1; } 2>&1) ||
		{ echo "$name failed: $*" >&2; cat "$tmp/$name.out" >&2; exit 1; }
	awk '{printf "%.3f %.3f\n", $1, $2 + $3}' <<<"$t"
}

read -r cold_wall cold_cpu < <(timed perfscope "${perfscope[@]}")
if ! grep -q '^ *compiler: ' "$tmp/perfscope.out"; then
	echo "the report has no compiler reasons: not the measurement intended" >&2
	cat "$tmp/perfscope.out" >&2
	exit 1
fi
timed pprof "${pprof[@]}" >/dev/null
timed perfscope "${perfscope[@]}" >/dev/null
echo "run $run, source $src, $rounds rounds, $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "cold cache (builds): perfscope report ${cold_wall}s wall, ${cold_cpu}s CPU"
echo

results=$tmp/results
printf "%-6s %14s %14s %14s %14s %10s %10s\n" round "pprof wall" "pprof cpu" "report wall" "report cpu" "wall ×" "cpu ×"
for ((r = 1; r <= rounds; r++)); do
	if ((r % 2)); then
		read -r pw pc < <(timed pprof "${pprof[@]}")
		read -r sw sc < <(timed perfscope "${perfscope[@]}")
	else
		read -r sw sc < <(timed perfscope "${perfscope[@]}")
		read -r pw pc < <(timed pprof "${pprof[@]}")
	fi
	awk -v r="$r" -v pw="$pw" -v pc="$pc" -v sw="$sw" -v sc="$sc" 'BEGIN {
		printf "%-6s %14.3f %14.3f %14.3f %14.3f %10.3f %10.3f\n", r, pw, pc, sw, sc, sw / pw, sc / pc
	}' | tee -a "$results"
done

median() { sort -g | awk '{a[NR] = $1} END {print NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
col() { awk -v c="$1" '{print $c}' "$results" | median; }
echo
echo "medians over $rounds rounds (seconds; ratios pair by pair, perfscope report / go tool pprof -top):"
printf "%-6s %14.3f %14.3f %14.3f %14.3f %10.3f %10.3f\n" median "$(col 2)" "$(col 3)" "$(col 4)" "$(col 5)" "$(col 6)" "$(col 7)"
