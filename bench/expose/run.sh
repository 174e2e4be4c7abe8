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
# Both variants run side by side and are loaded in turn, A B B A within each
# round, so drift in the machine's load (other processes, thermal state)
# falls on both alike. Each round starts both services anew: one process of
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

# shellcheck disable=SC2086 # each holds a list of flags
start bare $BARE_ARGS
# shellcheck disable=SC2086
start exposed $EXPOSED_ARGS
[[ $PROFILING == 0 || -n $pprof_exposed ]] || die "with $EXPOSED_ARGS leftpad serves no profiles: set PROFILING=0"

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
echo "without expose: leftpad $BARE_ARGS; with expose: leftpad $EXPOSED_ARGS"

# restart stops both services and starts them anew, warmed up
# (connections, page cache, heap sizes).
restart() {
	kill "$pid_bare" "$pid_exposed" 2>/dev/null || true
	wait "$pid_bare" "$pid_exposed" 2>/dev/null || true
	# shellcheck disable=SC2086
	start bare $BARE_ARGS
	# shellcheck disable=SC2086
	start exposed $EXPOSED_ARGS
	SECONDS_PER_RUN=1 run bare >/dev/null
	SECONDS_PER_RUN=1 run exposed >/dev/null
}

# sum2 R1 R2 adds two "req/s cpu" results field by field.
sum2() { awk -v a="$1" -v b="$2" 'BEGIN {split(a, x, " "); split(b, y, " "); print x[1] + y[1], x[2] + y[2]}'; }

# Per round: the summed results of each side of a comparison.
bare=() exposed=() base=() cpu=() wall=()
for r in $(seq "$ROUNDS"); do
	restart
	b1=$(run bare); e1=$(run exposed); e2=$(run exposed); b2=$(run bare)
	bare+=("$(sum2 "$b1" "$b2")"); exposed+=("$(sum2 "$e1" "$e2")")
	if [[ $PROFILING == 0 ]]; then
		echo "round $r (req/s CPU-µs/req, two runs each): without expose $b1 / $b2 | with expose $e1 / $e2"
		continue
	fi
	# The profiling runs are compared with runs of the exposed service in
	# between them: E C W W C E.
	x1=$(run exposed); c1=$(run_while profile); w1=$(run_while wall)
	w2=$(run_while wall); c2=$(run_while profile); x2=$(run exposed)
	base+=("$(sum2 "$x1" "$x2")"); cpu+=("$(sum2 "$c1" "$c2")"); wall+=("$(sum2 "$w1" "$w2")")
	echo "round $r (req/s CPU-µs/req, two runs each): without expose $b1 / $b2 | with expose $e1 / $e2 | with expose $x1 / $x2 | CPU profiling $c1 / $c2 | wall profiling $w1 / $w2"
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
# the rounds, for requests per second and CPU per request.
compare() {
	local label=$1 n="$2[@]" b="$3[@]"
	local -a nn=("${!n}") bb=("${!b}") tput=() cpr=()
	for i in "${!nn[@]}"; do
		tput+=("$(awk -v x="${nn[i]}" -v y="${bb[i]}" 'BEGIN {split(x, a, " "); split(y, b, " "); print (a[1] / b[1] - 1) * 100}')")
		cpr+=("$(awk -v x="${nn[i]}" -v y="${bb[i]}" 'BEGIN {split(x, a, " "); split(y, b, " "); print (a[2] / b[2] - 1) * 100}')")
	done
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
	local n="$1[@]" r c
	r=$(quartiles $(printf '%s\n' "${!n}" | awk '{print $1 / 2}') | cut -d' ' -f2)
	c=$(quartiles $(printf '%s\n' "${!n}" | awk '{print $2 / 2}') | cut -d' ' -f2)
	printf '%s req/s, %s µs CPU/req' "$r" "$c"
}

echo
echo "levels (medians): without expose $(level bare); with expose $(level exposed)"
echo "paired changes, median of $ROUNDS rounds, with a confidence interval of the median and the quartiles:"
compare "with expose vs without (no profile running)" exposed bare
if [[ $PROFILING != 0 ]]; then
	compare "CPU profile being taken vs not" cpu base
	compare "wall profile being taken vs not" wall base
fi
