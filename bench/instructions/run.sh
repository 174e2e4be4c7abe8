#!/usr/bin/env bash
# Counts the instructions/op of the examples' benchmarks again and again,
# quiet and beside four CPU burners (`yes >/dev/null`, four times), and
# prints each benchmark's counts and their spread per load.
#
#   bench/instructions/run.sh                       # 20 runs of each load
#   RUNS=3 bench/instructions/run.sh                # fewer
#   RUNS=3 LOADS=loaded bench/instructions/run.sh   # beside the burners only
#   SUMMARY=only OUT=/tmp/x bench/instructions/run.sh   # summarize runs kept in OUT
#
# Each run is `perfscope bench --measure instructions --count 1 --benchtime 1x`
# on one package and pattern (SETS, "package pattern" pairs, default the
# examples' benchmarks that can be counted in minutes under valgrind). One
# operation per ordinary sample is what a loaded machine measures: its B/op
# holds the benchmark's set-up, which is what made counts depend on load.
# Results go to OUT (default a new temporary directory), one file per run.
set -euo pipefail
cd "$(dirname "$0")/../.."
RUNS="${RUNS:-20}"
LOADS="${LOADS:-quiet loaded}"
OUT="${OUT:-$(mktemp -d /tmp/perfscope-instructions-XXXXXX)}"
SETS="${SETS:-./examples/leftpad:Leftpad|Middleware ./examples/txsummary:Summary/optimized}"
mkdir -p "$OUT"
burners=()
stop_burners() {
	for pid in "${burners[@]}"; do kill "$pid" 2>/dev/null || true; done
	burners=()
}
trap stop_burners EXIT

if [ "${SUMMARY:-}" != only ]; then
	bin="$OUT/perfscope"
	go build -o "$bin" ./cmd/perfscope
	# Loads alternate run by run, so that runs cut short still compare.
	for run in $(seq "$RUNS"); do
		for load in $LOADS; do
			if [ "$load" = loaded ]; then
				for _ in 1 2 3 4; do
					yes >/dev/null &
					burners+=($!)
				done
			fi
			for set in $SETS; do
				pkg="${set%%:*}" pattern="${set#*:}"
				file="$OUT/$load-$run-$(basename "$pkg").txt"
				echo "$(date +%T) $load run $run: $pkg $pattern (load average $(cut -d' ' -f1 /proc/loadavg))" >&2
				"$bin" bench --measure instructions --count 1 --benchtime 1x --no-store -q \
					-b "$pattern" -o "$file" "$pkg" 2>>"$OUT/$load.log" || echo "run failed: see $OUT/$load.log" >&2
			done
			stop_burners
		done
	done
fi

# One line per benchmark and load: runs, median, min, max and the spread
# (max-min)/median; then each benchmark's loaded median against its quiet one.
for f in "$OUT"/*-*-*.txt; do
	[ -e "$f" ] || continue
	load="$(basename "$f")"
	load="${load%%-*}"
	awk -v load="$load" '$NF == "instructions/op" { print load, $1, $3 }' "$f"
done | sort -k2,2 -k1,1 -k3,3g | awk '
function flush() {
	if (n == 0) return
	med = (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
	printf "%-7s %-34s runs %2d  median %12.1f  min %12.0f  max %12.0f  spread %.3f%%\n", l, b, n, med, v[1], v[n], 100 * (v[n] - v[1]) / med
	meds[b, l] = med; names[b] = 1
	n = 0
}
{ if ($1 != l || $2 != b) { flush(); l = $1; b = $2 } v[++n] = $3 }
END {
	flush()
	for (b in names) if ((b, "quiet") in meds && (b, "loaded") in meds)
		printf "%-34s loaded median vs quiet: %+.3f%%\n", b, 100 * (meds[b, "loaded"] / meds[b, "quiet"] - 1)
}'
echo "runs kept in $OUT" >&2
