#!/usr/bin/env bash
# run.sh repeats the bisect goal test (internal/gate's
# TestBisectFindsTheCommit: 32 commits, Mix doing 2% more work from commit 19,
# commit 15 not building) RUNS times, beside BURNERS CPU-burning loops, and
# prints per run the answer, the builds used and the time taken, then how many
# runs gave commit 19 in at most 7 counted builds.
#
#   bench/bisect/run.sh                    # 10 runs beside two burners
#   RUNS=3 BURNERS=0 bench/bisect/run.sh   # 3 runs, no burners
set -euo pipefail
cd "$(dirname "$0")/../.."
RUNS=${RUNS:-10}
BURNERS=${BURNERS:-2}
OUT=${OUT:-/tmp/bisect-runs}
mkdir -p "$OUT"
burners=()
trap 'for p in "${burners[@]}"; do kill "$p" 2>/dev/null || true; done' EXIT
for _ in $(seq 1 "$BURNERS"); do
	yes >/dev/null &
	burners+=($!)
done
go test -c -o "$OUT/gate.test" ./internal/gate
uptime
ok=0
for i in $(seq 1 "$RUNS"); do
	log="$OUT/run-$i.log"
	start=$(date +%s)
	if (cd internal/gate && "$OUT/gate.test" -test.run '^TestBisectFindsTheCommit$' -test.count 1 -test.v) >"$log" 2>&1; then
		ok=$((ok + 1))
		verdict=PASS
	else
		verdict=FAIL
	fi
	answer=$(grep -o 'answer: .*' "$log" || echo "answer: none")
	echo "run $i: $verdict, $(($(date +%s) - start))s wall; $answer"
done
uptime
echo "$ok of $RUNS runs found commit 19 in at most 7 counted builds (logs in $OUT)"
