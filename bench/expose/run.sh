#!/usr/bin/env bash
# Measures what package expose costs a service: the leftpad example's
# throughput under wrk with expose (pprof listener, block and mutex
# profiling at expose's default rates, route-labelling middleware) against
# the same binary with --no-expose, and the throughput while a CPU profile
# and a wall-clock profile are being taken.
#
# Next to requests per second it reports the service's CPU time per request
# (user + system, all threads, from /proc): on a machine shared with other
# work, throughput swings with what else runs, while the CPU a request costs
# changes much less, so that is the number to compare for small differences.
#
# Both variants run side by side for the whole measurement and are loaded in
# turn, alternating which goes first each round, so drift in the machine's
# load (other processes, thermal state) falls on both alike; the medians of
# the rounds are compared. The goal: under 1% loss with no profile being
# collected.
#
# Usage: bench/expose/run.sh            (from the repository root)
# Settings (environment): ROUNDS (default 5), SECONDS_PER_RUN (5),
# THREADS (2), CONNS (8), MODE (optimized; naive also works), WRK (wrk).
set -euo pipefail

ROUNDS=${ROUNDS:-5}
SECONDS_PER_RUN=${SECONDS_PER_RUN:-5}
THREADS=${THREADS:-2}
CONNS=${CONNS:-8}
MODE=${MODE:-optimized}
WRK=${WRK:-wrk}
QUERY='/v1/leftpad/?str=test&len=50&chr=*'

die() { echo "bench/expose: $*" >&2; exit 1; }
command -v "$WRK" >/dev/null || die "wrk not found (apt-get install wrk, or set WRK)"
command -v curl >/dev/null || die "curl not found"
[[ -f go.mod && -d examples/leftpad ]] || die "run from the repository root"

work=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	rm -rf "$work"
}
trap cleanup EXIT

go build -o "$work/leftpad" ./examples/leftpad

# start NAME ARGS... starts leftpad and sets $url_NAME (API), $pprof_NAME
# (profile index, empty without expose) and $pid_NAME.
start() {
	local name=$1; shift
	"$work/leftpad" --mode "$MODE" --addr 127.0.0.1:0 --log "$work/$name.log" "$@" >"$work/$name.out" 2>&1 &
	pids+=($!)
	printf -v "pid_$name" '%s' "$!"
	for _ in $(seq 50); do
		grep -qs 'listening on' "$work/$name.out" && break
		sleep 0.1
	done
	local line
	line=$(head -n1 "$work/$name.out")
	[[ $line == *"listening on"* ]] || die "$name did not start: $line"
	printf -v "url_$name" '%s' "$(sed -E 's/.*listening on ([^,]*),.*/\1/' <<<"$line")"
	printf -v "pprof_$name" '%s' "$(sed -nE 's/.*pprof on (.*)$/\1/p' <<<"$line")"
}

start bare --no-expose
start exposed --pprof-addr 127.0.0.1:0

TICKS=$(getconf CLK_TCK)

# cpu_ticks PID prints the process's user + system CPU time in clock ticks.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# run NAME loads service NAME for SECONDS_PER_RUN and prints
# "requests/s CPU-µs/request".
run() {
	local url="url_$1" pid="pid_$1" before after out
	before=$(cpu_ticks "${!pid}")
	out=$("$WRK" -t"$THREADS" -c"$CONNS" -d"${SECONDS_PER_RUN}s" "${!url}$QUERY")
	after=$(cpu_ticks "${!pid}")
	awk -v b="$before" -v a="$after" -v hz="$TICKS" '
		/requests in/ {n = $1}
		/^Requests\/sec:/ {r = $2}
		END {if (n == 0) exit 1; printf "%.0f %.2f\n", r, (a - b) / hz * 1e6 / n}' <<<"$out"
}

# median of its arguments.
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

# run_while PATH runs the exposed service while fetching PATH?seconds=N
# from its pprof port for the same time.
run_while() {
	curl -sf -o "$work/profile.pb.gz" "${pprof_exposed}$1?seconds=$SECONDS_PER_RUN" &
	local c=$!
	sleep 0.2 # let the profiler start before the load does
	run exposed
	wait "$c" || die "fetching $1 failed"
}

echo "leftpad ($MODE), wrk -t$THREADS -c$CONNS -d${SECONDS_PER_RUN}s, $ROUNDS rounds, $(nproc) CPUs, load average $(cut -d' ' -f1 /proc/loadavg)"

# Warm up both (connections, page cache, heap sizes).
SECONDS_PER_RUN=1 run bare >/dev/null
SECONDS_PER_RUN=1 run exposed >/dev/null

# Each variant's results: "req/s cpu-µs" per round.
bare=() exposed=() exposed2=() cpu=() wall=()
for r in $(seq "$ROUNDS"); do
	if ((r % 2)); then
		bare+=("$(run bare)"); exposed+=("$(run exposed)")
	else
		exposed+=("$(run exposed)"); bare+=("$(run bare)")
	fi
	# Profiling rounds alternate with an exposed round of their own, the
	# baseline they are compared with.
	if ((r % 2)); then
		cpu+=("$(run_while profile)"); exposed2+=("$(run exposed)"); wall+=("$(run_while wall)")
	else
		wall+=("$(run_while wall)"); exposed2+=("$(run exposed)"); cpu+=("$(run_while profile)")
	fi
	echo "round $r (req/s, CPU µs/req): without expose ${bare[-1]} | with expose ${exposed[-1]} / ${exposed2[-1]} | CPU profiling ${cpu[-1]} | wall profiling ${wall[-1]}"
done

# median FIELD RESULTS... prints the median of field 1 (req/s) or 2 (CPU).
median() {
	local f=$1; shift
	printf '%s\n' "$@" | awk -v f="$f" '{print $f}' | sort -g |
		awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'
}
pct() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%+.1f%%", (a/b-1)*100}'; }

row() { # row LABEL RESULTS-NAME BASELINE-NAME
	local label=$1 n="$2[@]" b="$3[@]"
	local r c br bc
	r=$(median 1 "${!n}"); c=$(median 2 "${!n}")
	if [[ -z $3 ]]; then
		printf '  %-34s %8.0f req/s  %7.2f µs CPU/req\n' "$label" "$r" "$c"
		return
	fi
	br=$(median 1 "${!b}"); bc=$(median 2 "${!b}")
	printf '  %-34s %8.0f req/s  %7.2f µs CPU/req   %s req/s, %s CPU vs %s\n' "$label" "$r" "$c" \
		"$(pct "$r" "$br")" "$(pct "$c" "$bc")" "$4"
}
echo
echo "medians of $ROUNDS rounds:"
row "without expose (--no-expose)" bare ""
row "with expose, no profile running" exposed bare "without expose"
row "while a CPU profile is taken" cpu exposed2 "with expose, adjacent rounds"
row "while a wall profile is taken" wall exposed2 "with expose, adjacent rounds"
