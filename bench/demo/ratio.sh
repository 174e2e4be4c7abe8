#!/usr/bin/env bash
# Measures the bundled leftpad example's naive → optimized throughput gain
# with wrk and with perfscope load, in the same run, so the two generators'
# views of the same improvement can be compared (a generator that is itself
# the bottleneck hides part of the gain). Each round starts each mode fresh
# (StatsD and access log on, as in the demo) and loads it with each generator
# in turn; the medians over the rounds are compared.
#
# Usage: bench/demo/ratio.sh [ROUNDS [SECONDS]]   (default 5 rounds of 5 s)
# Environment: CONNS=8, TOOLS="wrk perfscope hey"
set -euo pipefail

rounds=${1:-5}
secs=${2:-5}
conns=${CONNS:-8}
tools=(${TOOLS:-wrk perfscope hey})
path='/v1/leftpad/?str=test&len=50&chr=*'

root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
pid=
stop() { if [[ -n $pid ]]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; pid=; fi; }
trap 'stop; rm -rf "$tmp"' EXIT

echo "building..." >&2
(cd "$root" && go build -o "$tmp/perfscope" ./cmd/perfscope && go build -o "$tmp/leftpad" ./examples/leftpad/cmd/leftpad)

start() { # mode
	: >"$tmp/addr"
	"$tmp/leftpad" --mode "$1" --addr 127.0.0.1:0 --pprof-addr 127.0.0.1:0 --log "$tmp/access-$1.log" >"$tmp/addr" &
	pid=$!
	for _ in $(seq 100); do [[ -s $tmp/addr ]] && break; sleep 0.1; done
	url="$(grep -o 'http://[0-9.:]*' "$tmp/addr" | head -1)$path"
}

rps() { # tool url -> requests per second
	case $1 in
	wrk) wrk -t2 -c"$conns" -d"${secs}s" "$2" | awk '/^Requests\/sec/ {print $2}' ;;
	perfscope) "$tmp/perfscope" load -q -c "$conns" -d "${secs}s" --format json "$2" |
		python3 -c 'import json,sys; print(round(json.load(sys.stdin)["throughput_rps"], 1))' ;;
	hey) hey -c "$conns" -z "${secs}s" "$2" | awk '/Requests\/sec/ {print $2}' ;;
	esac
}

declare -A results
for ((r = 1; r <= rounds; r++)); do
	for mode in naive optimized; do
		start "$mode"
		# The order rotates every round, so no generator always follows
		# another (a loaded service recovers for a moment after each run).
		for ((i = 0; i < ${#tools[@]}; i++)); do
			tool=${tools[$(((i + r) % ${#tools[@]}))]}
			v=$(rps "$tool" "$url")
			results[$tool.$mode]+="$v "
			printf 'round %d  %-9s %-10s %10s req/s\n' "$r" "$mode" "$tool" "$v"
		done
		stop
	done
done

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
echo
printf '%-10s %12s %12s %10s\n' generator naive optimized gain
for tool in "${tools[@]}"; do
	n=$(echo "${results[$tool.naive]}" | median)
	o=$(echo "${results[$tool.optimized]}" | median)
	printf '%-10s %12.1f %12.1f %9.2fx\n' "$tool" "$n" "$o" "$(awk -v o="$o" -v n="$n" 'BEGIN {print o / n}')"
done
