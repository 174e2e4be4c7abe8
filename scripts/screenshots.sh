#!/usr/bin/env bash
# Regenerates the dashboard screenshots in docs/screenshots/: starts
# 'perfscope serve' on a free port with a new store filled from the committed
# fixtures (ten commits of benchmark results and three profiling runs under
# internal/server/testdata/dashboard/), then has headless Chromium take a
# picture of each main page.
set -euo pipefail
cd "$(dirname "$0")/.."

chromium=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -z "$chromium" ]; then
	echo "screenshots: Chromium not found; install Debian's chromium package" >&2
	exit 1
fi

fixtures=internal/server/testdata/dashboard
out=docs/screenshots
tmp=$(mktemp -d)
server_pid=""
cleanup() {
	if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
	rm -rf "$tmp"
}
trap cleanup EXIT

go build -o "$tmp/perfscope" ./cmd/perfscope
perfscope="$tmp/perfscope"
db="$tmp/perfscope.db"
token=$("$perfscope" token create --db "$db" --name screenshots 2>/dev/null)

"$perfscope" serve --db "$db" --data "$tmp/runs" --addr 127.0.0.1:0 >"$tmp/serve.out" 2>"$tmp/serve.err" &
server_pid=$!
url=""
for _ in $(seq 100); do
	url=$(sed -n 's/^perfscope dashboard on \(http[^ ]*\) .*/\1/p' "$tmp/serve.out")
	[ -n "$url" ] && break
	sleep 0.1
done
if [ -z "$url" ]; then
	echo "screenshots: the server did not start:" >&2
	cat "$tmp/serve.err" >&2
	exit 1
fi

# Commit i of the fixture was committed i hours after the first.
i=0
for f in "$fixtures"/bench/commit*.txt; do
	"$perfscope" push --server "$url" --token "$token" --machine builder \
		--commit-time "$(date -u -d "2026-03-02T09:00:00Z + $i hours" +%Y-%m-%dT%H:%M:%SZ)" "$f" >/dev/null
	i=$((i + 1))
done
for r in "$fixtures"/runs/*/; do
	"$perfscope" push --server "$url" --token "$token" "$r" >/dev/null
done

mkdir -p "$out"
shot() { # name path [height]
	local height=${3:-900}
	"$chromium" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--user-data-dir="$tmp/chromium-$1" --hide-scrollbars --virtual-time-budget=5000 \
		--screenshot="$out/$1.png" --window-size="1280,$height" "$url$2" >/dev/null 2>&1
	echo "$out/$1.png  $url$2"
}
base=$(sed -n 's/^commit: //p' "$fixtures/bench/commit04.txt")
head=$(sed -n 's/^commit: //p' "$fixtures/bench/commit05.txt")
shot home /
shot benchmarks /benchmarks 1000
shot trend "/trend?package=example.com/benchmod&name=Work-2&unit=B/op"
shot run /runs/leftpad-naive 1100
shot compare-runs "/compare?base_run=leftpad-naive&head_run=leftpad-optimized"
shot compare-commits "/compare?base=$base&head=$head" 1000
shot runs /runs 600
shot not-found /runs/no-such-run 500
