#!/usr/bin/env bash
# Times perfscope compare against benchstat on the same 80,000-line input:
# two files (base, head) of N benchmarks × COUNT samples × 3 units, written
# by bench/compare/gen. The tools take turns, the order swapping every
# round; each run's wall time and peak resident memory come from
# /usr/bin/time -v, and the medians over all rounds are compared.
#
# benchstat is the version of golang.org/x/perf this module requires,
# installed into a temporary directory.
#
# Usage: bench/compare/run.sh [ROUNDS]
#   ROUNDS   rounds per tool (default 5)
# Environment:
#   N=2000 COUNT=20   benchmarks per file and samples per benchmark
set -euo pipefail

rounds=${1:-5}
n=${N:-2000}
count=${COUNT:-20}

root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "building..." >&2
(
	cd "$root"
	go build -o "$tmp/perfscope" ./cmd/perfscope
	GOBIN="$tmp" go install "golang.org/x/perf/cmd/benchstat@$(go list -m -f '{{.Version}}' golang.org/x/perf)"
	go run ./bench/compare/gen -o "$tmp" -n "$n" -count "$count"
)
lines=$(cat "$tmp/base.txt" "$tmp/head.txt" | grep -c '^Benchmark')
echo "input: $lines result lines ($n benchmarks x $count samples x 3 units, two files), $rounds rounds, $(nproc) cores"

# run_tool TOOL prints "wall_seconds max_rss_kib" for one run of TOOL.
run_tool() {
	local tv="$tmp/time"
	case $1 in
	perfscope) /usr/bin/time -v -o "$tv" "$tmp/perfscope" compare "$tmp/base.txt" "$tmp/head.txt" >"$tmp/$1.out" ;;
	benchstat) /usr/bin/time -v -o "$tv" "$tmp/benchstat" "$tmp/base.txt" "$tmp/head.txt" >"$tmp/$1.out" ;;
	*) echo "unknown tool $1" >&2; exit 2 ;;
	esac
	# "Elapsed (wall clock) time (h:mm:ss or m:ss): 0:01.92"
	awk -F': ' '
		/Elapsed \(wall clock\)/ { n = split($2, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; wall = s }
		/Maximum resident set size/ { rss = $2 }
		END { print wall, rss }' "$tv"
}

tools=(benchstat perfscope)
results="$tmp/results"
printf "%-6s %-10s %10s %12s\n" round tool "wall s" "peak MiB"
for ((r = 1; r <= rounds; r++)); do
	# Swap the order every round.
	k=$(((r - 1) % 2))
	order=("${tools[@]:k}" "${tools[@]:0:k}")
	for tool in "${order[@]}"; do
		read -r wall rss < <(run_tool "$tool")
		awk -v r="$r" -v tool="$tool" -v w="$wall" -v m="$rss" 'BEGIN {
			printf "%-6s %-10s %10.2f %12.1f\n", r, tool, w, m / 1024
		}' | tee -a "$results"
	done
done

echo
echo "medians over $rounds rounds (ratios: perfscope / benchstat):"
median() { sort -g | awk '{a[NR] = $1} END {print NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
bw=$(awk '$2 == "benchstat" {print $3}' "$results" | median)
bm=$(awk '$2 == "benchstat" {print $4}' "$results" | median)
pw=$(awk '$2 == "perfscope" {print $3}' "$results" | median)
pm=$(awk '$2 == "perfscope" {print $4}' "$results" | median)
printf "%-10s %10s %12s\n" tool "wall s" "peak MiB"
printf "%-10s %10.2f %12.1f\n" benchstat "$bw" "$bm" perfscope "$pw" "$pm"
awk -v bw="$bw" -v bm="$bm" -v pw="$pw" -v pm="$pm" 'BEGIN {
	printf "ratio      %9.2fx %11.2fx\n", pw / bw, pm / bm
}'
