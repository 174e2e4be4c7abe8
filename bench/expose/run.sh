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
# The variants run side by side and are loaded in turn, forwards and then
# backwards within each round (A B B A for two, A B C C B A for three), so
# drift in the machine's load (other processes, thermal state) falls on all
# alike; the next round starts with the next variant (B A A B), so none
# always runs first or last. Each round starts every service anew: one process of
# a binary can run a few percent faster or slower than another of the same
# binary for its whole life (where its memory landed, which CPU it settled
# on), and kept for the whole measurement that difference would show up as
# a cost or a gain of expose; started anew it is one more thing that varies
# from round to round. Each round yields one paired
# ratio; the report gives the median ratio over the rounds, a confidence
# interval for that median (distribution-free, from the order statistics of
# the ratios, as benchstat computes it: about 95%, and it says how much), and,
# to show how much the machine let through, the spread (first to third
# quartile) of the ratios. The goal: under 1% loss with no profile being
# collected. README.md beside this script has results and what they mean.
#
# Usage: bench/expose/run.sh            (from the repository root)
# Settings (environment): ROUNDS (default 8), SECONDS_PER_RUN (2, whole seconds),
# THREADS (2), CONNS (8), MODE (optimized; naive also works), WRK (wrk),
# PROFILING (1; 0 skips the runs with a profile being taken).
# BARE_ARGS (--no-expose) and EXPOSED_ARGS (--pprof-addr 127.0.0.1:0) are the
# leftpad flags of the two sides, to measure one part of expose at a time:
#
#	EXPOSED_ARGS=--pprof-addr= PROFILING=0       the middleware alone
#	EXPOSED_ARGS='--pprof-addr 127.0.0.1:0 --block-profile-rate 0 --mutex-profile-fraction 0'
#	                                             without block and mutex profiling
#	EXPOSED_ARGS=--no-expose PROFILING=0         A/A: what the bench shows for no change
#
# MORE adds variants to the same rounds, each compared with the side without
# expose: "name=flags" entries separated by ";", for example
#
#	MORE='labels=--pprof-addr= ;rates=--pprof-addr 127.0.0.1:0 --route-labels none;same=--no-expose'
#
# measures the middleware alone, the profile server with its block and mutex
# profiling alone, and the bench's own bias (A/A), next to expose whole.
set -euo pipefail

ROUNDS=${ROUNDS:-8}
SECONDS_PER_RUN=${SECONDS_PER_RUN:-2}
THREADS=${THREADS:-2}
CONNS=${CONNS:-8}
MODE=${MODE:-optimized}
WRK=${WRK:-wrk}
PROFILING=${PROFILING:-1}
BARE_ARGS=${BARE_ARGS:---no-expose}
EXPOSED_ARGS=${EXPOSED_ARGS:---pprof-addr 127.0.0.1:0}
MORE=${MORE:-}
PIN=${PIN:-0}
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

go build -o "$work/leftpad" ./examples/leftpad/cmd/leftpad

# With PIN=1 each service runs on CPU 0 alone (GOMAXPROCS=1) and wrk on
# CPU 1, one thread: the service's throughput is then that of one CPU, and
# does not depend on how the scheduler shares the CPUs between it and wrk.
SERVICE_CPU=(env) LOAD_CPU=(env)
if [[ $PIN == 1 ]]; then
	command -v taskset >/dev/null || die "PIN=1 needs taskset (util-linux)"
	SERVICE_CPU=(env GOMAXPROCS=1 taskset -c 0)
	LOAD_CPU=(taskset -c 1)
	THREADS=1
fi

# The variants: names and leftpad flags, the side without expose first.
names=(bare exposed)
flags=("$BARE_ARGS" "$EXPOSED_ARGS")
if [[ -n $MORE ]]; then
	IFS=';' read -r -a more <<<"$MORE"
	for m in "${more[@]}"; do
		[[ $m == *=* ]] || die "MORE entry \"$m\" is not name=flags"
		name=${m%%=*}
		[[ $name =~ ^[a-z][a-z0-9_]*$ && " ${names[*]} " != *" $name "* ]] ||
			die "MORE: \"$name\" is not a new lower-case name"
		names+=("$name")
		flags+=("${m#*=}")
	done
fi

# start NAME ARGS... starts leftpad and sets $url_NAME (API), $pprof_NAME
# (profile index, empty without expose) and $pid_NAME.
start() {
	local name=$1; shift
	"${SERVICE_CPU[@]}" "$work/leftpad" --mode "$MODE" --addr 127.0.0.1:0 --log "$work/$name.log" "$@" >"$work/$name.out" 2>&1 &
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

TICKS=$(getconf CLK_TCK)

# cpu_ticks PID prints the process's user + system CPU time in clock ticks.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# run NAME loads service NAME for SECONDS_PER_RUN and prints
# "requests/s CPU-µs/request".
run() {
	local url="url_$1" pid="pid_$1" before after out
	before=$(cpu_ticks "${!pid}")
	out=$("${LOAD_CPU[@]}" "$WRK" -t"$THREADS" -c"$CONNS" -d"${SECONDS_PER_RUN}s" "${!url}$QUERY")
	after=$(cpu_ticks "${!pid}")
	awk -v b="$before" -v a="$after" -v hz="$TICKS" '
		/requests in/ {n = $1}
		/^Requests\/sec:/ {r = $2}
		END {if (n == 0) exit 1; printf "%.0f %.2f\n", r, (a - b) / hz * 1e6 / n}' <<<"$out"
}

# run_while PATH runs the exposed service while fetching PATH?seconds=N
# from its pprof port for the same time.
run_while() {
	curl -sf -o "$work/profile.pb.gz" "${pprof_exposed}$1?seconds=$SECONDS_PER_RUN" &
	local c=$!
	sleep 0.2 # let the profiler start before the load does
	run exposed
	wait "$c" || die "fetching $1 failed"
}

# restart stops every service and starts them anew, warmed up
# (connections, page cache, heap sizes).
restart() {
	local i pid
	for i in "${!names[@]}"; do
		pid="pid_${names[i]}"
		if [[ -n ${!pid:-} ]]; then
			kill "${!pid}" 2>/dev/null || true
			wait "${!pid}" 2>/dev/null || true
		fi
	done
	for i in "${!names[@]}"; do
		# shellcheck disable=SC2086 # each holds a list of flags
		start "${names[i]}" ${flags[i]}
	done
	for i in "${!names[@]}"; do SECONDS_PER_RUN=1 run "${names[i]}" >/dev/null; done
}

# sum2 R1 R2 adds two "req/s cpu" results field by field.
sum2() { awk -v a="$1" -v b="$2" 'BEGIN {split(a, x, " "); split(b, y, " "); print x[1] + y[1], x[2] + y[2]}'; }

echo "leftpad ($MODE), wrk -t$THREADS -c$CONNS -d${SECONDS_PER_RUN}s, $ROUNDS rounds, $(nproc) CPUs$([[ $PIN == 1 ]] && echo ", service pinned to CPU 0 and wrk to CPU 1"), load average $(cut -d' ' -f1 /proc/loadavg)"
for i in "${!names[@]}"; do echo "  ${names[i]}: leftpad ${flags[i]:-(no flags)}"; done

restart
[[ $PROFILING == 0 || -n $pprof_exposed ]] || die "with $EXPOSED_ARGS leftpad serves no profiles: set PROFILING=0"

# Per round and variant, the summed result of its two runs, one line per
# round in $work/result.NAME; the profiling comparisons likewise.
for r in $(seq "$ROUNDS"); do
	((r == 1)) || restart
	# Each round starts with the next variant, so that over the rounds every
	# variant runs first, and last, equally often.
	k=${#names[@]}
	order=()
	for ((i = 0; i < k; i++)); do order+=("${names[(i + r - 1) % k]}"); done
	declare -A first=()
	for name in "${order[@]}"; do first[$name]=$(run "$name"); done
	line="round $r (req/s CPU-µs/req, two runs each):"
	for ((i = k - 1; i >= 0; i--)); do
		name=${order[i]}
		second=$(run "$name")
		sum2 "${first[$name]}" "$second" >>"$work/result.$name"
		line+=" $name ${first[$name]} / $second |"
	done
	if [[ $PROFILING != 0 ]]; then
		# The profiling runs are compared with runs of the exposed service
		# in between them: E C W W C E.
		x1=$(run exposed); c1=$(run_while profile); w1=$(run_while wall)
		w2=$(run_while wall); c2=$(run_while profile); x2=$(run exposed)
		sum2 "$x1" "$x2" >>"$work/result.profiling_base"
		sum2 "$c1" "$c2" >>"$work/result.cpu"
		sum2 "$w1" "$w2" >>"$work/result.wall"
		line+=" exposed $x1 / $x2 | CPU profiling $c1 / $c2 | wall profiling $w1 / $w2"
	fi
	echo "${line%|}"
done

# quartiles prints the first quartile, median and third quartile of its
# arguments.
quartiles() {
	printf '%s\n' "$@" | sort -g | awk '
		function q(p,   i, f) { i = 1 + (NR - 1) * p; f = int(i); return a[f] + (i - f) * (a[f + 1] - a[f]) }
		{a[NR] = $1}
		END {a[NR + 1] = a[NR]; printf "%.1f %.1f %.1f\n", q(0.25), q(0.5), q(0.75)}'
}

# median_ci prints a confidence interval for the median of its arguments,
# the k-th smallest to the k-th largest value, and its confidence in
# percent: k is the largest that keeps P(Binomial(n, 1/2) < k) within 2.5%,
# or 1 when none does (fewer than 6 values; the confidence is then lower).
median_ci() {
	printf '%s\n' "$@" | sort -g | awk '
		function cum(n, k,   i, t, s) { t = 0.5 ^ n; for (i = 0; i < k; i++) { s += t; t = t * (n - i) / (i + 1) } return s }
		{a[NR] = $1}
		END {
			n = NR; k = 1
			while (k + 1 <= (n + 1) / 2 && cum(n, k + 1) <= 0.025) k++
			printf "%.1f %.1f %.0f\n", a[k], a[n + 1 - k], 100 * (1 - 2 * cum(n, k))
		}'
}

# compare LABEL NEW BASE prints the median and spread of NEW/BASE - 1 over
# the rounds, for requests per second and CPU per request, from the result
# files of variants NEW and BASE.
compare() {
	local label=$1 tput cpr
	mapfile -t tput < <(paste -d' ' "$work/result.$2" "$work/result.$3" | awk '{print ($1 / $3 - 1) * 100}')
	mapfile -t cpr < <(paste -d' ' "$work/result.$2" "$work/result.$3" | awk '{print ($2 / $4 - 1) * 100}')
	read -r tq1 tmed tq3 <<<"$(quartiles "${tput[@]}")"
	read -r cq1 cmed cq3 <<<"$(quartiles "${cpr[@]}")"
	read -r tlo thi tconf <<<"$(median_ci "${tput[@]}")"
	read -r clo chi cconf <<<"$(median_ci "${cpr[@]}")"
	printf '  %s\n    req/s   %+5.1f%%  %d%% CI [%+.1f, %+.1f]  quartiles [%+.1f, %+.1f]\n    CPU/req %+5.1f%%  %d%% CI [%+.1f, %+.1f]  quartiles [%+.1f, %+.1f]\n' \
		"$label" "$tmed" "$tconf" "$tlo" "$thi" "$tq1" "$tq3" "$cmed" "$cconf" "$clo" "$chi" "$cq1" "$cq3"
}

# level NAME prints the median req/s and CPU µs/request of one variant (two
# runs summed per round, so halved).
level() {
	local r c
	r=$(quartiles $(awk '{print $1 / 2}' "$work/result.$1") | cut -d' ' -f2)
	c=$(quartiles $(awk '{print $2 / 2}' "$work/result.$1") | cut -d' ' -f2)
	printf '%s req/s, %s µs CPU/req' "$r" "$c"
}

echo
echo "levels (medians):"
for name in "${names[@]}"; do echo "  $name: $(level "$name")"; done
echo "paired changes, median of $ROUNDS rounds, with a confidence interval of the median and the quartiles:"
compare "with expose vs without (no profile running)" exposed bare
for name in "${names[@]:2}"; do compare "$name vs without expose" "$name" bare; done
if [[ $PROFILING != 0 ]]; then
	compare "CPU profile being taken vs not" cpu profiling_base
	compare "wall profile being taken vs not" wall profiling_base
fi
