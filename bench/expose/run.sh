#!/usr/bin/env bash
# Measures what package expose costs a service: the leftpad example's
# throughput under wrk with expose (pprof listener + route-labelling
# middleware) against the same binary with --no-expose, and the throughput
# while a CPU profile and a wall-clock profile are being taken.
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

# start NAME ARGS... starts leftpad and sets $url_NAME (API) and
# $pprof_NAME (profile index, empty without expose) from its startup line.
start() {
	local name=$1; shift
	"$work/leftpad" --mode "$MODE" --addr 127.0.0.1:0 --log "$work/$name.log" "$@" >"$work/$name.out" 2>&1 &
	pids+=($!)
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

# rps URL prints the requests per second wrk measured for SECONDS_PER_RUN.
rps() {
	"$WRK" -t"$THREADS" -c"$CONNS" -d"${SECONDS_PER_RUN}s" "$1$QUERY" | awk '/^Requests\/sec:/ {print $2}'
}

# median of its arguments.
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

# rps_while PATH runs wrk against the exposed service while fetching
# PATH?seconds=N from its pprof port for the same time.
rps_while() {
	curl -sf -o "$work/profile.pb.gz" "${pprof_exposed}$1?seconds=$SECONDS_PER_RUN" &
	local c=$!
	sleep 0.2 # let the profiler start before the load does
	rps "$url_exposed"
	wait "$c" || die "fetching $1 failed"
}

echo "leftpad ($MODE), wrk -t$THREADS -c$CONNS -d${SECONDS_PER_RUN}s, $ROUNDS rounds, $(nproc) CPUs, load average $(cut -d' ' -f1 /proc/loadavg)"

# Warm up both (connections, page cache, heap sizes).
SECONDS_PER_RUN=1 rps "$url_bare" >/dev/null
SECONDS_PER_RUN=1 rps "$url_exposed" >/dev/null

bare=() exposed=() exposed2=() cpu=() wall=()
for r in $(seq "$ROUNDS"); do
	if ((r % 2)); then
		bare+=("$(rps "$url_bare")"); exposed+=("$(rps "$url_exposed")")
	else
		exposed+=("$(rps "$url_exposed")"); bare+=("$(rps "$url_bare")")
	fi
	# Profiling rounds alternate with an exposed round of their own, the
	# baseline they are compared with.
	if ((r % 2)); then
		cpu+=("$(rps_while profile)"); exposed2+=("$(rps "$url_exposed")"); wall+=("$(rps_while wall)")
	else
		wall+=("$(rps_while wall)"); exposed2+=("$(rps "$url_exposed")"); cpu+=("$(rps_while profile)")
	fi
	echo "round $r: without expose ${bare[-1]}, with expose ${exposed[-1]} / ${exposed2[-1]}, CPU profiling ${cpu[-1]}, wall profiling ${wall[-1]} req/s"
done

mb=$(median "${bare[@]}")
me=$(median "${exposed[@]}")
me2=$(median "${exposed2[@]}")
mc=$(median "${cpu[@]}")
mw=$(median "${wall[@]}")
pct() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%+.1f%%", (a/b-1)*100}'; }
echo
echo "medians (req/s):"
printf '  %-34s %10.0f\n' "without expose (--no-expose)" "$mb"
printf '  %-34s %10.0f  %s vs without\n' "with expose, no profile running" "$me" "$(pct "$me" "$mb")"
printf '  %-34s %10.0f  %s vs with expose (%.0f)\n' "while a CPU profile is taken" "$mc" "$(pct "$mc" "$me2")" "$me2"
printf '  %-34s %10.0f  %s vs with expose (%.0f)\n' "while a wall profile is taken" "$mw" "$(pct "$mw" "$me2")" "$me2"
