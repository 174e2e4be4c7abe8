#!/usr/bin/env bash
# run.sh measures `perfscope scrape` at scale: N simulated targets on
# loopback (bench/scrape/targets, serving the real leftpad scrapes committed
# in internal/profseries/testdata/leftpad) scraped every 10 s, every default
# profile type, into a SQLite store, for SECONDS. It reports the scraper's
# average CPU (utime+stime from /proc/PID/stat over the wall time), its peak
# memory (VmHWM from /proc/PID/status) and the latest start of any scrape
# after it was due (the status the scraper prints when interrupted).
#
# With PROFILES=DIR it also saves the scraper's own heap profile (in use,
# near the end of the run) and a 30 s CPU profile into DIR, through the
# scraper's --pprof endpoints: `go tool pprof -sample_index=inuse_space
# DIR/heap.pb.gz` says what holds its memory.
#
# The machine is shared: the load average is sampled every 10 s during the
# run and its mean and maximum printed beside the results.
#
# Then it checks a crash: the scraper is started again on the same store,
# killed with SIGKILL while it writes, and the store must open, answer
# `perfscope query targets`, and pass SQLite's integrity_check.
#
#   bash bench/scrape/run.sh [N] [SECONDS]     (from the module root; Linux)
#
# Defaults: 500 targets, 240 s. Needs go and sqlite3.
set -euo pipefail
n=${1:-500}
secs=${2:-240}
work=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

go build -o "$work/perfscope" ./cmd/perfscope
go build -o "$work/targets" ./bench/scrape/targets
"$work/targets" -n "$n" -profiles internal/profseries/testdata/leftpad -sd "$work/targets.json" >"$work/targets.log" 2>&1 &
pids+=($!)
for _ in $(seq 300); do [ -s "$work/targets.json" ] && break; sleep 0.1; done
[ -s "$work/targets.json" ] || { echo "targets did not start: $(cat "$work/targets.log")"; exit 1; }

cat >"$work/scrape.yml" <<EOF
global:
  scrape_interval: 10s
scrape_configs:
  - job_name: simulated
    file_sd_configs:
      - files: ["$work/targets.json"]
EOF

clk=$(getconf CLK_TCK)
# cputicks PID: the process's utime+stime, in clock ticks.
cputicks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
"$work/perfscope" scrape --config "$work/scrape.yml" --db "$work/scrape.db" --status-every 10s --pprof 127.0.0.1:0 >"$work/scrape.log" 2>&1 &
scraper=$!
pids+=($scraper)
t0=$(date +%s.%N)
c0=$(cputicks $scraper)
# The load average every 10 s, while the scraper runs.
(while sleep 10; do cut -d' ' -f1 /proc/loadavg; done >"$work/load.txt") &
pids+=($!)
loadpid=$!
if [ -n "${PROFILES:-}" ] && [ "$secs" -gt 60 ]; then
	mkdir -p "$PROFILES"
	sleep $((secs - 40))
	self=$(sed -n 's/^the scraper.s own profiles: //p' "$work/scrape.log")
	curl -sf -o "$PROFILES/cpu.pb.gz" "${self}profile?seconds=30"
	curl -sf -o "$PROFILES/heap.pb.gz" "${self}heap"
	left=$(echo "$t0 + $secs - $(date +%s.%N)" | bc)
	if [ "$(echo "$left > 0" | bc)" = 1 ]; then sleep "$left"; fi
else
	sleep "$secs"
fi
c1=$(cputicks $scraper)
t1=$(date +%s.%N)
hwm=$(awk '/VmHWM/ {print $2}' "/proc/$scraper/status")
kill "$loadpid" 2>/dev/null || true
echo "load during: $(cut -d' ' -f1-3 /proc/loadavg) now; every 10 s: mean $(awk '{s += $1} END {printf "%.1f", s / NR}' "$work/load.txt"), max $(sort -g "$work/load.txt" | tail -1)"
kill -INT $scraper
wait $scraper || true
awk -v c0="$c0" -v c1="$c1" -v t0="$t0" -v t1="$t1" -v clk="$clk" -v hwm="$hwm" -v n="$n" 'BEGIN {
	printf "%d targets, %.0f s: scraper CPU %.3f cores on average, peak RSS %.0f MB\n", n, t1 - t0, (c1 - c0) / clk / (t1 - t0), hwm / 1024
}'
# The last status line (every 10 s; the scraper has no targets left to
# report once interrupted): targets, up, profiles stored, the latest start
# after due over every target's life, scrapes missed.
grep -E '^[0-9:]+ [1-9][0-9]* targets?,' "$work/scrape.log" | tail -1
echo "stored: $(du -h "$work/scrape.db" | cut -f1) in the SQLite file"

# A crash while writing: start again, let it write, SIGKILL it.
"$work/perfscope" scrape --config "$work/scrape.yml" --db "$work/scrape.db" >"$work/crash.log" 2>&1 &
scraper=$!
pids+=($scraper)
sleep $((15 + RANDOM % 10)).$((RANDOM % 10))
kill -KILL $scraper
wait $scraper 2>/dev/null || true
check=$(sqlite3 "$work/scrape.db" 'PRAGMA integrity_check')
echo "after kill -9: integrity_check $check"
"$work/perfscope" query targets --db "$work/scrape.db" --since 1h >"$work/targets.out"
echo "after kill -9: perfscope query targets lists $(grep -c 'instance=' "$work/targets.out") series, e.g.: $(grep -m1 'instance=' "$work/targets.out")"
[ "$check" = ok ]
