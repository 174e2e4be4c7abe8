#!/usr/bin/env bash
# capture.sh records the real profiles the tests of this package read: the
# naive leftpad example under load, scraped as a continuous profiler does,
# every 10 s for ROUNDS rounds: CPU over the interval, allocs, mutex and
# block as deltas over the interval, heap and goroutine as snapshots.
#
#   bash internal/profseries/testdata/capture.sh [ROUNDS]   (from the module root)
#
# OUT=DIR writes them to DIR instead (longer recordings for bench/scrape);
# MODE=leaky runs the example's leaky mode instead of naive; SNAPSHOTS=1
# records only heap and goroutine, the snapshots leaks are judged on
# (internal/server/testdata/leaky: MODE=leaky SNAPSHOTS=1 OUT=... 12).
set -euo pipefail
rounds=${1:-4}
out=${OUT:-internal/profseries/testdata/leftpad}
mode=${MODE:-naive}
snapshots=${SNAPSHOTS:-0}
bin=$(mktemp -d)/perfscope
go build -o "$bin" ./cmd/perfscope
mkdir -p "$out"
log=$(mktemp)
"$bin" example leftpad --mode "$mode" --addr 127.0.0.1:0 --pprof-addr 127.0.0.1:0 >"$log" 2>&1 &
svc=$!
trap 'kill $svc 2>/dev/null || true' EXIT
for _ in $(seq 100); do grep -q '/v1/leftpad/' "$log" && break; sleep 0.1; done
api=$(grep -o 'http://127.0.0.1:[0-9]*/v1/leftpad/[^'"'"']*' "$log" | head -1)
pprof=$(grep -o 'http://127.0.0.1:[0-9]*/debug/pprof/' "$log" | head -1)
echo "api $api pprof $pprof"
"$bin" load -c 8 -d $((rounds * 10 + 15))s "$api" >/dev/null 2>&1 &
load=$!
sleep 2
for r in $(seq -w 1 "$rounds"); do
	pids=()
	if [ "$snapshots" = 1 ]; then
		sleep 10 &
		pids+=($!)
	else
		for p in "cpu profile" "allocs allocs" "mutex mutex" "block block"; do
			set -- $p
			curl -sf -o "$out/$1-$r.pb.gz" "${pprof}$2?seconds=10" &
			pids+=($!)
		done
	fi
	sleep 5
	curl -sf -o "$out/heap-$r.pb.gz" "${pprof}heap"
	curl -sf -o "$out/goroutine-$r.pb.gz" "${pprof}goroutine"
	wait "${pids[@]}"
done
kill $load 2>/dev/null || true
ls -l "$out"
