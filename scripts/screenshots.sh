#!/usr/bin/env bash
# Regenerates the dashboard screenshots in docs/screenshots/ from real data,
# made on this machine as a user would make it:
#
#   1. Benchmark history: the leftpad example copied into a scratch git
#      repository and changed over five commits (a comment, a regression,
#      its fix), each benchmarked with 'perfscope bench --measure
#      instructions' into a new store.
#   2. Profiling runs: the committed real runs of the leftpad example
#      (naive and optimized), pushed to the dashboard.
#   3. Continuous profiling: the bundled examples run under a steady load
#      and are scraped every 10 s by 'perfscope scrape' for WATCH seconds:
#      leftpad (version 1.0, naive; deployed halfway as version 1.1,
#      optimized), leftpad's leaky mode as a canary, and txsummary.
#
# Then 'perfscope serve' shows the store on a free port and headless
# Chromium takes a picture of each page.
#
#   bash scripts/screenshots.sh [WATCH]     (from the module root; Linux; default 480 s)
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
watch=${1:-480}

chromium=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -z "$chromium" ]; then
	echo "screenshots: Chromium not found; install Debian's chromium package" >&2
	exit 1
fi
command -v valgrind >/dev/null || { echo "screenshots: valgrind not found; install Debian's valgrind package" >&2; exit 1; }

out=docs/screenshots
tmp=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

go build -o "$tmp/perfscope" ./cmd/perfscope
perfscope="$tmp/perfscope"
db="$tmp/perfscope.db"

# 1. Benchmark history over five commits of a scratch repository.
hist="$tmp/leftpad"
mkdir -p "$hist"
cp examples/leftpad/*.go "$hist/"
rm "$hist/main_test.go" # it tests the command with perfscope's internal test helpers
(
	cd "$hist"
	go mod init example.com/leftpad >/dev/null 2>&1
	go mod edit -require github.com/perfscope/perfscope@v0.0.0 -replace "github.com/perfscope/perfscope=$repo"
	cp "$repo/go.sum" .
	GOFLAGS=-mod=mod go mod tidy >/dev/null 2>&1
	git init -q -b main
	git config user.name "Ada Lovelace"
	git config user.email ada@example.com
	commit() { # message
		git add -A
		git commit -q -m "$1"
		echo "screenshots: benchmarking \"$1\" ($(git rev-parse --short HEAD))"
		"$perfscope" bench -b 'Leftpad' --measure instructions --count 5 --benchtime 20ms -q --db "$db" \
			-o "$tmp/bench-$(git rev-parse --short HEAD).txt" . >/dev/null
	}
	commit "leftpad: a left-pad service with StatsD metrics and an access log"
	sed -i 's|^\tvar b strings.Builder$|\t// One allocation: the builder is grown to the final length first.\n&|' leftpad.go
	commit "leftpad: say why the builder is grown first"
	sed -i '/^\tb.Grow(n\*utf8.RuneLen(chr) + len(s))$/d' leftpad.go
	commit "leftpad: let the builder grow as it writes"
	sed -i 's|^// maxLen bounds the len parameter|// maxLen (1 KiB) bounds the len parameter|' leftpad.go
	commit "leftpad: name maxLen's size"
	sed -i 's|^\tvar b strings.Builder$|&\n\tb.Grow(n*utf8.RuneLen(chr) + len(s))|' leftpad.go
	commit "leftpad: grow the builder once again"
)

# 2 and 3 need the dashboard; profiles are scraped first, into the same store.
start_example() { # name args... ; sets api, pprof and pid
	local name=$1
	shift
	"$perfscope" example "$@" --addr 127.0.0.1:0 --pprof-addr 127.0.0.1:0 >"$tmp/$name.out" 2>&1 &
	pid=$!
	pids+=("$pid")
	for _ in $(seq 300); do grep -q listening "$tmp/$name.out" && break; sleep 0.1; done
	local line
	line=$(grep listening "$tmp/$name.out") || { echo "screenshots: $name did not start: $(cat "$tmp/$name.out")" >&2; exit 1; }
	api=$(sed -E 's/.*listening on (http:[^,]*),.*/\1/' <<<"$line")
	pprof=$(sed -E 's/.*pprof on http:\/\/([^/]*)\/.*/\1/' <<<"$line")
}
targets() { # file pprof labels-json
	echo "[{\"targets\": [\"$2\"], \"labels\": $3}]" >"$tmp/targets/$1.json.new"
	mv "$tmp/targets/$1.json.new" "$tmp/targets/$1.json"
}
load() { # api-url path seconds
	"$perfscope" load -q -c 2 -d "${3}s" "$1$2" >/dev/null 2>&1 &
	pids+=($!)
}
mkdir -p "$tmp/targets"
leftpad_path='/v1/leftpad/?str=hello&len=64&chr=x'
half=$((watch / 2))
start_example leftpad-1.0 leftpad --mode naive --statsd "" --log "$tmp/leftpad-1.0.log"
v1=$pid
targets leftpad "$pprof" '{"service": "leftpad", "version": "1.0"}'
load "$api" "$leftpad_path" "$half"
start_example canary leftpad --mode leaky --statsd "" --log "$tmp/canary.log"
targets canary "$pprof" '{"service": "leftpad-canary", "version": "1.1-rc1"}'
load "$api" "$leftpad_path" "$watch"
start_example txsummary txsummary --mode naive --data "$tmp/tx.json"
targets txsummary "$pprof" '{"service": "txsummary", "version": "0.9"}'
load "$api" /summary "$watch"
printf 'global:\n  scrape_interval: 10s\nscrape_configs:\n  - job_name: examples\n    file_sd_configs:\n      - files: ["%s/targets/*.json"]\n' "$tmp" >"$tmp/scrape.yml"
"$perfscope" scrape --config "$tmp/scrape.yml" --db "$db" >"$tmp/scrape.log" 2>&1 &
scraper=$!
pids+=("$scraper")
echo "screenshots: scraping three services for ${watch}s; leftpad 1.1 is deployed after ${half}s"
sleep "$half"
kill "$v1" 2>/dev/null || true
start_example leftpad-1.1 leftpad --mode optimized --statsd "" --log "$tmp/leftpad-1.1.log"
targets leftpad "$pprof" '{"service": "leftpad", "version": "1.1"}'
load "$api" "$leftpad_path" "$((watch - half))"
sleep "$((watch - half))"
kill -INT "$scraper"
wait "$scraper" || true

# The dashboard on the store, and the profiling runs pushed to it.
token=$("$perfscope" token create --db "$db" --name screenshots 2>/dev/null)
"$perfscope" serve --db "$db" --data "$tmp/runs" --addr 127.0.0.1:0 >"$tmp/serve.out" 2>"$tmp/serve.err" &
pids+=($!)
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
for r in internal/findings/testdata/runs/leftpad-naive internal/findings/testdata/runs/leftpad-optimized; do
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
commits=($(cd "$hist" && git rev-list --reverse HEAD))
enc() { jq -rn --arg v "$1" '$v|@uri'; }
shot home / 1100
shot benchmarks /benchmarks 1000
shot trend "/trend?package=example.com/leftpad&name=Leftpad/optimized-$(nproc)&unit=instructions/op" 1000
shot compare-commits "/compare?base=${commits[1]}&head=${commits[2]}" 1100
shot run /runs/leftpad-naive 1100
shot compare-runs "/compare?base_run=leftpad-naive&head_run=leftpad-optimized"
shot runs /runs 600
shot services /services 700
shot service "/services/view?target=$(enc '{service="leftpad"}')&from=15m" 1200
shot service-diff "/services/view?target=$(enc '{service="leftpad",version="1.1"}')&base_target=$(enc '{service="leftpad",version="1.0"}')&from=15m&base_from=15m" 1200
shot leaks /leaks 900
shot deploys /deploys 900
shot not-found /runs/no-such-run 500
