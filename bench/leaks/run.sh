#!/usr/bin/env bash
# run.sh measures how soon `perfscope query leaks` names the leak of the
# leftpad example's leaky mode (one goroutine parked forever per 100
# requests), and that it names nothing in the naive and optimized modes
# over the same time. The three run side by side under the same steady
# load (perfscope load -c 2), scraped every INTERVAL by `perfscope scrape`
# with the default profile types into a SQLite store; every CHECK the
# leaks of the whole range so far are asked with the default options.
# It prints, per mode, when a leak was first named (seconds after the
# first scrape) and what, and exits 1 when the leaky mode's leak was not
# named or another mode's was.
#
#   bash bench/leaks/run.sh [SECONDS] [INTERVAL] [CHECK]    (from the module root; Linux)
#
# Defaults: 600 s, 10s, 30 s.
set -euo pipefail
secs=${1:-600}
interval=${2:-10s}
check=${3:-30}
work=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

go build -o "$work/perfscope" ./cmd/perfscope
modes=(leaky naive optimized)
{
	printf 'global:\n  scrape_interval: %s\nscrape_configs:\n  - job_name: leftpad\n    static_configs:\n' "$interval"
} >"$work/scrape.yml"
declare -A api
for m in "${modes[@]}"; do
	"$work/perfscope" example leftpad --mode "$m" --addr 127.0.0.1:0 --pprof-addr 127.0.0.1:0 --statsd "" --log "$work/$m.log" >"$work/$m.out" 2>&1 &
	pids+=($!)
	for _ in $(seq 300); do grep -q listening "$work/$m.out" && break; sleep 0.1; done
	line=$(grep listening "$work/$m.out") || { echo "leftpad --mode $m did not start: $(cat "$work/$m.out")"; exit 1; }
	api[$m]=$(sed -E 's/.*listening on (http:[^,]*),.*/\1/' <<<"$line")
	pprof=$(sed -E 's/.*pprof on http:\/\/([^/]*)\/.*/\1/' <<<"$line")
	printf '      - targets: ["%s"]\n        labels: {mode: "%s"}\n' "$pprof" "$m" >>"$work/scrape.yml"
done
for m in "${modes[@]}"; do
	"$work/perfscope" load -c 2 -d "$((secs + 60))s" "${api[$m]}/v1/leftpad/?str=hello&len=64&chr=x" >"$work/load-$m.log" 2>&1 &
	pids+=($!)
done
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
"$work/perfscope" scrape --config "$work/scrape.yml" --db "$work/scrape.db" >"$work/scrape.log" 2>&1 &
pids+=($!)
t0=$(date +%s)
declare -A first what
while :; do
	sleep "$check"
	now=$(date +%s)
	el=$((now - t0))
	for m in "${modes[@]}"; do
		[ -n "${first[$m]:-}" ] && continue
		out=$("$work/perfscope" query leaks --db "$work/scrape.db" --since "$((el + 30))s" --format json "{mode=\"$m\"}" 2>&1) || continue
		n=$(jq '.leaks | length' <<<"$out")
		if [ "$n" -gt 0 ]; then
			first[$m]=$el
			what[$m]=$(jq -r '.leaks[0] | "\(.type): \(.started_at) grew by \(.per_hour|floor) \(.unit) per hour (\(.start) → \(.end) over \(.snapshots) snapshots, p=\(.trend.p))"' <<<"$out")
			echo "${el}s: $m: leak named: ${what[$m]}"
		fi
	done
	[ "$el" -ge "$secs" ] && break
done
echo "load during: $(cut -d' ' -f1-3 /proc/loadavg)"
"$work/perfscope" query leaks --db "$work/scrape.db" --since "$((secs + 60))s" '{job="leftpad"}' | tee "$work/final.txt"
status=0
for m in "${modes[@]}"; do
	case "$m" in
	leaky) [ -n "${first[$m]:-}" ] && echo "leaky: first named after ${first[$m]} s of scraping" || { echo "leaky: NOT named in ${secs} s"; status=1; } ;;
	*) [ -z "${first[$m]:-}" ] && echo "$m: nothing named in ${secs} s" || { echo "$m: WRONGLY named after ${first[$m]} s: ${what[$m]}"; status=1; } ;;
	esac
done
exit $status
