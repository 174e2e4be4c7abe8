#!/usr/bin/env bash
# Runs the README's test command with two CPU-burning processes beside it,
# as on a shared CI runner, and stops them afterwards whatever happens.
# No test's verdict may depend on how busy the machine is: this is how that
# is checked.
set -euo pipefail
cd "$(dirname "$0")/.."

burners=()
stop_burners() {
	for pid in "${burners[@]}"; do kill "$pid" 2>/dev/null || true; done
	for pid in "${burners[@]}"; do wait "$pid" 2>/dev/null || true; done
}
trap stop_burners EXIT INT TERM

for _ in 1 2; do
	# A shell loop keeps one core busy and needs nothing installed.
	bash -c 'while :; do :; done' &
	burners+=($!)
done
echo "test-under-load: 2 CPU burners running (pids ${burners[*]})"
start=$SECONDS
status=0
bash scripts/test.sh || status=$?
echo "test-under-load: test command exited $status after $((SECONDS - start))s with 2 CPU burners beside it"
exit "$status"
