#!/usr/bin/env bash
# Captures the runs the findings tests diagnose, once, on a quiet machine:
# every rule's bad and good program under testdata/<rule>/ (run by
# testdata/harness, with windows four times the default so the profiles
# hold what each rule needs with room to spare) and the bundled examples in
# both modes (profiled under load by `perfscope profile`). Each run goes to
# testdata/runs/<name>/ with a digest of the source it was taken from, so
# the tests can tell when a program changed and its run is stale.
#
# The leftpad example is loaded from 32 connections: its access log's lock
# must be contended for std-logger-lock to see it.
#
# Run from anywhere:   bash internal/findings/testdata/capture.sh [NAME...]
# NAME is a run to capture again (concat-bad, leftpad-naive, ...); none
# captures them all. Commit testdata/runs afterwards.
set -euo pipefail
export LC_ALL=C # the digest lists files in byte order, as the tests do
cd "$(dirname "$0")/.."
root="$(cd ../.. && pwd)"
runs=testdata/runs
tmp="$(mktemp -d)"
pids=()
cleanup() {
	for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
	rm -rf "$tmp"
}
trap cleanup EXIT

wanted() { [ $# -eq 0 ] || [[ " $* " == *" $name "* ]]; }

# digest prints the SHA-256 of the files named, in the order given.
digest() { cat "$@" | sha256sum | cut -d' ' -f1; }

# package_sources lists the files of the packages under a program's
# directory (a library it calls), in byte order.
package_sources() { find "testdata/$1" -mindepth 2 -name '*.go' | sort; }
harness_sources() { printf '%s\n' testdata/harness/*.go testdata/harness/httpload/*.go; }
example_sources() { printf '%s\n' "$root/examples/$1"/*.go "$root/examples/$1/cmd/$1"/*.go | grep -v '_test\.go$'; }

for main in testdata/*/*/main.go; do
	program="${main#testdata/}"
	program="${program%/main.go}"
	name="${program//\//-}"
	wanted "$@" || continue
	echo "capture: $name"
	go build -o "$tmp/$name" "./testdata/$program"
	rm -rf "${runs:?}/$name"
	mkdir -p "$runs/$name"
	"$tmp/$name" -scale 4 -out "$runs/$name" >/dev/null
	digest testdata/"$program"/*.go $(package_sources "$program") $(harness_sources) >"$runs/$name/source.sha256"
done

# start_statsd_sink starts a sink that drops the leftpad example's StatsD
# packets and sets sink to its address.
start_statsd_sink() {
	python3 -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", 0))
print("127.0.0.1:%d" % s.getsockname()[1], flush=True)
while True:
    s.recv(65536)
' >"$tmp/statsd.addr" &
	pids+=($!)
	while [ ! -s "$tmp/statsd.addr" ]; do sleep 0.1; done
	sink="$(cat "$tmp/statsd.addr")"
}

# example NAME MODE PATH CONCURRENCY ARGS... profiles examples/NAME in
# MODE under load on PATH from CONCURRENCY connections for 8 s.
example() {
	local ex="$1" mode="$2" path="$3" conns="$4"
	shift 4
	name="$ex-$mode"
	wanted "${targets[@]}" || return 0
	echo "capture: $name"
	[ -x "$tmp/perfscope" ] || (cd "$root" && go build -o "$tmp/perfscope" ./cmd/perfscope)
	[ -x "$tmp/$ex" ] || (cd "$root/examples/$ex" && go build -o "$tmp/$ex" "./cmd/$ex")
	"$tmp/$ex" -mode "$mode" -addr 127.0.0.1:0 -pprof-addr 127.0.0.1:0 "$@" >"$tmp/$name.out" &
	local pid=$!
	pids+=("$pid")
	local line=""
	for _ in $(seq 100); do
		line="$(grep -m1 'listening on' "$tmp/$name.out" || true)"
		[ -n "$line" ] && break
		sleep 0.1
	done
	[ -n "$line" ] || { echo "capture: $ex did not start" >&2; exit 1; }
	local api pprof
	api="$(sed -E 's/.*listening on (http:[^ ,]+),? pprof on (http:[^ ]+).*/\1/' <<<"$line")"
	pprof="$(sed -E 's/.*listening on (http:[^ ,]+),? pprof on (http:[^ ]+).*/\2/' <<<"$line")"
	rm -rf "${runs:?}/$name"
	"$tmp/perfscope" profile -c "$conns" -d 8s --pprof "$pprof" --out "$runs/$name" "$api$path" >/dev/null
	kill -INT "$pid"
	wait "$pid" || true
	digest $(example_sources "$ex") >"$runs/$name/source.sha256"
}

targets=("$@")
sink=""
for mode in naive optimized; do
	name="leftpad-$mode"
	if wanted "$@"; then
		[ -n "$sink" ] || start_statsd_sink
		example leftpad "$mode" '/v1/leftpad/?str=test&len=24&chr=*' 32 -statsd "$sink" -log "$tmp/access.log"
	fi
	example txsummary "$mode" /summary 8 -data "$tmp/transactions.json"
done
