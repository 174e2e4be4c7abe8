#!/usr/bin/env bash
# Captures the profiles the tests of internal/profiles read: runs
# testdata/workload once and records a digest of its source, so the tests
# can tell when the program changed and its profiles are stale.
# Run from anywhere: bash internal/profiles/testdata/profiles/capture.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
go run ./testdata/workload -out testdata/profiles
cat testdata/workload/*.go testdata/workload/shapes/*.go | sha256sum | cut -d' ' -f1 >testdata/profiles/source.sha256
