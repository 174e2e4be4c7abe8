#!/usr/bin/env bash
# Compares perfscope load with wrk, hey and a fasthttp-based client against
# one target, in the same run: the generators take turns (the order rotates
# every round so none always follows another), each for D seconds, and the
# medians over all rounds are compared with wrk's.
#
# Client and server share the machine, so a generator's CPU per request is
# what decides how much throughput is left for the server: it is reported
# for every generator (user+system time over completed requests), and so is
# the target's.
#
# Usage: bench/loadgen/run.sh [ROUNDS [SECONDS]]
#   ROUNDS   rounds per generator (default 5)
#   SECONDS  length of each run (default 5)
# Environment:
#   CONNS=8          connections for every generator (wrk uses 2 threads)
#   TOOLS="wrk perfscope hey fasthttp"   generators to run, in first-round order
#   TARGET=leftpad   (default) load examples/leftpad in optimized mode, without
#                    profiling, StatsD or access log, so the service is as fast
#                    as it gets and the generator's cost shows most
#   TARGET=bare      load bench/loadgen/target instead: a bare net/http server
#                    with a small JSON body, faster still
#   TARGET_URL=...   load an already running service instead
set -euo pipefail

rounds=${1:-5}
secs=${2:-5}
conns=${CONNS:-8}
tools=(${TOOLS:-wrk perfscope hey fasthttp})

root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
target_pid=
cleanup() {
	if [[ -n $target_pid ]]; then kill "$target_pid" 2>/dev/null || true; wait "$target_pid" 2>/dev/null || true; fi
	rm -rf "$tmp"
}
trap cleanup EXIT

echo "building..." >&2
(cd "$root" && go build -o "$tmp/perfscope" ./cmd/perfscope && go build -o "$tmp/target" ./bench/loadgen/target &&
	go build -o "$tmp/fastclient" ./bench/loadgen/fastclient)

url=${TARGET_URL:-}
if [[ -z $url && ${TARGET:-leftpad} == leftpad ]]; then
	(cd "$root" && go build -o "$tmp/leftpad" ./examples/leftpad/cmd/leftpad)
	"$tmp/leftpad" --mode optimized --addr 127.0.0.1:0 --pprof-addr "" --statsd "" --log /dev/null >"$tmp/addr" &
	target_pid=$!
	for _ in $(seq 50); do [[ -s $tmp/addr ]] && break; sleep 0.1; done
	# "leftpad (optimized) listening on http://127.0.0.1:PORT, ..."
	base=$(grep -o 'http://[0-9.:]*' "$tmp/addr" | head -1)
	url="$base/v1/leftpad/?str=hello&len=10&chr=0"
elif [[ -z $url && ${TARGET:-} == bare ]]; then
	"$tmp/target" >"$tmp/addr" &
	target_pid=$!
	for _ in $(seq 50); do [[ -s $tmp/addr ]] && break; sleep 0.1; done
	url="http://$(head -1 "$tmp/addr")/"
elif [[ -z $url ]]; then
	echo "unknown TARGET=$TARGET: use leftpad or bare" >&2
	exit 2
fi
echo "target $url, $rounds rounds x ${secs}s, $conns connections, $(nproc) cores"

# ticks prints a process's user+system CPU time in clock ticks.
ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }
hz=$(getconf CLK_TCK)

# run_tool TOOL prints "requests cpu_seconds" for one run of TOOL.
run_tool() {
	local out="$tmp/out" tf="$tmp/time"
	case $1 in
	wrk) /usr/bin/time -f "%U %S" -o "$tf" wrk -t2 -c"$conns" -d"${secs}s" "$url" >"$out" ;;
	perfscope) /usr/bin/time -f "%U %S" -o "$tf" "$tmp/perfscope" load -q -c "$conns" -d "${secs}s" --format json "$url" >"$out" ;;
	hey) /usr/bin/time -f "%U %S" -o "$tf" hey -c "$conns" -z "${secs}s" "$url" >"$out" ;;
	fasthttp) /usr/bin/time -f "%U %S" -o "$tf" "$tmp/fastclient" -c "$conns" -d "${secs}s" "$url" >"$out" ;;
	*) echo "unknown tool $1" >&2; exit 2 ;;
	esac
	local n
	case $1 in
	wrk) n=$(awk '/requests in/ {print $1}' "$out") ;;
	perfscope) n=$(awk -F'[:,]' '/"requests"/ {gsub(/ /, "", $2); print $2; exit}' "$out") ;;
	hey) n=$(awk '/responses/ {s += $2} END {print s + 0}' "$out") ;;
	fasthttp) n=$(awk '{print $2}' "$out") ;;
	esac
	echo "$n $(awk '{print $1 + $2}' "$tf")"
}

results="$tmp/results"
printf "%-6s %-10s %10s %14s %14s\n" round tool "req/s" "cpu µs/req" "target µs/req"
for ((r = 1; r <= rounds; r++)); do
	# Rotate the order every round.
	k=$(((r - 1) % ${#tools[@]}))
	order=("${tools[@]:k}" "${tools[@]:0:k}")
	for tool in "${order[@]}"; do
		t0=$([[ -n $target_pid ]] && ticks "$target_pid" || echo 0)
		start=$(date +%s.%N)
		read -r n cpu < <(run_tool "$tool")
		end=$(date +%s.%N)
		t1=$([[ -n $target_pid ]] && ticks "$target_pid" || echo 0)
		awk -v r="$r" -v tool="$tool" -v n="$n" -v cpu="$cpu" -v s="$secs" -v t="$((t1 - t0))" -v hz="$hz" 'BEGIN {
			rps = n / s; c = n > 0 ? cpu * 1e6 / n : 0; tc = n > 0 ? t / hz * 1e6 / n : 0
			printf "%-6s %-10s %10.0f %14.2f %14.2f\n", r, tool, rps, c, tc
		}' | tee -a "$results"
		sleep 0.5 # let the target's connections drain
	done
done

echo
echo "medians over $rounds rounds (req/s over the nominal ${secs}s; ratios against wrk):"
printf "%-10s %10s %10s %14s %14s\n" tool "req/s" "vs wrk" "cpu µs/req" "target µs/req"
median() { sort -g | awk '{a[NR] = $1} END {print NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
wrk_rps=$(awk '$2 == "wrk" {print $3}' "$results" | median)
for tool in "${tools[@]}"; do
	rps=$(awk -v t="$tool" '$2 == t {print $3}' "$results" | median)
	cpu=$(awk -v t="$tool" '$2 == t {print $4}' "$results" | median)
	tcpu=$(awk -v t="$tool" '$2 == t {print $5}' "$results" | median)
	awk -v t="$tool" -v rps="$rps" -v w="${wrk_rps:-0}" -v c="$cpu" -v tc="$tcpu" 'BEGIN {
		ratio = "-"
		if (w > 0) ratio = sprintf("%.2fx", rps / w)
		printf "%-10s %10.0f %10s %14.2f %14.2f\n", t, rps, ratio, c, tc
	}'
done
