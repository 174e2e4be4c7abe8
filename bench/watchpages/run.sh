#!/usr/bin/env bash
# run.sh measures the watch pages of the dashboard on a store of a fleet:
# 500 targets × 24 h of 10 s scrapes (CPU, heap, goroutines) by default,
# populated once into CACHE and reused (see README.md). With
# PERFSCOPE_TEST_POSTGRES set nothing changes: the measurement is of
# SQLite (PostgreSQL is not populated yet).
#
#   bash bench/watchpages/run.sh [TARGETS] [CACHE]     (from the module root; Linux)
#
# Needs go, and chromium for the flame graph's paint time.
set -euo pipefail
targets=${1:-500}
cache=${2:-${TMPDIR:-/tmp}/perfscope-watchpages}
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
go run ./bench/watchpages -targets "$targets" -cache "$cache" -n 10 -rounds 3 -chromium
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
