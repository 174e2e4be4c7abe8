#!/usr/bin/env bash
# instructions.sh measures "perfscope gate --measure instructions" on this
# machine, quiet and beside two CPU-burning loops:
#   - A/A on the bundled examples' benchmarks (head = base plus a comment-only
#     commit): must pass (exit 0);
#   - a scratch repository whose later commits are real code edits adding 1%,
#     2% and 5% more work to one benchmark (BenchmarkLoop): must fail (exit 1)
#     naming BenchmarkLoop, and a comment-only commit there must pass;
#   - the same commit's instructions/op, quiet against loaded.
# Every gate run's JSON and timing go to OUT (default /tmp/gate-instructions);
# a summary table is printed at the end.
#
#   bench/gate/instructions.sh                 # 20 runs of every case
#   RUNS=3 bench/gate/instructions.sh          # fewer
#   RUNS=3 CASES="scratch" bench/gate/instructions.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
RUNS=${RUNS:-20}
CASES=${CASES:-"examples scratch"}
LOADS=${LOADS:-"quiet loaded"}
OUT=${OUT:-/tmp/gate-instructions}
mkdir -p "$OUT"
work=$(mktemp -d)
burners=()
stop_burners() {
	for p in "${burners[@]}"; do kill "$p" 2>/dev/null || true; done
	burners=()
}
trap 'stop_burners; rm -rf "$work"' EXIT
start_burners() {
	for _ in 1 2; do
		bash -c 'while :; do :; done' &
		burners+=($!)
	done
}
export GIT_AUTHOR_NAME=study GIT_AUTHOR_EMAIL=study@example.com GIT_COMMITTER_NAME=study GIT_COMMITTER_EMAIL=study@example.com

go build -o "$work/perfscope" ./cmd/perfscope

# The examples at this commit, plus a comment-only commit as the head.
git clone -q "$root" "$work/examples"
(cd "$work/examples" && git checkout -q "$(git -C "$root" rev-parse HEAD)" &&
	sed -i '1i // A comment that changes no code.' examples/txsummary/bench_test.go &&
	git commit -qam "comment only" && git tag aa)

# The scratch repository: BenchmarkLoop sums a loop of ITERS iterations;
# BenchmarkSteady never changes. Tags: base, comment (comment only), and
# work1, work2, work5 (the loop 1.1%, 2% and 5% longer, each on top of base:
# 1.1% so that the 1% case adds at least 1% more instructions, not exactly
# the threshold, which a count within ±0.05% lands on either side of).
scratch="$work/scratch"
mkdir -p "$scratch"
write_scratch() { # ITERS COMMENT
	cat >"$scratch/loop_test.go" <<GO
package scratch

import "testing"

var total int

// $2
func BenchmarkLoop(b *testing.B) {
	for b.Loop() {
		s := 0
		for i := range $1 {
			s += i % 7
		}
		total += s
	}
}

func BenchmarkSteady(b *testing.B) {
	for b.Loop() {
		s := 0
		for i := range 50000 {
			s += i % 5
		}
		total += s
	}
}
GO
}
(
	cd "$scratch"
	git init -q -b main
	printf 'module example.com/scratch\n\ngo 1.26\n' >go.mod
	write_scratch 100000 "BenchmarkLoop sums a loop."
	git add -A && git commit -qm base && git tag base
	for edit in "comment 100000 BenchmarkLoop sums a loop of integers." "work1 101100 BenchmarkLoop sums a loop." \
		"work2 102000 BenchmarkLoop sums a loop." "work5 105000 BenchmarkLoop sums a loop."; do
		read -r tag iters comment <<<"$edit"
		git checkout -q base
		write_scratch "$iters" "$comment"
		git commit -qam "$tag" && git tag "$tag"
	done
	git checkout -q base
)

# gate DIR HEAD_TAG BASE_REF NAME LOAD I [PACKAGES...]: one gate run, its
# JSON in OUT/NAME-LOAD-I.json and "exit seconds" in OUT/NAME-LOAD-I.exit.
gate() {
	local dir=$1 head=$2 base=$3 name=$4 load=$5 i=$6
	shift 6
	git -C "$dir" checkout -q "$head"
	local start end code=0
	start=$(date +%s)
	(cd "$dir" && "$work/perfscope" gate --measure instructions --base "$base" --format json "$@") \
		>"$OUT/$name-$load-$i.json" 2>"$OUT/$name-$load-$i.log" || code=$?
	end=$(date +%s)
	local avg
	avg=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo -)
	echo "$code $((end - start)) $avg" >"$OUT/$name-$load-$i.exit"
	echo "$name $load run $i: exit $code in $((end - start))s, load average $avg"
}

for load in $LOADS; do
	[ "$load" = loaded ] && start_burners
	for i in $(seq 1 "$RUNS"); do
		for c in $CASES; do
			case $c in
			examples) gate "$work/examples" aa HEAD~1 examples-aa "$load" "$i" ./examples/... ;;
			scratch)
				for tag in comment work1 work2 work5; do
					gate "$scratch" "$tag" base "scratch-$tag" "$load" "$i" .
				done
				;;
			esac
		done
	done
	stop_burners
done

# Summary: per case and load, how many runs exited 0, 1 (and with
# BenchmarkLoop's instructions/op a regression), 2; the slowest run.
printf '\n| case | load | runs | exit 0 | exit 1 | exit 2 | Loop instructions/op regressed | change (min–max) | longest run |\n'
printf '| --- | --- | --: | --: | --: | --: | --: | --- | --: |\n'
for name in examples-aa scratch-comment scratch-work1 scratch-work2 scratch-work5; do
	for load in $LOADS; do
		files=("$OUT/$name-$load"-*.exit)
		[ -e "${files[0]}" ] || continue
		n=0 e0=0 e1=0 e2=0 named=0 longest=0 changes=()
		for f in "${files[@]}"; do
			read -r code secs _ <"$f"
			n=$((n + 1))
			case $code in 0) e0=$((e0 + 1)) ;; 1) e1=$((e1 + 1)) ;; *) e2=$((e2 + 1)) ;; esac
			[ "$secs" -gt "$longest" ] && longest=$secs
			js=${f%.exit}.json
			if [ -s "$js" ]; then
				if jq -e '.decision.judgements[] | select(.unit == "instructions/op" and (.benchmark | startswith("Loop")) and .verdict == "regression")' "$js" >/dev/null; then
					named=$((named + 1))
				fi
				ch=$(jq -r '[.decision.judgements[] | select(.unit == "instructions/op" and (.benchmark | startswith("Loop"))) | .change * 100] | first // empty' "$js")
				[ -n "$ch" ] && changes+=("$ch")
			fi
		done
		range="-"
		if [ ${#changes[@]} -gt 0 ]; then
			range=$(printf '%s\n' "${changes[@]}" | sort -g | sed -n '1p;$p' | xargs printf '%+.3f%% ' | sed 's/ $//; s/ / – /')
		fi
		printf '| %s | %s | %d | %d | %d | %d | %d | %s | %ds |\n' "$name" "$load" "$n" "$e0" "$e1" "$e2" "$named" "$range" "$longest"
	done
done

# The same commit's counts quiet against loaded: per benchmark, the head's
# instructions/op over every quiet and every loaded run, and how far the
# extremes differ; benchmarks the gate judged too noisy in some run are
# included and marked.
if [[ " $LOADS " == *" quiet "* && " $LOADS " == *" loaded "* ]]; then
	for name in examples-aa scratch-comment; do
		files=("$OUT/$name"-*.json)
		[ -e "${files[0]}" ] || continue
		printf '\n%s: the head commit'"'"'s instructions/op, quiet and loaded\n\n' "$name"
		printf '| benchmark | quiet min – max | loaded min – max | all runs differ by | judged too noisy |\n| --- | --- | --- | --: | --: |\n'
		for f in "${files[@]}"; do
			load=$(basename "$f" | sed "s/^$name-//; s/-[0-9]*\.json$//")
			jq -c --arg load "$load" '.decision.judgements[]? | select(.unit == "instructions/op") | {k: .benchmark, load: $load, v: .head, noisy: (.verdict == "too noisy")}' "$f"
		done | jq -rs '
			group_by(.k)[] | . as $g |
			def rng($l): [$g[] | select(.load == $l) | .v[]] | if length == 0 then "-" else "\(min | round) – \(max | round)" end;
			[$g[] | .v[]] as $all |
			"| \($g[0].k) | \(rng("quiet")) | \(rng("loaded")) | \((($all | max) / ($all | min) - 1) * 100 * 1000 | round / 1000)% | \([$g[] | select(.noisy)] | length) of \($g | length) |"'
	done
fi
