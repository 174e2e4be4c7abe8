#!/usr/bin/env bash
# Captures the real runs the change-detection consistency test stores as
# commits: one 'perfscope bench --measure instructions' run of
# testdata/changemod per file, with the variant each commit stands for.
#   v0: CHANGEMOD_WORK=1000 CHANGEMOD_ALLOCS=1
#   v1: CHANGEMOD_WORK=1000 CHANGEMOD_ALLOCS=2   (one more allocation an operation)
#   v2: CHANGEMOD_WORK=1300 CHANGEMOD_ALLOCS=2   (30% more hashing)
# Usage: capture.sh PERFSCOPE_BINARY
set -euo pipefail
bin=$(realpath "$1")
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../changemod"
db=$(mktemp -d)/scratch.db
run() { # file work allocs
	CHANGEMOD_WORK=$2 CHANGEMOD_ALLOCS=$3 GOWORK=off "$bin" bench --measure instructions --count 5 \
		--benchtime 20ms --quiet --db "$db" -o "$here/$1" .
}
for f in a-main-1 a-main-2 a-feature-1 a-feature-2 b-main-2; do run "$f.txt" 1000 1; done
for f in a-main-3 a-main-4 b-main-4; do run "$f.txt" 1000 2; done
for f in a-main-5 a-main-6 a-main-7 b-main-6; do run "$f.txt" 1300 2; done
