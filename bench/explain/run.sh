#!/usr/bin/env bash
# run.sh repeats the explanation goal test (internal/gate's
# TestExplainNamesTheFunction: a scratch module whose commits add 1%, 2% and
# 5% more work in one function, hot) RUNS times beside BURNERS CPU-burning
# loops, and prints each run's share of the benchmark's total delta that
# hot's own delta holds, then how many of the shares are within 0.5% of it.
#
#   bench/explain/run.sh                     # 5 runs quiet, then 5 beside two burners
#   RUNS=3 LOADS=loaded bench/explain/run.sh # 3 runs beside the burners only
set -euo pipefail
cd "$(dirname "$0")/../.."
RUNS=${RUNS:-5}
LOADS=${LOADS:-quiet loaded}
BURNERS=${BURNERS:-2}
OUT=${OUT:-/tmp/explain-runs}
mkdir -p "$OUT"
burners=()
stop_burners() {
	for p in "${burners[@]}"; do kill "$p" 2>/dev/null || true; done
	burners=()
}
trap stop_burners EXIT
go test -c -o "$OUT/gate.test" ./internal/gate
for load in $LOADS; do
	if [ "$load" = loaded ]; then
		for _ in $(seq 1 "$BURNERS"); do
			yes >/dev/null &
			burners+=($!)
		done
	fi
	for i in $(seq 1 "$RUNS"); do
		log="$OUT/$load-$i.log"
		(cd internal/gate && "$OUT/gate.test" -test.run '^TestExplainNamesTheFunction$' -test.count 1 -test.v) >"$log" 2>&1 || true
		echo "$load run $i (load average $(cut -d' ' -f1 /proc/loadavg)): $(grep -o '[0-9]*% more work: .*' "$log" | sed 's/.*(\([0-9.]*%\) of it)/\1/' | paste -sd' ')"
	done
	stop_burners
done
# Shares within 0.5% of the whole delta: 99.5% to 100.5%.
all=$(grep -ho '([0-9.]*% of it)' "$OUT"/*.log | tr -d '(%' | cut -d' ' -f1)
within=$(echo "$all" | awk '$1 >= 99.5 && $1 <= 100.5' | wc -l)
echo "$within of $(echo "$all" | wc -l) shares within 0.5% of the benchmark's total delta (logs in $OUT)"
