#!/usr/bin/env bash
# Runs perfscope's whole test suite on a fresh machine: installs what the tests
# need (Debian packages, benchstat), starts PostgreSQL, then vets and tests.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
for bin in wrk:wrk ab:apache2-utils dot:graphviz chromium:chromium valgrind:valgrind; do
	command -v "${bin%%:*}" >/dev/null 2>&1 || need_apt+=("${bin#*:}")
done
if ! command -v pg_ctlcluster >/dev/null 2>&1; then need_apt+=(postgresql); fi
if [ ${#need_apt[@]} -gt 0 ]; then
	# Waits for another install's lock rather than failing (scripts/apt.sh).
	source scripts/apt.sh
	apt_install "${need_apt[@]}"
fi

export PATH="$(go env GOPATH)/bin:$PATH"
if ! command -v benchstat >/dev/null 2>&1; then
	echo "installing benchstat"
	go install "golang.org/x/perf/cmd/benchstat@$(go list -m -f '{{.Version}}' golang.org/x/perf)"
fi

if [ -x scripts/start-postgres.sh ] || [ -f scripts/start-postgres.sh ]; then
	PERFSCOPE_TEST_POSTGRES="$(bash scripts/start-postgres.sh | tail -n 1)"
	export PERFSCOPE_TEST_POSTGRES
fi

# Tests that need PostgreSQL, Chromium or benchstat fail instead of
# skipping when this script has set them up: a skip here would hide a
# broken set-up.
export PERFSCOPE_REQUIRE_TOOLS=1

echo "go vet ./..."
go vet ./...
# Every platform builds: Linux-only code sits behind build tags with a
# portable fallback.
for platform in darwin/arm64 windows/amd64; do
	echo "go vet ./... (GOOS=${platform%/*} GOARCH=${platform#*/})"
	GOOS="${platform%/*}" GOARCH="${platform#*/}" go vet ./...
	GOOS="${platform%/*}" GOARCH="${platform#*/}" go build -o /dev/null ./cmd/perfscope
done
echo "go test -race ./..."
# Two tests of profile series (internal/store) store hours of scrapes to
# check what reads give, and run without -race, on their own:
#   - the simulated month appends a month of scrapes from one goroutine,
#     which the race detector has nothing to check in that the shorter
#     tests do not, and slows about a hundredfold (15 s without it, 6 to 27
#     minutes with it on this 2-core machine);
#   - the records of scrapes (TestRecordedScrapes) store 2 h 20 min of
#     scrapes of two targets on each engine, through concurrent Appends
#     that TestAppendConcurrent and the kill tests also make under -race;
#     with the race detector it took 400 s and more of internal/store's
#     time, and beside other load pushed the package past its timeout.
slow='^(TestProfileSeriesMonth|TestRecordedScrapes)$'
go test -race -timeout 30m -count=1 -skip "$slow" ./...
echo "go test -run '$slow' ./internal/store"
go test -timeout 15m -count=1 -run "$slow" ./internal/store
